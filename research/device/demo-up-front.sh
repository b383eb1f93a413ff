#!/bin/bash
# The mutant up-front-histogram-race (tests/mutation/day39-sort.mutants) under racecheck with the
# sort's --tiles matrix (part 1/4 runs the up-front counts): racecheck must report a hazard.
# Run on the device from the repository root; prints the last 60 lines (verdict, summary). Its
# record: research/device/records/day39-sort-racecheck-tiles-mutant-2026-12-04-h200.txt
set -u
d=/tmp/mut; mkdir -p $d
python3 - <<'PY'
src = open("code/day39-sort/sort.cu").read()
a = "      atomicAdd(&hist[p * kBins + ((b >> (8 * p)) & 0xFFu)], 1u);"
assert src.count(a) == 1
open("/tmp/mut/sort.cu", "w").write(src.replace(a, "      ++hist[p * kBins + ((b >> (8 * p)) & 0xFFu)];"))
PY
nvcc -std=c++17 -O3 -arch=sm_90 -DLESSON='"/tmp/mut/sort.cu"' -o $d/h tests/harness/day39-sort.cu || exit 3
date -u
timeout 420 compute-sanitizer --tool racecheck --print-limit 20 $d/h --max-n 8193 --quick --tiles --reps 4 --hang-s 900 --part 1/4 2>&1 | tail -60
echo "pipe rc: ${PIPESTATUS[0]}"
date -u
