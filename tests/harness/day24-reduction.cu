// Day 24's test program: every version (v1-v4) over the edge matrix of sizes, with both exact
// inputs, over guard-banded buffers. It reuses the lesson's kernels, launchReduction, planPasses
// and checkOneFloat; the lesson's main() is switched off.
//
// For each input (all ones; seeded random 0/1), each n in harness::kSizes up to --max-n, each
// version: poison both scratch buffers (and their guard bands), run every pass once, synchronize,
// then check (1) the one float equals the count of ones exactly, and (2) nothing outside the
// floats a version writes (plan.outputs of each scratch buffer) is anything but NaN, in either
// scratch buffer's whole allocation. After the four versions, the input's whole allocation must
// still be NaN outside its n elements (a kernel reading past n would have summed a NaN guard).
// Day 24 has no offset or grid knob, so the matrix is sizes x inputs x versions.
// The sanitizer runs (code/day24-reduction/runs.txt) use --max-n 65537 --quick --input random:
// sizes 1, 3, 31, 33, 255, 257, 1025, 4097 and 65537 reach every path of v1-v4 (one element,
// ragged last blocks, one pass to three), so memcheck, racecheck, synccheck and initcheck see the
// accesses and barriers of the full matrix at a fraction of its launches.
//
// Build (from the repository root):
//   nvcc -std=c++17 -O3 -arch=sm_75 -o harness tests/harness/day24-reduction.cu && ./harness
#define REDUCTION_HARNESS
#ifndef LESSON
#define LESSON "../../code/day24-reduction/reduction.cu"
#endif
#include LESSON
#include "harness.h"

static const char *kHarnessUsage =
    "usage: day24-reduction harness [--max-n N] [--seed S] [--input ones|random|both] [--help]\n"
    "  v1-v4 at every edge size up to N (default 16777216), each reduced to one float and checked\n"
    "  exactly for each input, with NaN guard bands around the input and both scratch buffers.\n"
    "exit codes: 0 all checks passed, 1 a check failed or a CUDA error, 2 bad usage.\n";

int main(int argc, char **argv) {
  const harness::Options o = harness::parse(argc, argv, kHarnessUsage);
  harness::banner("day24-reduction", o);
  size_t counts[2];
  scratchCounts(o.maxN, counts); // the most partials any version writes, at the largest n
  harness::Guarded in, scratch[2];
  if (!in.make(o.maxN) || !scratch[0].make(counts[0]) || !scratch[1].make(counts[1])) {
    std::printf("error: cudaMalloc for n = %zu failed\n", o.maxN);
    return 1;
  }
  float *const dst[2] = {scratch[0].at(0), scratch[1].at(0)};
  harness::Report report;
  long runs = 0;
  for (harness::Input input : o.inputs()) {
    for (size_t n : harness::sizes(o)) {
      const size_t want = in.fill(n, 0, input, o.seed);
      char when[64];
      std::snprintf(when, sizeof when, "(%s input)", harness::inputName(input));
      for (const Version &v : kVersions) {
        scratch[0].poison();
        scratch[1].poison();
        const float *result = launchReduction(v, in.at(0), n, dst);
        CUDA_CHECK(cudaDeviceSynchronize());
        ++runs;
        ++report.checks;
        report.failures += !checkOneFloat(v.name, when, n, result, double(want));
        const Plan plan = planPasses(n, v.elementsPerBlock);
        const size_t strays =
            scratch[0].strays(plan.outputs[0], 0) + scratch[1].strays(plan.outputs[1], 0);
        report.expect(strays == 0, double(strays), 0,
                      "%s %s n=%zu: floats written outside the "
                      "partials (scratch guard bands)",
                      v.name, when, n);
      }
      const size_t inStrays = in.strays(n, 0);
      report.expect(inStrays == 0, double(inStrays), 0,
                    "input %s n=%zu: floats outside the input changed", when, n);
    }
  }
  in.release();
  scratch[0].release();
  scratch[1].release();
  std::printf("day24-reduction: %ld runs (%d versions x sizes up to %zu x %zu inputs), %ld checks, "
              "%ld failed\n",
              runs, kVersionCount, o.maxN, o.inputs().size(), report.checks, report.failures);
  return report.finish();
}
