#!/usr/bin/env python3
"""Rewrite each README's expected-output blocks from the newest transcripts, and its snippets
from the source.

Usage: tools/sync_readme.py [--check] [ROOT|DAY_DIR|README.md ...]     (default: the repository)

In code/DAY/README.md, a line `<!-- expected-output: MODE -->` is followed by a fenced block (a
```text block is inserted if none follows). Its content becomes the lines of the newest
evidence/DAY/MODE-YYYY-MM-DD-GPU.txt (newest by the date in the name, then by the `# date:` header)
from the first line that starts with `|` to the last line that starts with `|`, inclusive.
`<!-- expected-output: MODE grep=REGEX -->` takes instead every line of the program's output
(below the header) that REGEX matches: a README quotes a measured line, never retypes it.

A line `<!-- snippet: NAME -->` is followed by a fenced block (a ```cuda block is inserted if none
follows) whose content becomes the lines strictly between `// snippet: NAME` and `// end snippet`
in the day's .cu file (check_snippets.py checks the same).

Run it after committing new transcripts (tools/capture.py, tools/capture_all.sh); the host test
check_readme_output.py fails while a README and its newest transcript differ. --check changes
nothing and reports what it would change (exit 1 if anything). Exit 1 also when a marker has no
transcript (nothing to copy); such a block is left as it is.
"""
import glob
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MARKER = re.compile(r"^\s*<!--\s*expected-output:\s*([a-z0-9][a-z0-9-]*(?:\s+grep=.*?)?)\s*-->\s*$")
SNIPPET = re.compile(r"^\s*<!--\s*snippet:\s*(\S+)\s*-->\s*$")
SRC_OPEN = re.compile(r"^\s*//\s*snippet:\s*(\S+)\s*$")
SRC_CLOSE = re.compile(r"^\s*//\s*end snippet\s*$")
FENCE = re.compile(r"^\s*(```+|~~~+)")
HEADER_DATE = re.compile(r"^# date: (.*)$")


def show(path):
    """PATH relative to the current directory, or absolute when that would climb out of it."""
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


def readmes_of(args):
    out = []
    for a in args:
        a = os.path.abspath(a)
        if os.path.isfile(a):
            out.append(a)
        elif os.path.isdir(os.path.join(a, "code")) and not os.path.basename(a).startswith("day"):
            out.extend(glob.glob(os.path.join(a, "code", "day*", "README.md")))
        elif os.path.isfile(os.path.join(a, "README.md")):
            out.append(os.path.join(a, "README.md"))
    return sorted(set(out))


def evidence_dir(readme):
    """evidence/DAY for code/DAY/README.md (the repository root is two levels above the day)."""
    day_dir = os.path.dirname(os.path.abspath(readme))
    root = os.path.dirname(os.path.dirname(day_dir))
    return os.path.join(root, "evidence", os.path.basename(day_dir))


def newest_transcript(ev_dir, mode):
    """The newest ev_dir/MODE-YYYY-MM-DD-GPU.txt, or None."""
    name = re.compile(re.escape(mode) + r"-(\d{4}-\d{2}-\d{2})-[a-z0-9-]+\.txt$")
    best = None
    for path in glob.glob(os.path.join(ev_dir, "*.txt")):
        m = name.match(os.path.basename(path))
        if not m:
            continue
        with open(path, encoding="utf-8", errors="replace") as f:
            first = f.readline().rstrip("\n")
        h = HEADER_DATE.match(first)
        key = (m.group(1), h.group(1) if h else "", os.path.basename(path))
        if best is None or key > best[0]:
            best = (key, path)
    return best[1] if best else None


def split_spec(spec):
    """'MODE' or 'MODE grep=REGEX' (from the marker) -> (MODE, REGEX or None)."""
    mode, _, rest = spec.partition(" ")
    rest = rest.strip()
    return mode, (rest[len("grep="):] if rest.startswith("grep=") else None)


def table_lines(transcript, grep=None):
    """Lines of TRANSCRIPT from the first starting with '|' to the last, inclusive; or, with a
    grep REGEX, every line of the program's output (after the header) that the regex matches."""
    with open(transcript, encoding="utf-8", errors="replace") as f:
        lines = f.read().splitlines()
    if grep is not None:
        body = lines[lines.index("#") + 1:] if "#" in lines else lines
        return [line for line in body if re.search(grep, line)]
    idx = [i for i, line in enumerate(lines) if line.startswith("|")]
    return lines[idx[0]:idx[-1] + 1] if idx else []


def fenced_block_after(lines, marker_index):
    """(open, close) indexes of the fenced block after the marker (blank lines between allowed)."""
    i = marker_index + 1
    while i < len(lines) and not lines[i].strip():
        i += 1
    if i >= len(lines):
        return None
    m = FENCE.match(lines[i])
    if not m:
        return None
    fence = m.group(1)
    for j in range(i + 1, len(lines)):
        s = lines[j].strip()
        if len(s) >= len(fence) and set(s) == {fence[0]}:
            return i, j
    return None


def blocks(readme_lines):
    """[(marker_index, mode, (open, close) or None)] for each expected-output marker."""
    out = []
    for i, line in enumerate(readme_lines):
        m = MARKER.match(line)
        if m:
            out.append((i, m.group(1), fenced_block_after(readme_lines, i)))
    return out


def source_regions(day_dir):
    """({name: lines} of the `// snippet: NAME` regions of the day's one .cu, or None), why-not."""
    sources = sorted(glob.glob(os.path.join(day_dir, "*.cu")))
    if len(sources) != 1:
        return None, f"{show(day_dir)} has {len(sources)} .cu files, not one"
    with open(sources[0], encoding="utf-8") as f:
        lines = f.read().splitlines()
    regions, name, start = {}, None, 0
    for i, line in enumerate(lines):
        m = SRC_OPEN.match(line)
        if m and name is None:
            name, start = m.group(1), i + 1
        elif SRC_CLOSE.match(line) and name is not None:
            regions.setdefault(name, lines[start:i])
            name = None
    return regions, None


def sync(readme, check_only):
    with open(readme, encoding="utf-8") as f:
        text = f.read()
    lines = text.splitlines()
    problems, changed = 0, 0
    ev = evidence_dir(readme)
    # work bottom-up so indexes above stay valid
    for i, spec, block in reversed(blocks(lines)):
        mode, grep = split_spec(spec)
        t = newest_transcript(ev, mode)
        if t is None:
            print(f"{show(readme)}:{i + 1}: error: no transcript {show(ev)}/"
                  f"{mode}-YYYY-MM-DD-GPU.txt to copy")
            problems += 1
            continue
        want = table_lines(t, grep)
        if not want:
            print(f"{show(readme)}:{i + 1}: error: {show(t)} has no table line "
                  "(none starts with '|')")
            problems += 1
            continue
        if block is None:
            new = ["```text"] + want + ["```"]
            lines[i + 1:i + 1] = new
        else:
            a, b = block
            if lines[a + 1:b] == want:
                continue
            lines[a + 1:b] = want
        changed += 1
        verb = "would update" if check_only else "updated"
        print(f"{show(readme)}:{i + 1}: {verb} expected-output {mode} from {show(t)}")
    regions, why = source_regions(os.path.dirname(os.path.abspath(readme)))
    for i, line in reversed(list(enumerate(lines))):
        m = SNIPPET.match(line)
        if not m:
            continue
        name = m.group(1)
        if regions is None or name not in regions:
            print(f"{show(readme)}:{i + 1}: error: snippet `{name}`: "
                  f"{why or 'no `// snippet: ' + name + '` region in the source'}")
            problems += 1
            continue
        block = fenced_block_after(lines, i)
        if block is None:
            lines[i + 1:i + 1] = ["```cuda"] + regions[name] + ["```"]
        else:
            a, b = block
            if lines[a + 1:b] == regions[name]:
                continue
            lines[a + 1:b] = regions[name]
        changed += 1
        verb = "would update" if check_only else "updated"
        print(f"{show(readme)}:{i + 1}: {verb} snippet {name} from the source")
    if changed and not check_only:
        with open(readme, "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + ("\n" if text.endswith("\n") or not text else ""))
    return problems, changed


def main(argv):
    check_only = "--check" in argv
    args = [a for a in argv if a != "--check"]
    if any(a in ("-h", "--help") for a in args):
        print(__doc__)
        return 0
    readmes = readmes_of(args or [ROOT])
    problems = changed = 0
    for r in readmes:
        p, c = sync(r, check_only)
        problems += p
        changed += c
    print(f"sync_readme: {len(readmes)} README(s), {changed} block(s) "
          f"{'out of date' if check_only else 'rewritten'}, {problems} problem(s)")
    return 1 if problems or (check_only and changed) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
