#!/usr/bin/env python3
"""Usage: skipped.py BUILD_DIR. Prints why each test of the last ctest run was skipped: ctest shows
a skipped test's output nowhere, so it runs this after its tests (CTEST_CUSTOM_POST_TEST).

Reads BUILD_DIR/Testing/Temporary/LastTest.log as ctest still writes it (LastTest.log.tmp before
CTest 4, LastTest.log.tmpXXXXX from CTest 4: the newest) and prints, for each test whose output has
a line starting `SKIPPED:` (every skip here prints one, nothing else does), the test's name and that
line. Exit 0 always: a failing post-test command would fail the test run.
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
    logs = glob.glob(glob.escape(log) + ".tmp*") or [log] * os.path.exists(log)  # .tmp*: still open
    if not logs:
        return 0
    log, name, seen = max(logs, key=os.path.getmtime), None, {}
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
