// Experiment (not the lesson's test program): tests/harness/day39-sort.cu extended for the rungs of
// research/experiments/day39_sort_fulltiles.cu. Build from the repository root:
//   nvcc -std=c++17 -O3 -arch=sm_90 -I tests/harness -DLESSON='"day39_sort_fulltiles.cu"' \
//     -o harness research/experiments/day39_sort_fulltiles_harness.cu
//
// Day 39 sort's test program: every row of code/day39-sort/sort.cu (its own kernels, launchers and
// exact check: every key against CUB, sorted, the same multiset; pairs stable, every index once)
// over the edge matrix and every input, then the timing paths, the repetition and delay injection.
//
//   nvcc -std=c++17 -O3 -arch=sm_75 -o harness tests/harness/day39-sort.cu && ./harness
//
// The matrix: harness::sizes (the full list, or --quick's) up to --max-n, plus the sort's own edges
// (each size where best or a tile changes shape - 1024, a ladder tile, kOneBlockMax, best's
// onesweep tiles, kSmallSweepMax - minus 1, exactly, plus 1, twice minus 1, three times plus 5;
// 1000003, which no tile divides); the unsigned inputs random, low entropy (keys & 0xF), all equal,
// sorted and reverse sorted, each for every unsigned row and the pairs rows, and the float keys
// (random bits with -0.0, +0.0, -inf, +inf, -NaN, +NaN) for the float rows; best forced onto each
// of its paths. --quick (the sanitizer runs) takes random, low and equal, and the one-bit row (96
// launches a call, the 4-bit row's kernels with bits = 1) only up to n = 257. --tiles (racecheck,
// with --quick) takes fewer: racecheck watches shared memory, whose use inside a block depends on
// the tile (its shape, full or partial, the keys of its last warp row) and the keys, not on the
// grid, so n = 0, 1, 3, 255, 257 and each tile exactly and + 1, the inputs random and low entropy
// (in passes 2 to 4 every key has digit 0, the digit an empty lane's 256 shares its low 8 bits
// with), and no timing paths (the matrix's kernels again).
// Poisoned guard words before each output (64) and after it (n + 64Ki). Then at n = 1027 and 65537
// (--quick: 1027) every row goes through timeKernel and timeGraph (two calls a batch) and the check
// reads what the last timed call wrote. Then the one-kernel-a-pass rows (the onesweep row, best's
// onesweep paths: keys and floats on 384 x 20 tiles, pairs on 256 x 8 and 256 x 16) run --reps
// times back to back at 65537, ALTERNATING two inputs: the first launch of each input checked
// whole, every later one compared word for word (guards included) with that checked output on the
// device; a status word or counter left stale by the call before gives a wrong place, which the
// compare sees; then again with a different tile sleeping in each launch. Last, delay injection
// (tests/harness/delay.h): one chosen tile - the first, the second, one in the middle, the last -
// sleeps 5 us, 200 us and 2 ms before it publishes its counts; each run must be exact and must
// finish (a hang fails after --hang-s, 20 s by default). Each part prints the seconds it took.
#include "delay.h"
#define REDUCTION_HARNESS
#ifndef LESSON
#define LESSON "../../code/day39-sort/sort.cu"
#endif
#include LESSON
#include "harness.h"

#include <functional>

static const char *kHarnessUsage =
    "usage: day39-sort harness [--max-n N] [--seed S] [--quick] [--reps R] [--hang-s S]\n"
    "                          [--part K/M] [--tiles]\n"
    "  every row of day 39's sort over the edge sizes up to N (default 16777216) and every input;\n"
    "  the timing paths; R back-to-back launches of each one-kernel-a-pass row (default 10000);\n"
    "  delay injection. A call still running after S seconds (default 20; give the sanitizer\n"
    "  runs more) is a hang: the run fails. --part K/M: only the variants K, K + M, K + 2M, ...\n"
    "  (counting from 1), so that M processes share one slow sanitizer run. --tiles (with\n"
    "  --quick): n = 0, 1, 3, 255, 257 and each tile and + 1, random and low-entropy keys, no\n"
    "  timing paths.\n"
    "exit codes: 0 all checks passed, 1 a check failed or a CUDA error, 2 bad usage.\n";

// The repetition's check of one launch: bad = the smallest launch index k whose output words
// got[0, words) differ from want[0, words) (the output of a launch on the same input that
// checkRow passed, guards included). Any grid.
__global__ void sameAs(const uint32_t *got, const uint32_t *want, size_t words,
                       unsigned long long k, unsigned long long *bad) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < words;
       i += size_t(gridDim.x) * blockDim.x) {
    if (got[i] != want[i]) {
      atomicMin(bad, k);
      return;
    }
  }
}

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
  Row row; // what it sorts, and its check: the row's
  std::function<void(const Call &)> launch;
  size_t maxN;     // runs for n <= this
  size_t tile = 0; // a one-kernel-a-pass row: the keys of its tile (0: not one)
};

int main(int argc, char **argv) {
  uint64_t reps = 10000, hangS = 20, part = 1, parts = 1;
  bool tileEdges = false; // --tiles: racecheck's matrix (the header says why it suffices)
  harness::Options o = harness::parse(argc, argv, kHarnessUsage, [&](int c, char **v, int i) {
    if (std::strcmp(v[i], "--tiles") == 0) {
      tileEdges = true;
      return 1;
    }
    bool r = std::strcmp(v[i], "--reps") == 0, h = std::strcmp(v[i], "--hang-s") == 0;
    if (std::strcmp(v[i], "--part") == 0) {
      return parsePart(i + 1 < c ? v[i + 1] : nullptr, part, parts) ? 2 : -1;
    }
    if (!r && !h) {
      return 0;
    }
    uint64_t &x = r ? reps : hangS;
    if (!harness::parseCount(i + 1 < c ? v[i + 1] : nullptr, 1000000, x) || x == 0) {
      std::fprintf(stderr, "error: %s needs a whole number from 1 to 1000000 (see --help)\n", v[i]);
      return -1;
    }
    return 2;
  });
  if (tileEdges && !o.quick) {
    std::fprintf(stderr, "error: --tiles needs --quick (see --help)\n");
    return 2;
  }
  harness::banner("day39-sort", o);
  Setup s;
  CUDA_CHECK(cudaGetDeviceProperties(&s.prop, 0));
  if (s.prop.warpSize != kWarp || s.prop.major < 7) {
    std::printf("error: the warp ranks need %d lanes a warp and cc 7.0 or newer\n", kWarp);
    return 1;
  }
  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

  // Buffers for the largest size: inputs and outputs with kPad poisoned words in front (a write
  // before the output lands there) and a slot of 2n + 64Ki words behind them: the n keys and a
  // guard of n + 64Ki poisoned words, which checkRow reads (a write past n lands there).
  auto slotOf = [](size_t n) { return (2 * n + 65536 + 63) / 64 * 64; };
  const size_t maxSlot = slotOf(o.maxN), pad = harness::kPad;
  Buffers buf; // the lesson's buffers (planBuffers), each input and output pad + a slot long
  planBuffers(s, buf, o.maxN, pad + maxSlot);
  Rings base = allocateBuffers(s, buf);
  Rings g{base.keys + pad, base.floats + pad, base.values + pad, base.keysOut + pad,
          base.valsOut + pad};
  // The repetition's second input (B): keys and floats with their CUB-sorted copies.
  uint32_t *extra[4];
  for (int i = 0; i < 4; ++i) {
    CUDA_CHECK(cudaMalloc(&extra[i], (i < 2 ? pad + maxSlot : o.maxN) * 4));
  }
  uint32_t *keysB = extra[0] + pad, *floatsB = extra[1] + pad;
  CUDA_CHECK(cudaDeviceSynchronize());

  std::vector<Variant> variants;
  for (int k = 0; k < kRowCount; ++k) {
    bool onePass = Row(k) == Row::OneSweep || Row(k) == Row::CountsInFlight ||
                   Row(k) == Row::FullTiles || Row(k) == Row::ThreeBlocks;
    variants.push_back({kRows[k].name, Row(k), [k](const Call &c) { launchRow(Row(k), c); }, kMaxN,
                        onePass ? size_t(kBestThreads) * kBestKeys : 0});
  }
  // best's paths, each forced (a best row reaches only one of them at a given n): the one blocks,
  // onesweep on the ladder's tiles, onesweep on best's own; keys, floats and pairs each.
  variants.push_back({"best: one block 256 x 4", Row::Best,
                      [](const Call &c) { oneBlock<256, 4, false>(c, false); }, 1024});
  variants.push_back({"best: one block 256 x 8", Row::Best,
                      [](const Call &c) { oneBlock<256, 8, false>(c, false); }, 2048});
  variants.push_back({"best: one block 4096", Row::Best,
                      [](const Call &c) {
                        oneBlock<kOneBlock4096Threads, 4096 / kOneBlock4096Threads, false>(c, false);
                      },
                      kOneBlockMax});
  variants.push_back({"best float: one block 4096", Row::BestFloats,
                      [](const Call &c) {
                        oneBlock<kOneBlock4096Threads, 4096 / kOneBlock4096Threads, false>(c, true);
                      },
                      kOneBlockMax});
  variants.push_back({"best pairs: one block 256 x 4", Row::BestPairs,
                      [](const Call &c) { oneBlock<256, 4, true>(c, false); }, 1024});
  variants.push_back({"best pairs: one block 4096", Row::BestPairs,
                      [](const Call &c) {
                        oneBlock<kOneBlock4096Threads, 4096 / kOneBlock4096Threads, true>(c, false);
                      },
                      kOneBlockMax});
  variants.push_back({"best: full tiles 256 x 8", Row::Best,
                      [](const Call &c) { oneSweepFull<kBlock, kItems, false, kSmallBlocks>(c, false); },
                      kMaxN, size_t(kTile)});
  variants.push_back({"best float: full tiles 256 x 8", Row::BestFloats,
                      [](const Call &c) { oneSweepFull<kBlock, kItems, false, kSmallBlocks>(c, true); },
                      kMaxN, size_t(kTile)});
  variants.push_back({"best pairs: full tiles 256 x 8", Row::BestPairs,
                      [](const Call &c) { oneSweepFull<kBlock, kItems, true, kSmallBlocks>(c, false); },
                      kMaxN, size_t(kTile)});
  variants.push_back({"best float: 3 blocks an SM", Row::BestFloats,
                      [](const Call &c) { oneSweepFull<kBestThreads, kBestKeys, false, 3>(c, true); },
                      kMaxN, size_t(kBestThreads) * kBestKeys});
  variants.push_back(
      {"best pairs: full tiles", Row::BestPairs,
       [](const Call &c) { oneSweepFull<kBestPairsThreads, kBestPairsKeys, true, 2>(c, false); },
       kMaxN, size_t(kBestPairsThreads) * kBestPairsKeys});
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
  const char *inputNames[] = {"random", "low entropy", "all equal", "sorted", "reverse sorted"};

  harness::Report report;
  auto poison = [&](uint32_t *q, size_t n) { // the front guard, n words and the slot's tail
    CUDA_CHECK(cudaMemsetAsync(q - pad, 0xA5, (pad + slotOf(n)) * 4, stream));
  };
  // Fills the inputs for n (keys of `kind` and `seed`, floats of `seed`, values) with poison
  // around them, sorts them with CUB for the check and takes their signatures. B: the second set.
  auto prepare = [&](size_t n, Input kind, uint64_t seed, bool b) {
    uint32_t *keys = b ? keysB : g.keys, *floats = b ? floatsB : g.floats;
    uint32_t *sortedKeys = b ? extra[2] : buf.p[Buffers::SortedKeys];
    uint32_t *sortedFloats = b ? extra[3] : buf.p[Buffers::SortedFloats];
    size_t slot = slotOf(n);
    for (uint32_t *q : {keys, floats, g.values}) {
      poison(q, n);
    }
    fillRing<<<256, 256, 0, stream>>>(keys, slot, slot, n, kind, seed, false);
    fillRing<<<256, 256, 0, stream>>>(floats, slot, slot, n, Input::Floats, seed, false);
    fillRing<<<256, 256, 0, stream>>>(g.values, slot, slot, n, kind, seed, true);
    CUDA_CHECK(cudaGetLastError());
    launchCubKeys({s, keys, sortedKeys, nullptr, nullptr, n, stream});
    launchCubFloats({s, floats, sortedFloats, nullptr, nullptr, n, stream});
    return Reference{n,
                     slot,
                     keys,
                     floats,
                     g.values,
                     sortedKeys,
                     sortedFloats,
                     signature(s, keys, n, stream),
                     signature(s, floats, n, stream)};
  };
  // The words written in the guards before the outputs (kPad each, poisoned before each run).
  auto frontWritten = [&]() {
    std::vector<uint32_t> front(2 * pad);
    CUDA_CHECK(cudaMemcpy(front.data(), base.keysOut, pad * 4, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(front.data() + pad, base.valsOut, pad * 4, cudaMemcpyDeviceToHost));
    return size_t(
        std::count_if(front.begin(), front.end(), [](uint32_t w) { return w != kPoison; }));
  };
  // One run of variant v on the inputs of `ref`: outputs poisoned, the call (watched for a hang),
  // the check, the front guards. `what` names the run in a failure.
  auto runOnce = [&](const Variant &v, const Reference &ref, const char *what) {
    Keys kind = kRows[int(v.row)].keys;
    const uint32_t *in = kind == Keys::Floats ? ref.floats : ref.keys;
    poison(g.keysOut, ref.n);
    poison(g.valsOut, ref.n);
    v.launch(Call{s, in, g.keysOut, g.values, g.valsOut, ref.n, stream});
    CUDA_CHECK(cudaGetLastError());
    harness::waitFor(stream, double(hangS), v.name);
    Check c = checkRow(v.row, s, ref, in, g.keysOut, g.valsOut, stream);
    size_t before = frontWritten();
    if (!c.ok || before != 0) {
      report.expect(false, double(before), 0.0, "%s n=%zu %s: %s; words written before the output",
                    v.name, ref.n, what, c.ok ? "keys exact" : c.why.c_str());
    } else {
      ++report.checks;
    }
  };
  // Pairs with a payload: values that are NOT their keys' indices (random words), sorted by the
  // variant and by CUB's SortPairs from the same pairs; both stable, so keys and values must be
  // equal word for word (the index values of the matrix let a value follow the wrong key only
  // where its key is equal; a payload catches a value taken from the wrong place at all).
  uint32_t *payload, *cubKeys, *cubVals;
  unsigned long long *payloadBad;
  CUDA_CHECK(cudaMalloc(&payload, (pad + maxSlot) * 4));
  CUDA_CHECK(cudaMalloc(&cubKeys, o.maxN * 4));
  CUDA_CHECK(cudaMalloc(&cubVals, o.maxN * 4));
  CUDA_CHECK(cudaMalloc(&payloadBad, sizeof(unsigned long long)));
  auto payloadCheck = [&](const Variant &v, const Reference &ref) {
    size_t n = ref.n;
    fillRing<<<256, 256, 0, stream>>>(payload, slotOf(n), slotOf(n), n, Input::Random,
                                      o.seed + 7, false);
    CUDA_CHECK(cudaGetLastError());
    launchCubPairs({s, ref.keys, cubKeys, payload, cubVals, n, stream});
    poison(g.keysOut, n);
    poison(g.valsOut, n);
    v.launch(Call{s, ref.keys, g.keysOut, payload, g.valsOut, n, stream});
    CUDA_CHECK(cudaGetLastError());
    harness::waitFor(stream, double(hangS), v.name);
    CUDA_CHECK(cudaMemsetAsync(payloadBad, 0xFF, sizeof(unsigned long long), stream));
    sameAs<<<64, 256, 0, stream>>>(g.keysOut, cubKeys, n, 0, payloadBad);
    sameAs<<<64, 256, 0, stream>>>(g.valsOut, cubVals, n, 1, payloadBad);
    CUDA_CHECK(cudaGetLastError());
    unsigned long long bad = 0;
    CUDA_CHECK(cudaMemcpyAsync(&bad, payloadBad, sizeof bad, cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    report.expect(bad == ~0ull, double(bad == ~0ull ? 0 : bad + 1), 0,
                  "%s n=%zu random payload: 1 keys, 2 values differ from CUB's SortPairs (0: "
                  "none)",
                  v.name, n);
  };
  auto start = std::chrono::steady_clock::now();
  auto took = [&](const char *what) { // the seconds since the last part: where the run's time goes
    auto now = std::chrono::steady_clock::now();
    std::printf("%s: %.1f s\n", what, std::chrono::duration<double>(now - start).count());
    start = now;
  };

  // The matrix: n = 0, harness::sizes and the sort's own edges (the ladder's and onesweep's tile,
  // best's one block and best's onesweep tile: - 1, exactly, + 1, twice - 1, three times + 5; with
  // --quick exactly and + 1), every input, every variant. --tiles: 0, 1, 3, 255, 257 and the tiles.
  std::vector<size_t> sizes;
  for (size_t n : tileEdges ? std::vector<size_t>{1, 3, 255, 257} : harness::sizes(o)) {
    if (n <= o.maxN) {
      sizes.push_back(n);
    }
  }
  sizes.push_back(0);
  for (size_t tile : {size_t(1024), size_t(kTile), kOneBlockMax, size_t(kBestThreads) * kBestKeys,
                      size_t(kBestPairsThreads) * kBestPairsKeys, kSmallSweepMax}) {
    for (size_t n : {tile - 1, tile, tile + 1, 2 * tile - 1, 3 * tile + 5}) {
      if (n <= o.maxN && (!o.quick || n + 1 == tile || n == tile || n == tile + 1)) {
        sizes.push_back(n);
      }
    }
  }
  if (!o.quick && size_t(1000003) <= o.maxN) {
    sizes.push_back(1000003);
  }
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  size_t cases = 0;
  for (size_t n : sizes) {
    // --quick: random, low entropy, all equal; --tiles: random, low entropy
    for (int kind = 0; kind < (tileEdges ? 2 : o.quick ? 3 : 5); ++kind) {
      Reference ref = prepare(n, Input(kind), o.seed, false);
      ++cases;
      for (const Variant &v : variants) {
        if (n <= v.maxN && (kind == 0 || kRows[int(v.row)].keys != Keys::Floats) &&
            !(o.quick && v.row == Row::OneBit && n > 257)) {
          runOnce(v, ref, inputNames[kind]); // the float rows: their input is the same each kind
          if (kind == 0 && kRows[int(v.row)].keys == Keys::Pairs && n > 0) {
            payloadCheck(v, ref);
          }
        }
      }
    }
  }
  // A digit count above 2^24 (every key equal at 2^25: one digit holds them all in every pass),
  // where the self-test's --max-n allows it.
  const size_t kAllOneDigit = size_t(1) << 25;
  if (!o.quick && kAllOneDigit <= o.maxN) {
    Reference ref = prepare(kAllOneDigit, Input::Equal, o.seed, false);
    for (const Variant &v : variants) {
      if (kRows[int(v.row)].keys != Keys::Floats && v.row != Row::OneBit && kAllOneDigit <= v.maxN) {
        runOnce(v, ref, "all equal: a digit count of 2^25");
      }
    }
  }
  took("the matrix");

  // Both timing paths, as the lesson times them: every batch from poison, then the check reads
  // what the last timed call (stream) or the last replay (graph) wrote.
  for (size_t n : {size_t(1027), size_t(65537)}) {
    // --quick: one size (the same code as the matrix's); --tiles: none (the matrix's kernels)
    if (n > o.maxN || (o.quick && n > 1027) || tileEdges) {
      continue;
    }
    Reference ref = prepare(n, Input::Random, o.seed, false);
    for (const Variant &v : variants) {
      if (n > v.maxN || (o.quick && v.row == Row::OneBit)) {
        continue;
      }
      Keys kind = kRows[int(v.row)].keys;
      const uint32_t *in = kind == Keys::Floats ? g.floats : g.keys;
      for (int graph = 0; graph < 2; ++graph) {
        auto call = [&] { v.launch(Call{s, in, g.keysOut, g.values, g.valsOut, n, stream}); };
        auto poisonOut = [&] {
          poison(g.keysOut, n);
          poison(g.valsOut, n);
        };
        if (graph) {
          timeGraph(call, poisonOut, 2, stream);
        } else {
          timeKernel(call, poisonOut, 2, stream);
        }
        harness::waitFor(stream, double(hangS), v.name);
        Check c = checkRow(v.row, s, ref, in, g.keysOut, g.valsOut, stream);
        report.expect(c.ok, 0, 0, "%s n=%zu after %s timing: %s", v.name, n,
                      graph ? "graph" : "stream", c.why.c_str());
      }
    }
  }
  took("the timing paths");

  // Repetition: back-to-back launches alternating two inputs (A: random, seed S; B: random, seed
  // S + 1), every output checked; then the same with a different tile sleeping in each launch.
  size_t nr = std::min<size_t>(65537, o.maxN);
  Reference ab[2] = {prepare(nr, Input::Random, o.seed, false),
                     prepare(nr, Input::Random, o.seed + 1, true)};
  // Launches 0 and 1 (inputs A and B) are checked whole by checkRow, and their outputs, guards
  // included, kept; every later launch is compared word for word with the kept output of its
  // input on the device (the sorted output is unique, pairs too: the sort is stable), without a
  // host round trip a launch; the stream is watched for a hang every 64 launches (about 400
  // kernels: a stream holds about 1000 before a launch waits, and a launch that waits behind a
  // hung kernel would never reach the watch).
  const size_t repWords = pad + slotOf(nr);
  uint32_t *kept[2][2]; // [input][keys, values]
  unsigned long long *firstBad;
  for (auto &io : kept) {
    for (uint32_t *&q : io) {
      CUDA_CHECK(cudaMalloc(&q, repWords * 4));
    }
  }
  CUDA_CHECK(cudaMalloc(&firstBad, sizeof(unsigned long long)));
  auto repeat = [&](const Variant &v, uint64_t count, const char *what) {
    const bool pairs = kRows[int(v.row)].keys == Keys::Pairs;
    poison(g.keysOut, nr); // the guards after n; then each launch overwrites the one before
    poison(g.valsOut, nr);
    CUDA_CHECK(cudaMemsetAsync(firstBad, 0xFF, sizeof(unsigned long long), stream));
    bool whole = true;
    for (uint64_t k = 0; k < count; ++k) {
      bool b = k % 2 == 1;
      const Reference &ref = ab[b];
      const uint32_t *in = kRows[int(v.row)].keys == Keys::Floats ? ref.floats : ref.keys;
      v.launch(Call{s, in, g.keysOut, g.values, g.valsOut, nr, stream});
      CUDA_CHECK(cudaGetLastError());
      if (k < 2) {
        harness::waitFor(stream, double(hangS), v.name);
        Check c = checkRow(v.row, s, ref, in, g.keysOut, g.valsOut, stream);
        size_t before = frontWritten();
        if (!c.ok || before != 0) {
          whole = false;
          report.expect(false, double(before), 0,
                        "%s %s n=%zu launch %llu (input %s): %s; words "
                        "written before the output",
                        v.name, what, nr, (unsigned long long)k, b ? "B" : "A",
                        c.ok ? "keys exact" : c.why.c_str());
        }
        CUDA_CHECK(cudaMemcpyAsync(kept[b][0], g.keysOut - pad, repWords * 4,
                                   cudaMemcpyDeviceToDevice, stream));
        CUDA_CHECK(cudaMemcpyAsync(kept[b][1], g.valsOut - pad, repWords * 4,
                                   cudaMemcpyDeviceToDevice, stream));
      } else {
        sameAs<<<64, 256, 0, stream>>>(g.keysOut - pad, kept[b][0], repWords, k, firstBad);
        if (pairs) {
          sameAs<<<64, 256, 0, stream>>>(g.valsOut - pad, kept[b][1], repWords, k, firstBad);
        }
        CUDA_CHECK(cudaGetLastError());
        if (k % 64 == 63) { // a stream takes about 1000 launches before a launch blocks the host
          harness::waitFor(stream, double(hangS), v.name);
        }
      }
    }
    harness::waitFor(stream, double(hangS), v.name);
    unsigned long long bad = 0;
    CUDA_CHECK(cudaMemcpy(&bad, firstBad, sizeof bad, cudaMemcpyDeviceToHost));
    if (whole) { // else launch 0 or 1 has failed, printed above, and the kept output is wrong
      bool same = bad == ~0ull;
      report.expect(same, double(same ? count : bad), double(count),
                    "%s %s n=%zu: %llu back-to-back launches, the first whose output differs from "
                    "the checked output of its input (%llu: none)",
                    v.name, what, nr, (unsigned long long)count, (unsigned long long)count);
    }
  };
  auto onePass = [](const Variant &v) { return v.tile != 0; };
  for (const Variant &v : variants) {
    if (onePass(v)) {
      repeat(v, reps, "repetition");
    }
  }
  CUDA_CHECK(delay::set(delay::kRotate, 20));
  for (const Variant &v : variants) {
    if (onePass(v)) {
      repeat(v, std::min<uint64_t>(reps, 1000), "repetition, a tile sleeping in each launch");
    }
  }
  CUDA_CHECK(delay::set(delay::kNone, 0));
  took("the repetition");

  // Delay injection: one tile sleeps before it publishes its counts; every run exact, none hangs.
  std::vector<size_t> delaySizes = {nr};
  if ((size_t(1) << 20) + 3 <= o.maxN) {
    delaySizes.push_back((size_t(1) << 20) + 3);
  }
  for (size_t n : delaySizes) {
    Reference ref = prepare(n, Input::Random, o.seed, false);
    for (const Variant &v : variants) {
      if (!onePass(v)) {
        continue;
      }
      unsigned int tiles = unsigned((n + v.tile - 1) / v.tile);
      for (unsigned int sleeper : {0u, 1u, tiles / 2, tiles - 1}) {
        for (unsigned int us : {5u, 200u, 2000u}) {
          if (sleeper >= tiles) {
            continue;
          }
          CUDA_CHECK(delay::set(sleeper, us));
          char what[96];
          std::snprintf(what, sizeof what, "tile %u of %u sleeping %u us", sleeper, tiles, us);
          runOnce(v, ref, what);
        }
      }
      CUDA_CHECK(delay::set(delay::kNone, 0));
    }
  }
  // Back to back, nothing between them, a different tile sleeping in each launch: a large call on
  // input A, a small one on A, a large one of another size on input B (seed + 1), into three
  // outputs, each checked after all three. A counter or status word that one call leaves for the
  // next gives the next a place of the wrong keys or size, which the check sees.
  {
    size_t big = std::min<size_t>(o.maxN, (size_t(1) << 20) + 3);
    size_t btb[3] = {big, std::min<size_t>(big, 4099), big - 5};
    uint32_t *outs[3][2];
    for (auto &kv : outs) {
      for (uint32_t *&q : kv) {
        CUDA_CHECK(cudaMalloc(&q, (pad + maxSlot) * 4));
        q += pad;
      }
    }
    for (const Variant &v : variants) {
      if (!onePass(v) && v.row != Row::Best && v.row != Row::BestPairs &&
          v.row != Row::BestFloats) {
        continue;
      }
      Keys kind = kRows[int(v.row)].keys;
      Reference a = prepare(big, Input::Random, o.seed, false);
      Reference b = prepare(big, Input::Random, o.seed + 1, true);
      for (auto &kv : outs) {
        poison(kv[0], big);
        poison(kv[1], big);
      }
      CUDA_CHECK(delay::set(delay::kRotate, 200));
      for (int k = 0; k < 3; ++k) {
        const Reference &r = k == 2 ? b : a;
        v.launch(Call{s, kind == Keys::Floats ? r.floats : r.keys, outs[k][0], g.values,
                      outs[k][1], btb[k], stream});
        CUDA_CHECK(cudaGetLastError());
      }
      harness::waitFor(stream, double(hangS), v.name);
      CUDA_CHECK(delay::set(delay::kNone, 0));
      for (int k = 0; k < 3; ++k) { // the same first keys, with their own CUB output
        Reference r = prepare(btb[k], Input::Random, o.seed + (k == 2), k == 2);
        Check c = checkRow(v.row, s, r, kind == Keys::Floats ? r.floats : r.keys, outs[k][0],
                           outs[k][1], stream);
        report.expect(c.ok, 0, 0, "%s back to back (n = %zu on A, %zu on A, %zu on B), call %d: %s",
                      v.name, btb[0], btb[1], btb[2], k + 1, c.why.c_str());
      }
    }
    for (auto &kv : outs) {
      for (uint32_t *q : kv) {
        CUDA_CHECK(cudaFree(q - pad));
      }
    }
  }
  took("delay injection");

  std::printf("day39-sort: %zu size x input cases, %zu variants, timing paths, %llu launches a "
              "one-kernel-a-pass row back to back, delay injection; %ld checks, %ld failed\n",
              cases, variants.size(), (unsigned long long)reps, report.checks, report.failures);
  for (uint32_t *q : extra) {
    CUDA_CHECK(cudaFree(q));
  }
  for (auto &io : kept) {
    for (uint32_t *q : io) {
      CUDA_CHECK(cudaFree(q));
    }
  }
  CUDA_CHECK(cudaFree(firstBad));
  for (void *q : {(void *)payload, (void *)cubKeys, (void *)cubVals, (void *)payloadBad}) {
    CUDA_CHECK(cudaFree(q));
  }
  freeBuffers(s, buf);
  CUDA_CHECK(cudaStreamDestroy(stream));
  return report.finish();
}
