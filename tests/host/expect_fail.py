#!/usr/bin/env python3
"""Run a check on a known-bad fixture: it must exit 1 and print the expected fault.

Usage: expect_fail.py [--usage] REGEX [REGEX ...] -- COMMAND [ARGS...]

Passes (exit 0) when COMMAND exits 1 and every REGEX matches a line of its output (an error line
that names the fixture file and line, for example). With --usage, COMMAND was given bad usage (a
typo'd flag, a missing path): it must exit 2 and print exactly one line, on stderr, that every
REGEX matches. Exit 77 is passed through (the check was skipped here, so the fixture proves
nothing; CTest shows it as skipped). Anything else fails.
"""
import re
import subprocess
import sys


def main(argv):
    usage = argv[:1] == ["--usage"]
    argv = argv[1:] if usage else argv
    if "--" not in argv:
        print("expect_fail.py: error: want [--usage] REGEX... -- COMMAND [ARGS...]", file=sys.stderr)
        return 2
    k = argv.index("--")
    patterns, cmd = argv[:k], argv[k + 1:]
    p = subprocess.run(cmd, capture_output=True, text=True)
    out = p.stdout + p.stderr
    print(out, end="" if out.endswith("\n") or not out else "\n")
    if p.returncode == 77:
        return 77
    want = 2 if usage else 1
    if p.returncode != want:
        print(f"expect_fail: the command exited {p.returncode}; want {want}")
        return 1
    lines = p.stderr.splitlines() if usage else out.splitlines()
    if usage and (p.stdout or len(lines) != 1):
        print(f"expect_fail: want one line on stderr and nothing on stdout; got {len(lines)} "
              f"line(s) on stderr and {len(p.stdout.splitlines())} on stdout")
        return 1
    missing = [r for r in patterns if not any(re.search(r, line) for line in lines)]
    if missing:
        for r in missing:
            print(f"expect_fail: no output line matches /{r}/")
        return 1
    print(f"expect_fail: ok, the command failed as it should ({len(patterns)} expected line(s))")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
