# The test run's summary: after ctest's own lines (which list every skipped test by name and show
# no skipped test's output, --output-on-failure included), one line a distinct skip reason, then
# the verdict, last.
#
# include(cmake/Skipped.cmake), after every test is added: writes the build tree's
# CTestCustom.cmake, whose CTEST_CUSTOM_POST_TEST runs this file in script mode after the tests,
# and the GPU tests left out at configure (cmake/Days.cmake's reduction_test), which the summary
# names in one line.
#
# cmake -DBUILD=DIR -P cmake/Skipped.cmake: reads DIR's Testing/Temporary/LastTest.log as ctest
# still writes it (LastTest.log.tmp before CTest 4, LastTest.log.tmpXXXXX from CTest 4: the newest
# such file) and prints, for each distinct `SKIPPED: reason` line of the tests' output (every skip
# in this repository prints one: tools/gpu_test.sh, tools/cuda12.sh, a check's exit 77, pytest's
# skipped cases as `SKIPPED: ID: reason`), how many tests printed it and the first two names; then
#   PASSED: N tests, P passed, K skipped (why above), none failed
#   FAILED: F of N tests failed: NAME, NAME and M more (their output is above), P passed, K skipped
# ctest's log does not tell a skip from a pass: a passed test that printed a SKIPPED line counts
# as skipped. It always exits 0 (a failing post-test command would fail the test run). After a
# failure ctest itself adds `Errors while running CTest` and where the log is.
if(NOT CMAKE_SCRIPT_MODE_FILE)
  foreach(tier quick full)
    get_property(left GLOBAL PROPERTY REDUCTION_UNREGISTERED_${tier})
    list(LENGTH left count_${tier})
  endforeach()
  set(left "")
  if(count_full GREATER 0 OR count_quick GREATER 0)
    set(left "${count_quick} GPU tests of the quick tier, ${count_full} of the full one are not \
registered: ${REDUCTION_GPU_WHY}; configure on a GPU machine (or with -DREDUCTION_GPU_TESTS=ON, \
and each skips)")
  endif()
  file(WRITE ${CMAKE_BINARY_DIR}/CTestSummary.cmake "set(UNREGISTERED [==[${left}]==])\n")
  file(WRITE ${CMAKE_BINARY_DIR}/CTestCustom.cmake "set(CTEST_CUSTOM_POST_TEST \"\\\"\
${CMAKE_COMMAND}\\\" \\\"-DBUILD=${CMAKE_BINARY_DIR}\\\" -P \\\"${CMAKE_CURRENT_LIST_FILE}\\\"\")\n")
  return()
endif()

cmake_policy(VERSION 3.24) # script mode: IN_LIST and the rest
set(log "")
file(GLOB written "${BUILD}/Testing/Temporary/LastTest.log.tmp*") # this run's log, still open
foreach(f IN LISTS written)
  file(TIMESTAMP "${f}" t "%s")
  if(log STREQUAL "" OR t GREATER newest)
    set(log "${f}")
    set(newest ${t})
  endif()
endforeach()
if(log STREQUAL "" AND EXISTS "${BUILD}/Testing/Temporary/LastTest.log")
  set(log "${BUILD}/Testing/Temporary/LastTest.log")
endif()
if(log STREQUAL "")
  return()
endif()
file(READ "${log}" text)
# One list element a line: ; [ and ] would split or join elements, so they travel as <59> <91> <93>.
string(REPLACE ";" "<59>" text "${text}")
string(REPLACE "[" "<91>" text "${text}")
string(REPLACE "]" "<93>" text "${text}")
string(REPLACE "\n" ";" lines "${text}")

set(names "")     # every test of the run, in the log's order
set(failed "")    # the tests that failed
set(skipped "")   # the tests that printed a SKIPPED line
set(reasons "")   # each distinct reason once; reason_<i>: the tests that gave reasons[i]
set(name "")
set(not_run OFF)
foreach(line IN LISTS lines)
  if(line MATCHES "^[0-9]+/[0-9]+ Test: (.+)$")
    set(name "${CMAKE_MATCH_1}")
    list(APPEND names "${name}")
    if(not_run) # `Unable to find executable` comes before the test's own lines
      list(APPEND failed "${name}")
      set(not_run OFF)
    endif()
  elseif(line MATCHES "^Unable to find executable")
    set(not_run ON)
  elseif(name AND line MATCHES "^Test Fail")
    list(APPEND failed "${name}")
  elseif(name AND line MATCHES "^SKIPPED: (.*)$")
    string(REGEX REPLACE "^[^ ]*::[^ ]*: " "" reason "${CMAKE_MATCH_1}") # pytest's `ID: reason`
    list(FIND reasons "${reason}" i)
    if(i EQUAL -1)
      list(LENGTH reasons i)
      list(APPEND reasons "${reason}")
      set(reason_${i} "")
    endif()
    if(NOT name IN_LIST reason_${i})
      list(APPEND reason_${i} "${name}")
    endif()
    if(NOT name IN_LIST skipped)
      list(APPEND skipped "${name}")
    endif()
  endif()
endforeach()
list(REMOVE_DUPLICATES failed)
foreach(f IN LISTS failed)
  list(REMOVE_ITEM skipped "${f}")
endforeach()

function(say text) # one line on stdout, the placeholders turned back
  string(REPLACE "<59>" ";" text "${text}")
  string(REPLACE "<91>" "[" text "${text}")
  string(REPLACE "<93>" "]" text "${text}")
  execute_process(COMMAND ${CMAKE_COMMAND} -E echo "${text}")
endfunction()
function(some list) # `a, b` or `a, b and N more`
  list(LENGTH list n)
  list(SUBLIST list 0 2 first)
  string(REPLACE ";" ", " out "${first}")
  if(n GREATER 2)
    math(EXPR more "${n} - 2")
    string(APPEND out " and ${more} more")
  endif()
  set(out "${out}" PARENT_SCOPE)
endfunction()

list(LENGTH names total)
if(total EQUAL 0)
  return() # ctest -N, or a filter that selects nothing: no run to sum up
endif()
say("")
list(LENGTH reasons count)
if(count GREATER 0)
  math(EXPR last "${count} - 1")
  foreach(i RANGE ${last})
    list(GET reasons ${i} reason)
    list(LENGTH reason_${i} n)
    some("${reason_${i}}")
    set(tests "tests")
    if(n EQUAL 1)
      set(tests "test")
    endif()
    say("  ${n} ${tests} skipped: ${reason} (${out})")
  endforeach()
endif()
if(EXISTS "${BUILD}/CTestSummary.cmake")
  include("${BUILD}/CTestSummary.cmake")
  if(UNREGISTERED)
    say("  ${UNREGISTERED}")
  endif()
endif()
list(LENGTH failed nfailed)
list(LENGTH skipped nskipped)
math(EXPR npassed "${total} - ${nfailed} - ${nskipped}")
if(nfailed EQUAL 0)
  set(why "")
  if(nskipped GREATER 0)
    set(why " (why above)")
  endif()
  say("PASSED: ${total} tests, ${npassed} passed, ${nskipped} skipped${why}, none failed")
else()
  some("${failed}")
  say("FAILED: ${nfailed} of ${total} tests failed: ${out} (their output is above), ${npassed} \
passed, ${nskipped} skipped")
endif()
