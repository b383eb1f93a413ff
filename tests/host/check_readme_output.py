#!/usr/bin/env python3
"""Each README's expected output equals the table of the newest transcript it names.

Usage: check_readme_output.py ROOT|DAY_DIR|README.md ...

For each `<!-- expected-output: MODE -->` in code/DAY/README.md, the fenced block that follows must
equal, line for line, evidence/DAY/MODE-YYYY-MM-DD-GPU.txt (the newest: by the date in the name,
then by its `# date:` header) from its first line starting with `|` to its last such line.
A mismatch names README:LINE of the first differing line. A marker with no fenced block after it,
or with no transcript yet, is a fault. Fix: tools/sync_readme.py (after committing the transcript).
"""
import os
import sys

import hostcheck

sys.path.insert(0, os.path.join(hostcheck.REPO_ROOT, "tools"))
import sync_readme  # noqa: E402  (one reading of the markers and transcripts for both tools)


def check(readme, report):
    lines = hostcheck.read_lines(readme)
    ev = sync_readme.evidence_dir(readme)
    found = sync_readme.blocks(lines)
    for i, spec, block in found:
        mode, grep = sync_readme.split_spec(spec)
        if block is None:
            report.error(readme, i + 1, f"`<!-- expected-output: {mode} -->` is not followed by "
                         "a fenced block (``` ... ```)")
            continue
        t = sync_readme.newest_transcript(ev, mode)
        if t is None:
            report.error(readme, i + 1, f"expected-output `{mode}`: no transcript "
                         f"{hostcheck.show(ev)}/{mode}-YYYY-MM-DD-GPU.txt yet (capture one with "
                         "tools/capture.py on a GPU, commit it, run tools/sync_readme.py)")
            continue
        want = sync_readme.table_lines(t, grep)
        a, b = block
        got = lines[a + 1:b]
        if got == want:
            continue
        k = next((k for k in range(min(len(got), len(want))) if got[k] != want[k]),
                 min(len(got), len(want)))
        line = a + 2 + k
        w = want[k] if k < len(want) else "(the table ends before this line)"
        g = got[k] if k < len(got) else "(the block ends before this line)"
        report.error(readme, line, f"expected-output `{mode}` differs from the newest transcript "
                     f"{hostcheck.show(t)}: README has `{g}`, transcript has `{w}` "
                     "(run tools/sync_readme.py)")
    return len(found)


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if argv else 2
    report = hostcheck.Report("readme-output")
    for a in argv:
        if not os.path.exists(a):
            report.error(a, 1, "no such file or directory")
        elif os.path.isdir(a) and not sync_readme.readmes_of([a]):
            report.error(a, 1, "no README.md here")
    readmes = sync_readme.readmes_of([a for a in argv if os.path.exists(a)])
    n = sum(check(r, report) for r in readmes)
    return report.finish(f"{len(readmes)} README(s), {n} expected-output block(s) equal their "
                         "newest transcript")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
