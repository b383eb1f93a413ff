"""The host checks that run a maintained tool (clang-format, actionlint) on the repository, and the
fixture table: every tool and check passes on a known-good input and fails, with the expected
lines, on each known-bad one. Marked gpu: needs a CUDA device; full: takes long (pytest.ini).

A case is (id, exit code, command, regex...): the command runs from the repository root and must
exit with that code, and every regex must match a line of its output. A tool name first in the
command means `python3 tools/NAME.py` (NAME.sh: `bash tools/NAME.sh`); exit code 2 (bad usage)
also needs exactly one line, on stderr, and nothing on stdout. A command that exits 77 was skipped
(its `SKIPPED:` line is the reason), and so is the case. `{tmp}` is a fresh directory; absent=NAME
also fails the case if the command wrote {tmp}/NAME; env={...} adds to its environment.
"""
import concurrent.futures as cf
import glob
import os
import re
import shlex
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NVCC = os.environ.get("NVCC", "nvcc")
F = "tests/fixtures"
DAYS = sorted(os.path.basename(os.path.dirname(d)) for d in glob.glob(f"{ROOT}/code/day*/"))

def tool(name):
    """The command line of a maintained tool (clang-format 19, or actionlint with shellcheck),
    found beside this Python or on PATH; pytest.skip naming what is missing and how to get it."""
    where = os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")])
    path = shutil.which(name, path=where)
    get = "configure again: it installs tools/requirements.txt into ~/.cache/reduction-module-venv"
    if name == "clang-format":
        version = path and subprocess.run([path, "--version"], capture_output=True, text=True)
        if not version or " version 19." not in version.stdout:  # others format differently
            pytest.skip(f"clang-format 19 missing" + (f" ({path} is `{version.stdout.strip()}`, "
                        "which formats differently)" if path else "") + f": {get}")
        return [path, "--dry-run", "-Werror", f"--style=file:{ROOT}/.clang-format"]
    shellcheck = shutil.which("shellcheck", path=where)
    if not (path and shellcheck):  # actionlint without shellcheck skips the run: steps
        pytest.skip(("shellcheck (actionlint checks each run: step with it)" if path else
                     "actionlint") + f" missing: {get}")
    return [path, "-shellcheck", shellcheck, "-pyflakes=", "-config-file",
            f"{ROOT}/.github/actionlint.yaml"]

@pytest.mark.parametrize("day", DAYS)
def test_format(day):
    """The day's .cu files and its test program are clang-formatted (.clang-format)."""
    files = glob.glob(f"{ROOT}/code/{day}/*.cu") + glob.glob(f"{ROOT}/tests/harness/{day}.cu")
    p = subprocess.run(tool("clang-format") + files, capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr

def test_workflows():
    """actionlint: the workflow's syntax, ${{ }} expressions, matrix references, runner labels
    (.github/actionlint.yaml), action versions, and shellcheck on each run: step."""
    p = subprocess.run(tool("actionlint") + [f"{ROOT}/.github/workflows/ci.yml"],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr

def case(id, code, command, *want, path=None, absent=None, env=None, gpu=False, full=False):
    return pytest.param(code, command, want, path, absent, env, id=id,
                        marks=[pytest.mark.gpu] * gpu + [pytest.mark.full] * full)

SC, PTX, KF, TR = f"{F}/self_contained", f"{F}/ptx", f"{F}/kernels", f"{F}/transcripts"
SRC, KERNELS = ["sources", "--nvcc", NVCC], ["sources", "--nvcc", NVCC, "--rules", "kernels"]
SELF, PTXR = ["sources", "--rules", "self-contained"], SRC + ["--rules", "ptx"]
D90, RO = "code/day90-fixture", f"{F}/readme_output"
NOPE, DIFF = "code/day99-nope", r"^Checking .*/README.md  \(changed\)$"
TOOLS = ("capture", "evidence", "mutation", "notebook", "plot", "readme", "sources")
CASES = [
    # the known-good inputs: every check passes
    case("good.sources", 0, SRC + [f"{F}/good"]),
    case("good.readme", 0, ["readme", "--check", f"{F}/good"]),
    case("good.transcripts", 0, ["evidence", f"{F}/good"]),
    case("good.kernels", 0, KERNELS + [f"{KF}/good"], full=True),
    case("good.masks", 0, ["sources", "--rules", "masks", f"{F}/masks/good.cu"]),
    case("good.format", 0, ["clang-format", f"{F}/good/{D90}/fixture.cu"]),
    case("kernels.broken_compiles", 0, KERNELS + [f"{KF}/broken"]),  # its check fails on a GPU
    case("kernels.descending_compiles", 0, KERNELS + [f"{KF}/descending"]),  # fails on a GPU
    case("notebook.broken_current", 0, ["notebook", "--check", f"{KF}/broken"]),
    case("notebook.execute", 0, ["notebook", "--execute", "{tmp}", "--notebook",
                                 f"{F}/notebook-execute/ok.ipynb", "--timeout", "120"]),
    # the source rules
    case("sources.project_header", 1, SELF + [f"{SC}/project-header.cu"],
         r'project-header.cu:6: error: #include "../common.h"'),
    case("sources.c_header", 1, SELF + [f"{SC}/c-header.cu"],
         r"c-header.cu:3: error: #include <omp.h>: not a C..17 standard header",
         r"c-header.cu:4: error: #include <stdio.h>: use the C.. header <cstdio>"),
    case("sources.no_timekernel", 1, SELF + [f"{SC}/no-timekernel.cu"],
         r"no-timekernel.cu:13: error: names timeKernel but never defines it"),
    case("sources.no_cuda_check", 1, SELF + [f"{SC}/no-cuda-check.cu"],
         r"no-cuda-check.cu:1: error: no `#define CUDA_CHECK"),
    case("sources.masks", 1, ["sources", "--rules", "masks", f"{F}/masks/bad.cu"],
         r"bad.cu:9: error: `__shfl_down_sync` mask `0xffffffffu`: not a named full-warp constant",
         r"bad.cu:15: error: `__shfl_xor_sync` mask `0x0000ffffu`",
         r"bad.cu:19: error: `__reduce_add_sync` mask `kHalfMask`", r"bad.cu:23: error: `__ballot_",
         r"bad.cu:27: error: `__syncwarp` mask `0xffff`", r"bad.cu:28: error: `__shfl_sync` mask"),
    case("sources.claims", 1, PTXR + [f"{PTX}/claims.cu"],
         r"claims.cu:5: error: kernel sumScalarTree claims `v4-loads` but its PTX",
         r"claims.cu:5: error: kernel sumScalarTree claims `shfl` but its PTX"),
    case("sources.volatile", 1, PTXR + [f"{PTX}/volatile.cu"],
         r"volatile.cu:11: error: `volatile` outside a race exhibit",
         r"volatile.cu:5: error: kernel sumVolatileTail is outside a race exhibit but its PTX"),
    case("sources.exhibit_leak", 1, PTXR + [f"{PTX}/exhibit-leak.cu"],
         r"leak.cu:16: error: kernel sumWarp is outside a race exhibit but its PTX .* has `ld.vol"),
    case("sources.markers", 1, PTXR + [f"{PTX}/markers.cu"],
         r"markers.cu:15: error: `// race exhibit:` while the exhibit opened at line 4 is still",
         r"markers.cu:17: error: `// end race exhibit` with no open",
         r"markers.cu:4: error: a race exhibit, but the file never mentions --race-demo"),
    case("sources.unclosed", 1, PTXR + [f"{PTX}/unclosed.cu"],
         r"unclosed.cu:4: error: `// race exhibit:` is never closed"),
    case("sources.unknown_token", 1, PTXR + [f"{PTX}/unknown-token.cu"],
         r"unknown-token.cu:9: error: unknown ptx claim `v8-loads`",
         r"unknown-token.cu:4: error: `// ptx:` claim not in the comment block directly above"),
    case("sources.comments", 1, ["sources", "--rules", "comments", f"{F}/comments/{D90}"],
         r"fixture.cu:1: error: the header is 21 comment lines, over 20",
         r"fixture.cu:45: error: kernel copyOver's comment is 9 lines besides its Launch, Needs "
         r"and ptx lines, over 8", r"day90-fixture/runs.txt:1: error: 4 comment lines, over 3"),
    # a README's code blocks, pasted in order after the standard headers, build (the good one does)
    case("sources.paste", 1, SRC + ["--rules", "paste", f"{F}/paste/{D90}"],
         r"README.md:1: error: its 2 cuda/cpp/c\+\+ block\(s\), pasted in order after the standard "
         r"headers, do not build for sm_75", r'README.md:9: nvcc: error: identifier "kScale" is'),
    # the README kernels: each compiles alone with what its Needs line names, launched as its
    # Launch line says
    case("kernels.no_needs", 1, KERNELS + [f"{KF}/no-needs/{D90}"],
         r"README.md:6: error: kernel `copy` \(snippet `copy`\) has no `// Needs: ...` line"),
    case("kernels.missing_constant", 1, KERNELS + [f"{KF}/missing-constant/{D90}"],
         r"README.md:8: error: kernel `scale` \(snippet `scale`\) does not compile alone",
         r'README.md:12: nvcc: error: identifier "kScale" is undefined'),
    case("kernels.launch", 1, KERNELS + [f"{KF}/launch/{D90}"],
         r"README.md:7: error: kernel `copyNoLaunch` \(snippet `no-launch`\) needs one `// Launch",
         r"README.md:21: error: kernel `copyTwoArgs` .* passes 2 argument\(s\); `copyTwoArgs` take",
         r"README.md:35: error: kernel `copyClause` .* has `poison out` after the call"),
    case("kernels.needs_closure", 1, KERNELS + [f"{KF}/needs-closure/{D90}"],
         r"README.md:7: error: `// Needs:` leaves out kWarp, which what it names needs in turn"),
    # the transcripts
    case("transcripts.header", 1, ["evidence", f"{TR}/header"],
         r"header/default.txt:3: error: capture header: line 3 should be the `driver` line"),
    case("transcripts.fail_row", 1, ["evidence", f"{TR}/fail-row"],
         r"fail-row/default.txt:15: error: row `v8` has check FAIL"),
    case("transcripts.no_result", 1, ["evidence", f"{TR}/no-result"],
         r"no-result/default.txt:18: error: exit code 0 but the last line"),
    case("transcripts.stale_source", 1, ["evidence", f"{TR}/stale-source"], r"stale-source/defaul"
         r"t.txt:6: error: code/day25-reduction-2/reduction_2.cu changed after this `default` "),
    case("transcripts.missing_mode", 1, ["evidence", f"{TR}/missing-mode"],
         r"runs.txt:3: error: `memcheck` has no transcript under evidence/day90-fixture/",
         r"fixture.mutants:1: error: no mutation transcript evidence/mutation/day90-fixture.txt"),
    case("transcripts.other_command", 1, ["evidence", f"{TR}/other-command"],
         r"txt:6: error: ran `./fixture`, but runs.txt's `default` line is `default -- --n 5`"),
    case("transcripts.exit_code", 1, ["evidence", f"{TR}/exit-code"],
         r"exit-code/default.txt:7: error: exit code 1: a failed run"),
    case("transcripts.seal", 1, ["evidence", f"{TR}/seal"],
         r"seal/default.txt:8: error: the output below the header is not what tools/capture.py"),
    case("transcripts.parts", 1, ["evidence", f"{TR}/parts"],
         r"runs.txt:3: error: `--part K/3` lines racecheck-1, racecheck-3 give K = 1, 3; the run "
         r"needs K = 1 to 3", r"runs.txt:5: error: `--part K/2` lines memcheck-1 give K = 1;",
         r"runs.txt:6: error: `--part K/2` lines memcheck-2 give K = 2;"),
    # the README blocks (cog): a block that differs fails with its diff; a generator error
    # names the README line
    case("readme.differs", 1, ["readme", "--check", f"{RO}/differs"], DIFF,
         r"^\+\| copy \| 67108864 \| 536.871 \| 0.1428 \|"),  # the transcript's row
    case("readme.failed_run", 1, ["readme", "--check", f"{RO}/failed-run"],
         r"README.md:12: error: expected-output `default`: .*default.txt records a failed run"),
    case("readme.medians_stale", 1, ["readme", "--check", f"{RO}/medians-stale"],
         r"README.md:5: error: median: .*/evidence/day90-fixture/medians.md is stale: run tools/"),
    case("readme.no_transcript", 1, ["readme", "--check", f"{RO}/no-transcript"],
         r"README.md:12: error: expected-output `default`: no transcript"),
    case("readme.snippet_drift", 1, ["readme", "--check", f"{F}/snippets/drift"], DIFF,
         r"^\+    v \+= __shfl_down_sync\(0xffffffffu, v, offset\);$"),
    case("readme.snippet_unknown", 1, ["readme", "--check", f"{F}/snippets/unknown"],
         r"unknown/code/day90-fixture/README.md:3: error: unknown snippet `warp-tail`"),
    case("readme.snippet_duplicate", 1, ["readme", "--check", f"{F}/snippets/duplicate"],
         r"duplicate/code/day90-fixture/README.md:9: error: snippet `block-size` appears twice",
         r"duplicate/code/day90-fixture/fixture.cu:17: error: snippet `block-size` is marked"),
    case("readme.snippet_unquoted", 1, ["readme", "--check", f"{F}/snippets/unquoted"],
         r"fixture.cu:4: error: snippet `warp-sum` is quoted by no block of .*/README.md",
         r"FAILED: readme: 1 README\(s\), 1 snippet\(s\) quoted by no README"),
    case("readme.old_marker", 1, ["readme", "--check", f"{F}/readme_old"],
         r"README.md:3: error: `<!-- snippet: block-size -->`: a marker from before cog",
         r"README.md:8: error: .* the form the kernel finder reads"),
    # the notebook, the figures, the mutation lists
    case("notebook.drift", 1, ["notebook", "--check", f"{F}/notebook/drift"],
         r"ipynb:1: error: cell 4 \(file code/day90-fixture/fixture.cu\) differs from what the",
         r"ipynb:1: error: cell 5 \(build day90-fixture\) differs from what the READMEs and files"),
    case("notebook.execute_fails", 1, ["notebook", "--execute", "{tmp}", "--notebook",
                                       f"{F}/notebook-execute/fails.ipynb", "--timeout", "120"],
         r"cell  1 \(\): FAILED: CalledProcessError; CHECK FAILED: launch 1: got 1 want 2",
         r"RESULT: FAIL \(1 of 3 code cells failed\)"),
    case("plots.stale", 1, ["plot", "--check", f"{F}/plots/stale"],
         r"default-ladder.svg:1: error: stale: its points are not those of default.txt"),
    case("mutants.no_match", 1, ["mutation", "--apply-only", "--root", f"{F}/mutation/no-match"],
         r"error: day90-fixture/return-one: the find text matches 0 times \(want 1\)"),
    # the mutation run on host-only days (built with nvcc, run on the CPU): a mutant's cheaper run
    # (by its baseline's seconds) first, the other only if it passed; the list's `self-test-args:`
    case("mutation.runs", 0, ["mutation", "--root", f"{F}/mutation/runs", "--runs", "2",
                              "--transcript", "{tmp}"],
         r"^day90-fixture.mutants: the self-test run takes `--want 5` here$",
         r"^\| day90-fixture \| default-kills \| killed \| exit 1 .*CHECK FAILED: got 3 want 2 \| "
         r"not run \(the default run killed it\) \| killed \| yes \|$",
         r"^\| day90-fixture \| self-test-kills \| killed \| exit 0 .* \| exit 1 .*got 6 want 5 \| "
         r"killed \| yes \|$",
         r"^\| day91-fixture \| both-kill \| killed \| not run \(the self-test killed it\) \| "
         r"exit 1 .*got 3 want 2 \| killed \| yes \|$",
         r"^RESULT: PASS \(3 mutants, 3 as expected: 2 killed, 1 survived\)$",
         r"^mutation: wrote .*/day90-fixture\.txt$", r"^mutation: wrote .*/day91-fixture\.txt$",
         r"^RESULT: PASS \(2 days, 4 mutants, 4 as expected: 3 killed, 1 survived\)$", full=True),
    case("mutation.wrong", 1, ["mutation", "--root", f"{F}/mutation/runs-wrong", "--runs", "2"],
         r"^\| day90-fixture \| baseline \| passes \| exit 0 .*got 5 want 4 \| BASELINE FAILS",
         r"^\| day90-fixture \| default-kills \| survives \| .* \| killed \| NO \|$",
         r"1 not as expected; 1 baselines fail; 0 list errors$", r"^RESULT: FAIL"),
    # the maintained tools on known-bad files
    case("format.unformatted", 1, ["clang-format", f"{F}/format/unformatted.cu"],
         r"unformatted.cu:4:[0-9]+: error: code should be clang-formatted"),
    case("workflows.bad", 1, ["actionlint", f"{F}/workflows/bad/.github/workflows/ci.yml"],
         r'ci.yml:8:5: unexpected key "runs_on" for "job" section',
         r'ci.yml:17:30: property "cuda_version" is not defined in object type {cuda: string}',
         r'ci.yml:22:[0-9]+: property "nope" is not defined in object type',
         r"ci.yml:30:[0-9]+: shellcheck reported issue in this script: SC2045:"),
    # the capture: a one-liner test compiles in the test (a compiler that always fails first on
    # PATH fails it); without a GPU a capture says so and writes nothing
    case("oneliner.compiles", 3, ["capture", "--build-only", "--arch", "sm_75",
                                  "code/day24-reduction", "oneliner"],
         r"fake nvcc: refuses to compile", r"capture: build failed or warned: nvcc ",
         path=f"{F}/fake-nvcc"),
    # a capture in a build whose timed runs may share the GPU is refused before anything runs
    case("gpu_test.capture_unconfigured", 1, ["gpu_test.sh", "run", "code/day24-reduction",
                                              "default", "lesson", "true"],
         r"^FAILED: REDUCTION_CAPTURE is set but this build was configured without it",
         env={"REDUCTION_CAPTURE": "{tmp}", "REDUCTION_SERIAL_TIMING": "0"}),
    case("capture.no_gpu", 1, ["capture", "--out-dir", "{tmp}/evidence", "code/day24-reduction",
                               "default"], r"^capture: no CUDA device on this machine .*nothing "
         r"built, run or written$", path=f"{F}/no-gpu", absent="evidence"),
    # bad usage: a typo'd flag (named before any missing argument), a path that is not there, an
    # unknown mode (before any GPU is looked for) is one line on stderr and exit 2; --help is exit 0
    *[case(f"usage.{t}.flag", 2, [t, "--chek"], "error: unrecognized arguments: --chek$")
      for t in TOOLS],
    *[case(f"usage.{c[0]}.path", 2, list(c), f"error: {NOPE}: no such file or directory$")
      for c in (("capture", NOPE, "default"), ("readme", "--check", NOPE), ("sources", NOPE),
                ("notebook", "--check", NOPE), ("plot", "--check", NOPE), ("evidence", NOPE),
                ("mutation", "--apply-only", "--root", NOPE))],
    *[case(f"usage.{t}.help", 0, [t, "--help"], r"^Usage:") for t in TOOLS],
    case("usage.capture.none", 2, ["capture"], "error: want DAY_DIR MODE"),
    case("usage.capture.mode", 2, ["capture", "code/day24-reduction", "nosuchmode"],
         r"error: MODE `nosuchmode` is not a line of code/day24-reduction/runs.txt \(its modes: "
         r"default, n-1, self-test, ", path=f"{F}/no-gpu"),
    case("usage.mutation.day", 2, ["mutation", "--apply-only", NOPE], f"{NOPE}: no such day"),
    # the shell tools: the same rule
    case("usage.gpu_test.how", 2, ["gpu_test.sh", "nosuch", "code/day24-reduction", "default",
                                   "lesson", "true"],
         r"^error: tools/gpu_test.sh: unknown HOW 'nosuch'"),
    case("usage.gpu_test.args", 2, ["gpu_test.sh", "run"], r"got 1 argument"),
    case("usage.gpu_test.help", 0, ["gpu_test.sh", "--help"], r"^GPU test runner for CTest"),
    case("usage.cuda12.flag", 2, ["cuda12.sh", "--chek"],
         r"^error: tools/cuda12.sh: want one of prepare, check, --help; got '--chek'"),
    case("usage.cuda12.help", 0, ["cuda12.sh", "--help"], r"^The oldest-toolkit compile"),
    # on a GPU: a kernel a learner broke fails its check with got and want, in the check and in
    # its notebook cell; the good kernels pass
    case("kernels.broken", 1, KERNELS + ["--run", f"{KF}/broken"],
         r"CHECK FAILED: launch 1: sumFloat4NoTail: \*result \(the sum\): got 2999997 want 3000003",
         r"CHECK FAILED: launch 2: sumFloat4NoTail: \*result \(the sum\): got 2999997 want 3000003",
         r"README.md:15: error: kernel `sumFloat4NoTail` \(snippet `no-tail`\): its check exited 1",
         gpu=True),
    case("kernels.good", 0, KERNELS + ["--run", f"{KF}/good"], gpu=True),
    # a race exhibit that races nothing fails (here a program with no kernel at all; not as a
    # capture, which a capture pass's environment would ask for)
    case("gpu_test.no_race", 1, ["gpu_test.sh", "expect-race", "code/day24-reduction",
                                 "race-demo-none", "lesson", "true"],
         r"^FAILED: racecheck reported no hazard for the race exhibit",
         env={"REDUCTION_CAPTURE": ""}, gpu=True),
    case("kernels.descending", 1, KERNELS + ["--run", f"{KF}/descending"],
         r"CHECK FAILED: launch 1: rankSortDescending: keys of sorted .* got 256 want 0",
         gpu=True),
    case("notebook.broken", 1, ["notebook", "--gpu", "--execute", "{tmp}", "--notebook",
                                f"{KF}/broken/notebooks/reduction-module.ipynb"],
         r"cell  8 \(kernel-run day90-fixture no-tail\): FAILED: CalledProcessError; RESULT: FAIL "
         r"\(2 of 2 checks failed\)", r"RESULT: FAIL \(1 of 6 code cells failed\)", gpu=True),
]

def mutants_not_compiling(root, day, tmp):
    """["DAY/MUTANT: nvcc's first error"] for each mutant of ROOT/tests/mutation/DAY.mutants that
    applies to the lesson but fails nvcc's front end, `nvcc -cuda` (2-6 s a file): the mutation run
    compiles them only on a GPU machine, `mutation.py --apply-only` only applies them."""
    from reduction import mutation, readme
    words = shlex.split(readme.build_line(os.path.join(root, "code", day)))
    lesson = os.path.join(root, next(w for w in words if w.endswith(".cu")))
    original = open(lesson, encoding="utf-8").read()
    flags = [w for w in words[1:] if w.startswith("-std=")] + ["-arch=sm_75", "-cuda"]

    def front_end(m):
        if original.count(m["find"]) != 1:
            return None  # mutation.py --apply-only reports it
        os.makedirs(os.path.join(tmp, m["name"]))
        src = os.path.join(tmp, m["name"], os.path.basename(lesson))
        open(src, "w", encoding="utf-8").write(original.replace(m["find"], m["replace"]))
        p = subprocess.run([NVCC] + flags + ["-o", os.devnull, src], capture_output=True,
                           text=True)
        error = next((l for l in (p.stdout + p.stderr).splitlines() if "error" in l), "")
        return f"{day}/{m['name']}: does not compile: {error.strip()}" if p.returncode else None

    _, mutants = mutation.parse_mutants(os.path.join(root, "tests", "mutation", f"{day}.mutants"))
    with cf.ThreadPoolExecutor(os.cpu_count()) as pool:
        return [e for e in pool.map(front_end, mutants) if e]

@pytest.mark.parametrize("day", [pytest.param(d, marks=pytest.mark.full) for d in DAYS if
                                 os.path.exists(f"{ROOT}/tests/mutation/{d}.mutants")] +
                         ["fixture.no-compile"])
def test_mutants_compile(day, tmp_path):
    """Every mutant compiles (mutants_not_compiling); the fixture's one that does not, fails."""
    if not shutil.which(NVCC):
        pytest.skip(f"nvcc missing ({NVCC}): install the CUDA toolkit")
    if day == "fixture.no-compile":
        got = mutants_not_compiling(f"{ROOT}/{F}/mutation/no-compile", "day90-fixture", tmp_path)
        assert len(got) == 1 and re.match(r'day90-fixture/answer-min-n: does not compile: .*'
                                          r'error: identifier "minN" is undefined', got[0]), got
    else:
        assert not mutants_not_compiling(ROOT, day, tmp_path)

def test_capture_seals_project_headers():
    """A test program's capture is sealed and its build keyed by every project header it includes
    (delay.h was neither before 2026-12-03: a change to it staled no transcript, kept no build)."""
    from reduction.capture import harness_sources
    h = "tests/harness/"
    assert harness_sources(f"{h}day27-last-block.cu")[1:] == [f"{h}delay.h", f"{h}harness.h"]
    assert harness_sources(f"{h}day24-reduction.cu") == [f"{h}day24-reduction.cu", f"{h}harness.h"]

@pytest.mark.parametrize("code, command, want, path, absent, env", CASES)
def test_fixture(code, command, want, path, absent, env, tmp_path):
    if command[0] in ("clang-format", "actionlint"):
        command = tool(command[0]) + command[1:]
    elif command[0].endswith(".sh"):
        command = ["bash", f"tools/{command[0]}"] + command[1:]
    else:
        command = [sys.executable, f"tools/{command[0]}.py"] + command[1:]
    env = dict(os.environ, **{k: v.replace("{tmp}", str(tmp_path)) for k, v in (env or {}).items()})
    if path:
        env["PATH"] = os.path.join(ROOT, path) + os.pathsep + os.environ["PATH"]
    p = subprocess.run([w.replace("{tmp}", str(tmp_path)) for w in command], cwd=ROOT, env=env,
                       capture_output=True, text=True)
    out = p.stdout + p.stderr
    if p.returncode == 77:
        pytest.skip(next((l[9:] for l in out.splitlines() if l.startswith("SKIPPED: ")), out))
    assert p.returncode == code, f"exit code {p.returncode}, want {code}; its output:\n{out}"
    lines = p.stderr.splitlines() if code == 2 else out.splitlines()
    assert code != 2 or (len(lines) == 1 and not p.stdout), f"want one line on stderr:\n{out}"
    missing = [r for r in want if not any(re.search(r, line) for line in lines)]
    assert not missing, f"no output line matches {missing}; the output:\n{out}"
    assert not (absent and os.path.exists(tmp_path / absent)), f"{absent} was written:\n{out}"
