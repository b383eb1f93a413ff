#!/usr/bin/env python3
"""The mutation run: do the shipped checks kill real bugs? (GPU machine.)

Usage: tests/mutation/run.py [--arch sm_90] [--jobs 8] [--runs 4] [--apply-only] [DAY ...]
       (default: every day with a tests/mutation/<day>.mutants file)
       --apply-only: no GPU, no build: only check that every mutant applies exactly once to the
       lesson file as it is now (the host test `host.mutants`, so the lists cannot rot).
       --root DIR: the repository to read (default: this one; a test fixture otherwise).

Each tests/mutation/<day>.mutants holds blocks:

    === NAME
    why: the bug it models
    expect: killed                  (or  expect: survives — why it cannot be observed here)
    --- find
    exact lines of the lesson file (must match exactly once)
    +++ replace
    the lines that replace them

A line `default-args: ARGS` before the first block replaces the arguments of the day's `default`
run for the mutation run only (a shorter run that still reaches what the mutants break; the
transcript says so). Each mutant is applied to a copy of the day's lesson file; the lesson (the README's build line,
source swapped) and the day's test program (tests/harness/<day>.cu with -DLESSON pointing at the
copy) are built; then the lesson's `default` run and the harness's `self-test` run (their lines in
code/<day>/runs.txt) run. KILLED: either exits non-zero (or exceeds the time limit). The unmutated
day is run first the same way and must pass both, or its mutants mean nothing. A mutant that does
not apply or does not compile is an error in the list.

Prints one table row per mutant, a summary, and `RESULT: PASS|FAIL (...)`. With --transcript DIR
it also writes DIR/mutation-YYYY-MM-DD-GPU.txt with tools/capture.py's header (the `# source:`
lines name this script and the .mutants files). Exit 0 when every mutant behaved as its `expect`
line says and every baseline passed; 1 otherwise; 2 on bad usage.
"""
import argparse
import concurrent.futures as cf
import datetime
import glob
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import capture  # noqa: E402  (the README build line, read one way)

TIME_LIMIT = 300  # seconds a run may take before it counts as killed (a hang)


def parse_mutants(path):
    text = open(path, encoding="utf-8").read()
    out = []
    for block in re.split(r"^=== ", text, flags=re.M)[1:]:
        name, _, body = block.partition("\n")
        m = re.match(r"(?s)(.*?)^--- find\n(.*?)^\+\+\+ replace\n(.*)", body, flags=re.M)
        if not m:
            sys.exit(f"{path}: mutant {name.strip()}: want '--- find' then '+++ replace'")
        meta, find, replace = m.groups()
        expect = re.search(r"^expect:\s*(killed|survives)(.*)$", meta, flags=re.M)
        why = re.search(r"^why:\s*(.*)$", meta, flags=re.M)
        if not expect:
            sys.exit(f"{path}: mutant {name.strip()}: no 'expect: killed|survives' line")
        out.append({"name": name.strip(), "expect": expect.group(1),
                    "reason": expect.group(2).strip(" —-:"), "why": why.group(1) if why else "",
                    "find": find, "replace": replace.rstrip("\n") + "\n" if replace.strip() else ""})
    return out


def default_override(path):
    m = re.search(r"^default-args:(.*)$", open(path, encoding="utf-8").read().split("\n=== ")[0],
                  flags=re.M)
    return shlex.split(m.group(1)) if m else None


def run_args(day_dir, mode):
    for line in open(os.path.join(day_dir, "runs.txt"), encoding="utf-8"):
        words = shlex.split(line.split("#", 1)[0])
        if words and words[0] == mode:
            return words[words.index("--") + 1:] if "--" in words else []
    sys.exit(f"{day_dir}/runs.txt: no `{mode}` line")


def build(words, log):
    p = subprocess.run(words, cwd=ROOT, capture_output=True, text=True)
    if p.returncode != 0:
        with open(log, "w") as f:
            f.write(shlex.join(words) + "\n" + p.stdout + p.stderr)
    return p.returncode == 0


def run(exe, args):
    t0 = time.time()
    try:
        p = subprocess.run([exe] + args, capture_output=True, text=True, timeout=TIME_LIMIT)
    except subprocess.TimeoutExpired:
        return "timeout", f"no exit after {TIME_LIMIT} s", time.time() - t0
    lines = (p.stdout + p.stderr).strip().splitlines()
    first_fail = next((l for l in lines if "CHECK FAILED" in l or "error" in l.lower()), "")
    return p.returncode, first_fail or (lines[-1] if lines else ""), time.time() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("days", nargs="*")
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--jobs", type=int, default=8, help="parallel builds")
    ap.add_argument("--runs", type=int, default=4, help="parallel runs on the GPU")
    ap.add_argument("--apply-only", action="store_true")
    ap.add_argument("--transcript", metavar="DIR")
    ap.add_argument("--root", default=ROOT)
    a = ap.parse_args()
    root = os.path.abspath(a.root)
    files = sorted(glob.glob(os.path.join(root, "tests", "mutation", "*.mutants")))
    if a.days:
        want = {os.path.basename(d.rstrip("/")) for d in a.days}
        files = [f for f in files if os.path.basename(f)[:-len(".mutants")] in want]
    if not files:
        print("mutation: no .mutants files selected", file=sys.stderr)
        return 2
    started = datetime.datetime.now(datetime.timezone.utc)
    out = []

    def say(line=""):
        print(line, flush=True)
        out.append(line)

    work = tempfile.mkdtemp(prefix="mutation-")
    jobs = []  # (day, mutant or None for the baseline, lesson exe, harness exe, build commands)
    errors = []
    for f in files:
        day = os.path.basename(f)[:-len(".mutants")]
        day_dir = os.path.join(root, "code", day)
        line = re.sub(r"-arch=sm_\d+", f"-arch={a.arch}", capture.readme_build_line(day_dir))
        words = shlex.split(line)
        lesson_src = next(w for w in words if w.endswith(".cu"))
        original = open(os.path.join(root, lesson_src), encoding="utf-8").read()
        for m in [None] + parse_mutants(f):
            name = m["name"] if m else "baseline"
            d = os.path.join(work, day, name)
            os.makedirs(d)
            src = os.path.join(d, os.path.basename(lesson_src))
            text = original
            if m:
                count = original.count(m["find"])
                if count != 1:
                    errors.append(f"{day}/{name}: the find text matches {count} times (want 1)")
                    continue
                text = original.replace(m["find"], m["replace"])
            open(src, "w", encoding="utf-8").write(text)
            lesson_cmd = [src if w == lesson_src else w for w in words]
            lesson_cmd[lesson_cmd.index("-o") + 1] = os.path.join(d, "lesson")
            harness_cmd = [w for w in lesson_cmd if w != src] + [
                f"-DLESSON=\"{src}\"", f"tests/harness/{day}.cu"]
            harness_cmd[harness_cmd.index("-o") + 1] = os.path.join(d, "harness")
            override = default_override(f)
            jobs.append({"day": day, "m": m, "name": name, "dir": d, "builds":
                         [lesson_cmd, harness_cmd],
                         "default": override if override is not None else run_args(day_dir,
                                                                                   "default"),
                         "self-test": run_args(day_dir, "self-test")})
    if a.apply_only:
        for e in errors:
            print(f"error: {e}")
        n = sum(1 for j in jobs if j["m"])
        print(f"{'ok' if not errors else 'FAILED'}: mutants: {n} apply exactly once; "
              f"{len(errors)} do not")
        return 1 if errors else 0
    t0 = time.time()
    with cf.ThreadPoolExecutor(a.jobs) as pool:
        built = list(pool.map(lambda j: all(build(c, os.path.join(j["dir"], f"build{i}.log"))
                                            for i, c in enumerate(j["builds"])), jobs))
    say(f"mutation: {len(jobs)} program pairs built in {time.time() - t0:.0f} s "
        f"({a.arch}, {a.jobs} at a time)")
    for j, ok in zip(jobs, built):
        if not ok:
            log = open(os.path.join(j["dir"], "build0.log" if os.path.exists(
                os.path.join(j["dir"], "build0.log")) else "build1.log")).read()
            errors.append(f"{j['day']}/{j['name']}: does not compile: "
                          + " | ".join(l for l in log.splitlines() if "error" in l)[:300])
    ready = [j for j, ok in zip(jobs, built) if ok]

    def both(j):
        return (run(os.path.join(j["dir"], "lesson"), j["default"]),
                run(os.path.join(j["dir"], "harness"), j["self-test"]))

    with cf.ThreadPoolExecutor(a.runs) as pool:
        results = list(pool.map(both, ready))
    for f in files:
        o = default_override(f)
        if o is not None:
            say(f"{os.path.basename(f)}: the default run takes `{shlex.join(o)}` here")
    say("\n| day | mutant | expect | default run | self-test | verdict | as expected |")
    say("|---|---|---|---|---|---|---|")
    bad, counts = 0, {"killed": 0, "survived": 0}
    for j, (d, s) in zip(ready, results):
        killed = d[0] != 0 or s[0] != 0
        if j["m"] is None:
            ok = not killed
            verdict = "baseline passes" if ok else "BASELINE FAILS"
            expect = "passes"
        else:
            verdict = "killed" if killed else "survived"
            counts[verdict] += 1
            expect = j["m"]["expect"]
            ok = (expect == "killed") == killed
        bad += not ok
        cell = lambda r: f"exit {r[0]} ({r[2]:.0f} s)" + (f": {r[1][:90]}" if r[0] != 0 else "")
        say(f"| {j['day']} | {j['name']} | {expect} | {cell(d)} | {cell(s)} | {verdict} | "
            f"{'yes' if ok else 'NO'} |")
    survivors = [j for j in ready if j["m"] and j["m"]["expect"] == "survives"]
    if survivors:
        say("\nWhy each expected survivor cannot be observed by these checks on this GPU:")
        for j in survivors:
            say(f"- {j['day']}/{j['name']}: {j['m']['reason']}")
    for e in errors:
        say(f"ERROR: {e}")
    n = counts["killed"] + counts["survived"]
    say(f"\nmutation: {n} mutants: {counts['killed']} killed, {counts['survived']} survived; "
        f"{bad} not as expected; {len(errors)} list errors")
    rc = 0 if bad == 0 and not errors else 1
    say(f"\nRESULT: {'PASS' if rc == 0 else 'FAIL'} ({n} mutants, {n - bad} as expected: "
        f"{counts['killed']} killed, {counts['survived']} survived)")
    if a.transcript:
        write_transcript(a, files, out, rc, started)
    return rc


def write_transcript(a, files, out, rc, started):
    import hashlib
    import transcript
    name, driver, cuda = capture.gpu_facts()
    srcs = [os.path.abspath(__file__)] + files
    head = [f"# date: {started:%Y-%m-%d %H:%M:%S} UTC", f"# gpu: {name}", f"# driver: {driver}",
            f"# cuda: {cuda}", f"# build: nvcc -std=c++17 -O3 -arch={a.arch} (each day's README "
            "line with the mutated copy as its source; the harness with -DLESSON)"]
    for p in srcs:
        data = open(p, "rb").read()
        head.append(f"# source: {os.path.relpath(p, ROOT)} sha256={hashlib.sha256(data).hexdigest()}"
                    f" fingerprint={transcript.fingerprint(p)}")
    head += [f"# command: tests/mutation/run.py --arch {a.arch} --jobs {a.jobs} --runs {a.runs}",
             f"# exit code: {rc}", "#"]
    os.makedirs(a.transcript, exist_ok=True)
    path = os.path.join(a.transcript, f"mutation-{started:%Y-%m-%d}-{capture.gpu_slug(name)}.txt")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("\n".join(head + out) + "\n")
    print(f"mutation: wrote {path}")


if __name__ == "__main__":
    sys.exit(main())
