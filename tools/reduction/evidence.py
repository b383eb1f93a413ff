"""Every transcript under evidence/ is what tools/capture.py writes, passed, and is current.

Usage: tools/evidence.py ROOT|DIR|FILE.txt ...   (ROOT: every evidence/**/*.txt)

Header: capture.py's keys in its order (date, gpu, driver, cuda, build, `# source:` lines, command,
exit code, `#`), read by transcript.py, with a real date. The file is evidence/DAY/MODE.txt, one a
line of the day's run list (a capture overwrites it; git keeps the earlier ones).

Verdict: exit code 0 needs `RESULT: PASS (...)` as the last non-empty output line
(compute-sanitizer's `=========` lines aside; under a profiler, whose report follows the program,
anywhere), no `CHECK FAILED` line, no table row whose `check` column says FAIL, and every table
row as wide as its header. A non-zero exit code is accepted for a race-demo transcript (the
sanitizer must flag it), or when a note beside it (MODE.note.md) explains it.

Sealed: a header's `# output: sha256=HEX` (tools/capture.py writes it) equals the sha256 of the
output below the header; a header without it (older transcripts) is read as unsealed.

Current: the transcript of each mode that code/DAY/runs.txt lists was built from its sources as
they are now (the `fingerprint=`: comments and whitespace ignored, record.py), and its `# command:`
ran that line: the same sanitizer tool and the same program options, in any order.

Complete (a ROOT given): every mode a code/DAY/runs.txt lists has a transcript under evidence/DAY/
(and a run split by `--part K/M` is M lines, K = 1 to M, alike in all else), and every
tests/mutation/DAY.mutants one, evidence/mutation/DAY.txt (which must be current like a run's: the
script, the list, the lesson and the test program it names). Any other transcript (a profiler's
run a README quotes) is a record: checked as above but for being current.
"""
import argparse
import datetime
import glob
import os
import re
import shlex

from . import record, transcript

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RESULT_PASS = re.compile(r"^RESULT: PASS \(.+\)$")
GPU = "capture it again on a GPU (a day's runs: REDUCTION_CAPTURE=DIR ctest -L full; else the " \
    "header's `# command:`)"

def check_file(path, report):
    t, keys = transcript.Transcript(path), [k for k, _ in transcript.HEADER]
    if len(t.header) < len(keys):
        line = t.header_len + 1
        report.error(path, line, f"capture header: line {line} should be the "
                     f"`{keys[len(t.header)]}` line as tools/capture.py writes it, found " +
                     (t.lines[line - 1] if line <= len(t.lines) else "end of file"))
        return None
    try:
        datetime.datetime.strptime(t.value("date"), "%Y-%m-%d %H:%M:%S")
    except ValueError:
        report.error(path, 1, "the header date is not a real date and time")
    listed = modes(os.path.dirname(path))
    if t.mode in listed or not listed:  # else a record of a run the list does not hold
        for line, m in t.sources:
            src = os.path.join(ROOT, m.group("path"))
            if not os.path.exists(src):
                report.error(path, line, f"source {m.group('path')} named in the header does "
                             "not exist")
            elif record.fingerprint(src) != m.group("fp"):
                report.error(path, line, f"{m.group('path')} changed after this `{t.mode}` "
                             f"transcript was captured: {GPU}, so the evidence shows what the "
                             "code prints")
    if t.mode in listed and os.path.basename(os.path.dirname(os.path.abspath(path))) != "mutation":
        check_command(path, t, listed[t.mode], report)
    if t.seal and t.seal[0] != t.body_sha256:
        report.error(path, t.seal[1], f"the output below the header is not what tools/capture.py "
                     f"wrote: its sha256 is {t.body_sha256}, the seal says {t.seal[0]} (a "
                     "transcript is never edited; a wrong line stays, with a note beside it)")
    code = int(t.value("exit code"))
    if transcript.failed(path, code):
        report.error(path, t.header["exit code"][1], f"exit code {code}: a failed run; only a "
                     "race-demo transcript may exit non-zero, unless a note beside it "
                     f"({t.mode}.note.md) explains it")
    out = [(i + 1, l.strip()) for i, l in enumerate(t.lines) if i >= t.header_len]
    if code == 0 and not (RESULT_PASS.match(t.result[1]) or (t.value("command").startswith(
            "ncu ") and any(RESULT_PASS.match(l) for _, l in out))):  # a profiler's report follows
        report.error(path, t.result[0], f"exit code 0 but the last line of output is "
                     f"`{t.result[1]}`, not `RESULT: PASS (...)`")
    for i, l in out if code == 0 else []:
        if l.startswith("CHECK FAILED"):
            report.error(path, i, f"exit code 0 but a check failed: {l}")
    for tab in t.tables:
        for line, cells in tab.rows:
            if len(cells) != len(tab.head):
                report.error(path, line, f"table row has {len(cells)} cells, its header (line "
                             f"{tab.line}) has {len(tab.head)}")
            elif code == 0 and "check" in tab.head and \
                    cells[tab.head.index("check")].upper().startswith("FAIL"):
                report.error(path, line, f"row `{cells[0]}` has check FAIL in a transcript whose "
                             "exit code is 0")
    return t.seal

def options(words):
    """A program's arguments as a sorted list of options, each flag with the values after it (the
    order of flags does not change a run; the order of a flag and its value does)."""
    out = []
    for w in words:
        if w.startswith("--") or not out:
            out.append([w])
        else:
            out[-1].append(w)
    return sorted(out)

def check_command(path, t, words, report):
    """The transcript ran its runs.txt line WORDS: the program's options (in any order), the
    sanitizer tool and the program (the lesson, or with --harness the test program)."""
    want = (words[words.index("--") + 1:] if "--" in words else [],
            words[words.index("--tool") + 1] if "--tool" in words else None)
    cmd = shlex.split(t.value("command"))
    exe = next((i for i, w in enumerate(cmd) if w.startswith("./")), None)
    got = (cmd[exe + 1:] if exe is not None else cmd,
           cmd[cmd.index("--tool") + 1] if cmd[0] == "compute-sanitizer" else None)
    harness = exe is not None and cmd[exe] == "./harness"  # capture.py's name for the test program
    if [options(got[0]), got[1], harness] != [options(want[0]), want[1], "--harness" in words]:
        report.error(path, t.header["command"][1], f"ran `{t.value('command')}`, but runs.txt's "
                     f"`{t.mode}` line is `{shlex.join([t.mode] + words)}`: capture it again "
                     "with that line (or put the line back)")

def modes(ev_dir):
    """The modes of an evidence directory whose transcript must be current: its day's run list; for
    evidence/mutation/, the days with a tests/mutation/DAY.mutants list (one transcript a day)."""
    ev_dir = os.path.abspath(ev_dir)
    root = os.path.dirname(os.path.dirname(ev_dir))  # ROOT/evidence/DIR: the repository, a fixture
    if os.path.basename(ev_dir) == "mutation":
        return {os.path.basename(f)[:-len(".mutants")]: f
                for f in sorted(glob.glob(os.path.join(root, "tests", "mutation", "*.mutants")))}
    return transcript.runs(os.path.join(root, "code", os.path.basename(ev_dir)))

def run_line(day_dir, mode):
    """(DAY_DIR/runs.txt, the number of MODE's line in it)."""
    path = os.path.join(day_dir, "runs.txt")
    return path, next(i for i, l in enumerate(transcript.read_lines(path), 1)
                      if l.split()[:1] == [mode])

def check_complete(root, report):
    """Every run-list mode and every mutation list has its transcript (a run never captured is a
    gap). A run split by `--part K/M` (each part runs every M-th variant from the K-th) is M lines,
    K = 1 to M, alike in all else: one left out runs part of the variants, unnoticed otherwise."""
    for day, f in modes(os.path.join(root, "evidence", "mutation")).items():
        if not os.path.exists(os.path.join(root, "evidence", "mutation", f"{day}.txt")):
            report.error(f, 1, f"no mutation transcript evidence/mutation/{day}.txt: "
                         f"run tools/mutation.py --transcript evidence/mutation {day} on a GPU")
    for day_dir in sorted(glob.glob(os.path.join(root, "code", "day*", ""))):
        day, groups = os.path.basename(os.path.dirname(day_dir)), {}
        for mode, words in transcript.runs(day_dir).items():
            if not os.path.exists(os.path.join(root, "evidence", day, f"{mode}.txt")):
                report.error(*run_line(day_dir, mode), f"`{mode}` has no transcript under "
                             f"evidence/{day}/: capture it on a GPU (REDUCTION_CAPTURE=DIR ctest "
                             "-L gpu)")
            if "--part" in words[:-1]:
                i = words.index("--part")
                k, _, m = words[i + 1].partition("/")
                rest = str(options(words[:i] + words[i + 2:]))
                groups.setdefault((m, rest), []).append((k, mode))
        for (m, _), parts in groups.items():
            want = [str(k) for k in range(1, int(m) + 1)] if m.isdigit() else []
            if sorted((k for k, _ in parts), key=lambda k: (len(k), k)) != want:
                report.error(*run_line(day_dir, parts[0][1]), f"`--part K/{m}` lines "
                             f"{', '.join(mode for _, mode in parts)} give K = "
                             f"{', '.join(k for k, _ in parts)}; the run needs K = 1 to {m}, "
                             "once each, the rest of the line alike")

def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, usage=argparse.SUPPRESS,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("paths", nargs="*")  # `*`, so that an unknown flag is named first
    paths = ap.parse_args(argv).paths
    if not paths:
        ap.error("want ROOT, DIR or FILE.txt: what to check (--help says more)")
    for a in paths:
        if not os.path.exists(a):
            ap.error(f"{a}: no such file or directory")
    report, files = transcript.Report("transcripts"), sorted({
        f for a in paths for f in ([a] if os.path.isfile(a) else glob.glob(os.path.join(
            a, "evidence" if os.path.isdir(os.path.join(a, "evidence")) else "", "**", "*.txt"),
            recursive=True))})
    sealed = sum(bool(check_file(path, report)) for path in files)
    for a in paths:
        if os.path.isdir(os.path.join(a, "code")) and os.path.isdir(os.path.join(a, "evidence")):
            check_complete(a, report)
    return report.finish(f"{len(files)} transcript(s): header, verdict and source current; "
                         f"{sealed} sealed (output sha256 matches), {len(files) - sealed} unsealed "
                         "(written before the seal)")
