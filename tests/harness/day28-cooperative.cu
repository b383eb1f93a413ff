// Day 28's test program: the lesson's kernels, launchers and exact check over the edge matrix.
//
//   nvcc -std=c++17 -O3 -arch=sm_75 -o harness tests/harness/day28-cooperative.cu && ./harness
//
// Every row (copy, v8, both cooperative rows on grids {harness::kGrids that fit, 3, SMs, the
// co-resident maximum}, the cg::reduce two-pass row at every ladder block size) over
// harness::kSizes up to --max-n x offsets 0..3 x both inputs (all ones; seeded random 0/1), each
// run from NaN poison, inside NaN guard bands that must stay NaN. Also: a cooperative grid one
// block larger than can be co-resident must be refused by cudaLaunchCooperativeKernel and never
// run, and the lesson's --threads rule (wholeWarps) must accept exactly the multiples of 32 up to
// 1024. Then delay injection (delay.h): one block of each cooperative row sleeps before it
// publishes, so a block 0 that read the partials before grid.sync() let them land reads poison.
//
// The compute-sanitizer runs (runs.txt) use --quick --max-n 65537 --input random: harness.h's
// quick sizes and offsets 0 and 3 still reach every path (a scalar head, partial tiles and a rest,
// blocks owning no tile or several tiles), each cooperative row on grids 1, 3, 64 and 1024 (where
// they fit), the SM count and the co-resident maximum, and every block size of the two-pass
// ladder; larger n only add trips through the same loops, which the self-test runs.
#include "delay.h"
#define REDUCTION_HARNESS
#ifndef LESSON
#define LESSON "../../code/day28-cooperative/cooperative.cu"
#endif
#include LESSON
#include "harness.h"

static const char *kUsage =
    "usage: harness [--max-n N] [--seed S] [--input ones|random|both] [--help]\n"
    "  the day-28 edge matrix: every row x n <= N (default 16777216) x offsets 0..3 x inputs;\n"
    "  the residency refusal; the whole-warp rule of --threads.\n";

int main(int argc, char **argv) {
  harness::Options o = harness::parse(argc, argv, kUsage);
  int device = 0, cooperative = 0;
  cudaDeviceProp p;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaGetDeviceProperties(&p, device));
  CUDA_CHECK(cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch, device));
  int sms = p.multiProcessorCount;
  int maxShuffle = coResidentBlocks(cooperativeShuffle, sms);
  int maxCg = coResidentBlocks(cooperativeCg, sms);
  int maxCo = std::min(maxShuffle, maxCg);
  if (!cooperative || maxCo < 1 || p.warpSize != kWarp) {
    std::fprintf(stderr,
                 "error: %s lacks cooperative launch, a co-resident block or 32-lane warps\n",
                 p.name);
    return 1;
  }
  harness::banner("day28-cooperative", o);
  harness::Report report;

  // The --threads rule: whole warps, 32..1024, nothing else.
  int wrong = 0;
  for (int t = 0; t <= 1100; ++t) {
    wrong += wholeWarps(t) != (t >= 32 && t <= 1024 && t % 32 == 0);
  }
  report.expect(wrong == 0, wrong, 0,
                "wholeWarps(0..1100): answers that are not 'a multiple of 32 "
                "from 32 to 1024'");

  size_t maxPartials = std::max<size_t>(kTwoPassGrid, size_t(maxCo));
  harness::Guarded in, out, partials, result;
  unsigned long long *diff = nullptr;
  if (!in.make(o.maxN) || !out.make(o.maxN) || !partials.make(maxPartials) || !result.make(1)) {
    std::fprintf(stderr, "error: cudaMalloc failed for n = %zu\n", o.maxN);
    return 1;
  }
  CUDA_CHECK(cudaMalloc(&diff, sizeof *diff));

  // Residency refusal: one block more than co-resident must be refused, and nothing may run.
  for (CooperativeKernel k : {cooperativeShuffle, cooperativeCg}) {
    int limit = k == cooperativeShuffle ? maxShuffle : maxCg;
    in.fill(1, 0, harness::Input::Ones, o.seed);
    result.poison();
    const float *x = in.at(0);
    size_t n = 1;
    float *part = partials.at(0), *res = result.at(0);
    void *args[] = {&x, &n, &part, &res};
    cudaError_t e = cudaLaunchCooperativeKernel(reinterpret_cast<const void *>(k), dim3(limit + 1),
                                                dim3(kBlock), args, 0, 0);
    (void)cudaGetLastError(); // a refused launch is not a sticky error: clear it
    CUDA_CHECK(cudaDeviceSynchronize());
    report.expect(e == cudaErrorCooperativeLaunchTooLarge && result.strays(0, 0) == 0, double(e),
                  double(cudaErrorCooperativeLaunchTooLarge),
                  "%s on %d blocks (co-resident + 1): cudaError (want refused, nothing written)",
                  k == cooperativeShuffle ? "cooperative, shuffle" : "cooperative, cg::reduce",
                  limit + 1);
  }

  // The rows of the matrix (the copy's grid follows n).
  std::vector<unsigned int> grids;
  for (int g : harness::grids(o)) {
    grids.push_back(unsigned(g));
  }
  for (int g : {3, sms, maxCo}) {
    grids.push_back(unsigned(g));
  }
  std::sort(grids.begin(), grids.end());
  grids.erase(std::unique(grids.begin(), grids.end()), grids.end());
  grids.erase(std::remove_if(grids.begin(), grids.end(),
                             [&](unsigned int g) { return g > unsigned(maxCo); }),
              grids.end());
  std::vector<Row> rows = {{Kind::Copy, kBlock, 0}, {Kind::TwoPassShuffle, kBlock, kTwoPassGrid}};
  for (unsigned int g : grids) {
    rows.push_back({Kind::CooperativeShuffle, kBlock, g});
    rows.push_back({Kind::CooperativeCg, kBlock, g});
  }
  for (int t : kLadder) {
    rows.push_back({Kind::TwoPassCg, t, kTwoPassGrid});
  }

  long runs = 0, failedBefore = report.failures;
  for (size_t n : harness::sizes(o)) {
    for (int offset : harness::offsets(o)) {
      for (harness::Input input : o.inputs()) {
        size_t ones = in.fill(n, offset, input, o.seed);
        Buffers b{in.at(offset), out.at(offset), partials.at(0), maxPartials, result.at(0), diff};
        out.poison(); // NaN over the whole bands: every float a row writes outside its output shows
        partials.poison();
        result.poison();
        for (Row r : rows) {
          r.blocks = r.kind == Kind::Copy ? copyGrid(n) : r.blocks;
          poisonRow(r, b, n); // the lesson's poison: NaN over this row's outputs
          launchRow(r, b, n);
          CUDA_CHECK(cudaDeviceSynchronize());
          char when[96];
          std::snprintf(when, sizeof when, "offset %d, %s, %u blocks", offset,
                        harness::inputName(input), r.blocks);
          ++runs;
          ++report.checks;
          report.failures += !checkRow(r, b, n, double(ones), when);
          size_t strays = r.kind == Kind::Copy ? out.strays(n, offset)
                                               : partials.strays(r.blocks, 0) + result.strays(1, 0);
          report.expect(strays == 0, double(strays), 0,
                        "%s n=%zu %s: floats written outside the output", rowName(r).c_str(), n,
                        when);
        }
        size_t changed = in.strays(n, offset); // no row writes its input
        report.expect(changed == 0, double(changed), 0,
                      "input n=%zu offset %d %s: guard floats changed", n, offset,
                      harness::inputName(input));
      }
    }
  }

  // Delay injection (tests/harness/delay.h): one block of a cooperative row sleeps before it
  // writes its partial - the first, the second, one in the middle, the last, for 20 us and 2 ms -
  // so a block 0 that read the partials before grid.sync() had let every block write its own
  // would read the NaN poison; a run that does not finish within 20 s is a hang.
  size_t dn = std::min<size_t>(o.maxN, 65537);
  size_t ones = in.fill(dn, 0, o.inputs().back(), o.seed);
  Buffers db{in.at(0), out.at(0), partials.at(0), maxPartials, result.at(0), diff};
  for (Row r : rows) {
    if (r.kind != Kind::CooperativeShuffle && r.kind != Kind::CooperativeCg) {
      continue;
    }
    for (unsigned int sleeper : {0u, 1u, r.blocks / 2, r.blocks - 1}) {
      for (unsigned int us : {20u, 2000u}) {
        if (sleeper >= r.blocks) {
          continue;
        }
        CUDA_CHECK(delay::set(sleeper, us));
        poisonRow(r, db, dn);
        launchRow(r, db, dn);
        harness::waitFor(0, 20.0, rowName(r).c_str());
        char when[96];
        std::snprintf(when, sizeof when, "block %u of %u sleeps %u us before it publishes", sleeper,
                      r.blocks, us);
        ++report.checks;
        report.failures += !checkRow(r, db, dn, double(ones), when);
      }
    }
  }
  CUDA_CHECK(delay::set(delay::kNone, 0));

  std::string gridList, threadList;
  for (unsigned int g : grids) {
    gridList += (gridList.empty() ? "" : ", ") + std::to_string(g);
  }
  for (int t : kLadder) {
    threadList += (threadList.empty() ? "" : ", ") + std::to_string(t);
  }
  std::printf(
      "day28-cooperative: %ld row runs over n <= %zu, offsets 0..3, cooperative grids {%s}, "
      "cg::reduce two-pass threads {%s}: %ld failed checks; residency refusal and "
      "whole-warp rule checked\n",
      runs, o.maxN, gridList.c_str(), threadList.c_str(), report.failures - failedBefore);
  in.release();
  out.release();
  partials.release();
  result.release();
  CUDA_CHECK(cudaFree(diff));
  return report.finish();
}
