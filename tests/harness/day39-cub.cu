// Day 39's test program: every row of code/day39-cub/cub_vs_ladder.cu (its own kernels, launchers
// and exact check) over the edge matrix, with both exact inputs, guard bands, and both timing
// paths (stream batches and CUDA-graph replays, each batch from poisoned outputs).
//
//   nvcc -std=c++17 -O3 -arch=sm_75 -o harness tests/harness/day39-cub.cu && ./harness
//
// The matrix: harness::kSizes up to --max-n; input offsets 0..3 floats past 256-byte alignment
// (the float4 rows peel a scalar head; best needs 16-byte-aligned input and runs at offset 0);
// inputs all ones and seeded random 0/1 (a row passes only if it sums both exactly); best also
// forced onto each of its paths at every n (one block; one tile a block; the wave kernel on 5
// blocks, so blocks own several tiles and the partial tile lands mid-grid), and best + PDL onto
// its pair (where the device and build allow it). The ticket rows run twice a case (the second
// run needs the counter the first one reset). Guard bands: NaN around the input, the copy
// destination, the results and every row's partials, scanned whole after each run. Then at
// n = 1027 and 65537 every row goes through timeKernel and timeGraph (two calls a batch) and the
// check reads what the last timed call or the last replay wrote. Last, determinism: best's paths
// and best + PDL sum random floats in [0, 1) (not exact) kDeterminismRuns times at each size up
// to --max-n of 4096, 65536, 2^20 and 2^24; every run must give the same bits.
//
// The compute-sanitizer runs (runs.txt) use --quick --max-n 65537 --input random: harness.h's
// quick sizes and offsets 0 and 3 reach every row and, with best forced onto each path at every
// n, every path of best and best + PDL, partial last tiles included; both timing paths run at
// 1027 and 65537, determinism at 4096 and 65536. Larger n only add trips through the same loops
// and more tickets on the same counter, which the self-test runs.
#include "delay.h"
#define REDUCTION_HARNESS
#ifndef LESSON
#define LESSON "../../code/day39-cub/cub_vs_ladder.cu"
#endif
#include LESSON
#include "harness.h"

#include <set>

static const char *kHarnessUsage =
    "usage: day39-cub harness [--max-n N] [--seed S] [--input ones|random|both] [--help]\n"
    "  every row of day 39 over the edge sizes up to N (default 16777216), offsets 0..3, both\n"
    "  inputs, guard bands; then both timing paths at n = 1027 and 65537; then determinism.\n"
    "exit codes: 0 all checks passed, 1 a check failed or a CUDA error, 2 bad usage.\n";

struct Variant {
  const char *name;
  Row row;
  size_t bestSmallMax;   // best's paths: one block for n <= this, else ...
  size_t bestMidMax;     // ... one tile a block for n <= this, else ...
  unsigned int bestGrid; // ... the wave kernel on this many blocks (0: as timed)
};
constexpr int kDeterminismRuns = 8;

int main(int argc, char **argv) {
  harness::Options o = harness::parse(argc, argv, kHarnessUsage);
  Setup d = queryDevice();
  harness::banner("day39-cub", o);
  if (d.prop.warpSize != kWarp) {
    std::printf("error: the warp-shuffle sums assume %d lanes a warp; the device has %d\n", kWarp,
                d.prop.warpSize);
    return 1;
  }
  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const unsigned int kForcedGrid = 5;
  std::vector<Variant> variants;
  for (int k = 0; k < kRowCount; ++k) {
    variants.push_back({kRows[k].name, Row(k), kDefaultSmallMax, kDefaultMidMax, 0});
  }
  variants.push_back({"best: one block", Row::Best, kExactAnyOrder, kExactAnyOrder, 0});
  variants.push_back({"best: one tile a block", Row::Best, 0, kExactAnyOrder, 0});
  variants.push_back({"best: wave kernel, 5 blocks", Row::Best, 0, 0, kForcedGrid});
  variants.push_back({"best + PDL: the pair", Row::BestPdl, 0, kExactAnyOrder, 0});
  // Each variant runs on its own copy of the setup, with best's knobs set.
  auto setupFor = [&](const Variant &v) {
    Setup s = d;
    s.bestSmallMax = v.bestSmallMax;
    s.bestMidMax = v.bestMidMax;
    s.bestGrid = v.bestGrid ? v.bestGrid : s.bestGrid;
    s.bestGridLarge = v.bestGrid ? v.bestGrid : s.bestGridLarge;
    return s;
  };

  // Outputs in guard bands: the results (one slot a row) and each row's partials.
  Setup &b = d;
  harness::Guarded results, partials[kRowCount];
  size_t *counts = d.partialsCount;
  for (Row r : {Row::Best, Row::BestPdl}) { // forced: one tile a block up to 2^24, or 5 blocks
    counts[int(r)] =
        std::max(std::max<size_t>(kForcedGrid, kExactAnyOrder / kMidTile), counts[int(r)]);
  }
  bool ok = results.make(kRowCount);
  b.results = results.at(0);
  for (int r = 0; r < kRowCount; ++r) {
    if (counts[r] != 0) {
      ok = partials[r].make(counts[r]) && ok;
      b.partials[r] = partials[r].at(0);
      b.partialsCount[r] = counts[r];
    }
  }
  if (!ok) {
    std::printf("error: cudaMalloc of the guarded outputs failed\n");
    return 1;
  }
  CUDA_CHECK(cudaMalloc(&b.tickets, kRowCount * sizeof(unsigned int)));
  CUDA_CHECK(cudaMemset(b.tickets, 0, kRowCount * sizeof(unsigned int)));
  CUDA_CHECK(cudaMalloc(&b.copyCounts, 2 * sizeof(unsigned long long)));
  CUDA_CHECK(cubSum(nullptr, b.cubTempBytes, nullptr, b.results, o.maxN, stream));
  CUDA_CHECK(cudaMalloc(&b.cubTemp, std::max<size_t>(1, b.cubTempBytes)));
  if (d.coopGrid == 0) {
    std::printf("cooperative: refused on this device (%s); its checks are skipped\n",
                d.cooperativeLaunch ? "no block fits on an SM" : "no cooperative launch");
  }
  if (std::string why = pdlRefusal(d, 0, false); !why.empty()) {
    std::printf("best + PDL: refused (%s); its checks are skipped\n", why.c_str());
  }

  harness::Report report;
  auto poisonGuards = [&] {
    results.poison();
    for (int r = 0; r < kRowCount; ++r) {
      if (counts[r] != 0) {
        partials[r].poison();
      }
    }
  };
  // The guard bands after one run of row r: only its result slot and its partials may change
  // (the input's band and the copy destination's are checked by the caller).
  auto checkGuards = [&](Row r, const char *what, size_t n) {
    int k = int(r);
    size_t bad = results.strays(r == Row::Copy ? 0 : 1, k);
    bad += counts[k] != 0 ? partials[k].strays(counts[k], 0) : 0;
    report.expect(bad == 0, double(bad), 0, "%s n=%zu: floats written outside the outputs", what,
                  n);
  };

  size_t cases = 0;
  for (size_t n : harness::sizes(o)) {
    harness::Guarded in, out;
    if (!in.make(n) || !out.make(n)) {
      std::printf("error: cudaMalloc of 2 x %zu floats failed\n", n);
      return 1;
    }
    b.out = out.alloc;
    b.outFloats = out.floats; // poisonRow(Copy) NaNs the whole band, guards included
    for (int offset : harness::offsets(o)) {
      for (harness::Input input : o.inputs()) {
        double want = double(in.fill(n, offset, input, o.seed));
        ++cases;
        for (const Variant &v : variants) {
          bool anyOffset = v.row != Row::Best && v.row != Row::BestPdl; // best: offset 0 only
          if ((!anyOffset && offset != 0) || !refusal(v.row, d, n, false).empty()) {
            continue;
          }
          for (int run = 1; run <= (kRows[int(v.row)].tickets ? 2 : 1); ++run) {
            poisonGuards();
            CUDA_CHECK(cudaDeviceSynchronize()); // legacy-stream memsets, then the lesson's stream
            Check c =
                runAndCheck(v.row, setupFor(v), in.at(offset), out.at(offset), n, n, want, stream);
            report.expect(c.ok, c.got, c.want, "%s n=%zu offset %d input %s run %d%s%s", v.name, n,
                          offset, harness::inputName(input), run, c.detail.empty() ? "" : ": ",
                          c.detail.c_str());
            checkGuards(v.row, v.name, n);
            if (v.row == Row::Copy) {
              size_t bad = out.strays(n, offset);
              report.expect(bad == 0, double(bad), 0, "copy n=%zu offset %d: writes past the ends",
                            n, offset);
            }
          }
        }
        size_t bad = in.strays(n, offset);
        report.expect(bad == 0, double(bad), 0, "input n=%zu offset %d: guard band changed", n,
                      offset);
      }
    }

    // Both timing paths, as the lesson times them: every batch from poison, then the check reads
    // what the last timed call (stream) or the last replay (graph) wrote.
    if (n != 1027 && n != 65537) {
      in.release();
      out.release();
      continue;
    }
    harness::Input input = o.inputs().back();
    double want = double(in.fill(n, 0, input, o.seed));
    CUDA_CHECK(cudaDeviceSynchronize());
    if (d.coopGrid > 0 && !d.coopInGraph) {
      d.coopInGraph = cooperativeCaptures(d, in.at(0), n, stream);
      if (!d.coopInGraph) {
        std::printf("cooperative: this driver will not capture it into a graph; graph path "
                    "skipped\n");
      }
    }
    for (const Variant &v : variants) {
      for (int graph = 0; graph < 2; ++graph) {
        if (!refusal(v.row, d, n, graph).empty()) {
          continue;
        }
        poisonGuards();
        CUDA_CHECK(cudaDeviceSynchronize());
        Setup s = setupFor(v);
        auto call = [&] { launchRow(v.row, s, in.at(0), out.at(0), n, stream); };
        auto poison = [&] { poisonRow(v.row, s, stream); };
        if (graph) {
          timeGraph(call, poison, 2, stream);
        } else {
          timeKernel(call, poison, 2, stream);
        }
        CUDA_CHECK(cudaStreamSynchronize(stream));
        Check c = checkRow(v.row, s, in.at(0), out.at(0), n, n, want, stream);
        report.expect(c.ok, c.got, c.want, "%s n=%zu input %s after %s timing%s%s", v.name, n,
                      harness::inputName(input), graph ? "graph" : "stream",
                      c.detail.empty() ? "" : ": ", c.detail.c_str());
        checkGuards(v.row, v.name, n);
      }
    }
    in.release();
    out.release();
  }

  // Delay injection (tests/harness/delay.h): in each launch of a one-launch row (last block,
  // cooperative, best's paths, best + PDL's pair) one block, a different one each launch, sleeps
  // before it writes its partial; a finisher that does not wait for every partial then reads NaN.
  for (size_t n :
       {std::min<size_t>(o.maxN, 65537), std::min<size_t>(o.maxN, (size_t(1) << 20) + 3)}) {
    harness::Guarded in;
    if (!in.make(n)) {
      std::printf("error: cudaMalloc failed\n");
      return 1;
    }
    double want = double(in.fill(n, 0, o.inputs().back(), o.seed));
    CUDA_CHECK(cudaDeviceSynchronize());
    for (unsigned int us : {20u, 2000u}) {
      CUDA_CHECK(delay::set(delay::kRotate, us));
      for (const Variant &v : variants) {
        bool finishes = v.row == Row::LastBlock || v.row == Row::Cooperative ||
                        v.row == Row::Best || v.row == Row::BestPdl;
        if (!finishes || !refusal(v.row, d, n, false).empty()) {
          continue;
        }
        for (int k = 0; k < (us < 1000 ? 64 : 4); ++k) {
          Check c = runAndCheck(v.row, setupFor(v), in.at(0), nullptr, n, n, want, stream);
          report.expect(c.ok, c.got, c.want,
                        "%s n=%zu, a block sleeps %u us before it "
                        "publishes (launch %d)%s%s",
                        v.name, n, us, k, c.detail.empty() ? "" : ": ", c.detail.c_str());
        }
      }
    }
    CUDA_CHECK(delay::set(delay::kNone, 0));
    in.release();
  }

  // Determinism: the same input, the same grid, the same bits, run after run.
  for (size_t n : {size_t(4096), size_t(65536), size_t(1) << 20, size_t(1) << 24}) {
    harness::Guarded in;
    if (n > o.maxN || !in.make(n)) {
      continue;
    }
    std::vector<float> host(n);
    std::mt19937_64 rng(o.seed);
    std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
    for (float &x : host) {
      x = uniform(rng);
    }
    CUDA_CHECK(cudaMemcpy(in.at(0), host.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    // A pageable-to-device cudaMemcpy may return before its DMA lands, and the legacy stream it
    // runs on does not order the lesson's non-blocking stream: wait for it, or the first run
    // reads part of the old buffer (seen once, n = 2^20, with 6 programs sharing the GPU).
    CUDA_CHECK(cudaDeviceSynchronize());
    for (const Variant &v : variants) {
      if ((v.row != Row::Best && v.row != Row::BestPdl) || !refusal(v.row, d, n, false).empty()) {
        continue;
      }
      Setup s = setupFor(v);
      std::vector<uint32_t> bits;
      for (int run = 0; run < kDeterminismRuns; ++run) {
        float got = 0.0f;
        poisonRow(v.row, s, stream);
        launchRow(v.row, s, in.at(0), nullptr, n, stream);
        CUDA_CHECK(cudaMemcpyAsync(&got, s.results + int(v.row), sizeof got, cudaMemcpyDeviceToHost,
                                   stream));
        CUDA_CHECK(cudaStreamSynchronize(stream));
        uint32_t b = 0;
        std::memcpy(&b, &got, sizeof b);
        bits.push_back(b);
      }
      size_t distinct = std::set<uint32_t>(bits.begin(), bits.end()).size();
      float first = 0.0f;
      std::memcpy(&first, &bits[0], sizeof first);
      std::printf("determinism: %s n=%zu random floats: %d runs, %zu distinct bit pattern%s "
                  "(first 0x%08x = %.6f)\n",
                  v.name, n, kDeterminismRuns, distinct, distinct == 1 ? "" : "s", bits[0],
                  double(first));
      report.expect(distinct == 1, double(distinct), 1, "determinism: %s n=%zu", v.name, n);
    }
    in.release();
  }

  std::printf("day39-cub: %zu size x offset x input cases, %zu variants, timing paths at 1027 and "
              "65537, determinism; %ld checks, %ld failed\n",
              cases, variants.size(), report.checks, report.failures);
  results.release();
  for (int r = 0; r < kRowCount; ++r) {
    if (counts[r] != 0) {
      partials[r].release();
    }
  }
  CUDA_CHECK(cudaFree(b.tickets));
  CUDA_CHECK(cudaFree(b.copyCounts));
  CUDA_CHECK(cudaFree(b.cubTemp));
  CUDA_CHECK(cudaStreamDestroy(stream));
  return report.finish();
}
