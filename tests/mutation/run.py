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
transcript says so). Each mutant is applied to a copy of the day's lesson file; the lesson (the
README's build line, source swapped) and the day's test program (tests/harness/<day>.cu with
-DLESSON pointing at the copy) are built; then the lesson's `default` run and the harness's
`self-test` run (their lines in code/<day>/runs.txt, tools/transcript.py's `runs`) run. KILLED: either exits non-zero (or exceeds the time limit). The unmutated
day is run first the same way and must pass both, or its mutants mean nothing. A mutant that does
not apply or does not compile is an error in the list.

Prints one table row per mutant, a summary, and `RESULT: PASS|FAIL (...)`. With --transcript DIR
it also writes DIR/mutation-YYYY-MM-DD-GPU.txt with tools/capture.py's header (`capture.write`;
the `# source:` lines name this script and the .mutants files). Exit 0 when every mutant behaved as its `expect`
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
import capture  # noqa: E402  (the README build line, read one way; the transcript header)
import transcript  # noqa: E402  (the run list, read one way)

TIME_LIMIT = 300  # seconds a run may take before it counts as killed (a hang)


def parse_mutants(path):
    """(default-args words or None, [mutant dicts]) of one .mutants file."""
    head, *blocks = re.split(r"^=== ", open(path, encoding="utf-8").read(), flags=re.M)
    default = re.search(r"^default-args:(.*)$", head, flags=re.M)
    out = []
    for block in blocks:
        name, _, body = block.partition("\n")
        m = re.match(r"(?s)(.*?)^--- find\n(.*?)^\+\+\+ replace\n(.*)", body, flags=re.M)
        expect = m and re.search(r"^expect:\s*(killed|survives)(.*)$", m.group(1), flags=re.M)
        if not expect:
            sys.exit(f"{path}: mutant {name.strip()}: want an `expect: killed|survives` line, then "
                     "`--- find`, then `+++ replace`")
        out.append({"name": name.strip(), "expect": expect.group(1),
                    "reason": expect.group(2).strip(" —-:"), "find": m.group(2),
                    "replace": m.group(3).rstrip("\n") + "\n" if m.group(3).strip() else ""})
    return shlex.split(default.group(1)) if default else None, out


def build(commands):
    """Runs each build command; '' when all succeed, else the failed one's error lines."""
    for words in commands:
        p = subprocess.run(words, cwd=ROOT, capture_output=True, text=True)
        if p.returncode:
            return " | ".join(l for l in (p.stdout + p.stderr).splitlines() if "error" in l)[:300]
    return ""


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

    work, jobs, errors, overrides = tempfile.mkdtemp(prefix="mutation-"), [], [], []
    for f in files:
        day = os.path.basename(f)[:-len(".mutants")]
        day_dir, (override, mutants) = os.path.join(root, "code", day), parse_mutants(f)
        runs = {mode: w[w.index("--") + 1:] if "--" in w else []
                for mode, w in transcript.runs(day_dir).items()}
        if not {"default", "self-test"} <= runs.keys():
            sys.exit(f"{day_dir}/runs.txt: want a `default` and a `self-test` line")
        if override is not None:
            overrides.append(f"{os.path.basename(f)}: the default run takes `{shlex.join(override)}`"
                             " here")
        line = re.sub(r"-arch=sm_\d+", f"-arch={a.arch}", capture.readme_build_line(day_dir))
        words = shlex.split(line)
        lesson_src = next(w for w in words if w.endswith(".cu"))
        original = open(os.path.join(root, lesson_src), encoding="utf-8").read()
        for m in [None] + mutants:  # None: the baseline, the day as it is
            name = m["name"] if m else "baseline"
            if m and (count := original.count(m["find"])) != 1:
                errors.append(f"{day}/{name}: the find text matches {count} times (want 1)")
                continue
            d = os.path.join(work, day, name)
            os.makedirs(d)
            src = os.path.join(d, os.path.basename(lesson_src))
            open(src, "w", encoding="utf-8").write(
                original.replace(m["find"], m["replace"]) if m else original)
            lesson = [src if w == lesson_src else w for w in words]
            lesson[lesson.index("-o") + 1] = os.path.join(d, "lesson")
            harness = [w for w in lesson if w != src] + [f"-DLESSON=\"{src}\"",
                                                         f"tests/harness/{day}.cu"]
            harness[harness.index("-o") + 1] = os.path.join(d, "harness")
            jobs.append({"day": day, "m": m, "name": name, "dir": d, "builds": [lesson, harness],
                         "default": runs["default"] if override is None else override,
                         "self-test": runs["self-test"]})
    if a.apply_only:
        for e in errors:
            print(f"error: {e}")
        print(f"{'FAILED' if errors else 'ok'}: mutants: {sum(1 for j in jobs if j['m'])} apply "
              f"exactly once; {len(errors)} do not")
        return 1 if errors else 0
    t0 = time.time()
    with cf.ThreadPoolExecutor(a.jobs) as pool:
        failed = list(pool.map(lambda j: build(j["builds"]), jobs))
    say(f"mutation: {len(jobs)} program pairs built in {time.time() - t0:.0f} s "
        f"({a.arch}, {a.jobs} at a time)")
    errors += [f"{j['day']}/{j['name']}: does not compile: {e}" for j, e in zip(jobs, failed) if e]
    ready = [j for j, e in zip(jobs, failed) if not e]

    def both(j):
        return (run(os.path.join(j["dir"], "lesson"), j["default"]),
                run(os.path.join(j["dir"], "harness"), j["self-test"]))

    with cf.ThreadPoolExecutor(a.runs) as pool:
        results = list(pool.map(both, ready))
    for line in overrides:
        say(line)
    say("\n| day | mutant | expect | default run | self-test | verdict | as expected |")
    say("|---|---|---|---|---|---|---|")
    bad, counts = 0, {"killed": 0, "survived": 0}

    def cell(r):
        return f"exit {r[0]} ({r[2]:.0f} s)" + (f": {r[1][:90]}" if r[0] != 0 else "")

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
    build = (f"nvcc -std=c++17 -O3 -arch={a.arch} (each day's README line with the mutated copy as "
             "its source; the harness with -DLESSON)")
    command = f"tests/mutation/run.py --arch {a.arch} --jobs {a.jobs} --runs {a.runs}"
    path = capture.write(a.transcript, "mutation", started, build, [os.path.abspath(__file__)] +
                         files, command, rc, "\n".join(out) + "\n")
    print(f"mutation: wrote {path}")


if __name__ == "__main__":
    sys.exit(main())
