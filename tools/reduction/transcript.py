"""Reading a transcript (record.py writes them): its header, tables and verdict.

Transcript(path) reads one evidence file, evidence/DAY/MODE.txt (one a mode: a capture overwrites
it); runs(day_dir) reads a day's run list. Python's standard library only.
"""
import hashlib
import os
import re
import shlex

HEADER = [(k, re.compile(f"^# {k}: {v}$")) for k, v in (  # record.write's order; `# source:`
    ("date", r"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) UTC"), ("gpu", r"(\S.*)"),  # lines after build
    ("driver", r"(\S.*)"), ("cuda", r"(\S.*)"), ("build", r"(nvcc \S.*)"),
    ("command", r"(\S.*)"), ("exit code", r"(-?\d+)"))] + [("end of header", re.compile("^(#)$"))]
OUTPUT = re.compile(r"^# output: sha256=([0-9a-f]{64})$")  # the seal; older transcripts lack it
SOURCE = re.compile(r"^# source: (?P<path>\S+) sha256=[0-9a-f]{64} "
                    r"fingerprint=(?P<fp>[0-9a-f]{64})$")
RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")

def split_row(line):
    return [c.strip() for c in line.strip().removeprefix("|").removesuffix("|").split("|")]

def number(cell):
    """A table cell as a float; None for '-', '' or anything that is not a number."""
    try:
        return float(cell.replace(",", ""))
    except (AttributeError, ValueError):
        return None

class Table:
    """A Markdown pipe table: `line` (1-based, the header row), `head`, `rows` as
    [(line, cells)], and `caption`, the nearest non-empty text line above it."""

    def __init__(self, line, head, rows, caption):
        self.line, self.head, self.rows, self.caption = line, head, rows, caption

    def dicts(self):
        return [dict(zip(self.head, c)) for _, c in self.rows if len(c) == len(self.head)]

class Transcript:
    """One evidence file. `header`: {key: (value, line)} for the keys of HEADER that were found in
    order (reading stops at the first that is not); `sources`: [(line, match of SOURCE)];
    `seal`: (the `# output: sha256=` value, its line) or None (unsealed: written before the seal);
    `body_sha256`: the sha256 of the bytes below the header, which the seal must equal;
    `header_len`; `lines`; `mode`, the file name less `.txt`; `tables` of the output; `result`:
    the last non-empty output line (compute-sanitizer's `=========` lines aside) and its line."""

    def __init__(self, path):
        with open(path, "rb") as f:
            raw = f.read()
        self.path, self.mode = path, os.path.basename(path)[:-len(".txt")]
        self.lines = lines = raw.decode("utf-8", errors="replace").splitlines()
        self.header, self.sources, self.seal, k = {}, [], None, 0
        at = lambda rx: rx.match(lines[k]) if k < len(lines) else None  # noqa: E731
        for key, rx in HEADER:
            while key == "command" and (m := at(SOURCE)):
                self.sources.append((k + 1, m))
                k += 1
            if key == "end of header" and (m := at(OUTPUT)):
                self.seal, k = (m.group(1), k + 1), k + 1
            if not (m := at(rx)):
                break
            self.header[key], k = (m.group(1), k + 1), k + 1
        self.header_len = k
        self.body_sha256 = hashlib.sha256(raw.split(b"\n", k)[-1] if k else raw).hexdigest()
        self.tables = tables(lines, k)
        out = [(i + 1, l.strip()) for i, l in enumerate(lines)
               if i >= k and l.strip() and not l.startswith("=========")]
        self.result = out[-1] if out else (len(lines), "")

    def value(self, key):
        return self.header[key][0] if key in self.header else None

def tables(lines, first=0):
    out, i = [], first
    while i + 1 < len(lines):
        if not (lines[i].lstrip().startswith("|") and RULE.match(lines[i + 1])):
            i += 1
            continue
        j = next((j for j in range(i + 2, len(lines)) if not lines[j].lstrip().startswith("|")),
                 len(lines))
        caption = next((lines[c].strip() for c in range(i - 1, first - 1, -1) if lines[c].strip()),
                       "")
        out.append(Table(i + 1, split_row(lines[i]), [(r + 1, split_row(lines[r]))
                                                      for r in range(i + 2, j)], caption))
        i = j
    return out

def failed(path, code):
    """True when the transcript at PATH records a failed run: exit code CODE non-zero, unless a
    race-demo run (its sanitizer must flag the exhibit) or a note beside it (MODE.note.md) says."""
    return bool(code) and "race-demo" not in os.path.basename(path) and \
        not os.path.exists(path[:-len(".txt")] + ".note.md")

def runs(day_dir):
    """{MODE: [its words after MODE]} of DAY_DIR/runs.txt, the day's one run list (CMake reads it
    too: cmake/Days.cmake); {} where there is none."""
    path = os.path.join(day_dir, "runs.txt")
    return {w[0]: w[1:] for line in read_lines(path)
            if (w := shlex.split(line, comments=True))} if os.path.exists(path) else {}

def read_lines(path):
    """The lines of the text file at PATH, undecodable bytes replaced; OSError if unreadable."""
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read().splitlines()

def show(path):
    """PATH relative to the current directory, unless that climbs out of it (clickable output)."""
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel

class Report:
    """A check's faults: error() prints `FILE:LINE: error: MESSAGE`; finish(ok) prints the verdict
    and returns the exit code, 1 after any fault, else 0."""

    def __init__(self, name):
        self.name, self.faults = name, 0

    def error(self, path, line, message):
        self.faults += 1
        print(f"{show(path)}:{line}: error: {message}", flush=True)

    def finish(self, ok_message):
        print(f"FAILED: {self.name}: {self.faults} fault(s)" if self.faults else
              f"ok: {self.name}: {ok_message}")
        return 1 if self.faults else 0
