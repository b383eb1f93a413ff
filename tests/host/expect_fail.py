#!/usr/bin/env python3
"""Run a check on a known-bad fixture: it must exit 1 and print the expected fault.

Usage: expect_fail.py REGEX [REGEX ...] -- COMMAND [ARGS...]

Passes (exit 0) when COMMAND exits 1 and every REGEX matches a line of its output (an error line
that names the fixture file and line, for example). Exit 77 is passed through (the check was
skipped here, so the fixture proves nothing; CTest shows it as skipped). Anything else fails.
"""
import re
import subprocess
import sys


def main(argv):
    if "--" not in argv:
        print(__doc__)
        return 2
    k = argv.index("--")
    patterns, cmd = argv[:k], argv[k + 1:]
    p = subprocess.run(cmd, capture_output=True, text=True)
    out = p.stdout + p.stderr
    print(out, end="" if out.endswith("\n") or not out else "\n")
    if p.returncode == 77:
        return 77
    if p.returncode != 1:
        print(f"expect_fail: the check exited {p.returncode} on a known-bad fixture; want 1")
        return 1
    lines = out.splitlines()
    missing = [r for r in patterns if not any(re.search(r, line) for line in lines)]
    if missing:
        for r in missing:
            print(f"expect_fail: no output line matches /{r}/")
        return 1
    print(f"expect_fail: ok, the check failed as it should ({len(patterns)} expected line(s))")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
