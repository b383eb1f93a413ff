#!/usr/bin/env python3
"""Writes variants of code/day39-sort/sort.cu's warp rank for the tuning experiment.

    python3 research/experiments/day39_sort_rank_variants.py OUTDIR

OUTDIR/sort-V.cu for V in:
  lesson   the lesson as it is: matchDigit's nine ballots each in CUB 3.0.1's four PTX
           instructions (and.b32, setp.ne.u32, vote.ballot.sync.b32, @!p not.b32:
           cub/util_ptx.cuh, warp_matcher_t, CUDA 13.0 toolkit, read 2026-12-02), the leader's
           add a plain read and write, kFloat a template parameter
  cxx      each ballot bit in C++, __ballot_sync and a select (nvcc 13.0: 8 SASS instructions a
           bit; the lesson until its PTX ballots, 2026-12-02)
  match    peers by __match_any_sync, the leader's add an atomicAdd (the lesson before 2026-12-02)
  full     an upper bound, right only where the tuning run uses it (onesweep, n a multiple of the
           tile: MIN_N >= the tile, and a tile that divides it): every tile taken as full (valid a
           constant, no per-item tests, eight ballots, not nine: no "no key" lanes), what a
           full-tile path would save. The one blocks and the ladder rows are wrong in it.
The records of 2026-12-02: -rank-variants- by this script's first version against the lesson of
then (match); -ptx- and -upper-bounds- by its second, against the lesson with C++ ballots and a
runtime isFloat (its variants ptx, ptx-nofloat, ptx-full, ptx-full-nofloat: the lesson now is ptx
with nofloat's effect for unsigned keys; git history has that version).
Exit 2 if the lesson's lines it edits are not there exactly once.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
LESSON = os.path.join(HERE, "..", "..", "code", "day39-sort", "sort.cu")
BALLOT = """    unsigned int set; // the lanes whose bit `bit` of d equals this lane's
    asm("{\\n .reg .pred p;\\n and.b32 %0, %1, %2;\\n setp.ne.u32 p, %0, 0;\\n"
        " vote.ballot.sync.b32 %0, p, %3;\\n @!p not.b32 %0, %0;\\n}"
        : "=r"(set)
        : "r"(d), "r"(1u << bit), "n"(kFullMask));
    peers &= set;
"""
CXX = """    unsigned int set = __ballot_sync(kFullMask, (d >> bit) & 1u);
    peers &= (d >> bit) & 1u ? set : ~set;
"""
CALL = "    unsigned int peers = matchDigit(d);\n"
MATCH = "    unsigned int peers = __match_any_sync(kFullMask, d);\n"
FULL = [  # (the lesson's text, the full-tile upper bound's)
    ("  const unsigned int valid = unsigned(n - first < size_t(kTileKeys) ? n - first : kTileKeys);\n",
     "  constexpr unsigned int valid = kTileKeys; // tuning only: every tile full\n"),
    ("    bool in = warp * kKeys * kWarp + j * kWarp + lane < valid;\n", "    bool in = true;\n"),
    ("    if (warp * kKeys * kWarp + j * kWarp + lane < valid) {\n      atomicAdd(",
     "    if (true) {\n      atomicAdd("),
    ("  for (int bit = 0; bit < 9; ++bit) {\n", "  for (int bit = 0; bit < 8; ++bit) {\n"),
    ("    if (warp * kKeys * kWarp + j * kWarp + lane < valid) {\n      stage[pos[j]] = k[j];",
     "    if (true) {\n      stage[pos[j]] = k[j];"),
    ("    if (i < valid) {\n      uint32_t key = stage[i];", "    if (true) {\n      uint32_t key = stage[i];"),
    ("    k[j] = i < valid ? src[first + i] : 0u;\n", "    k[j] = src[first + i];\n"),
]
ADD = "      placed = hist[d];\n      hist[d] = placed + __popc(peers);\n"
ATOMIC = "      placed = atomicAdd(&hist[d], __popc(peers));\n"


def main():
    if len(sys.argv) != 2:
        print("usage: day39_sort_rank_variants.py OUTDIR", file=sys.stderr)
        return 2
    src = open(LESSON, encoding="utf-8").read()
    for text in [BALLOT, CALL, ADD] + [a for a, _ in FULL]:
        if src.count(text) != 1:
            print(f"error: the lesson's lines {text.strip()!r} are not there exactly once",
                  file=sys.stderr)
            return 2
    def edit(text, pairs):
        for a, b in pairs:
            text = text.replace(a, b)
        return text

    variants = {
        "lesson": src,
        "cxx": src.replace(BALLOT, CXX),
        "match": src.replace(CALL, MATCH).replace(ADD, ATOMIC),
        "full": edit(src, FULL),
    }
    os.makedirs(sys.argv[1], exist_ok=True)
    for name, text in variants.items():
        with open(os.path.join(sys.argv[1], f"sort-{name}.cu"), "w", encoding="utf-8") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
