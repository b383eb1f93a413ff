# reduction_day(TARGET name SOURCE file.cu)
#
# One lesson day: its executable (built for CMAKE_CUDA_ARCHITECTURES with warnings as errors), its
# test program tests/harness/<day>.cu when there is one (the lesson file included with its main()
# switched off), two host tests that compile the file with the README's one-line nvcc build for
# sm_75 and sm_90, a host test of both programs' bad usage and --help (<day>.usage), and one GPU
# test for each line of the day's run list, code/<day>/runs.txt — the same list the capture
# writes transcripts of (REDUCTION_CAPTURE, below):
#
#   MODE [--tool TOOL] [--harness] -- ARGS...
#
#   --harness   run the test program instead of the lesson program
#   --tool T    run under compute-sanitizer --tool T, which must report zero errors; a MODE that
#               contains `race-demo` must instead make racecheck REPORT a hazard (the exhibit)
#   a MODE that contains `2pow3` is skipped where the device lacks the memory for it
#   a MODE that starts with `repeat-` is evidence only: another process of the `default` run, for
#               the README's medians; it checks nothing `default` does not, so it runs (and is
#               captured) only with REDUCTION_CAPTURE set and is skipped, with that reason, otherwise
#
# GPU tests skip (exit 77, reason printed) where no CUDA device is present. Lesson runs that time
# (no --tool) take the resource lock `gpu-timed`: one at a time, so that two runs of 16 GiB never
# share a smaller card, and first (COST 1000), since one after another they are the longest chain
# of the pass; the sanitizer and harness runs (COST 100: the longest of the rest) go beside them
# where REDUCTION_GPU_SLOTS allows more than one GPU test at once. Their checks are exact, so
# sharing the GPU changes no verdict, only the times printed. A build
# for the evidence, configured with REDUCTION_CAPTURE set (or -DREDUCTION_SERIAL_TIMING=ON), makes
# each timed run RUN_SERIAL instead: it has the GPU to itself. With REDUCTION_CAPTURE=DIR in
# ctest's environment each test also writes its transcript (tools/gpu_test.sh, which refuses a
# build not configured so): one pass gives the GPU tests and the evidence. With REDUCTION_GPU_SLOTS
# above 0 (CMakeLists.txt; the default, 1, runs the GPU tests one at a time) every GPU test also
# takes one of that many slots.
set(REDUCTION_ROOT ${CMAKE_CURRENT_LIST_DIR}/..)
if(DEFINED ENV{REDUCTION_CAPTURE}) # read at every configure, so a cached OFF never sticks
  set(REDUCTION_SERIAL_TIMING ON)
endif()

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
  add_test(NAME ${day}.usage
    COMMAND ${CMAKE_COMMAND} "-DEXES=${exes}" -P ${REDUCTION_ROOT}/cmake/usage.cmake)
  set_tests_properties(${day}.usage PROPERTIES LABELS host)

  foreach(arch sm_75 sm_90)
    # The README's own build line, as written but for the arch: any compiler output fails.
    add_test(NAME ${day}.oneliner.${arch}
      COMMAND ${Python3_EXECUTABLE} ${REDUCTION_ROOT}/tools/capture.py --build-only --arch ${arch}
              ${dir} oneliner)
    set_tests_properties(${day}.oneliner.${arch} PROPERTIES LABELS host)
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
      elseif(w STREQUAL "--")
        break()
      else()
        message(FATAL_ERROR "${dir}/runs.txt: want 'MODE [--tool T] [--harness] -- ARGS', got: ${line}")
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
    add_test(NAME ${day}.gpu.${mode} COMMAND ${runner} ${how} ${dir} ${mode} ${kind} ${exe} ${words})
    set_tests_properties(${day}.gpu.${mode} PROPERTIES LABELS gpu SKIP_RETURN_CODE 77 COST 100
      ENVIRONMENT REDUCTION_SERIAL_TIMING=$<BOOL:${REDUCTION_SERIAL_TIMING}>)
    if(REDUCTION_GPU_SLOTS GREATER 0) # one of the slots (CMakeLists.txt)
      set_tests_properties(${day}.gpu.${mode} PROPERTIES RESOURCE_GROUPS gpus:1)
    endif()
    if(kind STREQUAL lesson AND NOT tool AND REDUCTION_SERIAL_TIMING)
      set_tests_properties(${day}.gpu.${mode} PROPERTIES RUN_SERIAL TRUE)
    elseif(kind STREQUAL lesson AND NOT tool)
      set_tests_properties(${day}.gpu.${mode} PROPERTIES RESOURCE_LOCK gpu-timed COST 1000)
    endif()
  endforeach()
endfunction()
