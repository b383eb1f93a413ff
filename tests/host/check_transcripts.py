#!/usr/bin/env python3
"""Every transcript under evidence/ is what tools/capture.py writes, passed, and is current.

Usage: check_transcripts.py ROOT|DIR|FILE.txt ...   (ROOT: every evidence/**/*.txt)

Header: capture.py's keys in its order (date, gpu, driver, cuda, build, `# source:` lines, command,
exit code, `#`), read by tools/transcript.py. The file name is MODE-YYYY-MM-DD-GPU.txt with the
header's date and GPU (MODE-YYYY-MM-DDTHHMMSS-GPU.txt, with its time too, for a later one that day).

Verdict: exit code 0 needs `RESULT: PASS (...)` as the last non-empty output line (compute-sanitizer's
`=========` lines aside; under a profiler, whose report follows the program, anywhere), no `CHECK
FAILED` line, no table row whose `check` column says FAIL, and every table row as wide as its
header. A non-zero exit code is accepted for a race-demo transcript (the sanitizer must flag it),
or when a note beside it (MODE-...-GPU.note.md) explains it.

Sealed: a header's `# output: sha256=HEX` (tools/capture.py writes it) equals the sha256 of the
output below the header; a header without it (older transcripts) is read as unsealed.

Current: the newest transcript of each mode that code/DAY/runs.txt still lists was built from its
sources as they are now: the `fingerprint=` (comments and whitespace ignored, tools/transcript.py)
or, in transcripts older than the fingerprint, the sha256.
"""
import argparse
import datetime
import glob
import hashlib
import os
import re
import sys

import hostcheck

sys.path.insert(0, os.path.join(hostcheck.REPO_ROOT, "tools"))
import transcript  # noqa: E402  (the one reader)
from capture import gpu_slug  # noqa: E402  (the one naming rule, shared with the writer)

RESULT_PASS = re.compile(r"^RESULT: PASS \(.+\)$")


def transcripts_of(args):
    out = []
    for a in args:
        if os.path.isfile(a):
            out.append(a)
        else:
            sub = "evidence" if os.path.isdir(os.path.join(a, "evidence")) else ""
            out.extend(glob.glob(os.path.join(a, sub, "**", "*.txt"), recursive=True))
    return sorted(set(out))


def check_file(path, report):
    t = transcript.Transcript(path)
    keys = [k for k, _ in transcript.HEADER]
    if len(t.header) < len(keys):
        k, line = keys[len(t.header)], t.header_len + 1
        found = t.lines[line - 1] if line <= len(t.lines) else None
        report.error(path, line, f"capture header: line {line} should be the `{k}` line as "
                     f"tools/capture.py writes it, found {'end of file' if found is None else found}")
        return
    date = t.value("date")
    if not t.mode:
        report.error(path, 1, "file name is not MODE-YYYY-MM-DD-GPU.txt (tools/capture.py names it)")
    else:
        if t.date != date[:10] or t.time not in (None, date[11:].replace(":", "")):
            report.error(path, 1, f"file name date {t.date}{'T' + t.time if t.time else ''} "
                         f"differs from the header date {date}")
        if t.gpu_slug != gpu_slug(t.value("gpu")):
            report.error(path, 2, f"file name GPU `{t.gpu_slug}` differs from the header GPU "
                         f"`{t.value('gpu')}` (capture.py would write `{gpu_slug(t.value('gpu'))}`)")
    try:
        datetime.datetime.strptime(date, "%Y-%m-%d %H:%M:%S")
    except ValueError:
        report.error(path, 1, "the header date is not a real date and time")
    for line, m in t.sources:
        check_source(path, t, line, m, report)
    if t.seal and t.seal[0] != t.body_sha256:
        report.error(path, t.seal[1], f"the output below the header is not what tools/capture.py "
                     f"wrote: its sha256 is {t.body_sha256}, the seal says {t.seal[0]} (a "
                     "transcript is never edited; a wrong line stays, with a note beside it)")
    code, code_line = int(t.value("exit code")), t.header["exit code"][1]
    if transcript.failed(path, code):
        report.error(path, code_line, f"exit code {code}: a failed run; only a race-demo "
                     f"transcript may exit non-zero, unless a note beside it "
                     f"({os.path.basename(path)[:-4]}.note.md) explains it")
    out = [(i + 1, l.strip()) for i, l in enumerate(t.lines)
           if i >= t.header_len and l.strip() and not l.startswith("=========")]
    if code == 0:
        profiled = t.value("command").startswith("ncu ")
        if not (RESULT_PASS.match(t.result[1]) or
                (profiled and any(RESULT_PASS.match(l) for _, l in out))):
            report.error(path, t.result[0], f"exit code 0 but the last line of output is "
                         f"`{t.result[1]}`, not `RESULT: PASS (...)`")
        for i, l in out:
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


def check_source(path, t, line, m, report):
    """The newest transcript of a mode the day still runs must come from its sources as they are
    now: code changed after the newest capture means the evidence no longer shows what it prints."""
    if os.path.abspath(transcript.newest(os.path.dirname(path), t.mode) or "") != \
            os.path.abspath(path):
        return  # an older transcript records an older version, as it should
    listed = transcript.runs(os.path.join(hostcheck.REPO_ROOT, "code",
                                          os.path.basename(os.path.dirname(path))))
    if listed and t.mode not in listed:
        return  # a mode the day no longer runs: a record of what it printed then
    src = os.path.join(hostcheck.REPO_ROOT, m.group("path"))
    if not os.path.exists(src):
        report.error(path, line, f"source {m.group('path')} named in the header does not exist")
        return
    if m.group("fp"):
        same = transcript.fingerprint(src) == m.group("fp")
    else:
        with open(src, "rb") as f:
            same = hashlib.sha256(f.read()).hexdigest() == m.group("hash")
    if not same:
        report.error(path, line, f"{m.group('path')} changed after this transcript (the newest "
                     f"`{t.mode}` one) was captured: run it again on a GPU (a day's runs: "
                     "REDUCTION_CAPTURE=DIR ctest -L gpu; else the header's `# command:`) so the "
                     "evidence shows what the code prints")


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, usage=argparse.SUPPRESS,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("paths", nargs="+")
    paths = ap.parse_args(argv).paths
    for a in paths:
        if not os.path.exists(a):
            ap.error(f"{a}: no such file or directory")
    report = hostcheck.Report("transcripts")
    files = transcripts_of(paths)
    sealed = sum(bool(check_file(path, report)) for path in files)
    return report.finish(f"{len(files)} transcript(s): header, verdict and source current; "
                         f"{sealed} sealed (output sha256 matches), {len(files) - sealed} unsealed "
                         "(written before the seal)")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
