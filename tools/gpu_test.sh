#!/usr/bin/env bash
# GPU test runner for CTest (cmake/Days.cmake makes one test of each line of a day's runs.txt).
#
#   gpu_test.sh HOW DAY_DIR MODE KIND EXE ARGS...
#     HOW   run              the program must exit 0
#           run-if-memory    like run, but a refusal for lack of device memory (exit 2,
#                            'device memory' on stderr) is a skip
#           sanitize-TOOL    compute-sanitizer TOOL must report zero errors, exit 0
#           expect-race      racecheck must REPORT a hazard (the race exhibit)
#           evidence-only    like run, but only with REDUCTION_CAPTURE set (a repeat of the default
#                            run for the README's medians); otherwise a skip, with that reason
#     KIND  lesson | harness (which program EXE is: the day's lesson, or its test program)
#
# Exit 77 (CTest's skip) with the reason printed when no CUDA device is present; 2 on bad usage
# (one line on stderr, before any device is looked for); --help prints this text.
# With REDUCTION_CAPTURE=DIR set, the same run is made through tools/capture.py instead (built with
# the README line for REDUCTION_CAPTURE_ARCH, default sm_90), which also writes its transcript to
# DIR/<day>/: one pass gives both the test verdict and the evidence (a run that fails is printed,
# not written, but for the race exhibit, whose flagged hazard is the record). It needs a build
# configured for capture (REDUCTION_SERIAL_TIMING=1 from cmake/Days.cmake: its timed runs are
# RUN_SERIAL); in any other build REDUCTION_CAPTURE is refused, before anything runs, with exit 1.
# The quick tier's smaller run of a mode (REDUCTION_QUICK_RUN=1, cmake/Days.cmake) is not evidence:
# with REDUCTION_CAPTURE set it is skipped, saying so (the capture pass is the full tier).
set -u
usage() { sed -n '2,/^set -u$/{/^set -u$/d;s/^# \{0,1\}//;p}' "$0"; }
bad() { echo "error: tools/gpu_test.sh: $* (see --help)" >&2; exit 2; }
case "${1:-}" in
  -h | --help) usage; exit 0 ;;
  run | run-if-memory | sanitize-?* | expect-race | evidence-only) ;;
  "") bad "want HOW DAY_DIR MODE KIND EXE ARGS..." ;;
  *) bad "unknown HOW '$1': want run, run-if-memory, sanitize-TOOL, expect-race or evidence-only" ;;
esac
[ $# -ge 5 ] || bad "want HOW DAY_DIR MODE KIND EXE ARGS..., got $# argument(s)"
how=$1 day_dir=$2 mode=$3 kind=$4; shift 4
case "$kind" in lesson | harness) ;; *) bad "unknown KIND '$kind': want lesson or harness" ;; esac
[ -d "$day_dir" ] || bad "$day_dir: no such directory"
if [ -n "${REDUCTION_CAPTURE:-}" ] && [ "${REDUCTION_SERIAL_TIMING:-}" != 1 ]; then
  echo "FAILED: REDUCTION_CAPTURE is set but this build was configured without it, so its timed" \
       "runs may share the GPU; configure again with it set (REDUCTION_CAPTURE=DIR cmake -S . -B" \
       "build, or -DREDUCTION_SERIAL_TIMING=ON), then run ctest"
  exit 1
fi
if [ -n "${REDUCTION_CAPTURE:-}" ] && [ "${REDUCTION_QUICK_RUN:-}" = 1 ]; then
  echo "SKIPPED: the quick tier's smaller run of $mode is not evidence; the capture records the" \
       "full tier's run of the runs.txt line (ctest -L full)"
  exit 77
fi
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
  echo "SKIPPED: no CUDA device on this machine (nvidia-smi lists no GPU); this test runs on a GPU runner"
  exit 77
fi
if [ "$how" = evidence-only ]; then
  if [ -z "${REDUCTION_CAPTURE:-}" ]; then
    echo "SKIPPED: evidence only: $mode is another process of the default run, for the README's" \
         "medians, and checks nothing the default run does not; REDUCTION_CAPTURE=DIR runs it"
    exit 77
  fi
  how=run
fi
if [ -n "${REDUCTION_CAPTURE:-}" ]; then
  shift # EXE: capture.py builds the program itself, with the README line
  here=$(cd "$(dirname "$0")/.." && pwd)
  opts=(--arch "${REDUCTION_CAPTURE_ARCH:-sm_90}" --out-dir "$REDUCTION_CAPTURE/$(basename "$day_dir")")
  [ "$kind" = harness ] && opts+=(--harness)
  case "$how" in
    sanitize-*) opts+=(--tool "${how#sanitize-}") ;;
    expect-race) opts+=(--tool racecheck --keep-failed) ;; # racecheck's non-zero exit is the record
  esac
  out=$(python3 "$here/tools/capture.py" "${opts[@]}" "$day_dir" "$mode" -- "$@" </dev/null); rc=$?
  echo "$out"
  file=$(printf '%s\n' "$out" | sed -n 's/^capture: wrote \(.*\) (exit code.*/\1/p')
  [ -n "$file" ] && cat "$here/$file"
  case "$how" in
    expect-race)
      if [ -n "$file" ] && grep -Eq 'RACECHECK SUMMARY: [1-9][0-9]* hazard' "$here/$file"; then
        echo "PASSED: racecheck reported the exhibit's hazard"; exit 0
      fi
      echo "FAILED: racecheck reported no hazard for the race exhibit (exit $rc)"; exit 1 ;;
    run-if-memory)
      if [ "$rc" = 2 ] && printf '%s\n' "$out" | grep -q 'device memory'; then # not written: failed
        echo "SKIPPED: this device has too little memory for this size"; exit 77
      fi ;;
  esac
  exit "$rc"
fi
case "$how" in
  run)
    exec "$@" ;;
  run-if-memory)
    err=$(mktemp); "$@" 2>"$err"; rc=$?; cat "$err" >&2
    if [ "$rc" = 2 ] && grep -q 'device memory' "$err"; then
      echo "SKIPPED: this device has too little memory for this size"; rm -f "$err"; exit 77
    fi
    rm -f "$err"; exit "$rc" ;;
  sanitize-*)
    tool=${how#sanitize-}
    command -v compute-sanitizer >/dev/null || { echo "FAILED: compute-sanitizer not on PATH"; exit 1; }
    exec compute-sanitizer --tool "$tool" --report-api-errors no --error-exitcode 1 "$@" ;;
  expect-race)
    # The capture's command (tools/capture.py): racecheck's default analysis report, a line a
    # hazard kind. `--racecheck-report hazard` printed every hazard, 1.3 million a kind for day
    # 26's exhibit: more than 200 s alone on the H200 (2026-12-03), where the capture takes seconds.
    out=$(compute-sanitizer --tool racecheck --report-api-errors no --error-exitcode 1 "$@" 2>&1)
    rc=$?
    printf '%s\n' "$out"
    if printf '%s\n' "$out" | grep -Eq 'RACECHECK SUMMARY: [1-9][0-9]* hazard'; then
      echo "PASSED: racecheck reported the exhibit's hazard"; exit 0
    fi
    echo "FAILED: racecheck reported no hazard for the race exhibit (exit $rc)"; exit 1 ;;
esac
