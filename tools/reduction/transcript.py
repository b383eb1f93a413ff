"""Reading a transcript (record.py writes them): its header, tables, verdict, and which is newest.

Transcript(path) reads one evidence file; newest(dir, mode) picks the one the READMEs, plots and
checks quote; runs(day_dir) reads a day's run list. Python's standard library only.
"""
import functools
import glob
import hashlib
import os
import re
import shlex


HEADER = [  # key, pattern, in record.write's order (`# source:` lines come after build)
    ("date", re.compile(r"^# date: (\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}) UTC$")),
    ("gpu", re.compile(r"^# gpu: (\S.*)$")),
    ("driver", re.compile(r"^# driver: (\S.*)$")),
    ("cuda", re.compile(r"^# cuda: (\S.*)$")),
    ("build", re.compile(r"^# build: (nvcc \S.*)$")),
    ("command", re.compile(r"^# command: (\S.*)$")),
    ("exit code", re.compile(r"^# exit code: (-?\d+)$")),
    ("end of header", re.compile(r"^(#)$")),
]
OUTPUT = re.compile(r"^# output: sha256=([0-9a-f]{64})$")  # the seal; older transcripts lack it
SOURCE = re.compile(r"^# source: (?P<path>\S+) sha256=(?P<hash>[0-9a-f]{64})"
                    r"(?: fingerprint=(?P<fp>[0-9a-f]{64}))?$")
NAME = re.compile(r"^(?P<mode>[a-z0-9][a-z0-9-]*?)-(?P<date>\d{4}-\d{2}-\d{2})(?:T(?P<time>\d{6}))?"
                  r"-(?P<gpu>[a-z0-9-]+)\.txt$")  # the time: a later capture of the same day
RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")


def split_row(line):
    s = line.strip()
    s = s[1:] if s.startswith("|") else s
    s = s[:-1] if s.endswith("|") else s
    return [c.strip() for c in s.split("|")]


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
    `header_len`; `lines`; `mode`, `date`, `time` (HHMMSS or None), `gpu_slug` from the file name
    ('' if it does not fit);
    `tables` of the output; `result`: the last non-empty output line (compute-sanitizer's
    `=========` lines aside) and its line."""

    def __init__(self, path):
        self.path = path
        with open(path, "rb") as f:
            raw = f.read()
        self.lines = raw.decode("utf-8", errors="replace").splitlines()
        self.header, self.sources, self.seal, k = {}, [], None, 0
        for key, rx in HEADER:
            while key == "command" and k < len(self.lines) and SOURCE.match(self.lines[k]):
                self.sources.append((k + 1, SOURCE.match(self.lines[k])))
                k += 1
            if key == "end of header" and k < len(self.lines) and OUTPUT.match(self.lines[k]):
                self.seal = (OUTPUT.match(self.lines[k]).group(1), k + 1)
                k += 1
            m = rx.match(self.lines[k]) if k < len(self.lines) else None
            if not m:
                break
            self.header[key] = (m.group(1), k + 1)
            k += 1
        self.header_len = k
        self.body_sha256 = hashlib.sha256(raw.split(b"\n", k)[-1] if k else raw).hexdigest()
        nm = NAME.match(os.path.basename(path))
        self.mode, self.date, self.time, self.gpu_slug = \
            nm.group("mode", "date", "time", "gpu") if nm else ("",) * 4
        self.tables = tables(self.lines, k)
        out = [(i + 1, l.strip()) for i, l in enumerate(self.lines)
               if i >= k and l.strip() and not l.startswith("=========")]
        self.result = out[-1] if out else (len(self.lines), "")

    def value(self, key):
        return self.header[key][0] if key in self.header else None


def tables(lines, first=0):
    out, i = [], first
    while i + 1 < len(lines):
        if lines[i].lstrip().startswith("|") and RULE.match(lines[i + 1]):
            rows, j = [], i + 2
            while j < len(lines) and lines[j].lstrip().startswith("|"):
                rows.append((j + 1, split_row(lines[j])))
                j += 1
            caption = next((lines[c].strip() for c in range(i - 1, first - 1, -1)
                            if lines[c].strip()), "")
            out.append(Table(i + 1, split_row(lines[i]), rows, caption))
            i = j
        else:
            i += 1
    return out


@functools.lru_cache(maxsize=None)
def _start(path):
    """(the header's date and time or '', its exit code or None) of a transcript."""
    date, code = "", None
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            if line.rstrip("\n") == "#":
                break
            h, c = HEADER[0][1].match(line.rstrip("\n")), HEADER[6][1].match(line.rstrip("\n"))
            date, code = h.group(1) if h else date, int(c.group(1)) if c else code
    return date, code


def failed(path, code=None):
    """True when the transcript at PATH records a failed run: a non-zero exit code (CODE, or its
    header's), unless it is a race-demo run (its sanitizer must flag the exhibit) or a note beside
    it (MODE-...-GPU.note.md) explains it."""
    code = _start(path)[1] if code is None else code
    notes = [path[:-4] + ".note.md", path + ".note.md"]
    return bool(code) and "race-demo" not in os.path.basename(path) and \
        not any(map(os.path.exists, notes))


def newest(ev_dir, mode):
    """The newest ev_dir/MODE-YYYY-MM-DD[THHMMSS]-GPU.txt that is not a failed run: by the date
    in the name, then the header's date and time, then the name. None if there is none."""
    name = re.compile(re.escape(mode) + r"-(\d{4}-\d{2}-\d{2})(?:T\d{6})?-[a-z0-9-]+\.txt$")
    best = None
    for path in glob.glob(os.path.join(ev_dir, "*.txt")):
        m = name.match(os.path.basename(path))
        if m and not failed(path):
            key = (m.group(1), _start(path)[0], os.path.basename(path))
            best = max(best, (key, path)) if best else (key, path)
    return best[1] if best else None


def runs(day_dir):
    """{MODE: [its words after MODE]} of DAY_DIR/runs.txt, the day's one run list (CMake reads it
    too: cmake/Days.cmake); {} where there is none."""
    path = os.path.join(day_dir, "runs.txt")
    if not os.path.exists(path):
        return {}
    with open(path, encoding="utf-8") as f:
        return {w[0]: w[1:] for line in f if (w := shlex.split(line, comments=True))}


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
