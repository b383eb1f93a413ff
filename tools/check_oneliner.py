#!/usr/bin/env python3
"""Compile a day's .cu with the one-line nvcc build its README gives, as written, for one arch.

Usage: tools/check_oneliner.py DAY_DIR --arch sm_75

The line is the first 'nvcc ...' line after the '<!-- build-line -->' marker in DAY_DIR/README.md.
It runs from the repository root exactly as written, except that -arch=sm_XX becomes the named
arch and the output file goes to a temporary directory. Any compiler output (a warning included)
or a non-zero exit fails the check, with README.md:LINE named.
"""
import argparse
import os
import re
import shlex
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MARK = "<!-- build-line -->"


def find_line(readme):
    with open(readme, encoding="utf-8") as f:
        lines = f.read().splitlines()
    for i, line in enumerate(lines):
        if line.strip() == MARK:
            for j in range(i + 1, min(i + 6, len(lines))):
                if lines[j].strip().startswith("nvcc "):
                    return j + 1, lines[j].strip()
    return None, None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("day_dir")
    ap.add_argument("--arch", required=True)
    a = ap.parse_args()
    readme = os.path.join(a.day_dir, "README.md")
    if not os.path.exists(readme):
        print(f"{readme}:1: error: the day has no README.md")
        return 1
    lineno, line = find_line(readme)
    where = f"{os.path.relpath(readme, ROOT)}:{lineno}"
    if line is None:
        print(f"{os.path.relpath(readme, ROOT)}:1: error: no 'nvcc ...' line after {MARK}")
        return 1
    if not re.search(r"-arch=sm_\d+", line):
        print(f"{where}: error: the build line names no -arch=sm_XX: {line}")
        return 1
    words = shlex.split(re.sub(r"-arch=sm_\d+", f"-arch={a.arch}", line))
    if "-o" not in words:
        print(f"{where}: error: the build line has no -o NAME: {line}")
        return 1
    tmp = tempfile.mkdtemp(prefix="oneliner-")
    words[words.index("-o") + 1] = os.path.join(tmp, "a.out")
    p = subprocess.run(words, cwd=ROOT, capture_output=True, text=True)
    out = (p.stdout + p.stderr).strip()
    if p.returncode != 0 or out:
        print(f"{where}: error: the README build line {'failed' if p.returncode else 'warned'} "
              f"for {a.arch} (exit {p.returncode}): {' '.join(words)}")
        print(out)
        return 1
    print(f"ok: {where} builds for {a.arch} with no output: {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
