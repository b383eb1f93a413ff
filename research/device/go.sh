#!/bin/bash
# Device-side runner for the `device` tool (not a test, not part of the module): runs items in
# lanes and tars what they write to $OUT/r.tgz after each item, so that a call killed at its time
# limit still returns every finished transcript (the tool returns at most a few files from $OUT;
# one tarball always fits).
#
#   bash research/device/go.sh "ITEM+ITEM" "ITEM" ...   each argument a lane; lanes run side by
#                                                       side, the items of a lane one after another
# ITEM:
#   cap:DAY:MODE[,MODE...]  tools/capture.py of those lines of code/DAY/runs.txt -> cap/DAY/
#   mut:DAY                 tools/mutation.py --transcript for that day          -> mut/
#   nb                      tools/notebook.py --execute of the COMMITTED notebook (run
#                           tools/notebook.py first after a lesson change; needs the wheels:
#                           research/device/wheels.sh, and carry [".whl"])       -> nb/
# Env: BUDGET (seconds from the start after which no item starts; default 560), RUNS (the mutation
# run's --runs, default 1), JOBS (its --jobs, default 8). Timed runs (default, repeat-N) must run
# alone: put them in a lane of their own and start no other lane beside them.
set -u
BUDGET=${BUDGET:-560}; RUNS=${RUNS:-1}; JOBS=${JOBS:-8}
S=/tmp/stage; rm -rf $S; mkdir -p $S/cap $S/mut $S/nb $S/logs
pack() { tar czf /tmp/r.$BASHPID.tgz -C $S cap mut nb logs && mv /tmp/r.$BASHPID.tgz "$OUT/r.tgz"; }
start=$(date +%s)
nvidia-smi > $S/logs/nvidia-smi.txt 2>&1
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl > $S/logs/pip.txt 2>&1 && export PYTHONPATH=/tmp/site
fi
capture() { # DAY MODE: one runs.txt line through tools/capture.py
  local day=$1 mode=$2 line words opts=() i=1
  line=$(grep -E "^$mode( |$)" code/$day/runs.txt) || { echo "no line $mode"; return 2; }
  read -ra words <<< "$line"
  while [ "${words[$i]}" != "--" ]; do
    case ${words[$i]} in
      --tool) opts+=(--tool "${words[$((i + 1))]}"); i=$((i + 2)) ;;
      --harness) opts+=(--harness); i=$((i + 1)) ;;
      *) echo "bad line: $line"; return 2 ;;
    esac
  done
  case $mode in race-demo*) opts+=(--keep-failed) ;; esac # racecheck's non-zero exit is the record
  python3 tools/capture.py code/$day $mode --arch sm_90 --out-dir $S/cap/$day "${opts[@]}" \
    -- "${words[@]:$((i + 1))}" < /dev/null
}
run() { # ITEM
  case $1 in
    cap:*) local rest=${1#cap:} day mode; day=${rest%%:*}
           for mode in $(echo "${rest#*:}" | tr , ' '); do
             capture $day $mode > $S/logs/cap-$day-$mode.txt 2>&1; local rc=$?
             echo "$(( $(date +%s) - start )) s: cap $day $mode rc=$rc" >> $S/logs/steps.txt; pack
           done ;;
    mut:*) python3 tools/mutation.py --arch sm_90 --jobs $JOBS --runs $RUNS --transcript $S/mut \
             ${1#mut:} > $S/logs/mut-${1#mut:}.txt 2>&1 ;;
    nb) python3 tools/notebook.py --execute $S/nb --notebook notebooks/reduction-module.ipynb \
          > $S/logs/nb.txt 2>&1 ;;
    *) echo "unknown item $1"; return 2 ;;
  esac
}
lane() {
  IFS=+ read -ra items <<< "$1"
  for it in "${items[@]}"; do
    local now=$(( $(date +%s) - start ))
    if [ $now -gt $BUDGET ]; then echo "$now s: skip $it" >> $S/logs/steps.txt; continue; fi
    echo "$now s: start $it" >> $S/logs/steps.txt
    run "$it"; local rc=$?
    echo "$(( $(date +%s) - start )) s: end $it rc=$rc" >> $S/logs/steps.txt; pack
  done
}
for l in "$@"; do lane "$l" & done
wait; pack
cat $S/logs/steps.txt; grep -h "RESULT\|wrote" $S/logs/*.txt | tail -40
