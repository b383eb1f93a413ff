"""Build one day program with its README build line, run it, and write a transcript.

Usage: tools/capture.py DAY_DIR MODE [--arch sm_90] [--tool memcheck] [--wrap CMD] [--harness]
                        [--out-dir DIR] [--keep-failed] [--build-only] -- [ARGS...]

  DAY_DIR   a day directory, e.g. code/day25-reduction-2
  MODE      a line of DAY_DIR/runs.txt (default, self-test, memcheck, ...): the transcript's name;
            with --wrap (a profiler's record) or --build-only any name
  --arch    replaces the -arch=sm_XX of the README line (default: the README line as written)
  --tool    runs the program under `compute-sanitizer --tool TOOL --report-api-errors no
            --error-exitcode 1` (API errors are reported by the program's own CUDA_CHECK)
  --wrap    a command prefix the program runs under, e.g. --wrap "ncu --kernel-name regex:reduceV7
            --launch-count 1 --section SpeedOfLight" (a profiler); shown in the header's command
  --harness runs the day's test program, tests/harness/<day-dir>.cu (the lesson file included with
            its main() off), built by the same README line with that source and `-o harness`
  --out-dir where the transcript goes (default: evidence/<day-dir-name>/)
  --build-only  build (always, in a directory it removes) and stop; any compiler output fails
  --keep-failed write the transcript of a run that exits non-zero too (a race exhibit's)

The transcript is evidence/<day-dir>/<MODE>.txt, replacing the one there (git keeps the earlier
ones), written by record.write (its docstring gives the format). Without --keep-failed a run that
exits non-zero is printed, not written. A capture reuses a build from build/capture-cache/ keyed by
the build line, the sources and the compiler (its resolved path and `nvcc --version`).

Exit code: the program's (a failing run is visible to the caller); 3 if the build failed or
warned; 2 on bad usage (one line on stderr); 1 where nvidia-smi lists no GPU (said in one line,
before anything is built, run or written).
"""
import argparse
import datetime
import hashlib
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

from . import readme, record, transcript

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

def build(words, exe, line):
    """Runs the build line WORDS with its output at EXE; True on success with no compiler output,
    else False, what the compiler printed and LINE shown on stderr."""
    words = list(words)
    words[words.index("-o") + 1] = exe
    try:
        b = subprocess.run(words, cwd=ROOT, capture_output=True, text=True)
        err = b.stdout + b.stderr + (f"exit code {b.returncode}\n" if b.returncode else "")
    except OSError as e:
        err = f"{words[0]}: {e.strerror}\n"
    if err.strip():
        sys.stderr.write(err + f"capture: build failed or warned: {line}\n")
    return not err.strip()

def harness_sources(test):
    """What a test program's capture is sealed and its build keyed by, before the lesson: TEST
    (tests/harness/DAY.cu) and each `#include "NAME"` (harness.h, delay.h: beside it), in order."""
    with open(os.path.join(ROOT, test)) as f:
        names = re.findall(r'^[ \t]*#[ \t]*include[ \t]*"([^"]+)"', f.read(), re.M)
    return [test] + [os.path.join(os.path.dirname(test), n) for n in dict.fromkeys(names)]

def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, usage=argparse.SUPPRESS,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("day_dir", nargs="?")  # optional here, so that an unknown flag is named first
    ap.add_argument("mode", nargs="?")
    for flag in ("--arch", "--tool", "--wrap", "--out-dir"):
        ap.add_argument(flag)
    for flag in ("--harness", "--build-only", "--keep-failed"):  # switches: the docstring says
        ap.add_argument(flag, action="store_true")
    cut = argv.index("--") if "--" in argv else len(argv)
    a = ap.parse_intermixed_args(argv[:cut])
    a.args = argv[cut + 1:]
    if not a.mode:
        ap.error("want DAY_DIR MODE, e.g. code/day25-reduction-2 default (--help says more)")
    if not re.fullmatch(r"[a-z0-9][a-z0-9-]*", a.mode):
        ap.error(f"MODE `{a.mode}`: lower-case letters, digits and '-' only")
    if a.arch and not re.fullmatch(r"sm_\d+", a.arch):
        ap.error(f"--arch `{a.arch}`: want sm_NN, e.g. sm_90")
    day_dir = os.path.normpath(os.path.join(ROOT, a.day_dir))  # an absolute DAY_DIR stays itself
    day_name = os.path.basename(day_dir)
    if not os.path.isdir(day_dir):
        ap.error(f"{a.day_dir}: no such file or directory")
    if not os.path.isfile(os.path.join(day_dir, "README.md")):
        ap.error(f"{a.day_dir}: not a day directory (no README.md with a build line there)")
    listed = transcript.runs(day_dir)
    if a.mode not in listed and not (a.wrap or a.build_only):
        ap.error(f"MODE `{a.mode}` is not a line of {a.day_dir.rstrip('/')}/runs.txt (its modes: "
                 f"{', '.join(listed) or 'none'})")
    if not a.build_only and not record.gpu_present():
        print("capture: no CUDA device on this machine (nvidia-smi lists no GPU): nothing built, "
              "run or written", file=sys.stderr)
        return 1
    build_line = readme.build_line(day_dir)
    if a.arch:
        if not re.search(r"-arch=sm_\d+", build_line):
            sys.exit("capture: the README build line names no -arch=sm_XX to replace")
        build_line = re.sub(r"-arch=sm_\d+", f"-arch={a.arch}", build_line)
    # The README line builds from the repository root with '-o NAME'; build into a temp dir.
    words = shlex.split(build_line)
    if "-o" not in words:
        sys.exit("capture: the README build line has no -o NAME")
    lesson = [w for w in words if w.endswith(".cu")]
    src = list(lesson)
    if a.harness:
        test = f"tests/harness/{day_name}.cu"
        if not os.path.exists(os.path.join(ROOT, test)):
            ap.error(f"--harness: no {test}")
        words = [test if w.endswith(".cu") else w for w in words]
        words[words.index("-o") + 1] = "harness"
        build_line = shlex.join(words)
        src = harness_sources(test) + lesson
    exe_name = os.path.basename(words[words.index("-o") + 1])
    if a.build_only:  # the test of the README line: it compiles here and now, every time
        with tempfile.TemporaryDirectory(prefix="capture-build-") as tmp:
            if not build(words, os.path.join(tmp, exe_name), build_line):
                return 3
        print(f"capture: built, no compiler output: {build_line} ({shutil.which(words[0])})")
        return 0
    # Captures reuse a build (nine modes of one day compile once), keyed by what makes it.
    nvcc = shutil.which(words[0])  # the compiler: its real path and `--version` text
    key = hashlib.sha256(f"{build_line}\n{nvcc and os.path.realpath(nvcc)}\n"
                         f"{nvcc and record.query([nvcc, '--version'])}".encode())
    for s in src:
        with open(os.path.join(ROOT, s), "rb") as f:
            key.update(f.read())
    cache = os.path.join(ROOT, "build", "capture-cache", key.hexdigest()[:16])
    exe = os.path.join(cache, exe_name)
    if not os.path.exists(exe):
        os.makedirs(cache, exist_ok=True)
        partial = f"{exe}.partial{os.getpid()}"  # parallel captures may build the same key
        if not build(words, partial, build_line):
            return 3
        os.replace(partial, exe)
    prefix = shlex.split(a.wrap) if a.wrap else []
    if a.tool:
        # API errors are the program's own CUDA_CHECK's business (and day 28's test program
        # provokes one on purpose: a cooperative launch too large must be refused); the sanitizer
        # is here for what happens on the device.
        prefix = ["compute-sanitizer", "--tool", a.tool, "--report-api-errors", "no",
                  "--error-exitcode", "1"] + prefix
    run, shown = prefix + [exe] + a.args, shlex.join(prefix + ["./" + exe_name] + a.args)
    started = datetime.datetime.now(datetime.timezone.utc)
    with tempfile.TemporaryDirectory(prefix="capture-run-") as tmp:
        p = subprocess.run(run, cwd=tmp, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    body = p.stdout.decode("utf-8", errors="replace")
    if p.returncode != 0 and not a.keep_failed:
        sys.stdout.write(body)
        print(f"capture: exit code {p.returncode}: no transcript written (a failed run is written "
              "only with --keep-failed)")
        return p.returncode
    path = record.write(a.out_dir or os.path.join(ROOT, "evidence", day_name), a.mode, started,
                        build_line, src, shown, p.returncode, body, root=ROOT)
    print(f"capture: wrote {os.path.relpath(path, ROOT)} (exit code {p.returncode})")
    return p.returncode
