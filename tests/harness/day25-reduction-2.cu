// Day 25's test program: every row (copy, v4..v8) over the edge matrix, with both exact inputs,
// over guard-banded buffers. It reuses the lesson's kernels, launchRow and checkRow; the lesson's
// main() is switched off.
//
// For each input (all ones; seeded random 0/1), each n in harness::kSizes up to --max-n, each
// offset 0..3 floats past alignment (the float4 head of copy, v7 and v8), each grid in
// harness::kGrids (copy and v4 ignore the grid: once per n and offset), each row: poison every
// output with its guard bands, run once, synchronize, then check (1) the lesson's exact check
// (partials sum to the count of ones; v8's float equals it; the copy equals the source, counted on
// the device), (2) the copy's destination equals the source again, read back on the host, (3)
// nothing outside what the row writes (n floats of the copy destination, `blocks` partials, one
// result) is anything but NaN, over each buffer's whole allocation. After the rows of an (input,
// n, offset), the input's allocation must still be NaN outside its n elements.
// The sanitizer runs (code/day25-reduction-2/runs.txt) use --max-n 65537 --quick --input random:
// harness::kQuickSizes x offsets 0 and 3 x grids 1, 64 and 1024 reach every path of the copy and
// v4..v8 (scalar head and tail, the float4 body, grid-stride trips, one block and many) at a
// fraction of the full matrix's launches. The racecheck of --race-demo runs the lesson itself.
//
// Build (from the repository root):
//   nvcc -std=c++17 -O3 -arch=sm_75 -o harness tests/harness/day25-reduction-2.cu && ./harness
#define REDUCTION_HARNESS
#ifndef LESSON
#define LESSON "../../code/day25-reduction-2/reduction_2.cu"
#endif
#include LESSON
#include "harness.h"

static const char *kHarnessUsage =
    "usage: day25-reduction-2 harness [--max-n N] [--seed S] [--input ones|random|both] [--help]\n"
    "  copy and v4..v8 at every edge size up to N (default 16777216) x offsets 0..3 x grids\n"
    "  {1, 2, 64, 1024, 16384}, each checked exactly for each input, with NaN guard bands around\n"
    "  the input, the copy destination, the partials and the result.\n"
    "exit codes: 0 all checks passed, 1 a check failed or a CUDA error, 2 bad usage.\n";

int main(int argc, char **argv) {
  const harness::Options o = harness::parse(argc, argv, kHarnessUsage);
  harness::banner("day25-reduction-2", o);
  cudaDeviceProp p;
  CUDA_CHECK(cudaGetDeviceProperties(&p, 0));
  if (p.warpSize != kWarp) {
    std::printf("error: the shuffle tails of v5..v8 assume %d lanes a warp; this device has %d\n",
                kWarp, p.warpSize);
    return 1;
  }
  const size_t maxPartials =
      std::max<size_t>(rowGrid(Row::V4, o.maxN, 0), 16384); // 16384: largest kGrids
  harness::Guarded in, out, partials, result;
  unsigned long long *mismatches = nullptr;
  if (!in.make(o.maxN) || !out.make(o.maxN) || !partials.make(maxPartials) || !result.make(1) ||
      cudaMalloc(&mismatches, sizeof(unsigned long long)) != cudaSuccess) {
    std::printf("error: cudaMalloc for n = %zu failed\n", o.maxN);
    return 1;
  }
  harness::Report report;
  long runs = 0;
  for (harness::Input input : o.inputs()) {
    for (size_t n : harness::sizes(o)) {
      for (int offset : harness::offsets(o)) {
        const size_t want = in.fill(n, offset, input, o.seed);
        const char *when = harness::inputName(input);
        for (int grid : harness::grids(o)) {
          for (Row r : kRows) {
            if ((r == Row::Copy || r == Row::V4) && grid != harness::grids(o)[0]) {
              continue; // these two ignore the grid: once per (n, offset)
            }
            RowArgs a{
                in.at(offset), out.at(offset), partials.at(0), result.at(0), mismatches, n, offset,
                grid};
            if (r == Row::Copy) {
              out.poison(); // whole allocation: only the copy writes it
            }
            partials.poison();
            result.poison();
            launchRow(r, a);
            CUDA_CHECK(cudaDeviceSynchronize());
            ++runs;
            ++report.checks;
            report.failures += !checkRow(r, a, double(want), when);
            size_t strays = 0;
            if (r == Row::Copy) {
              const size_t diff = out.differences(in, n, offset);
              report.expect(diff == 0, double(n - diff), double(n),
                            "copy n=%zu offset=%d (%s): elements equal to the source (host read)",
                            n, offset, when);
              strays = out.strays(n, offset);
            } else {
              // Partial rows write `blocks` partials; v8 also its one result.
              strays =
                  partials.strays(rowGrid(r, n, grid), 0) + result.strays(r == Row::V8 ? 1 : 0, 0);
            }
            report.expect(strays == 0, double(strays), 0,
                          "%s n=%zu offset=%d blocks=%u (%s): floats written outside the "
                          "outputs (guard bands)",
                          rowName(r), n, offset, rowGrid(r, n, grid), when);
          }
        }
        const size_t inStrays = in.strays(n, offset);
        report.expect(inStrays == 0, double(inStrays), 0,
                      "input n=%zu offset=%d (%s): floats outside the input changed", n, offset,
                      when);
      }
    }
  }
  in.release();
  out.release();
  partials.release();
  result.release();
  CUDA_CHECK(cudaFree(mismatches));
  std::printf("day25-reduction-2: %ld row runs (n <= %zu x offsets 0..3 x grids {1, 2, 64, 1024, "
              "16384} x %zu inputs), %ld checks, %ld failed\n",
              runs, o.maxN, o.inputs().size(), report.checks, report.failures);
  return report.finish();
}
