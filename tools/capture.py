#!/usr/bin/env python3
"""Build one day program with its README build line, run it, and write a transcript.

Usage:
  tools/capture.py DAY_DIR MODE [--arch sm_90] [--tool memcheck] [--harness] [--out-dir DIR] -- [ARGS...]

  DAY_DIR   a day directory, e.g. code/day25-reduction-2
  MODE      the transcript's name stem: default, sweep, self-test, memcheck, race-demo-racecheck, ...
  --arch    replaces the -arch=sm_XX of the README line (default: the README line as written)
  --tool    runs the program under `compute-sanitizer --tool TOOL --report-api-errors no
            --error-exitcode 1` (API errors are reported by the program's own CUDA_CHECK)
  --wrap    a command prefix the program runs under, e.g. --wrap "ncu --kernel-name regex:reduceV7
            --launch-count 1 --section SpeedOfLight" (a profiler); shown in the header's command
  --harness runs the day's test program, tests/harness/<day-dir>.cu (the lesson file included with
            its main() off), built by the same README line with that source and `-o harness`
  --out-dir where the transcript goes (default: evidence/<day-dir-name>/)
  --build-only  build (into a cache keyed by the build line and the source) and stop

The transcript is evidence/<day-dir>/<MODE>-<YYYY-MM-DD>-<gpu>.txt: a header of '# key: value'
lines (date UTC, GPU, driver, CUDA, build line, command, exit code), one '#' line, then the
program's stdout and stderr exactly as printed (stderr interleaved as the pipe delivered it).
After `# build:` come `# source: PATH sha256=HEX fingerprint=HEX` lines, one for each file the
program is built from (the lesson .cu; with --harness also the test program and harness.h). The
fingerprint ignores comments and whitespace (tools/transcript.py says exactly what it covers): a
check compares it with the files as they are, so a transcript goes stale when code changes, not
when a comment does. A transcript is never edited or overwritten after it is written: a later
capture of the same mode, day and GPU is named <MODE>-<YYYY-MM-DD>T<HHMMSS>-<gpu>.txt (its
start time, UTC), and the checks take the newest by the header's date and time.

Exit code: the program's exit code (so a failing run is visible to the caller), 3 if the build
failed, 2 on bad usage of this script. The transcript is written in every case but a failed build.
"""
import argparse
import datetime
import hashlib
import os
import re
import shlex
import subprocess
import sys
import tempfile

import transcript

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD_MARK = "<!-- build-line -->"


def readme_build_line(day_dir):
    """The nvcc line that follows the '<!-- build-line -->' marker in DAY_DIR/README.md."""
    path = os.path.join(day_dir, "README.md")
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    for i, line in enumerate(lines):
        if line.strip() == BUILD_MARK:
            for follow in lines[i + 1 : i + 6]:
                if follow.strip().startswith("nvcc "):
                    return follow.strip()
    sys.exit(f"capture: {path}: no nvcc line after {BUILD_MARK}")


def query(cmd):
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        return out.stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return ""


def gpu_facts():
    line = query(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"])
    first = line.splitlines()[0] if line else ""
    if "," in first:
        name, driver = [s.strip() for s in first.split(",", 1)]
    else:
        name, driver = "unknown-gpu", "unknown"
    cuda = query(["nvcc", "--version"]).splitlines()
    cuda = cuda[-1] if cuda else "unknown"
    return name, driver, cuda


def gpu_slug(name):
    s = name.lower().replace("nvidia", "").replace("geforce", "")
    s = re.sub(r"[^a-z0-9]+", "-", s).strip("-")
    return s or "unknown-gpu"


def write(out_dir, mode, started, build, sources, command, code, body):
    """Writes OUT_DIR/MODE-YYYY-MM-DD-GPU.txt: the header (see above; SOURCES are paths from the
    repository root) and BODY. Returns its path."""
    name, driver, cuda = gpu_facts()
    header = [f"# date: {started:%Y-%m-%d %H:%M:%S} UTC", f"# gpu: {name}", f"# driver: {driver}",
              f"# cuda: {cuda}", f"# build: {build}"]
    for s in sources:
        with open(os.path.join(ROOT, s), "rb") as f:
            sha = hashlib.sha256(f.read()).hexdigest()
        header.append(f"# source: {os.path.relpath(os.path.join(ROOT, s), ROOT)} sha256={sha} "
                      f"fingerprint={transcript.fingerprint(os.path.join(ROOT, s))}")
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, f"{mode}-{started:%Y-%m-%d}-{gpu_slug(name)}.txt")
    if os.path.exists(path):  # never overwritten: a later capture of the day names its time too
        path = os.path.join(out_dir, f"{mode}-{started:%Y-%m-%dT%H%M%S}-{gpu_slug(name)}.txt")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(header + [f"# command: {command}", f"# exit code: {code}", "#"]) + "\n"
                + body)
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("day_dir")
    ap.add_argument("mode")
    ap.add_argument("--arch")
    ap.add_argument("--tool")
    ap.add_argument("--harness", action="store_true")
    ap.add_argument("--wrap")
    ap.add_argument("--out-dir")
    ap.add_argument("--build-only", action="store_true", help="build into the cache and stop")
    argv = sys.argv[1:]
    prog_args = []
    if "--" in argv:
        cut = argv.index("--")
        argv, prog_args = argv[:cut], argv[cut + 1 :]
    a = ap.parse_args(argv)
    a.args = prog_args
    if not re.fullmatch(r"[a-z0-9][a-z0-9-]*", a.mode):
        print("capture: MODE must be lower-case letters, digits and '-'", file=sys.stderr)
        return 2

    day_dir = os.path.normpath(os.path.join(ROOT, a.day_dir)) if not os.path.isabs(a.day_dir) else a.day_dir
    day_name = os.path.basename(day_dir)
    build_line = readme_build_line(day_dir)
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
            sys.exit(f"capture: --harness: no {test}")
        words = [test if w.endswith(".cu") else w for w in words]
        words[words.index("-o") + 1] = "harness"
        build_line = shlex.join(words)
        src = [test, "tests/harness/harness.h"] + lesson
    exe_name = words[words.index("-o") + 1]
    # Builds are cached by (build line, source text): capturing nine modes of one day compiles once.
    key = hashlib.sha256(build_line.encode())
    for s in src:
        with open(os.path.join(ROOT, s), "rb") as f:
            key.update(f.read())
    cache = os.path.join(tempfile.gettempdir(), "capture-cache", key.hexdigest()[:16])
    exe = os.path.join(cache, os.path.basename(exe_name))
    tmp = tempfile.mkdtemp(prefix="capture-run-")
    if not os.path.exists(exe):
        os.makedirs(cache, exist_ok=True)
        partial = f"{exe}.partial{os.getpid()}"  # parallel captures may build the same key
        words[words.index("-o") + 1] = partial
        b = subprocess.run(words, cwd=ROOT, capture_output=True, text=True)
        if b.returncode != 0 or b.stdout.strip() or b.stderr.strip():
            sys.stderr.write(b.stdout + b.stderr)
            print(f"capture: build failed or warned: {build_line}", file=sys.stderr)
            return 3
        os.replace(partial, exe)
    if a.build_only:
        print(f"capture: built {exe}")
        return 0

    prefix = shlex.split(a.wrap) if a.wrap else []
    if a.tool:
        # API errors are the program's own CUDA_CHECK's business (and day 28's test program
        # provokes one on purpose: a cooperative launch too large must be refused); the sanitizer
        # is here for what happens on the device.
        prefix = ["compute-sanitizer", "--tool", a.tool, "--report-api-errors", "no",
                  "--error-exitcode", "1"] + prefix
    run = prefix + [exe] + a.args
    shown = shlex.join(prefix + ["./" + os.path.basename(exe_name)] + a.args)
    started = datetime.datetime.now(datetime.timezone.utc)
    p = subprocess.run(run, cwd=tmp, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    body = p.stdout.decode("utf-8", errors="replace")

    path = write(a.out_dir or os.path.join(ROOT, "evidence", day_name), a.mode, started,
                 build_line, src, shown, p.returncode, body)
    print(f"capture: wrote {os.path.relpath(path, ROOT)} (exit code {p.returncode})")
    return p.returncode


if __name__ == "__main__":
    sys.exit(main())
