#!/usr/bin/env python3
"""Code snippets in a day's README equal the marked regions of the day's .cu.

Usage: check_snippets.py ROOT|DAY_DIR ...

In code/DAY/README.md, `<!-- snippet: NAME -->` is followed by a fenced block whose lines must
equal the lines strictly between `// snippet: NAME` and `// end snippet` in the day's one .cu file.
Faults: a drifted block (the first differing README line is named), a NAME the source does not
mark, a NAME marked twice (in the README or in the source), an unclosed or nested source region,
a marker with no fenced block after it, a day dir without exactly one .cu when it uses snippets.
"""
import os
import re
import sys

import hostcheck

README_MARK = re.compile(r"^\s*<!--\s*snippet:\s*(\S+)\s*-->\s*$")
SRC_OPEN = re.compile(r"^\s*//\s*snippet:\s*(\S+)\s*$")
SRC_CLOSE = re.compile(r"^\s*//\s*end snippet\s*$")


def source_regions(path, report):
    lines = hostcheck.read_lines(path)
    regions, open_at = {}, None
    for i, line in enumerate(lines, 1):
        m = SRC_OPEN.match(line)
        if m:
            if open_at:
                report.error(path, i, f"`// snippet: {m.group(1)}` inside the open snippet "
                             f"`{open_at[0]}` (line {open_at[1]}); close it first")
            if m.group(1) in regions:
                report.error(path, i, f"snippet `{m.group(1)}` is marked twice (first at line "
                             f"{regions[m.group(1)][0]})")
            open_at = (m.group(1), i)
        elif SRC_CLOSE.match(line):
            if not open_at:
                report.error(path, i, "`// end snippet` with no open `// snippet: NAME`")
                continue
            name, start = open_at
            regions.setdefault(name, (start, lines[start:i - 1]))
            open_at = None
    if open_at:
        report.error(path, open_at[1], f"snippet `{open_at[0]}` is never closed "
                     "by `// end snippet`")
    return regions


def check_day(day_dir, report):
    readme = os.path.join(day_dir, "README.md")
    if not os.path.isfile(readme):
        report.error(readme, 1, "no README.md in the day directory")
        return 0
    lines = hostcheck.read_lines(readme)
    marks = [(i, m.group(1)) for i, l in enumerate(lines) if (m := README_MARK.match(l))]
    if not marks:
        return 0
    sources = hostcheck.day_sources(day_dir)
    if len(sources) != 1:
        report.error(readme, marks[0][0] + 1, f"snippets need the day's one .cu file; "
                     f"{hostcheck.show(day_dir)} has {len(sources)}")
        return 0
    src = sources[0]
    regions = source_regions(src, report)
    seen = {}
    for i, name in marks:
        if name in seen:
            report.error(readme, i + 1, f"snippet `{name}` appears twice in the README (first "
                         f"at line {seen[name]})")
            continue
        seen[name] = i + 1
        if name not in regions:
            report.error(readme, i + 1, f"unknown snippet `{name}`: {hostcheck.show(src)} has no "
                         f"`// snippet: {name}` ... `// end snippet` region (it has: "
                         f"{', '.join(sorted(regions)) or 'none'})")
            continue
        block = hostcheck.fenced_block_after(lines, i)
        if block is None:
            report.error(readme, i + 1, f"`<!-- snippet: {name} -->` is not followed by a "
                         "fenced block")
            continue
        a, b = block
        got, (start, want) = lines[a + 1:b], regions[name]
        if got != want:
            k = next((k for k in range(min(len(got), len(want))) if got[k] != want[k]),
                     min(len(got), len(want)))
            g = got[k] if k < len(got) else "(the block ends here)"
            w = want[k] if k < len(want) else "(the region ends here)"
            report.error(readme, a + 2 + k, f"snippet `{name}` drifted from "
                         f"{hostcheck.show(src)}:{start + 1 + k}: README has `{g}`, source has "
                         f"`{w}`")
    return len(marks)


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if argv else 2
    report = hostcheck.Report("snippets")
    days = []
    for a in argv:
        if not os.path.isdir(a):
            report.error(a, 1, "not a directory (give the repository root or a day directory)")
        else:
            days.extend(hostcheck.day_dirs_of(a))
    n = sum(check_day(d, report) for d in days)
    return report.finish(f"{len(days)} day(s), {n} snippet(s) equal their source regions")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
