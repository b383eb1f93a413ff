#!/usr/bin/env python3
"""Print why each test of the last ctest run was skipped: ctest shows a skipped test's output
nowhere (not with --output-on-failure either), so it runs this after its tests
(CTEST_CUSTOM_POST_TEST, which tests/CMakeLists.txt writes into the build tree's CTestCustom.cmake).

Usage: skipped.py BUILD_DIR

Reads BUILD_DIR/Testing/Temporary/LastTest.log as ctest still writes it (LastTest.log.tmp before
CTest 4, LastTest.log.tmpXXXXX with a random suffix from CTest 4: the newest such file) and
prints, for each test whose output has a line starting `SKIPPED:`, the test's name and that line.
Every skip in this repository prints one and nothing else does (tools/gpu_test.sh, tools/cuda12.sh,
the host checks' exit 77, a missing tool): ctest's log does not tell a skip from a pass. Exit 0
always: a failing post-test command would fail the test run.
"""
import glob
import os
import re
import sys

def main(argv):
    if len(argv) != 1:
        print("skipped.py: error: want BUILD_DIR", file=sys.stderr)
        return 0
    log = os.path.join(argv[0], "Testing", "Temporary", "LastTest.log")
    written = glob.glob(glob.escape(log) + ".tmp*")  # this run's log, still open
    if not written and not os.path.exists(log):
        return 0
    log = max(written, key=os.path.getmtime) if written else log
    name, seen = None, {}
    with open(log, encoding="utf-8", errors="replace") as f:
        for line in f:
            if m := re.match(r"^\d+/\d+ Test: (.+)$", line.rstrip("\n")):
                name = m.group(1)
            elif name and line.startswith("SKIPPED:"):
                seen.setdefault(name, line.strip())
    if seen:
        print(f"\nWhy each skipped test was skipped ({len(seen)}):")
        for name in sorted(seen):
            print(f"  {name}: {seen[name]}")
    return 0

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
