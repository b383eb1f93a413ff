# cmake -DEXES="A;B" -P cmake/usage.cmake: the <day>.usage test (cmake/Days.cmake). Each program
# given a typo'd flag must exit 2 with one `error: ` line on stderr and nothing on stdout (bad usage
# refused before any device call: on a machine with no GPU a device call first exits 1), and with
# --help exit 0 with its `usage:` text on stdout and nothing on stderr.
foreach(exe IN LISTS EXES)
  execute_process(COMMAND ${exe} --no-such-option
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  string(REGEX MATCHALL "\n" newlines "${err}")
  list(LENGTH newlines lines)
  if(NOT rc EQUAL 2 OR NOT out STREQUAL "" OR NOT lines EQUAL 1 OR NOT err MATCHES "^error: ")
    message(FATAL_ERROR "${exe} --no-such-option: got exit ${rc}, ${lines} line(s) on stderr "
      "[${err}], stdout [${out}]; want exit 2, one `error: ` line on stderr, nothing on stdout")
  endif()
  execute_process(COMMAND ${exe} --help RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0 OR NOT out MATCHES "usage: " OR NOT err STREQUAL "")
    message(FATAL_ERROR "${exe} --help: got exit ${rc}, stderr [${err}], stdout [${out}]; want "
      "exit 0 and its `usage:` text on stdout, nothing on stderr")
  endif()
  message(STATUS "ok: ${exe}: a typo'd flag is exit 2 with one line; --help is exit 0")
endforeach()
