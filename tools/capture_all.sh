#!/usr/bin/env bash
# Capture the evidence transcripts of one day, several, or all, on the GPU of this machine.
#
#   tools/capture_all.sh [--arch sm_90] [--out-dir DIR] [DAY_DIR ...]   (default: every code/day*/)
#
# Each day lists its runs in code/<day>/capture.txt, one a line (blank lines and # comments aside):
#
#   MODE [--tool TOOL] -- ARGS...
#
# e.g.  default --
#       self-test -- --self-test
#       memcheck --tool memcheck -- --n 4096
#       race-demo-racecheck --tool racecheck -- --race-demo
#
# and each line becomes tools/capture.py [--arch A] [--tool TOOL] DAY_DIR MODE -- ARGS..., which
# writes evidence/<day>/MODE-YYYY-MM-DD-GPU.txt. Exit 0 when every run exited 0, except that a
# mode whose name contains `race-demo` must exit NON-zero (racecheck flags the exhibit); 1
# otherwise (every line is still run); 2 on bad usage. Afterwards: check the transcripts, commit
# them, run tools/sync_readme.py (research/REVIEW-PROCESS.md).
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
py="${PYTHON:-python3}"
pass_opts=()
days=()
while [ $# -gt 0 ]; do
  case "$1" in
    --arch|--out-dir)
      [ $# -ge 2 ] || { echo "capture_all: $1 needs a value" >&2; exit 2; }
      pass_opts+=("$1" "$2"); shift 2 ;;
    -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "capture_all: unknown option $1" >&2; exit 2 ;;
    *) days+=("$1"); shift ;;
  esac
done
if [ ${#days[@]} -eq 0 ]; then
  for d in "$root"/code/day*/; do
    [ -f "$d/capture.txt" ] && days+=("${d%/}")
  done
  [ ${#days[@]} -gt 0 ] || { echo "capture_all: no code/day*/capture.txt found" >&2; exit 2; }
fi

failed=0
summary=()
for day in "${days[@]}"; do
  list="$day/capture.txt"
  if [ ! -f "$list" ]; then
    echo "capture_all: $list: no such file" >&2
    failed=1; summary+=("MISSING $list"); continue
  fi
  lineno=0
  while IFS= read -r line || [ -n "$line" ]; do
    lineno=$((lineno + 1))
    line="${line%%#*}"
    read -r -a words <<<"$line"
    [ ${#words[@]} -gt 0 ] || continue
    mode="${words[0]}"
    tool_opts=()
    args=()
    i=1
    if [ "${words[1]:-}" = "--tool" ]; then
      if [ -z "${words[2]:-}" ]; then
        echo "$list:$lineno: error: --tool needs a value" >&2; failed=1; continue
      fi
      tool_opts=(--tool "${words[2]}"); i=3
    fi
    if [ $i -lt ${#words[@]} ]; then
      if [ "${words[$i]}" != "--" ]; then
        echo "$list:$lineno: error: want 'MODE [--tool TOOL] -- ARGS...', got: $line" >&2
        failed=1; continue
      fi
      args=("${words[@]:$((i + 1))}")
    fi
    echo "== $(basename "$day") $mode ${tool_opts[*]} -- ${args[*]}"
    # options before the positionals: capture.py's argparse rejects options placed after them
    "$py" "$root/tools/capture.py" "${pass_opts[@]}" "${tool_opts[@]}" "$day" "$mode" -- \
      "${args[@]}" </dev/null
    rc=$?
    verdict=ok
    if [ $rc -eq 3 ]; then
      verdict="BUILD FAILED"
    elif [[ "$mode" == *race-demo* ]]; then
      [ $rc -ne 0 ] || verdict="NOT FLAGGED (a race demo must exit non-zero under racecheck)"
    elif [ $rc -ne 0 ]; then
      verdict="exit $rc"
    fi
    [ "$verdict" = ok ] || failed=1
    summary+=("$(basename "$day") $mode: $verdict")
  done <"$list"
done
echo "== capture_all summary"
printf '  %s\n' "${summary[@]}"
exit $failed
