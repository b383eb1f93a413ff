// Day 39 scan's test program: every row of code/day39-scan/scan.cu (its own kernels, launchers
// and exact check, every output element) over the edge matrix, then the timing paths, the
// repetition and delay injection.
//
//   nvcc -std=c++17 -O3 -arch=sm_75 -o harness tests/harness/day39-scan.cu && ./harness
//
// The matrix: harness::sizes (the full list, or --quick's) up to --max-n, plus the scan's own edges
// (tile - 1 and + 1, twice and three times a tile, for the ladder's 2048-float tiles, best's 4096
// and 8192, its one blocks' 1024, 4096 and 8192; 1000003, which no tile divides); input offsets
// 0..3 floats past 256-byte alignment, each with an output offset of the same and of the next
// misalignment (the float4 rows fall back to scalar loads), and in place (out == in, which CUB
// allows too); the inputs +1/-1 (the lesson's) plus all-ones and seeded random 0/1 (--input);
// best forced onto each of its paths at every n. NaN guard bands around the input, the output and
// the chunk partials, scanned after each run. Then at n = 1027, 65537 and 2^20 + 3 every row goes
// through timeKernel and timeGraph (two calls a batch) and the check reads what the last timed call
// wrote. Then the one-pass rows (chained, look-back, best) run --reps times back to back,
// ALTERNATING two different inputs, each output checked: a status word or counter left stale by
// the previous launch gives the previous input's prefixes, which the check sees (on one input it
// would not: the stale values would be the right ones); and again with a different tile sleeping
// in each launch. Last, delay injection (tests/harness/delay.h): one chosen tile sleeps before it
// publishes - the first, the second, one in the middle, the last - for 5 us, 200 us and 2 ms; each
// run must be exact and must finish (a hang fails after 20 s), at 65537, 2^22 and 2^23 + 5 (best's
// 128 x 8 shape with its poll delays starts above 2^22). Each part prints the seconds it took.
//
// The compute-sanitizer runs (code/day39-scan/runs.txt) use --quick --max-n 65537 --reps 4
// --input random: harness.h's quick sizes and offsets 0 and 3, plus every tile + 1 and in place;
// both timing paths at 1027 and 65537; the repetition (4 launches of each one-pass row alternating
// two inputs: every path of it) and delay injection at 32768. What they leave out: the chunk
// loops' second trip (n > 262144 for the 256-float tiles of scan-propagate, reduce-then-scan and
// warp shuffles; n > 2^21 for items a thread), whose barriers are those of the first trip and
// which the self-test checks exactly at 1048577, 16776605 and 2^24 (racecheck there would take
// minutes); best's 128 x 8 shape with its poll delays (n > 2^22), which the self-test checks at
// 16776605 and 2^24; and ordering bugs, which no sanitizer sees: the self-test's 10^4 launches are
// for those. --part K/M splits one slow sanitizer run into M processes, together every variant
// once.
#include "delay.h"
#define REDUCTION_HARNESS
#ifndef LESSON
#define LESSON "../../code/day39-scan/scan.cu"
#endif
#include LESSON
#include "harness.h"

static const char *kHarnessUsage =
    "usage: day39-scan harness [--max-n N] [--seed S] [--input ones|random|both] [--reps R]\n"
    "                          [--part K/M]\n"
    "  every row of day 39's scan over the edge sizes up to N (default 16777216), input and\n"
    "  output offsets, in place, the inputs +1/-1 and --input's; the timing paths; R back-to-back\n"
    "  launches of each one-pass row (default 10000); delay injection. --part K/M: only the\n"
    "  variants K, K + M, K + 2M, ... (counting from 1), so that M processes share one slow\n"
    "  sanitizer run.\n"
    "exit codes: 0 all checks passed, 1 a check failed or a CUDA error, 2 bad usage.\n";

// --part K/M with 1 <= K <= M <= 8 (so every part has a variant); else one line on stderr
// (bad usage: exit 2, before anything is allocated).
static bool parsePart(const char *s, uint64_t &k, uint64_t &m) {
  const char *slash = s == nullptr ? nullptr : std::strchr(s, '/');
  if (slash == nullptr || !harness::parseCount(std::string(s, slash).c_str(), 1000, k) ||
      !harness::parseCount(slash + 1, 1000, m) || k < 1 || k > m || m > 8) {
    std::fprintf(stderr, "error: --part needs K/M, 1 <= K <= M <= 8 (see --help)\n");
    return false;
  }
  return true;
}

struct Variant {
  const char *name;
  Row row;
  size_t oneBlockMax; // best's path: ONE block for n <= this
};

int main(int argc, char **argv) {
  uint64_t reps = 10000, part = 1, parts = 1;
  harness::Options o = harness::parse(argc, argv, kHarnessUsage, [&](int c, char **v, int i) {
    if (std::strcmp(v[i], "--part") == 0) {
      return parsePart(i + 1 < c ? v[i + 1] : nullptr, part, parts) ? 2 : -1;
    }
    if (std::strcmp(v[i], "--reps") != 0) {
      return 0;
    }
    if (!harness::parseCount(i + 1 < c ? v[i + 1] : nullptr, 1000000, reps) || reps == 0) {
      std::fprintf(stderr, "error: --reps needs a whole number from 1 to 1000000 (see --help)\n");
      return -1;
    }
    return 2;
  });
  harness::banner("day39-scan", o);
  Setup s;
  CUDA_CHECK(cudaGetDeviceProperties(&s.prop, 0));
  if (s.prop.warpSize != kWarp) {
    std::printf("error: the shuffle scans assume %d lanes a warp; the device has %d\n", kWarp,
                s.prop.warpSize);
    return 1;
  }
  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

  // The inputs: +1/-1 always (the lesson's), ones and random 0/1 as --input asks.
  std::vector<Reference> refs = {referenceFor(Input::PlusMinusOne, o.seed, o.maxN)};
  for (harness::Input in : o.inputs()) {
    refs.push_back(
        referenceFor(in == harness::Input::Ones ? Input::Ones : Input::ZeroOne, o.seed, o.maxN));
  }
  auto nameOf = [](Input k) {
    return k == Input::Ones ? "ones" : k == Input::ZeroOne ? "random 0/1" : "+1/-1";
  };
  harness::Guarded in, out, partials; // in and out: made for each size, so scans cost O(n)
  auto make = [&](size_t n) {
    if (!in.make(n) || !out.make(n)) {
      std::printf("error: cudaMalloc of 2 x %zu guarded floats failed\n", n);
      std::exit(1);
    }
  };
  auto release = [&] {
    in.release();
    out.release();
  };
  if (!partials.make(kMaxChunks)) {
    std::printf("error: cudaMalloc failed\n");
    return 1;
  }
  s.partials = partials.at(0);
  s.stateWords = 1 + (o.maxN + kTile - 1) / kTile;
  s.bestStateWords = bestStateWordsFor(o.maxN);
  CUDA_CHECK(cudaMalloc(&s.state, s.stateWords * 8));
  // best's state as the lesson sizes it for --max-n, then kStateGuard words of a known pattern: a
  // status word placed past the size (a spread the size forgot) lands there, or past the buffer.
  constexpr size_t kStateGuard = 4096;
  CUDA_CHECK(cudaMalloc(&s.bestState, (s.bestStateWords + kStateGuard) * 8));
  CUDA_CHECK(cudaMemset(s.bestState, 0, s.bestStateWords * 8));
  CUDA_CHECK(cudaMemset(s.bestState + s.bestStateWords, 0xA5, kStateGuard * 8));
  auto stateGuardWritten = [&] {
    std::vector<unsigned long long> g(kStateGuard);
    CUDA_CHECK(cudaMemcpy(g.data(), s.bestState + s.bestStateWords, kStateGuard * 8,
                          cudaMemcpyDeviceToHost));
    return size_t(std::count_if(g.begin(), g.end(),
                                [](unsigned long long w) { return w != 0xA5A5A5A5A5A5A5A5ull; }));
  };
  CUDA_CHECK(cubScan(nullptr, s.cubTempBytes, nullptr, nullptr, o.maxN, stream));
  CUDA_CHECK(cudaMalloc(&s.cubTemp, std::max<size_t>(1, s.cubTempBytes)));
  CUDA_CHECK(cudaMalloc(&s.counts, 3 * sizeof(unsigned long long)));
  CUDA_CHECK(cudaMalloc(&s.seeds, refs[0].seeds.size() * sizeof(long long)));
  CUDA_CHECK(cudaDeviceSynchronize());
  auto useReference = [&](const Reference &r) { // the check's seeds on the device
    CUDA_CHECK(cudaMemcpy(s.seeds, r.seeds.data(), r.seeds.size() * 8, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaDeviceSynchronize());
  };
  // Fills n inputs at `offset` of `buf`, NaN everywhere else (guards, slack).
  auto fill = [&](harness::Guarded &buf, size_t n, int offset, const Reference &r) {
    buf.poison();
    CUDA_CHECK(cudaDeviceSynchronize());
    fillRing<<<256, 256, 0, stream>>>(buf.at(offset), n, n, n, r.kind, r.seed);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaStreamSynchronize(stream));
  };

  std::vector<Variant> variants;
  for (int k = 0; k < kRowCount; ++k) {
    variants.push_back({kRows[k].name, Row(k), kDefaultOneBlockMax});
  }
  variants.push_back({"best: one block", Row::Best, kExact});
  variants.push_back({"best: look-back", Row::Best, 0});
  std::vector<Variant> all = variants; // --part K/M: the K-th variant, then every M-th
  variants.clear();
  for (size_t j = part - 1; j < all.size(); j += parts) {
    variants.push_back(all[j]);
  }
  if (parts > 1) {
    std::printf("part %llu of %llu:", (unsigned long long)part, (unsigned long long)parts);
    for (const Variant &v : variants) {
      std::printf(" %s%s", v.name, &v == &variants.back() ? "\n" : ",");
    }
  }
  auto setupFor = [&](const Variant &v) {
    Setup t = s;
    t.oneBlockMax = v.oneBlockMax;
    return t;
  };

  // The matrix's sizes (harness::sizes: the full list, or --quick's) and the scan's own edges:
  // every tile the rows use (the ladder's 2048, best's 2048, 4096 and 8192, its one blocks' 1024,
  // 4096 and 8192) - 1 and + 1, twice and three times it (+ 5), and 1000003, which no tile divides.
  std::vector<size_t> sizes = harness::sizes(o);
  for (size_t tile :
       {kTile, size_t(128 * kBigLoads * 4), size_t(8192), size_t(1024), size_t(4096)}) {
    for (size_t n : {tile - 1, tile + 1, 2 * tile - 1, 2 * tile + 1, 3 * tile + 5}) {
      if (n <= o.maxN && (!o.quick || n == tile + 1)) { // --quick: tile + 1 only
        sizes.push_back(n);
      }
    }
  }
  if (!o.quick && o.maxN >= 1000003) {
    sizes.push_back(1000003);
  }
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());

  harness::Report report;
  // One run of variant v on in/out at (inOff, outOff) (out == in when inPlace), checked.
  auto runOnce = [&](const Variant &v, size_t n, int inOff, int outOff, bool inPlace,
                     const Reference &r) {
    harness::Guarded &dst = inPlace ? in : out;
    if (!inPlace) {
      dst.poison();
    }
    partials.poison();
    CUDA_CHECK(cudaDeviceSynchronize());
    Setup t = setupFor(v);
    float *to = inPlace ? in.at(inOff) : dst.at(outOff);
    launchRow(v.row, t, in.at(inOff), to, n, stream);
    harness::waitFor(stream, 20.0, v.name);
    Check c = checkRow(v.row, t, r, in.at(inOff), to, n, n, stream);
    report.expect(c.ok, c.got, c.want,
                  "%s n=%zu in+%d out+%d%s input %s: element %llu (%llu "
                  "differ, %llu written past n)",
                  v.name, n, inOff, inPlace ? inOff : outOff, inPlace ? " in place" : "",
                  nameOf(r.kind), c.first, c.wrong, c.strays);
    size_t bad = dst.strays(n, inPlace ? inOff : outOff) + partials.strays(kMaxChunks, 0);
    bad += inPlace ? 0 : in.strays(n, inOff);
    report.expect(bad == 0, double(bad), 0, "%s n=%zu: floats written outside the output", v.name,
                  n);
  };

  auto start = std::chrono::steady_clock::now();
  auto took = [&](const char *what) { // the seconds since the last part: where the run's time goes
    auto now = std::chrono::steady_clock::now();
    std::printf("%s: %.1f s\n", what, std::chrono::duration<double>(now - start).count());
    start = now;
  };
  size_t cases = 0;
  for (size_t n : sizes) {
    make(n);
    for (const Reference &r : refs) {
      useReference(r);
      for (int inOff : harness::offsets(o)) {
        if (n > 65537 && inOff % 3 != 0) {
          continue; // large sizes: offsets 0 and 3 (every tile path is reached at the small ones)
        }
        for (int pass = 0; pass < 3; ++pass) { // out at the same misalignment, the next, in place
          int outOff = pass == 1 ? (inOff + 1) % harness::kOffsets : inOff;
          fill(in, n, inOff, r);
          ++cases;
          for (const Variant &v : variants) {
            if (pass > 0 && v.row == Row::Copy) {
              continue; // the copy needs in and out equally misaligned; in place it proves nothing
            }
            runOnce(v, n, inOff, outOff, pass == 2, r);
            if (pass == 2) {
              fill(in, n, inOff, r); // in place consumed the input
            }
          }
        }
      }
    }
    release();
  }

  took("the matrix");

  // n = 0: every launcher returns with nothing launched: its call, captured into a graph, adds no
  // node (a launch of 0 blocks is an error; a chunk count of 0 would divide by 0).
  make(1);
  for (const Variant &v : variants) {
    Setup t = setupFor(v);
    cudaGraph_t graph;
    CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    launchRow(v.row, t, in.at(0), out.at(0), 0, stream);
    CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
    size_t nodes = 0;
    CUDA_CHECK(cudaGraphGetNodes(graph, nullptr, &nodes));
    CUDA_CHECK(cudaGraphDestroy(graph));
    report.expect(nodes == 0, double(nodes), 0, "%s n=0: operations enqueued (want none)", v.name);
  }
  release();

  // Both timing paths, as the lesson times them: every batch from poison, then the check reads
  // what the last timed call (stream) or the last replay (graph) wrote.
  useReference(refs[0]);
  for (size_t n : {size_t(1027), size_t(65537), (size_t(1) << 20) + 3}) {
    if (n > o.maxN) {
      continue;
    }
    make(n);
    fill(in, n, 0, refs[0]);
    for (const Variant &v : variants) {
      for (int graph = 0; graph < 2; ++graph) {
        Setup t = setupFor(v);
        auto call = [&] { launchRow(v.row, t, in.at(0), out.at(0), n, stream); };
        auto poison = [&] {
          CUDA_CHECK(cudaMemsetAsync(out.alloc, 0xFF, out.floats * sizeof(float), stream));
        };
        if (graph) {
          timeGraph(call, poison, 2, stream);
        } else {
          timeKernel(call, poison, 2, stream);
        }
        harness::waitFor(stream, 20.0, v.name);
        Check c = checkRow(v.row, t, refs[0], in.at(0), out.at(0), n, n, stream);
        report.expect(c.ok, c.got, c.want, "%s n=%zu after %s timing: element %llu", v.name, n,
                      graph ? "graph" : "stream", c.first);
      }
    }
    release();
  }

  took("the timing paths");

  // Repetition: back-to-back launches alternating two different inputs (A: +1/-1 seed S, B:
  // +1/-1 seed S + 1), every output checked. Both inputs are filled once, side by side.
  size_t nr = std::min<size_t>(o.maxN / 2, 65537);
  std::vector<Reference> ab = {referenceFor(Input::PlusMinusOne, o.seed, nr),
                               referenceFor(Input::PlusMinusOne, o.seed + 1, nr)};
  harness::Guarded inB;
  // 41 x 2048 + 1: best's first tile sleeping while 40 successors wait, so a look-back walks past
  // a whole window of 32 predecessors that have only aggregates; 2^23 + 5: best's largest shape.
  std::vector<size_t> delaySizes = {nr};
  for (size_t n : {size_t(41 * 2048 + 1), size_t(1) << 22, (size_t(1) << 23) + 5}) {
    if (n <= o.maxN) {
      delaySizes.push_back(n);
    }
  }
  make(delaySizes.back());
  if (!inB.make(nr)) {
    std::printf("error: cudaMalloc failed\n");
    return 1;
  }
  long long *seedsB = nullptr;
  CUDA_CHECK(cudaMalloc(&seedsB, ab[1].seeds.size() * 8));
  CUDA_CHECK(
      cudaMemcpy(s.seeds, ab[0].seeds.data(), ab[0].seeds.size() * 8, cudaMemcpyHostToDevice));
  CUDA_CHECK(
      cudaMemcpy(seedsB, ab[1].seeds.data(), ab[1].seeds.size() * 8, cudaMemcpyHostToDevice));
  fill(in, nr, 0, ab[0]);
  fill(inB, nr, 0, ab[1]);
  auto repeat = [&](const Variant &v, uint64_t count, const char *what) {
    Setup t = setupFor(v), tb = t;
    tb.seeds = seedsB;
    uint64_t bad = 0;
    for (uint64_t k = 0; k < count; ++k) {
      bool b = k % 2 == 1;
      launchRow(v.row, t, b ? inB.at(0) : in.at(0), out.at(0), nr, stream);
      harness::waitFor(stream, 20.0, v.name);
      Check c = checkRow(v.row, b ? tb : t, ab[b], nullptr, out.at(0), nr, nr, stream);
      if (!c.ok && bad++ == 0) {
        report.expect(false, c.got, c.want, "%s %s n=%zu launch %llu (input %s): element %llu",
                      v.name, what, nr, (unsigned long long)k, b ? "B" : "A", c.first);
      }
    }
    report.expect(bad == 0, double(bad), 0, "%s %s: %llu back-to-back launches, failed ones",
                  v.name, what, (unsigned long long)count);
  };
  for (const Variant &v : variants) {
    if (v.row == Row::Chained || v.row == Row::LookBack || v.row == Row::Best) {
      repeat(v, reps, "repetition");
    }
  }
  // The same under delay injection: in each launch a different tile sleeps 20 us before it
  // publishes, so its successors' look-back (or wait) meets a tile that has published nothing.
  CUDA_CHECK(delay::set(delay::kRotate, 20));
  for (const Variant &v : variants) {
    if (v.row == Row::Chained || v.row == Row::LookBack || v.row == Row::Best) {
      repeat(v, std::min<uint64_t>(reps, 1000), "repetition, a tile sleeping in each launch");
    }
  }
  CUDA_CHECK(delay::set(delay::kNone, 0));
  took("the repetition");

  // Delay injection: one tile sleeps before it publishes; every run exact, none hangs.
  for (size_t n : delaySizes) {
    fill(in, n, 0, refs[0]);
    useReference(refs[0]);
    for (const Variant &v : variants) {
      bool onePass = v.row == Row::Chained || v.row == Row::LookBack ||
                     (v.row == Row::Best && n > v.oneBlockMax);
      if (!onePass) {
        continue;
      }
      size_t tile = v.row == Row::Best ? bestTile(n, v.oneBlockMax) : kTile;
      unsigned int tiles = unsigned((n + tile - 1) / tile);
      for (unsigned int sleeper : {0u, 1u, tiles / 2, tiles - 1, unsigned(o.seed % tiles)}) {
        for (unsigned int us : {5u, 200u, 2000u}) {
          if (sleeper >= tiles) {
            continue;
          }
          CUDA_CHECK(delay::set(sleeper, us));
          Setup t = setupFor(v);
          out.poison();
          CUDA_CHECK(cudaDeviceSynchronize());
          launchRow(v.row, t, in.at(0), out.at(0), n, stream);
          harness::waitFor(stream, 20.0, v.name);
          Check c = checkRow(v.row, t, refs[0], in.at(0), out.at(0), n, n, stream);
          report.expect(c.ok, c.got, c.want,
                        "%s n=%zu, tile %u of %u sleeps %u us before it "
                        "publishes: element %llu (%llu differ)",
                        v.name, n, sleeper, tiles, us, c.first, c.wrong);
        }
      }
      CUDA_CHECK(delay::set(delay::kNone, 0));
    }
  }

  // Back to back, nothing between them, a different tile sleeping in each: a large call on input
  // A, a small one on A, a large one of another size on input B, into three outputs, each checked
  // after all three. A counter or status word that one call leaves for the next gives the next a
  // prefix of the wrong input or size, which the check sees.
  {
    size_t btb[3] = {nr, std::min<size_t>(nr, 4099), nr - 3};
    harness::Guarded outs[3];
    for (harness::Guarded &g : outs) {
      if (!g.make(nr)) {
        std::printf("error: cudaMalloc failed\n");
        return 1;
      }
    }
    fill(in, nr, 0, ab[0]);
    for (const Variant &v : variants) {
      if (v.row != Row::Chained && v.row != Row::LookBack && v.row != Row::Best) {
        continue;
      }
      Setup t = setupFor(v), tb = t;
      tb.seeds = seedsB;
      for (harness::Guarded &g : outs) {
        g.poison();
      }
      CUDA_CHECK(cudaDeviceSynchronize());
      CUDA_CHECK(delay::set(delay::kRotate, 200));
      for (int k = 0; k < 3; ++k) {
        launchRow(v.row, t, k == 2 ? inB.at(0) : in.at(0), outs[k].at(0), btb[k], stream);
      }
      harness::waitFor(stream, 20.0, v.name);
      CUDA_CHECK(delay::set(delay::kNone, 0));
      for (int k = 0; k < 3; ++k) {
        Check c = checkRow(v.row, k == 2 ? tb : t, ab[k == 2], nullptr, outs[k].at(0), btb[k],
                           btb[k], stream);
        report.expect(c.ok, c.got, c.want,
                      "%s back to back (n = %zu on A, %zu on A, %zu on B), call %d: element %llu "
                      "(%llu differ)",
                      v.name, btb[0], btb[1], btb[2], k + 1, c.first, c.wrong);
      }
    }
    for (harness::Guarded &g : outs) {
      g.release();
    }
  }
  size_t written = stateGuardWritten();
  report.expect(written == 0, double(written), 0,
                "best's status words past bestStateWordsFor(%zu): guard words written", o.maxN);

  took("delay injection");
  std::printf("day39-scan: %zu size x offset x input cases, %zu variants, timing paths, %llu "
              "launches a one-pass row back to back, delay injection; %ld checks, %ld failed\n",
              cases, variants.size(), (unsigned long long)reps, report.checks, report.failures);
  release();
  inB.release();
  partials.release();
  for (void *p : {(void *)s.state, (void *)s.bestState, s.cubTemp, (void *)s.counts,
                  (void *)s.seeds, (void *)seedsB}) {
    CUDA_CHECK(cudaFree(p));
  }
  CUDA_CHECK(cudaStreamDestroy(stream));
  return report.finish();
}
