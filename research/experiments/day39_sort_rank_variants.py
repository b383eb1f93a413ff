#!/usr/bin/env python3
"""Writes variants of code/day39-sort/sort.cu's warp rank (rankCounted) for the tuning experiment.

    python3 research/experiments/day39_sort_rank_variants.py OUTDIR

OUTDIR/sort-V.cu for V in:
  match    the lesson as it is: peers by __match_any_sync
  ballots  peers by nine __ballot_sync, one a bit of the digit 0..256 (256: no key), as CUB 3.0.1's
           warp_matcher_t does for its 8-bit digits
  rmw      ballots, and the leader's add to its warp's counter a plain read and write of shared
           memory instead of atomicAdd (one leader a digit a warp: no two lanes touch one counter;
           CUB's BlockRadixRankMatchEarlyCounts does the same)
  eight    rmw, with eight ballots (the digit's bits) and the valid lanes from arithmetic: in a
           warp-striped tile the lanes of item j that hold a key are a prefix of the warp
  occ      eight, and onesweep's pass kernel bounded to 64 registers at 256 threads
           (__launch_bounds__(256, 4): four blocks an SM instead of three at 80 registers)
Exit 2 if the lesson's lines it edits are not there exactly once.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
LESSON = os.path.join(HERE, "..", "..", "code", "day39-sort", "sort.cu")
MATCH = "    unsigned int peers = __match_any_sync(kFullMask, d);\n"
ADD = "      placed = atomicAdd(&hist[d], __popc(peers));\n"
BALLOTS = """    unsigned int peers = kFullMask;
#pragma unroll
    for (int bit = 0; bit < 9; ++bit) {
      unsigned int set = __ballot_sync(kFullMask, (d >> bit) & 1u);
      peers &= (d >> bit) & 1u ? set : ~set;
    }
"""
EIGHT = """    unsigned int base = warp * kKeys * kWarp + j * kWarp;
    unsigned int have = valid > base ? valid - base : 0u;
    unsigned int lanesIn = have >= 32u ? kFullMask : (1u << have) - 1u;
    unsigned int peers = in ? lanesIn : ~lanesIn;
#pragma unroll
    for (int bit = 0; bit < 8; ++bit) {
      unsigned int set = __ballot_sync(kFullMask, (d >> bit) & 1u);
      peers &= (d >> bit) & 1u ? set : ~set;
    }
"""
BOUNDS = "__global__ void __launch_bounds__(kThreads)\n    sortPassOneSweep("
OCC = "__global__ void __launch_bounds__(kThreads, kThreads == 256 ? 4 : 1)\n    sortPassOneSweep("
RMW = "      placed = hist[d];\n      hist[d] = placed + __popc(peers);\n"


def main():
    if len(sys.argv) != 2:
        print("usage: day39_sort_rank_variants.py OUTDIR", file=sys.stderr)
        return 2
    src = open(LESSON, encoding="utf-8").read()
    for line in (MATCH, ADD, BOUNDS):
        if src.count(line) != 1:
            print(f"error: the lesson's line {line.strip()!r} is not there exactly once", file=sys.stderr)
            return 2
    variants = {
        "match": src,
        "ballots": src.replace(MATCH, BALLOTS),
        "rmw": src.replace(MATCH, BALLOTS).replace(ADD, RMW),
        "eight": src.replace(MATCH, EIGHT).replace(ADD, RMW),
        "occ": src.replace(MATCH, EIGHT).replace(ADD, RMW).replace(BOUNDS, OCC),
    }
    os.makedirs(sys.argv[1], exist_ok=True)
    for name, text in variants.items():
        with open(os.path.join(sys.argv[1], f"sort-{name}.cu"), "w", encoding="utf-8") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
