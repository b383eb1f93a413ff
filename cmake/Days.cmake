# reduction_day(TARGET name SOURCE file.cu)
#
# One lesson day: its executable (built for CMAKE_CUDA_ARCHITECTURES with warnings as errors), its
# test program tests/harness/<day>.cu when there is one (the lesson file included with its main()
# switched off), a host test of the README's one-line nvcc build as written (sm_75; the full tier
# also for sm_90), a host test of both programs' bad usage and --help (<day>.usage), and GPU tests
# from the day's run list, code/<day>/runs.txt - the same list the capture writes transcripts of
# (REDUCTION_CAPTURE, below), one line a run:
#
#   MODE [--tool TOOL] [--harness] [--full-only | --quick-args "ARGS"] -- ARGS...
#
#   --harness      run the test program instead of the lesson program
#   --tool T       run under compute-sanitizer --tool T, which must report zero errors; a MODE that
#                  contains `race-demo` must instead make racecheck REPORT a hazard (the exhibit)
#   (no tier word) both tiers run the line as written: test <day>.gpu.MODE, labels quick and full
#   --full-only    only the full tier runs it (label full): a run too long for the quick tier
#   --quick-args   the full tier runs the line as written (<day>.gpu.MODE, label full; the
#                  capture's run) and the quick tier runs <day>.gpu.MODE.quick (label quick): the
#                  same program, tool and mode with each option of ARGS (one shell word) in place
#                  of the same option and its values after `--`, or added. tests/README.md says
#                  why each quick run still reaches every kernel and code path.
#   a MODE that contains `2pow3` is skipped where the device lacks the memory for it
#   a MODE that starts with `repeat-` is evidence only: another process of the `default` run, for
#                  the README's medians; it checks nothing `default` does not, so it runs (and
#                  is captured) only with REDUCTION_CAPTURE set; otherwise it skips, saying so
#
# GPU tests are registered where REDUCTION_GPU is ON (CMakeLists.txt) and skip (exit 77, reason
# printed) where no CUDA device is present. Lesson runs that time (no --tool) take the resource
# lock `gpu-timed`: one at a time, so that two runs of 16 GiB never share a smaller card, and
# first (COST 1000); the sanitizer and harness runs (COST 100) go beside them where
# REDUCTION_GPU_SLOTS allows more than one GPU test at once. Their checks are exact, so sharing the
# GPU changes no verdict, only the times printed. A build for the evidence, configured with
# REDUCTION_CAPTURE set (or -DREDUCTION_SERIAL_TIMING=ON), makes each timed run RUN_SERIAL instead:
# it has the GPU to itself. With REDUCTION_CAPTURE=DIR in ctest's environment each test of the full
# tier also writes its transcript (tools/gpu_test.sh, which refuses a build not configured so, and
# skips the quick tier's smaller runs): `ctest -L full` gives the GPU tests and the evidence in one
# pass. With REDUCTION_GPU_SLOTS above 0 each of these GPU tests also takes one of that many slots.
set(REDUCTION_ROOT ${CMAKE_CURRENT_LIST_DIR}/..)
if(DEFINED ENV{REDUCTION_CAPTURE}) # read at every configure, so a cached OFF never sticks
  set(REDUCTION_SERIAL_TIMING ON)
endif()

# reduction_test(NAME LABELS l... [SLOT] [WORKING_DIRECTORY d] [ENVIRONMENT e...]
#                [PROPERTIES p v...] COMMAND c...): add_test with these labels (a tier, quick and/or
# full, among them). A test labelled gpu is left out where REDUCTION_GPU is OFF, and counted for
# the test run's summary (cmake/Skipped.cmake); SLOT: it takes one of REDUCTION_GPU_SLOTS.
function(reduction_test name)
  cmake_parse_arguments(T "SLOT" "WORKING_DIRECTORY" "LABELS;ENVIRONMENT;PROPERTIES;COMMAND" ${ARGN})
  if("gpu" IN_LIST T_LABELS AND NOT REDUCTION_GPU)
    foreach(tier quick full)
      if(tier IN_LIST T_LABELS)
        set_property(GLOBAL APPEND PROPERTY REDUCTION_UNREGISTERED_${tier} ${name})
      endif()
    endforeach()
    return()
  endif()
  if(NOT T_WORKING_DIRECTORY)
    set(T_WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
  endif()
  add_test(NAME ${name} COMMAND ${T_COMMAND} WORKING_DIRECTORY ${T_WORKING_DIRECTORY})
  set_tests_properties(${name} PROPERTIES LABELS "${T_LABELS}" ${T_PROPERTIES})
  if(T_ENVIRONMENT)
    set_tests_properties(${name} PROPERTIES ENVIRONMENT "${T_ENVIRONMENT}")
  endif()
  if(T_SLOT AND REDUCTION_GPU_SLOTS GREATER 0)
    set_tests_properties(${name} PROPERTIES RESOURCE_GROUPS gpus:1)
  endif()
endfunction()

# The quick run's arguments: FULL's (a list variable's name) with each option of QUICK's (one too;
# an option is a word starting with `--` and the words after it that do not) in place of the same
# option and its values, or added at the end.
function(reduction_quick_args out full_var quick_var)
  set(names "")
  foreach(w IN LISTS ${quick_var})
    if(w MATCHES "^--")
      list(APPEND names "${w}")
    endif()
  endforeach()
  set(result "")
  set(replaced OFF)
  foreach(w IN LISTS ${full_var})
    if(w MATCHES "^--")
      set(replaced OFF)
      if(w IN_LIST names)
        set(replaced ON)
      endif()
    endif()
    if(NOT replaced)
      list(APPEND result "${w}")
    endif()
  endforeach()
  list(APPEND result ${${quick_var}})
  set(${out} "${result}" PARENT_SCOPE)
endfunction()

function(reduction_day)
  cmake_parse_arguments(D "" "TARGET;SOURCE" "" ${ARGN})
  set(dir ${CMAKE_CURRENT_SOURCE_DIR})
  get_filename_component(day ${dir} NAME)

  add_executable(${D_TARGET} ${D_SOURCE})
  target_compile_options(${D_TARGET} PRIVATE
    $<$<COMPILE_LANGUAGE:CUDA>:${REDUCTION_CUDA_WARNINGS}>)
  set_target_properties(${D_TARGET} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)

  set(harness_src ${REDUCTION_ROOT}/tests/harness/${day}.cu)
  set(exes $<TARGET_FILE:${D_TARGET}>)
  if(EXISTS ${harness_src})
    add_executable(${D_TARGET}_harness ${harness_src})
    target_compile_options(${D_TARGET}_harness PRIVATE
      $<$<COMPILE_LANGUAGE:CUDA>:${REDUCTION_CUDA_WARNINGS}>)
    set_target_properties(${D_TARGET}_harness PROPERTIES
      RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)
    list(APPEND exes $<TARGET_FILE:${D_TARGET}_harness>)
  endif()
  # Bad usage and --help of the lesson and its test program, needing no GPU (cmake/usage.cmake).
  reduction_test(${day}.usage LABELS host quick full
    COMMAND ${CMAKE_COMMAND} "-DEXES=${exes}" -P ${REDUCTION_ROOT}/cmake/usage.cmake)

  # The README's own build line, as written but for the arch: any compiler output fails. The line
  # is sm_75's; sm_90's differs in the arch alone, which the build above compiles with warnings as
  # errors in both tiers, so its one-liner is the full tier's.
  foreach(arch sm_75 sm_90)
    set(tiers quick full)
    if(arch STREQUAL sm_90)
      set(tiers full)
    endif()
    reduction_test(${day}.oneliner.${arch} LABELS host ${tiers}
      COMMAND ${REDUCTION_PYTHON} ${REDUCTION_ROOT}/tools/capture.py --build-only --arch ${arch}
              ${dir} oneliner)
  endforeach()

  set(runner ${REDUCTION_ROOT}/tools/gpu_test.sh)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${dir}/runs.txt)
  file(STRINGS ${dir}/runs.txt lines)
  foreach(line IN LISTS lines)
    string(REGEX REPLACE "#.*" "" line "${line}")
    string(STRIP "${line}" line)
    if(line STREQUAL "")
      continue()
    endif()
    separate_arguments(words UNIX_COMMAND "${line}")
    list(POP_FRONT words mode)
    set(tool "")
    set(kind lesson)
    set(exe $<TARGET_FILE:${D_TARGET}>)
    set(tiers quick full)
    set(quick "")
    set(form "want 'MODE [--tool T] [--harness] [--full-only | --quick-args \"ARGS\"] -- ARGS'")
    while(words)
      list(POP_FRONT words w)
      if(w STREQUAL "--tool")
        list(POP_FRONT words tool)
      elseif(w STREQUAL "--harness")
        if(NOT TARGET ${D_TARGET}_harness)
          message(FATAL_ERROR "${dir}/runs.txt: ${mode} wants --harness but ${harness_src} is missing")
        endif()
        set(kind harness)
        set(exe $<TARGET_FILE:${D_TARGET}_harness>)
      elseif(w STREQUAL "--full-only" AND quick STREQUAL "")
        set(tiers full)
      elseif(w STREQUAL "--quick-args" AND tiers STREQUAL "quick;full" AND words)
        list(POP_FRONT words quick)
        separate_arguments(quick UNIX_COMMAND "${quick}")
        if(quick STREQUAL "")
          message(FATAL_ERROR "${dir}/runs.txt: ${mode}: --quick-args is empty; ${form}")
        endif()
        set(tiers full)
      elseif(w STREQUAL "--")
        break()
      else()
        message(FATAL_ERROR "${dir}/runs.txt: ${form} (--full-only or --quick-args, not both), "
          "got: ${line}")
      endif()
    endwhile()
    if(tool AND mode MATCHES "race-demo")
      set(how expect-race)
    elseif(tool)
      set(how sanitize-${tool})
    elseif(mode MATCHES "2pow3")
      set(how run-if-memory)
    elseif(mode MATCHES "^repeat-")
      set(how evidence-only)
    else()
      set(how run)
    endif()
    set(serial REDUCTION_SERIAL_TIMING=$<BOOL:${REDUCTION_SERIAL_TIMING}>)
    set(timing "")
    if(kind STREQUAL lesson AND NOT tool AND REDUCTION_SERIAL_TIMING)
      set(timing RUN_SERIAL TRUE)
    elseif(kind STREQUAL lesson AND NOT tool)
      set(timing RESOURCE_LOCK gpu-timed COST 1000)
    endif()
    # The line as written (both tiers, or the full tier's), then the quick tier's smaller run.
    reduction_test(${day}.gpu.${mode} LABELS gpu ${tiers} SLOT
      COMMAND ${runner} ${how} ${dir} ${mode} ${kind} ${exe} ${words}
      ENVIRONMENT ${serial} PROPERTIES SKIP_RETURN_CODE 77 COST 100 ${timing})
    if(quick)
      reduction_quick_args(args words quick)
      reduction_test(${day}.gpu.${mode}.quick LABELS gpu quick SLOT
        COMMAND ${runner} ${how} ${dir} ${mode} ${kind} ${exe} ${args}
        ENVIRONMENT ${serial} REDUCTION_QUICK_RUN=1 PROPERTIES SKIP_RETURN_CODE 77 COST 100 ${timing})
    endif()
  endforeach()
endfunction()
