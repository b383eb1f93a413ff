#!/usr/bin/env python3
"""Rewrite each README's expected-output blocks from the newest transcripts and its snippet blocks
from the source; with --check, change nothing and fail where a block is out of date (the host test).

Usage: tools/sync_readme.py [--check] [ROOT|DAY_DIR|README.md ...]     (default: the repository)

`<!-- expected-output: MODE -->` is followed by a fenced block holding the lines of the newest
evidence/DAY/MODE-YYYY-MM-DD-GPU.txt (tools/transcript.py's rule for "newest") from its first line
that starts with `|` to its last; `<!-- expected-output: MODE grep=REGEX -->` holds instead every
output line (below the header) that REGEX matches: a README quotes a measured line, never
retypes it. `<!-- expected-output: A+B+C median=COLUMN:ROW,ROW -->` holds, for each size and each
table caption's first word (stream, graph), the median of COLUMN over the newest transcripts of
modes A, B and C for those rows, the three values beside it (several runs of one program, quoted
without retyping a number). `<!-- snippet: NAME -->` is followed by a fenced block holding the
lines strictly between `// snippet: NAME` and `// end snippet` in the day's one .cu file. A missing block is
inserted. Errors (exit 1, also without --check): a marker with no transcript, or no matching line;
an unknown snippet name; a snippet shown twice in a README, or marked twice in the source. With
--check, a block that differs is an error too. Bad usage (an unknown flag, a path that is not
there) is one line on stderr and exit 2.
"""
import argparse
import glob
import os
import re
import sys

import transcript

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MARKER = re.compile(r"^\s*<!--\s*expected-output:\s*([a-z0-9][a-z0-9+-]*)(?:\s+grep=(.*?))?"
                    r"(?:\s+median=([^:]+):(.*?))?\s*-->\s*$")
SNIPPET = re.compile(r"^\s*<!--\s*snippet:\s*(\S+)\s*-->\s*$")
SRC_OPEN = re.compile(r"^\s*//\s*snippet:\s*(\S+)\s*$")
SRC_CLOSE = re.compile(r"^\s*//\s*end snippet\s*$")
FENCE = re.compile(r"^\s*(```+|~~~+)")


def show(path):
    """PATH relative to the current directory, unless that climbs out of it (for clickable output)."""
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


def readmes_of(args, ap):
    out = []
    for arg in args:
        a = os.path.abspath(arg)
        if os.path.isfile(a) and a.endswith(".md"):
            out.append(a)
        elif os.path.isdir(os.path.join(a, "code")) and not os.path.basename(a).startswith("day"):
            out += glob.glob(os.path.join(a, "code", "day*", "README.md"))
        elif os.path.isfile(os.path.join(a, "README.md")):
            out.append(os.path.join(a, "README.md"))
        else:
            ap.error(f"{arg}: " + ("no such file or directory" if not os.path.exists(a) else
                                   "not a README.md, a day directory nor a repository root"))
    return sorted(set(out))


def fenced_block_after(lines, i):
    """(open, close) indexes of the fenced block after line i (blank lines between), or None."""
    i += 1
    while i < len(lines) and not lines[i].strip():
        i += 1
    m = FENCE.match(lines[i]) if i < len(lines) else None
    if not m:
        return None
    for j in range(i + 1, len(lines)):
        s = lines[j].strip()
        if len(s) >= len(m.group(1)) and set(s) == {m.group(1)[0]}:
            return i, j
    return None


def wanted_lines(path, grep):
    t = transcript.Transcript(path)
    if grep is not None:
        return [l for l in t.lines[t.header_len:] if re.search(grep, l)]
    idx = [i for i, l in enumerate(t.lines) if l.startswith("|")]
    return t.lines[idx[0]:idx[-1] + 1] if idx else []


def median_lines(paths, column, rows):
    """Markdown rows: n, then per (table kind, row) `median (a / b / c)` of COLUMN across PATHS."""
    vals = {}
    for path in paths:
        for t in transcript.Transcript(path).tables:
            kind = t.caption.split(":")[0]
            for d in t.dicts():
                if d.get("row") in rows and transcript.number(d.get(column)) is not None:
                    vals.setdefault((int(d["n"]), kind, d["row"]), []).append(d[column])
    cols = sorted({(k, r) for _, k, r in vals}, key=lambda c: (c[0] != "stream", rows.index(c[1])))
    out = ["| n | " + " | ".join(f"{k}: {r}" for k, r in cols) + " |",
           "|---" * (len(cols) + 1) + "|"]
    for n in sorted({n for n, _, _ in vals}):
        cells = [sorted(vals.get((n, k, r), []), key=float) for k, r in cols]
        out.append(f"| {n} | " + " | ".join(
            f"{c[len(c) // 2]} ({' / '.join(vals[(n, k, r)])})" if len(c) == len(paths) else "-"
            for c, (k, r) in zip(cells, cols)) + " |")
    return out


def source_regions(day_dir, errors):
    """{name: (first line number, lines)} of the day's one .cu, or None with the reason."""
    sources = sorted(glob.glob(os.path.join(day_dir, "*.cu")))
    if len(sources) != 1:
        return None, f"{show(day_dir)} has {len(sources)} .cu files, not one"
    lines = open(sources[0], encoding="utf-8").read().splitlines()
    regions, name, start = {}, None, 0
    for i, line in enumerate(lines):
        m = SRC_OPEN.match(line)
        if m and name is None:
            name, start = m.group(1), i + 1
        elif SRC_CLOSE.match(line) and name is not None:
            if name in regions:
                errors.append(f"{show(sources[0])}:{start}: error: snippet `{name}` is marked twice "
                              f"(first at line {regions[name][0]})")
            else:
                regions[name] = (start, lines[start:i])
            name = None
    return regions, os.path.basename(sources[0])


def sync(readme, check_only):
    text = open(readme, encoding="utf-8").read()
    lines = text.splitlines()
    errors, changed = [], 0
    day_dir = os.path.dirname(readme)
    ev = os.path.join(os.path.dirname(os.path.dirname(day_dir)), "evidence",
                      os.path.basename(day_dir))
    regions, src = source_regions(day_dir, errors)
    seen = {}
    for i, line in enumerate(lines):
        m = SNIPPET.match(line)
        if m and m.group(1) in seen:
            errors.append(f"{show(readme)}:{i + 1}: error: snippet `{m.group(1)}` appears twice "
                          f"(first at line {seen[m.group(1)]})")
        elif m:
            seen[m.group(1)] = i + 1
    for i in reversed(range(len(lines))):  # bottom-up: an insertion keeps the indexes above
        em, sm = MARKER.match(lines[i]), SNIPPET.match(lines[i])
        if em:
            paths = [transcript.newest(ev, m) for m in em.group(1).split("+")]
            path = None if None in paths else paths[0]
            if em.group(3) and path:
                want = median_lines(paths, em.group(3), em.group(4).split(","))
            else:
                want = wanted_lines(path, em.group(2)) if path else None
            what, origin = f"expected-output `{em.group(1)}`", "the newest transcript"
            if not want:
                errors.append(f"{show(readme)}:{i + 1}: error: {what}: " + (
                    f"no transcript {show(ev)}/MODE-YYYY-MM-DD-GPU.txt for a mode of "
                    f"`{em.group(1)}`" if path is None
                    else f"{show(path)} has no line to copy"))
                continue
            origin += f" ({show(path)})"
        elif sm:
            name = sm.group(1)
            if regions is None or name not in regions:
                errors.append(f"{show(readme)}:{i + 1}: error: unknown snippet `{name}`: " +
                              (src if regions is None else f"no `// snippet: {name}` in {src}"))
                continue
            what, origin = f"snippet `{name}`", f"{src}:{regions[name][0]}"
            want = regions[name][1]
        else:
            continue
        block = fenced_block_after(lines, i)
        if block and lines[block[0] + 1:block[1]] == want:
            continue
        changed += 1
        if check_only:
            errors.append(f"{show(readme)}:{i + 1}: error: {what} "
                          f"{'drifted from' if sm else 'differs from'} {origin}: run "
                          "tools/sync_readme.py")
            continue
        if block is None:
            lines[i + 1:i + 1] = ["```" + ("cuda" if sm else "text")] + want + ["```"]
        else:
            lines[block[0] + 1:block[1]] = want
        print(f"{show(readme)}:{i + 1}: updated {what} from {origin}")
    if changed and not check_only:
        with open(readme, "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
    for e in errors:
        print(e)
    return len(errors), changed


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, usage=argparse.SUPPRESS,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="change nothing; fail where out of date")
    ap.add_argument("paths", nargs="*", default=[ROOT])
    a = ap.parse_args(argv)
    check_only = a.check
    readmes = readmes_of(a.paths, ap)
    problems = changed = 0
    for r in readmes:
        p, c = sync(r, check_only)
        problems, changed = problems + p, changed + c
    print(f"{'FAILED' if problems else 'ok'}: sync_readme: {len(readmes)} README(s), {changed} "
          f"block(s) {'out of date' if check_only else 'rewritten'}, {problems} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
