#!/usr/bin/env python3
"""Every transcript under evidence/ is what tools/capture.py writes, passed, and adds up.

Usage: check_transcripts.py ROOT|DIR|FILE.txt ...

  ROOT      a repository root: every evidence/**/*.txt
  DIR       every *.txt below DIR
  FILE.txt  that transcript

Header: the first eight lines are, in this order, `# date: YYYY-MM-DD HH:MM:SS UTC`, `# gpu: `,
`# driver: `, `# cuda: `, `# build: nvcc ...`, `# command: `, `# exit code: N`, `#`. The file name is
MODE-YYYY-MM-DD-GPU.txt with the header's date and GPU (as capture.py names it).

Verdict: exit code 0 needs the last non-empty line of the program's output (compute-sanitizer's
`=========` lines aside) to be `RESULT: PASS (...)`, no `CHECK FAILED` line and no table row whose
`check` column says FAIL. A non-zero exit code is accepted for a race-demo transcript (file name
contains `race-demo`), or when a note beside it (MODE-...-GPU.note.md) explains it.

Tables (CUDA-CODE-STYLE.md section 6): in every Markdown pipe table, where the columns exist,
GB/s = MB/ms (or 1000*MB/us) and % of copy = 100 * GB/s / the copy row's GB/s (same table, same n),
each to printed precision: a number printed with d decimals stands for [x - 0.5e-d, x + 0.5e-d].
Cells that are `-` or empty are skipped.
"""
import datetime
import hashlib
import glob
import os
import re
import sys

import hostcheck

sys.path.insert(0, os.path.join(hostcheck.REPO_ROOT, "tools"))
from capture import gpu_slug  # noqa: E402  (the one naming rule, shared with the writer)

HEADER = [
    ("date", re.compile(r"^# date: (\d{4}-\d{2}-\d{2}) \d{2}:\d{2}:\d{2} UTC$")),
    ("gpu", re.compile(r"^# gpu: (\S.*)$")),
    ("driver", re.compile(r"^# driver: \S.*$")),
    ("cuda", re.compile(r"^# cuda: \S.*$")),
    ("build", re.compile(r"^# build: nvcc \S.*$")),
    ("command", re.compile(r"^# command: \S.*$")),
    ("exit code", re.compile(r"^# exit code: (-?\d+)$")),
    ("end of header", re.compile(r"^#$")),
]
NAME = re.compile(r"^(?P<mode>[a-z0-9][a-z0-9-]*?)-(?P<date>\d{4}-\d{2}-\d{2})-(?P<gpu>[a-z0-9-]+)"
                  r"\.txt$")
RESULT_PASS = re.compile(r"^RESULT: PASS \(.+\)$")
NUMBER = re.compile(r"^[+-]?(\d[\d,]*)(?:\.(\d+))?$")
RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")
EPS = 1e-9


def transcripts_of(args):
    out = []
    for a in args:
        if os.path.isfile(a):
            out.append(a)
        elif os.path.isdir(os.path.join(a, "evidence")) and os.path.isdir(os.path.join(a, "code")):
            out.extend(glob.glob(os.path.join(a, "evidence", "**", "*.txt"), recursive=True))
        else:
            out.extend(glob.glob(os.path.join(a, "**", "*.txt"), recursive=True))
    return sorted(set(out))


def interval(cell):
    """(low, high) that a printed number stands for, or None if the cell is not a number."""
    m = NUMBER.match(cell.strip())
    if not m:
        return None
    value = float(cell.strip().replace(",", ""))
    half = 0.5 * 10 ** -(len(m.group(2)) if m.group(2) else 0)
    return value - half, value + half


def divide(num, den):
    lo = num[0] / den[1] if den[1] > 0 else 0.0
    hi = num[1] / den[0] if den[0] > 0 else float("inf")
    return lo, hi


def overlaps(a, b):
    tol = EPS * max(1.0, abs(a[0]), abs(b[0]))
    return a[0] <= b[1] + tol and b[0] <= a[1] + tol


def split_row(line):
    s = line.strip()
    if s.startswith("|"):
        s = s[1:]
    if s.endswith("|"):
        s = s[:-1]
    return [c.strip() for c in s.split("|")]


def tables(lines, first):
    """[(header_line_no, header_cells, [(line_no, cells)])] for each pipe table in LINES[first:]."""
    out, i = [], first
    while i + 1 < len(lines):
        if lines[i].lstrip().startswith("|") and RULE.match(lines[i + 1]):
            head = split_row(lines[i])
            rows, j = [], i + 2
            while j < len(lines) and lines[j].lstrip().startswith("|"):
                rows.append((j + 1, split_row(lines[j])))
                j += 1
            out.append((i + 1, head, rows))
            i = j
        else:
            i += 1
    return out


def check_table(path, head_line, head, rows, report, judge_checks):
    col = {name: k for k, name in enumerate(head)}
    for line, cells in rows:
        if len(cells) != len(head):
            report.error(path, line, f"table row has {len(cells)} cells, its header "
                         f"(line {head_line}) has {len(head)}")
    rows = [(line, cells) for line, cells in rows if len(cells) == len(head)]

    def num(line, cells, name):
        cell = cells[col[name]]
        if cell in ("", "-"):
            return None
        iv = interval(cell)
        if iv is None:
            report.error(path, line, f"column `{name}`: `{cell}` is not a number")
        return iv

    if "check" in col and judge_checks:
        for line, cells in rows:
            if cells[col["check"]].upper().startswith("FAIL"):
                report.error(path, line, f"row `{cells[0]}` has check {cells[col['check']]} "
                             "in a transcript whose exit code is 0")
    gbps = {}
    if "GB/s" in col:
        time_col = "ms" if "ms" in col else "us" if "us" in col else "µs" if "µs" in col else None
        for line, cells in rows:
            g = num(line, cells, "GB/s")
            gbps[line] = g
            if g is None or "MB" not in col or time_col is None:
                continue
            mb, t = num(line, cells, "MB"), num(line, cells, time_col)
            if mb is None or t is None:
                continue
            if time_col != "ms":
                t = (t[0] / 1000.0, t[1] / 1000.0)
            want = divide(mb, t)
            report.recomputed += 1
            if not overlaps(want, g):
                report.error(path, line, f"row `{cells[0]}`: GB/s {cells[col['GB/s']]} does not "
                             f"equal {'' if time_col == 'ms' else '1000*'}MB/{time_col} = "
                             f"{'' if time_col == 'ms' else '1000*'}{cells[col['MB']]}/"
                             f"{cells[col[time_col]]}"
                             f" (in [{want[0]:.4f}, {want[1]:.4f}] to printed precision)")
    if "% of copy" in col and "GB/s" in col:
        name_col = col.get("row", 0)
        n_col = col.get("n")
        copy = {}
        for line, cells in rows:
            if cells[name_col] == "copy":
                copy[cells[n_col] if n_col is not None else None] = (line, gbps.get(line))
        for line, cells in rows:
            p = num(line, cells, "% of copy")
            g = gbps.get(line)
            if p is None or g is None:
                continue
            key = cells[n_col] if n_col is not None else None
            if key not in copy or copy[key][1] is None:
                where = f" with n = {key}" if n_col is not None else ""
                report.error(path, line, f"row `{cells[0]}` has a % of copy but the table has "
                             f"no copy row{where} with a GB/s")
                continue
            c = copy[key][1]
            want = divide((100 * g[0], 100 * g[1]), c)
            report.recomputed += 1
            if not overlaps(want, p):
                report.error(path, line, f"row `{cells[0]}`: % of copy {cells[col['% of copy']]}"
                             f" does not equal 100 * {cells[col['GB/s']]} / copy's GB/s (line "
                             f"{copy[key][0]}) = [{want[0]:.3f}, {want[1]:.3f}] to printed "
                             "precision")


SOURCE = re.compile(r"^# source: (?P<path>\S+) sha256=(?P<hash>[0-9a-f]{64})$")


def check_file(path, report):
    lines = hostcheck.read_lines(path)
    found = {}
    # The header: the keys of HEADER in order; capture.py (since 2026-11-29) also writes an optional
    # `# source: PATH sha256=HEX` line right after `# build:`.
    k = 0
    source = None
    for key, rx in HEADER:
        line = lines[k] if k < len(lines) else None
        if key == "command" and line is not None and SOURCE.match(line):
            source = (k + 1, SOURCE.match(line))
            k += 1
            line = lines[k] if k < len(lines) else None
        m = rx.match(line) if line is not None else None
        if not m:
            shown = "end of file" if line is None else f"`{line}`"
            report.error(path, k + 1, f"capture header: line {k + 1} should be the `{key}` line "
                         f"as tools/capture.py writes it (/{rx.pattern}/), found {shown}")
            return
        found[key] = (m, k + 1)
        k += 1
    header_len = k
    found = {key: m for key, (m, _) in found.items()}
    if source is not None:
        check_source(path, source, report)
    base = os.path.basename(path)
    nm = NAME.match(base)
    date = found["date"].group(1)
    if not nm:
        report.error(path, 1, "file name is not MODE-YYYY-MM-DD-GPU.txt (tools/capture.py names it)")
    else:
        if nm.group("date") != date:
            report.error(path, 1, f"file name date {nm.group('date')} differs from the header "
                         f"date {date}")
        slug = gpu_slug(found["gpu"].group(1))
        if nm.group("gpu") != slug:
            report.error(path, 2, f"file name GPU `{nm.group('gpu')}` differs from the header "
                         f"GPU `{found['gpu'].group(1)}` (capture.py would write `{slug}`)")
    try:
        datetime.datetime.strptime(lines[0][len("# date: "):], "%Y-%m-%d %H:%M:%S UTC")
    except ValueError:
        report.error(path, 1, "the header date is not a real date and time")

    exit_code = int(found["exit code"].group(1))
    body_from = header_len
    if exit_code == 0:
        out = [(i + 1, l) for i, l in enumerate(lines) if i >= body_from and l.strip()
               and not l.startswith("=========")]
        if not out or not RESULT_PASS.match(out[-1][1].strip()):
            last = f"`{out[-1][1]}`" if out else "no output"
            report.error(path, out[-1][0] if out else len(lines),
                         f"exit code 0 but the last line of output is {last}, not "
                         "`RESULT: PASS (...)`")
        for i, l in out:
            if l.startswith("CHECK FAILED"):
                report.error(path, i, f"exit code 0 but a check failed: {l}")
        judge_checks = True
    else:
        judge_checks = False
        stem = base[:-4]
        notes = [os.path.join(os.path.dirname(path), stem + ".note.md"), path + ".note.md"]
        if "race-demo" not in base and not any(os.path.exists(n) for n in notes):
            report.error(path, header_len - 1, f"exit code {exit_code}: a failed run; only a race-demo "
                         f"transcript may exit non-zero, unless a note beside it "
                         f"({os.path.basename(notes[0])}) explains it")
    for head_line, head, rows in tables(lines, body_from):
        check_table(path, head_line, head, rows, report, judge_checks)


def check_source(path, source, report):
    """The newest transcript of each mode must come from the source file as it is now: a `.cu`
    changed after its newest capture means the evidence no longer shows what the code prints."""
    line, m = source
    src = os.path.join(hostcheck.REPO_ROOT, m.group("path"))
    nm = NAME.match(os.path.basename(path))
    if nm is None:
        return
    sys.path.insert(0, os.path.join(hostcheck.REPO_ROOT, "tools"))
    import sync_readme  # noqa: E402  (the one rule for "newest")
    if os.path.abspath(sync_readme.newest_transcript(os.path.dirname(path), nm.group("mode"))) \
            != os.path.abspath(path):
        return  # an older transcript records an older version, as it should
    if not os.path.exists(src):
        report.error(path, line, f"source {m.group('path')} named in the header does not exist")
        return
    with open(src, "rb") as f:
        now = hashlib.sha256(f.read()).hexdigest()
    if now != m.group("hash"):
        report.error(path, line, f"{m.group('path')} changed after this transcript (the newest "
                     f"`{nm.group('mode')}` one) was captured: capture it again on a GPU "
                     "(tools/capture_all.sh) so the evidence shows what the code prints")


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if argv else 2
    report = hostcheck.Report("transcripts")
    report.recomputed = 0
    for a in argv:
        if not os.path.exists(a):
            report.error(a, 1, "no such file or directory")
    files = transcripts_of([a for a in argv if os.path.exists(a)])
    for path in files:
        check_file(path, report)
    if not files and not report.faults:
        print("ok: transcripts: no transcripts yet under " + ", ".join(argv))
        return 0
    return report.finish(f"{len(files)} transcript(s): header and verdict right; "
                         f"{report.recomputed} GB/s and % of copy cells recomputed, all agree "
                         "to printed precision")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
