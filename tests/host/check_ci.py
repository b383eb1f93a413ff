#!/usr/bin/env python3
"""`.ci/run` runs exactly the README's test command, and the workflows run `.ci/run`.

Usage: check_ci.py [ROOT]      (default: the repository)

The test command is the first non-empty line of the fenced block that follows the
`<!-- test-command -->` marker in ROOT/README.md. ROOT/.ci/run must hold a line that is that
command verbatim (leading and trailing blanks aside). Every .github/workflows/*.yml that exists
must mention `.ci/run` (CI builds the way a learner is told to).
"""
import glob
import os
import re
import sys

import hostcheck

MARK = re.compile(r"^\s*<!--\s*test-command\s*-->\s*$")


def main(argv):
    if argv and argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0
    root = argv[0] if argv else hostcheck.REPO_ROOT
    report = hostcheck.Report("ci")
    readme = os.path.join(root, "README.md")
    run = os.path.join(root, ".ci", "run")
    command = None
    if not os.path.isfile(readme):
        report.error(readme, 1, "no README.md")
    else:
        lines = hostcheck.read_lines(readme)
        marks = [i for i, l in enumerate(lines) if MARK.match(l)]
        if not marks:
            report.error(readme, 1, "no `<!-- test-command -->` marker")
        else:
            block = hostcheck.fenced_block_after(lines, marks[0])
            body = [l.strip() for l in lines[block[0] + 1:block[1]] if l.strip()] if block else []
            if not body:
                report.error(readme, marks[0] + 1, "`<!-- test-command -->` is not followed by a "
                             "fenced block holding the command")
            else:
                command = body[0]
    if not os.path.isfile(run):
        report.error(run, 1, "no .ci/run")
    elif command is not None:
        if not any(l.strip() == command for l in hostcheck.read_lines(run)):
            report.error(run, 1, f"does not run the README's test command verbatim: `{command}` "
                         f"({hostcheck.show(readme)}:{marks[0] + 1})")
    for wf in sorted(glob.glob(os.path.join(root, ".github", "workflows", "*.yml"))):
        with open(wf, encoding="utf-8") as f:
            if ".ci/run" not in f.read():
                report.error(wf, 1, "the workflow never runs .ci/run")
    return report.finish(f".ci/run runs `{command}`")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
