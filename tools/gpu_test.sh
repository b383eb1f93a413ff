#!/usr/bin/env bash
# GPU test runner for CTest. Exit 77 (CTest's skip) with the reason printed when no CUDA device
# is present; otherwise the verdict of the run.
#   gpu_test.sh run EXE ARGS...              the program must exit 0
#   gpu_test.sh sanitize-TOOL EXE ARGS...    compute-sanitizer TOOL must report zero errors, exit 0
#   gpu_test.sh expect-race EXE ARGS...      racecheck must report a hazard (the race exhibit)
#   gpu_test.sh run-if-memory EXE ARGS...    like run, but a refusal for lack of device memory
#                                            (exit 2, 'device memory' on stderr) is a skip
set -u
mode=$1; shift
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
  echo "SKIPPED: no CUDA device on this machine (nvidia-smi lists no GPU); this test runs on a GPU runner"
  exit 77
fi
case "$mode" in
  run)
    exec "$@" ;;
  run-if-memory)
    err=$(mktemp); "$@" 2>"$err"; rc=$?; cat "$err" >&2
    if [ "$rc" = 2 ] && grep -q 'device memory' "$err"; then
      echo "SKIPPED: this device has too little memory for this size"; rm -f "$err"; exit 77
    fi
    rm -f "$err"; exit "$rc" ;;
  sanitize-*)
    tool=${mode#sanitize-}
    command -v compute-sanitizer >/dev/null || { echo "FAILED: compute-sanitizer not on PATH"; exit 1; }
    exec compute-sanitizer --tool "$tool" --error-exitcode 1 "$@" ;;
  expect-race)
    out=$(compute-sanitizer --tool racecheck --racecheck-report hazard "$@" 2>&1); rc=$?
    printf '%s\n' "$out"
    if printf '%s\n' "$out" | grep -Eq 'RACECHECK SUMMARY: [1-9][0-9]* hazard'; then
      echo "PASSED: racecheck reported the exhibit's hazard"; exit 0
    fi
    echo "FAILED: racecheck reported no hazard for the race exhibit (exit $rc)"; exit 1 ;;
  *) echo "gpu_test.sh: unknown mode $mode" >&2; exit 2 ;;
esac
