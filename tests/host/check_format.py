#!/usr/bin/env python3
"""Every day file is formatted by the repository's .clang-format (clang-format 19).

Usage: check_format.py [--clang-format BIN] ROOT|DAY_DIR|FILE.cu ...

Runs `clang-format --dry-run -Werror --style=file:<repo>/.clang-format FILE` on each file; each
unformatted spot is reported as FILE:LINE:COL: error: ... Skipped (exit 77, reason printed) when
clang-format is missing or is not version 19.x (other versions format differently); install
it with `python3 -m pip install -r tools/requirements.txt`. Fix: `clang-format -i FILE`.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

import hostcheck

SHOW = 8  # clang-format spots printed in full


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--clang-format", default=os.environ.get("CLANG_FORMAT", "clang-format"))
    ap.add_argument("--style", default=os.path.join(hostcheck.REPO_ROOT, ".clang-format"))
    ap.add_argument("paths", nargs="+")
    a = ap.parse_args(argv)
    exe = shutil.which(a.clang_format)
    if not exe:
        print(f"SKIPPED: {a.clang_format} not found; install clang-format 19 "
              "(python3 -m pip install -r tools/requirements.txt)")
        return hostcheck.SKIP
    try:
        version = subprocess.run([exe, "--version"], capture_output=True, text=True).stdout
    except OSError as e:
        print(f"SKIPPED: cannot run {exe}: {e}")
        return hostcheck.SKIP
    m = re.search(r"version (\d+)\.", version)
    if not m or m.group(1) != "19":
        first_line = version.strip().splitlines()[0] if version.strip() else "no version"
        print(f"SKIPPED: {exe} is `{first_line}`, not 19.x; the format check needs "
              "clang-format 19 (python3 -m pip install -r tools/requirements.txt)")
        return hostcheck.SKIP
    report = hostcheck.Report("format")
    for p in a.paths:
        if not os.path.exists(p):
            report.error(p, 1, "no such file or directory")
        elif os.path.isdir(p) and not hostcheck.cu_files_of([p]):
            report.error(p, 1, "no .cu file here")
    files = hostcheck.cu_files_of([p for p in a.paths if os.path.exists(p)])
    for path in files:
        q = subprocess.run([exe, "--dry-run", "-Werror", f"--style=file:{a.style}", path],
                           capture_output=True, text=True)
        if q.returncode != 0:
            report.faults += 1
            out = (q.stdout + q.stderr).strip().splitlines()
            # clang-format prints FILE:LINE:COL: error: code should be clang-formatted ...,
            # the source line and a caret; show the first few spots in full
            spots = [k for k, line in enumerate(out) if ": error: " in line]
            shown = out[:spots[SHOW]] if len(spots) > SHOW else out
            print("\n".join(shown) if shown else f"{hostcheck.show(path)}:1: error: "
                  f"clang-format exit {q.returncode}")
            if len(spots) > SHOW:
                print(f"... and {len(spots) - SHOW} more spot(s)")
            first = re.match(r"^.*?:(\d+):", out[spots[0]]) if spots else None
            print(f"{hostcheck.show(path)}:{first.group(1) if first else 1}: error: not "
                  f"formatted by .clang-format, {len(spots)} spot(s) "
                  f"(fix: clang-format -i {hostcheck.show(path)})")
    return report.finish(f"{len(files)} file(s) formatted ({version.strip()})")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
