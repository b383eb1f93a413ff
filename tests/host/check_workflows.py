#!/usr/bin/env python3
"""Lint the GitHub workflow files against the GitHub-workflow JSON schema, offline.

Usage: check_workflows.py [ROOT|FILE.yml ...]     (default: the repository's .github/workflows/)

Runs `check-jsonschema --builtin-schema vendor.github-workflows FILES` (the schema ships inside
check-jsonschema, so no network is needed). Skipped (exit 77, reason printed) when check-jsonschema
is missing: python3 -m pip install -r tools/requirements.txt.
"""
import glob
import os
import shutil
import subprocess
import sys

import hostcheck


def main(argv):
    if argv and argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0
    files = []
    for a in argv or [hostcheck.REPO_ROOT]:
        if os.path.isdir(a):
            files += sorted(glob.glob(os.path.join(a, ".github", "workflows", "*.y*ml")))
        else:
            files.append(a)
    report = hostcheck.Report("workflows")
    if not files:
        report.error(os.path.join(argv[0] if argv else hostcheck.REPO_ROOT, ".github/workflows"),
                     1, "no workflow file")
        return report.finish("")
    exe = shutil.which("check-jsonschema")
    if not exe:
        print("SKIPPED: check-jsonschema not found (python3 -m pip install -r "
              "tools/requirements.txt)")
        return hostcheck.SKIP
    p = subprocess.run([exe, "--builtin-schema", "vendor.github-workflows"] + files,
                       capture_output=True, text=True)
    out = (p.stdout + p.stderr).strip()
    if p.returncode != 0:
        for line in out.splitlines():
            print(line)
        # check-jsonschema names FILE::$.json.path; give each file one FILE:1: line as well
        for f in files:
            if f"{f}::" in out or f"{os.path.relpath(f)}::" in out:
                report.error(f, 1, "does not validate against the GitHub workflow schema "
                             "(details above)")
        if not report.faults:
            report.error(files[0], 1, f"check-jsonschema failed (exit {p.returncode})")
    return report.finish(f"{len(files)} workflow file(s) validate against the GitHub workflow "
                         "schema")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
