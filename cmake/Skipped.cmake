# include(cmake/Skipped.cmake): make ctest say why each skipped test was skipped. ctest shows a
# skipped test's output nowhere, --output-on-failure included; after the tests it runs the build
# tree's CTEST_CUSTOM_POST_TEST (CTestCustom.cmake), here tests/host/skipped.py, which prints each
# skipped test's own `SKIPPED: reason` line. Needs Python3_EXECUTABLE.
get_filename_component(skipped_py ${CMAKE_CURRENT_LIST_DIR}/../tests/host/skipped.py ABSOLUTE)
file(WRITE ${CMAKE_BINARY_DIR}/CTestCustom.cmake
  "set(CTEST_CUSTOM_POST_TEST \"\\\"${Python3_EXECUTABLE}\\\" \\\"${skipped_py}\\\" \\\"${CMAKE_BINARY_DIR}\\\"\")\n")
