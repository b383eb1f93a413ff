# reduction_day(TARGET name SOURCE file.cu [GPU_RUNS "label|args" ...] [SANITIZE_ARGS args...])
#
# One lesson day: its executable (built for CMAKE_CUDA_ARCHITECTURES with warnings as errors),
# two host tests that compile the file with the README's one-line nvcc build for sm_75 and sm_90,
# and GPU tests that run the executable (skipped with a reason, exit 77, when no device is present).
#   GPU_RUNS       each entry "label|arg1 arg2 ...": a test <day>.gpu.<label> that needs exit 0.
#                  A label starting with "big-" is skipped where the device lacks the memory.
#   SANITIZE_ARGS  arguments for the compute-sanitizer tests (memcheck, racecheck, synccheck,
#                  initcheck), each of which needs zero errors.
#   RACE_DEMO_ARGS arguments that run a marked race exhibit: racecheck must REPORT a hazard.
set(REDUCTION_ROOT ${CMAKE_CURRENT_LIST_DIR}/..)

function(reduction_day)
  cmake_parse_arguments(D "" "TARGET;SOURCE" "GPU_RUNS;SANITIZE_ARGS;RACE_DEMO_ARGS" ${ARGN})
  set(dir ${CMAKE_CURRENT_SOURCE_DIR})
  get_filename_component(day ${dir} NAME)

  add_executable(${D_TARGET} ${D_SOURCE})
  target_compile_options(${D_TARGET} PRIVATE
    $<$<COMPILE_LANGUAGE:CUDA>:${REDUCTION_CUDA_WARNINGS}>)
  set_target_properties(${D_TARGET} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)

  foreach(arch sm_75 sm_90)
    add_test(NAME ${day}.oneliner.${arch}
      COMMAND ${Python3_EXECUTABLE} ${REDUCTION_ROOT}/tools/check_oneliner.py ${dir} --arch ${arch})
    set_tests_properties(${day}.oneliner.${arch} PROPERTIES LABELS host)
  endforeach()

  set(runner ${REDUCTION_ROOT}/tools/gpu_test.sh)
  foreach(entry IN LISTS D_GPU_RUNS)
    string(FIND "${entry}" "|" bar)
    string(SUBSTRING "${entry}" 0 ${bar} label)
    math(EXPR from "${bar} + 1")
    string(SUBSTRING "${entry}" ${from} -1 args)
    separate_arguments(args UNIX_COMMAND "${args}")
    set(mode run)
    if(label MATCHES "^big-")
      set(mode run-if-memory)
    endif()
    add_test(NAME ${day}.gpu.${label} COMMAND ${runner} ${mode} $<TARGET_FILE:${D_TARGET}> ${args})
    set_tests_properties(${day}.gpu.${label} PROPERTIES LABELS gpu SKIP_RETURN_CODE 77)
  endforeach()
  if(D_SANITIZE_ARGS)
    foreach(tool memcheck racecheck synccheck initcheck)
      add_test(NAME ${day}.gpu.sanitizer.${tool}
        COMMAND ${runner} sanitize-${tool} $<TARGET_FILE:${D_TARGET}> ${D_SANITIZE_ARGS})
      set_tests_properties(${day}.gpu.sanitizer.${tool} PROPERTIES LABELS gpu SKIP_RETURN_CODE 77)
    endforeach()
  endif()
  if(D_RACE_DEMO_ARGS)
    add_test(NAME ${day}.gpu.sanitizer.race-demo-flagged
      COMMAND ${runner} expect-race $<TARGET_FILE:${D_TARGET}> ${D_RACE_DEMO_ARGS})
    set_tests_properties(${day}.gpu.sanitizer.race-demo-flagged
      PROPERTIES LABELS gpu SKIP_RETURN_CODE 77)
  endif()
endfunction()
