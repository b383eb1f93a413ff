// Day 27's test program: the lesson's own kernels, launchers and exact check
// (code/day27-last-block/last_block.cu, its main() switched off) over the edge matrix.
//
//   every row x n in harness::kSizes (up to --max-n) x offsets 0..3 x both inputs (ones, seeded
//   random 0/1) x grids harness::kGrids (the copy once per n, offset and input); the input inside
//   NaN guard bands (a read past either end makes the sum NaN); the copy destination, partials
//   and results inside NaN guard bands too, scanned whole after every run;
//   then the repetition (--reps launches of each one-launch row, each checked on the device) at
//   n = 65537 (or --max-n), offset 1, for both inputs; then again with one block, a different one
//   each launch, sleeping before it publishes (delay.h), so that it is the last to draw.
//
// The compute-sanitizer runs (runs.txt) use --quick --max-n 65537 --reps 100 --input random:
// harness.h's quick matrix still reaches every path of these kernels (no head and a scalar head,
// a scalar tail, one and several grid-stride trips, grids of 1, 64 and 1024, a last block adding
// 1 to 1024 partials), and 100 launches a row suffice for tools that check each access and
// barrier, not each interleaving; the 10,000-launch repetition is the self-test's job.
//
// Build and run from the repository root:
//   nvcc -std=c++17 -O3 -arch=sm_75 -o harness tests/harness/day27-last-block.cu && ./harness
#include "delay.h"
#define REDUCTION_HARNESS
#ifndef LESSON
#define LESSON "../../code/day27-last-block/last_block.cu"
#endif
#include LESSON
#include "harness.h"

static const char *kHarnessUsage =
    "usage: day27-last-block harness [--max-n N] [--seed S] [--input ones|random|both]\n"
    "                                [--reps R] [--help]\n"
    "  --max-n N  the matrix's sizes up to N (1..16777216; sanitizer runs use 65537)\n"
    "  --seed S   seed of the random 0/1 input\n"
    "  --input    which exact inputs to run (default both)\n"
    "  --reps R   repeated launches of each one-launch row (1..1000000, default 10000)\n";

int main(int argc, char **argv) {
  int reps = kDefaultReps;
  harness::Options o = harness::parse(argc, argv, kHarnessUsage, [&](int c, char **v, int i) {
    uint64_t x = 0;
    if (std::strcmp(v[i], "--reps") != 0) {
      return 0;
    }
    if (!harness::parseCount(i + 1 < c ? v[i + 1] : nullptr, kMaxReps, x) || x == 0) {
      std::fprintf(stderr, "error: --reps needs a whole number from 1 to 1000000 (see --help)\n");
      return -1;
    }
    reps = int(x);
    return 2;
  });
  harness::banner("day27-last-block", o);
  cudaDeviceProp p;
  CUDA_CHECK(cudaGetDeviceProperties(&p, 0));
  if (p.warpSize != kWarp) {
    std::printf("error: the lesson's block reduction assumes %d lanes a warp; the device has %d\n",
                kWarp, p.warpSize);
    return 1;
  }
  harness::Guarded in, out, partials, results;
  Scratch s;
  if (!in.make(o.maxN) || !out.make(o.maxN) || !partials.make(kMaxGrid) || !results.make(3) ||
      !allocScratch(s)) {
    std::printf("error: cudaMalloc failed for n <= %zu\n", o.maxN);
    return 1;
  }
  // The rows write their partials and results inside guard bands too.
  CUDA_CHECK(cudaFree(s.partials));
  CUDA_CHECK(cudaFree(s.results));
  s.partials = partials.at(0);
  s.results = results.at(0);
  partials.poison();
  results.poison();

  harness::Report report;
  long runs = 0;
  char when[160];
  for (size_t n : harness::sizes(o)) {
    for (int offset : harness::offsets(o)) {
      for (harness::Input input : o.inputs()) {
        double want = double(in.fill(n, offset, input, o.seed));
        const float *src = in.at(offset);
        out.poison();
        std::snprintf(when, sizeof when, "offset %d, %s", offset, harness::inputName(input));
        bool ok = runAndCheck(Row::Copy, src, out.at(offset), n, want, kGrid, s, when);
        ++report.checks, ++runs;
        report.failures += !ok;
        size_t outStray = out.strays(n, offset);
        report.expect(outStray == 0, double(outStray), 0.0,
                      "copy n=%zu %s: floats written outside the destination", n, when);
        for (int g : harness::grids(o)) {
          std::snprintf(when, sizeof when, "offset %d, %s, %d blocks", offset,
                        harness::inputName(input), g);
          for (Row r : {Row::V8, Row::LastBlockFence, Row::LastBlockAtomicRef}) {
            ok = runAndCheck(r, src, nullptr, n, want, g, s, when);
            ++report.checks, ++runs;
            report.failures += !ok;
            size_t stray = partials.strays(size_t(g), 0) + results.strays(3, 0);
            report.expect(stray == 0, double(stray), 0.0,
                          "%s n=%zu %s: floats written outside the partials and results",
                          rowName(r), n, when);
          }
        }
      }
    }
  }
  std::printf("matrix: %ld row runs over n <= %zu, offsets 0..3, blocks {1, 2, 64, 1024, 16384}: "
              "%ld of %ld checks failed\n",
              runs, o.maxN, report.failures, report.checks);

  // The repetition at an odd size (a head, a tail, most blocks with little to do: the blocks
  // finish close together, where a missing fence or reset would show first).
  size_t repN = std::min<size_t>(65537, o.maxN);
  for (harness::Input input : o.inputs()) {
    double want = double(in.fill(repN, 1, input, o.seed));
    runRepetition(in.at(1), repN, want, kGrid, reps, s, report.checks, report.failures);
  }
  // The repetition under delay injection (tests/harness/delay.h): in each launch one block, a
  // different one each time, sleeps before it writes its partial and takes its ticket, so it
  // draws the last ticket and every other block has finished long before: a finisher that is not
  // the last drawer, or one that reads before every partial is written, reads the NaN poison.
  for (unsigned int us : {20u, 2000u}) {
    CUDA_CHECK(delay::set(delay::kRotate, us));
    std::printf("\ndelay injection: each launch a different block sleeps %u us before it "
                "publishes\n",
                us);
    double want = double(in.fill(repN, 1, o.inputs().back(), o.seed));
    runRepetition(in.at(1), repN, want, kGrid, us < 1000 ? std::min(reps, 2000) : 16, s,
                  report.checks, report.failures);
    for (Row r : {Row::LastBlockFence, Row::LastBlockAtomicRef}) { // from NaN poison each time
      for (int k = 0; k < (us < 1000 ? 32 : 4); ++k) {
        std::snprintf(when, sizeof when, "a block sleeping %u us, launch %d", us, k);
        ++report.checks;
        report.failures += !runAndCheck(r, in.at(1), nullptr, repN, want, kGrid, s, when);
      }
    }
  }
  CUDA_CHECK(delay::set(delay::kNone, 0));

  s.partials = nullptr; // the guarded buffers are released below, not by freeScratch
  s.results = nullptr;
  freeScratch(s);
  in.release();
  out.release();
  partials.release();
  results.release();
  return report.finish();
}
