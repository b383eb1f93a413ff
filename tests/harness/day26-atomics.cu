// Day 26's test program: the lesson's rows over the edge matrix, both exact inputs, guard bands.
//
// Every sum row (atomic per element / per warp / per block, tree) and the copy, at every size of
// harness::kSizes up to --max-n, on all ones and on seeded random 0/1 integers (n <= 2^24, exact in
// any order); a size passes only if every row sums both inputs exactly. Input, copy destination,
// partials and result are harness::Guarded (NaN on both sides), poisoned before each run; after a
// run every guard band must still be NaN, scanned whole. Then the three trapezoid kernels once
// each, within the lesson's bounds (so the sanitizer runs cover them too). No timing.
// The sanitizer runs (code/day26-atomics/runs.txt) use --max-n 65537 --quick --input random:
// harness::kQuickSizes reach every path of every row (a partial warp, a partial block, the tree's
// scalar tail and its smaller grids), so memcheck, racecheck, synccheck and initcheck see them
// all at a fraction of the full matrix's launches. The racecheck of --race-demo runs the lesson.
#define REDUCTION_HARNESS
#ifndef LESSON
#define LESSON "../../code/day26-atomics/atomics.cu"
#endif
#include LESSON
#include "harness.h"

static const char *kUsage =
    "usage: day26-atomics-harness [--max-n N] [--seed S] [--input ones|random|both] [--help]\n"
    "  every row of day 26 over the edge sizes up to N (default 16777216), both inputs, guard\n"
    "  bands scanned after every run; then the three trapezoid kernels. Exit 0 all exact, 1 a\n"
    "  check failed or a CUDA error, 2 bad usage.\n";

int main(int argc, char **argv) {
  harness::Options o = harness::parse(argc, argv, kUsage);
  harness::banner("day26-atomics", o);
  harness::Report report;
  harness::Guarded in, out, partials, result;
  Buffers b;
  if (!in.make(o.maxN) || !out.make(o.maxN) || !partials.make(kTreeGrid) || !result.make(1)) {
    std::printf("error: cudaMalloc of two %zu-float buffers failed\n", o.maxN);
    return 1;
  }
  CUDA_CHECK(cudaMalloc(&b.count, sizeof(unsigned long long)));
  b.in = in.at(0);
  b.out = out.at(0);
  b.partials = partials.at(0);
  b.result = result.at(0);
  long sizes = 0;
  for (size_t n : harness::sizes(o)) {
    ++sizes;
    for (harness::Input input : o.inputs()) {
      const char *inName = harness::inputName(input);
      double want = double(in.fill(n, 0, input, o.seed)); // the count of ones
      for (Row r : kRows) {
        if (rowSkipReason(r, n) != nullptr) {
          continue; // never at these sizes (all <= 2^24); kept for a changed kSizes
        }
        out.poison();
        partials.poison();
        result.poison();
        launchRow(r, b, n);
        CUDA_CHECK(cudaDeviceSynchronize());
        Check c = checkRow(r, b, n, want);
        report.expect(c.ok, c.got, c.want, "%s n=%zu input %s", rowName(r), n, inName);
        // Writes outside what the row owns, the whole guard bands scanned: the copy owns out[0, n)
        // (no sum row is given `out`), the tree partials[0, grid) and the result, an atomic row
        // the result.
        size_t outStray = r == Row::Copy ? out.strays(n, 0) : 0;
        size_t sumStray = partials.strays(r == Row::Tree ? treeGrid(n) : 0, 0) +
                          result.strays(r == Row::Copy ? 0 : 1, 0);
        report.expect(outStray + sumStray == 0, double(outStray + sumStray), 0,
                      "%s n=%zu input %s: floats written in a guard band", rowName(r), n, inName);
      }
      size_t inStray = in.strays(n, 0); // nothing may write the input or its guards
      report.expect(inStray == 0, double(inStray), 0, "input n=%zu input %s: guard floats written",
                    n, inName);
    }
  }
  TrapReference ref = trapReference();
  for (Trap k : {Trap::PerThread, Trap::ShufflePerBlock, Trap::SharedPerBlock}) {
    result.poison();
    launchTrap(k, b.result);
    CUDA_CHECK(cudaDeviceSynchronize());
    Check c = checkTrap(k, b.result, ref);
    size_t stray = result.strays(1, 0);
    // The report prints got and want with %.0f: the line itself carries them in full.
    report.expect(c.ok, c.got, c.want, "%s: result %.9g, host sum %.9g, bound %.3g",
                  kTrapNames[int(k)], c.got, c.want, trapHostBound(k, ref));
    report.expect(stray == 0, double(stray), 0, "%s: floats written beside the result",
                  kTrapNames[int(k)]);
  }
  std::printf("day26-atomics harness: %ld sizes x %zu inputs x %d rows, 3 trapezoid kernels: "
              "%ld checks, %ld failed\n",
              sizes, o.inputs().size(), kRowCount, report.checks, report.failures);
  in.release();
  out.release();
  partials.release();
  result.release();
  CUDA_CHECK(cudaFree(b.count));
  return report.finish();
}
