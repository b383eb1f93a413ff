"""The mutation run: do the shipped checks kill real bugs? (GPU machine.)

Usage: tools/mutation.py [--arch sm_90] [--jobs 8] [--runs 4] [--apply-only] [DAY ...]
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
transcript says so); a line `self-test-args: ARGS` does the same for the `self-test` run. Each
mutant is applied to a copy of the day's lesson file; the lesson (the README's build line, source
swapped) and the day's test program (tests/harness/<day>.cu with -DLESSON pointing at the copy)
are built; then the lesson's `default` run and the harness's `self-test` run (their lines in
code/<day>/runs.txt, transcript.runs) run. KILLED: either exits non-zero (or exceeds the time
limit). The unmutated day (the baseline) runs first, both runs, and must pass both, or its mutants
mean nothing; then each mutant runs its day's cheaper run first (by the baseline's seconds) and
the other only if that one passed. The table keeps the lists' order. A mutant that does not apply
or does not compile is an error in the list.

Prints, a day at a time, one table row per mutant, the day's summary and `RESULT: PASS|FAIL (...)`,
then the whole run's RESULT line; a line on stderr as each program pair finishes. With
--transcript DIR it also writes one transcript a day, DIR/DAY-YYYY-MM-DD-GPU.txt (the day's
section, `record.write`'s header; its `# source:` lines name this script, the day's list, its test
program, its lesson and harness.h, so tools/evidence.py finds it stale when any of them changes).
One day a run fits one device call where the whole list does not. Exit 0 when every mutant behaved
as its `expect` line says and every baseline passed; 1 otherwise; 2 on bad usage.
"""
import argparse
import concurrent.futures as cf
import datetime
import glob
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

from . import readme, record, transcript

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

TIME_LIMIT = 300  # seconds a run may take before it counts as killed (a hang)

def parse_mutants(path):
    """({"default": words or None, "self-test": words or None}, [mutant dicts]) of one .mutants
    file: the runs' argument overrides (`default-args:`, `self-test-args:`) and the mutants."""
    head, *blocks = re.split(r"^=== ", open(path, encoding="utf-8").read(), flags=re.M)
    args = {}
    for mode in ("default", "self-test"):
        line = re.search(rf"^{mode}-args:(.*)$", head, flags=re.M)
        args[mode] = shlex.split(line.group(1)) if line else None
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
    return args, out

def build(commands, cwd):
    """Runs each build command in cwd (the repository read); '' when all succeed, else the failed
    one's error lines."""
    for words in commands:
        p = subprocess.run(words, cwd=cwd, capture_output=True, text=True)
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

def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, usage=argparse.SUPPRESS,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("days", nargs="*")
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--jobs", type=int, default=8, help="parallel builds")
    ap.add_argument("--runs", type=int, default=4, help="parallel runs on the GPU")
    ap.add_argument("--apply-only", action="store_true")
    ap.add_argument("--transcript", metavar="DIR")
    ap.add_argument("--root", default=ROOT)
    a = ap.parse_args(argv)
    if not os.path.isdir(a.root):
        ap.error(f"{a.root}: no such file or directory")
    root = os.path.abspath(a.root)
    files = sorted(glob.glob(os.path.join(root, "tests", "mutation", "*.mutants")))
    if a.days:
        for d in a.days:
            if not os.path.exists(os.path.join(root, "tests", "mutation",
                                               os.path.basename(d.rstrip("/")) + ".mutants")):
                ap.error(f"{d}: no such day (no tests/mutation/{os.path.basename(d.rstrip('/'))}"
                         ".mutants)")
        want = {os.path.basename(d.rstrip("/")) for d in a.days}
        files = [f for f in files if os.path.basename(f)[:-len(".mutants")] in want]
    if not files:
        ap.error(f"no tests/mutation/*.mutants in {a.root}")
    work = tempfile.mkdtemp(prefix="mutation-")
    try:
        return mutate(a, root, files, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)  # the mutated copies and their builds

def mutate(a, root, files, work):
    started = datetime.datetime.now(datetime.timezone.utc)
    def say(line=""):
        print(line, flush=True)

    jobs, errors, overrides = [], [], []
    for f in files:
        day = os.path.basename(f)[:-len(".mutants")]
        day_dir, (override, mutants) = os.path.join(root, "code", day), parse_mutants(f)
        runs = {mode: w[w.index("--") + 1:] if "--" in w else []
                for mode, w in transcript.runs(day_dir).items()}
        if not {"default", "self-test"} <= runs.keys():
            sys.exit(f"{day_dir}/runs.txt: want a `default` and a `self-test` line")
        for mode in ("default", "self-test"):
            if override[mode] is not None:
                overrides.append(f"{os.path.basename(f)}: the {mode} run takes "
                                 f"`{shlex.join(override[mode])}` here")
                runs[mode] = override[mode]
        line = re.sub(r"-arch=sm_\d+", f"-arch={a.arch}", readme.build_line(day_dir))
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
                         "default": runs["default"], "self-test": runs["self-test"]})
    if a.apply_only:
        for e in errors:
            print(f"error: {e}")
        print(f"{'FAILED' if errors else 'ok'}: mutants: {sum(1 for j in jobs if j['m'])} apply "
              f"exactly once; {len(errors)} do not")
        return 1 if errors else 0
    t0 = time.time()
    with cf.ThreadPoolExecutor(a.jobs) as pool:
        failed = list(pool.map(lambda j: build(j["builds"], root), jobs))
    built = (f"mutation: {len(jobs)} program pairs built in {time.time() - t0:.0f} s "
             f"({a.arch}, {a.jobs} at a time)")
    say(built)
    errors += [f"{j['day']}/{j['name']}: does not compile: {e}" for j, e in zip(jobs, failed) if e]
    ready = [j for j, e in zip(jobs, failed) if not e]

    def runs_of(j, order):
        """Both runs of job j in `order`; the second only when the first passed (a kill is a
        verdict: the second run would add time, not information)."""
        exe = {"default": os.path.join(j["dir"], "lesson"), "self-test": os.path.join(j["dir"],
                                                                                     "harness")}
        out = {}
        for mode in order:
            if any(r[0] != 0 for r in out.values()):
                out[mode] = (None, f"the {order[0].replace('default', 'default run')} killed it",
                             0.0)
            else:
                out[mode] = run(exe[mode], j[mode])
        print(f"mutation: {time.time() - t0:.0f} s: {j['day']}/{j['name']}: " + ", ".join(
            f"{k} {r[0]} ({r[2]:.0f} s)" for k, r in out.items()), file=sys.stderr, flush=True)
        return out["default"], out["self-test"]

    # Baselines first, both runs each (the slowest days first); then each mutant runs its day's
    # cheaper run first (by the baseline's seconds), the longest jobs first.
    base = [i for i, j in enumerate(ready) if j["m"] is None]
    base.sort(key=lambda i: (not ready[i]["day"].startswith("day39"),
                             [-ord(c) for c in ready[i]["day"]]))
    with cf.ThreadPoolExecutor(a.runs) as pool:
        done = dict(zip(base, pool.map(lambda i: runs_of(ready[i], ("default", "self-test")),
                                       base)))
    cost = {ready[i]["day"]: {"default": done[i][0][2], "self-test": done[i][1][2]} for i in base}
    order = {d: sorted(c, key=c.get) for d, c in cost.items()}
    rest = [i for i, j in enumerate(ready) if j["m"] is not None]
    rest.sort(key=lambda i: -min(cost.get(ready[i]["day"], {"": 0.0}).values()))
    with cf.ThreadPoolExecutor(a.runs) as pool:
        done.update(zip(rest, pool.map(
            lambda i: runs_of(ready[i], order.get(ready[i]["day"], ("default", "self-test"))),
            rest)))
    say(f"mutation: the runs took {time.time() - t0:.0f} s ({a.runs} at a time)")

    def cell(r):
        if r[0] is None:
            return f"not run ({r[1]})"
        return f"exit {r[0]} ({r[2]:.0f} s)" + (f": {r[1][:90]}" if r[0] != 0 else "")

    total, rc = {"killed": 0, "survived": 0, "bad": 0}, 0
    for f in files:  # one section, and one transcript, a day
        day = os.path.basename(f)[:-len(".mutants")]
        sec = [built] + [l for l in overrides if l.startswith(os.path.basename(f) + ":")]
        sec += ["", "| day | mutant | expect | default run | self-test | verdict | as expected |",
                "|---|---|---|---|---|---|---|"]
        bad, failing, counts = 0, 0, {"killed": 0, "survived": 0}  # mutants, baselines
        for i, j in enumerate(ready):
            if j["day"] != day:
                continue
            d, t = done[i]
            killed = any(r[0] not in (0, None) for r in (d, t))  # None: not run (the other killed)
            if j["m"] is None:
                ok, verdict, expect = not killed, "baseline passes" if not killed else \
                    "BASELINE FAILS", "passes"
                failing += not ok
            else:
                verdict, expect = "killed" if killed else "survived", j["m"]["expect"]
                counts[verdict] += 1
                ok = (expect == "killed") == killed
                bad += not ok
            sec.append(f"| {day} | {j['name']} | {expect} | {cell(d)} | {cell(t)} | {verdict} | "
                       f"{'yes' if ok else 'NO'} |")
        survivors = [j for j in ready if j["day"] == day and j["m"] and
                     j["m"]["expect"] == "survives"]
        if survivors:
            sec += ["", "Why each expected survivor cannot be observed by these checks on this "
                    "GPU:"]
            sec += [f"- {day}/{j['name']}: {j['m']['reason']}" for j in survivors]
        errs = [e for e in errors if e.startswith(day + "/")]
        sec += [f"ERROR: {e}" for e in errs]
        n = counts["killed"] + counts["survived"]
        sec.append(f"\nmutation: {day}: {n} mutants: {counts['killed']} killed, "
                   f"{counts['survived']} survived; {bad} not as expected; {failing} baselines "
                   f"fail; {len(errs)} list errors")
        day_rc = 0 if bad == 0 and failing == 0 and not errs else 1
        sec.append(f"\nRESULT: {'PASS' if day_rc == 0 else 'FAIL'} ({n} mutants, {n - bad} as "
                   f"expected: {counts['killed']} killed, {counts['survived']} survived)")
        for line in sec[1:]:
            say(line)
        say()
        if a.transcript:
            write_transcript(a, day, f, sec, day_rc, started, root)
        rc |= day_rc
        total["killed"] += counts["killed"]
        total["survived"] += counts["survived"]
        total["bad"] += bad
    n = total["killed"] + total["survived"]
    say(f"RESULT: {'PASS' if rc == 0 else 'FAIL'} ({len(files)} days, {n} mutants, "
        f"{n - total['bad']} as expected: {total['killed']} killed, {total['survived']} survived)")
    return rc

def write_transcript(a, day, mutants, lines, rc, started, root):
    """DIR/DAY-YYYY-MM-DD-GPU.txt: the day's section; its `# source:` lines name this script, the
    day's list and what the programs are built from (the test program, the lesson, harness.h)."""
    build = (f"nvcc -std=c++17 -O3 -arch={a.arch} (each day's README line with the mutated copy as "
             "its source; the harness with -DLESSON)")
    command = f"tools/mutation.py --arch {a.arch} --jobs {a.jobs} --runs {a.runs}" + \
        (f" --root {a.root}" if os.path.abspath(a.root) != ROOT else "") + \
        "".join(f" {d}" for d in a.days)
    lesson = [w for w in shlex.split(readme.build_line(os.path.join(root, "code", day)))
              if w.endswith(".cu")]
    test = os.path.join(root, "tests", "harness", f"{day}.cu")
    srcs = [os.path.abspath(__file__), mutants, test] + [os.path.join(root, p) for p in lesson] + \
        [os.path.join(root, "tests", "harness", "harness.h")] * ('"harness.h"' in open(test).read())
    path = record.write(a.transcript, day, started, build, srcs, command, rc,
                        "\n".join(lines) + "\n", root=ROOT)
    print(f"mutation: wrote {path}")
