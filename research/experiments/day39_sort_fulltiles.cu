// Day 39 sort, experiment (not a lesson): the lesson's sort.cu of 2026-12-04 with four rungs added
// after onesweep, measured on the H200 on 2026-12-05 (research/experiments/
// day39_sort_fulltiles-2026-12-05-h200.txt, research/day39-sort.md "Past CUB"):
//   counts in flight: countAllDigitsWide, the up-front histograms with 4 x 16-byte loads in flight a
//                     thread on one wave of blocks (cudaOccupancyMaxActiveBlocksPerMultiprocessor)
//   full tiles:       sortPassFullTiles, the last tile padded with the largest key (no per-key
//                     tests), digits by one PRMT (__byte_perm), one shared atomicAdd a digit a warp
//                     step, keys stored to the stage as soon as ranked, float keys ordered once at
//                     load and once at store (-0.0 takes +0.0's digits)
//   3 blocks an SM:   __launch_bounds__(384, 3)
//   best:             one block (the same helpers) up to 4096, full tiles 256 x 8 up to 2^18, then
//                     3 blocks an SM (keys, floats) or full tiles 384 x 20 (pairs)
// Switches for the measurement: -DSORT_KEYS, -DSORT_PAIR_THREADS, -DSORT_PAIR_KEYS,
// -DSORT_ONEBLOCK_4096, -DSORT_SMALL_BLOCKS. The checks and mutants it needs as the lesson:
// research/day39-sort.md, "Past CUB". Build: nvcc -std=c++17 -O3 -arch=sm_90 -o sort_a THIS_FILE.
//
// Day 39, sort: cub::DeviceRadixSort head to head with an LSD radix-sort ladder, 2^10..2^28 keys.
// A pass is a STABLE split by one digit: count the digits, scan the counts, scatter. The rows:
//   copy, CUB (SortKeys uint32 and float, SortPairs) | one bit: 32 passes of a 1-bit split
//   4-bit digits: 16 digits, 8 passes | local sort: the tile ordered in shared memory first
//   8-bit, warp: 256 digits ranked inside each warp | up-front counts: all four histograms first
//   onesweep: ONE kernel a pass, tiles from a counter, decoupled look-back (384 x 20 keys a tile)
//   counts in flight: the histograms read with 16-byte loads, several in flight a thread
//   full tiles: the last tile padded, no per-key tests, one shared atomicAdd a digit a warp step
//   3 blocks an SM: registers bounded for 3 blocks of 384 threads | best: the fastest shape by n
// Exact: keys are 32-bit patterns moved whole. Every row at every size and mode is checked on the
// device after an untimed call and after the LAST timed call: every key equal to CUB's output, and
// sorted + the same multiset (a check that does not trust CUB); pairs: every value an index that
// appears once, stable. Floats: -0.0 and +0.0 keep input order, NaNs by their bits (as CUB).
// Build: nvcc -std=c++17 -O3 -arch=sm_75 -o sort code/day39-sort/sort.cu   (an H200: -arch=sm_90)
// Run:   ./sort  (both timing modes, 2^10..2^28, about 11 GiB at 2^28; --help for the knobs)
// Exit:  0 all exact; 1 a check failed, a CUDA error or an unusable device; 2 bad usage.
// Edge sizes, every input, guards, 10^4 back-to-back launches, delays: tests/harness/day39-sort.cu.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <cub/device/device_radix_sort.cuh>
#include <cuda/atomic>
#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                                           \
  do {                                                                                             \
    cudaError_t err_ = (call);                                                                     \
    if (err_ != cudaSuccess) {                                                                     \
      std::fprintf(stderr, "CUDA error: %s at %s:%d: %s\n", #call, __FILE__, __LINE__,             \
                   cudaGetErrorString(err_));                                                      \
      std::exit(1);                                                                                \
    }                                                                                              \
  } while (0)

// The test program's delay injection (tests/harness/day39-sort.cu) makes a chosen tile sleep here,
// just before it publishes its digit counts; in the lesson the hook is empty.
#ifndef DELAY_BEFORE_PUBLISH
#define DELAY_BEFORE_PUBLISH(tile)
#endif

constexpr int kWarp = 32;                       // lanes a warp (checked on the device)
constexpr unsigned int kFullMask = 0xffffffffu; // every lane of a warp: each shuffle's mask
constexpr int kBlock = 256;                     // threads a block of the ladder rows
constexpr int kWarpsPerBlock = kBlock / kWarp;  // their warps
constexpr int kItems = 8;                       // keys a thread of the ladder rows
constexpr int kTile = kBlock * kItems;          // keys a ladder tile: 2048
constexpr int kMaxChunks = 1024;                // ladder: at most this many chunks (blocks) a pass
constexpr int kBins = 256;                      // digits of 8 bits
constexpr int kMaxSmallBins = 16;               // the counter-scan rows: digits of 1 or 4 bits
constexpr int kDigitPasses = 4;                 // 8-bit passes of a 32-bit key
// onesweep's status word, one a digit a tile: the count in bits 0-29, the status in 30-31: 0 not
// yet published (a look-back spins on it), else kAggregate or kInclusive (tile 0's at once).
constexpr unsigned int kAggregate = 1u; // the tile's own count of the digit
constexpr unsigned int kInclusive = 2u; // the count in this tile and every tile before
constexpr unsigned int kCountMask = (1u << 30) - 1u;

constexpr size_t kMinN = size_t(1) << 10; // smallest timed size
constexpr size_t kMaxN = size_t(1) << 28; // largest: every count fits the status word's 30 bits
constexpr uint32_t kPoison = 0xA5A5A5A5u; // what an output holds before a row writes it
constexpr size_t kGuard = 64;             // poisoned keys after each output copy
constexpr int kL2Multiple = 4;            // sizes whose 8n bytes (in + out) are under 4 x L2
                                          // rotate copies
constexpr double kBatchKeys = double(size_t(1) << 27); // keys a timed batch aims to sort
constexpr int kMinCalls = 2, kMaxCalls = 64; // calls a batch (2^26 and up: 2; 2^21 and down: 64)
constexpr int kTimingBatches = 7;            // odd, so the median is one batch
constexpr double kFloorBytes = 36.0;         // an 8-bit LSD sort with one histogram read: 4 + 4 x 8
constexpr double kFloorBytesPairs = 68.0;    // + the values, read and written once a pass: + 4 x 8
// best's shapes by n, measured on the H200 (research/experiments/day39_sort_tuning-rank-variants-*,
// 2026-12-02): ONE block, the smallest that holds n (256 x 4 keys up to 1024, 256 x 8 up to 2048,
// 512 x 8 up to kOneBlockMax: a pass is a chain of steps per key a thread, so fewer is sooner);
// then onesweep on the ladder's 256 x 8 tiles up to kSmallSweepMax (more tiles, so more SMs busy);
// then onesweep on kBestThreads x kBestKeys tiles (fewer, longer scatter runs): CUB 3.0.1's sm_90
// tile, 384 x 20, which with the C++ ballots was 2-3 % slower than 256 x 16 at 2^24 and 2^28, and
// with matchDigit's PTX ballots is 11 % faster (0.80x of CUB against 0.72x at 2^28:
// research/experiments/day39_sort_tuning-upper-bounds-2026-12-02-h200.txt, `ptx`). 256 x 8 is
// faster up to 2^18 and 384 x 20 from 2^19 (day39_sort_tuning-small-sweep-2026-12-02-h200.txt).
// Pairs keep 256 x 16 (kBestPairs*): a value a key more in registers, and 384 x 20 ran 6 % slower
// at 2^27 and 2^28 (the same record).
constexpr size_t kOneBlockMax = 4096;
constexpr size_t kSmallSweepMax = size_t(1) << 18;
constexpr int kBestThreads = 384;
#ifndef SORT_KEYS
#define SORT_KEYS 20
#endif
constexpr int kBestKeys = SORT_KEYS;
#ifndef SORT_PAIR_THREADS
#define SORT_PAIR_THREADS 384
#endif
#ifndef SORT_PAIR_KEYS
#define SORT_PAIR_KEYS 20
#endif
#ifndef SORT_ONEBLOCK_4096
#define SORT_ONEBLOCK_4096 512
#endif
#ifndef SORT_SMALL_BLOCKS
#define SORT_SMALL_BLOCKS 4
#endif
constexpr int kBestPairsThreads = SORT_PAIR_THREADS;
constexpr int kBestPairsKeys = SORT_PAIR_KEYS;
constexpr int kOneBlock4096Threads = SORT_ONEBLOCK_4096;
constexpr int kSmallBlocks = SORT_SMALL_BLOCKS;

__host__ __device__ constexpr bool isPowerOfTwo(size_t x) {
  return x != 0 && (x & (x - 1)) == 0;
}
// Why every count fits: a digit's count is at most n <= 2^28 < 2^30 (the status word's field),
// and every output place is below 2^28, so no 32-bit unsigned offset or sum overflows.
static_assert(kMaxN <= kCountMask, "a digit's count fits the status word");
static_assert(kBlock % kWarp == 0 && kBlock == kBins, "whole warps; one thread a digit");
static_assert(kMaxChunks <= 1024 && kMaxChunks % kWarp == 0, "one block scans a digit's chunks");
static_assert(kMaxSmallBins < kBlock, "the counter rows: a thread a digit, one more for the end");

// ---------------------------------------------------------------------------------------------
// The kernels, in ladder order.
// ---------------------------------------------------------------------------------------------

// copy (the ceiling): out[i] = in[i] for i < n, 4-byte words. Any grid of at least 3 threads in
// all: the uint4 body is grid-stride, the scalar head and tail (up to 3 words each) go to threads
// 0-2. in and out share their misalignment (both from cudaMalloc here), so one head aligns both.
// Needs: <cstdint>
// ptx: v4-loads
__global__ void copyKernel(const uint32_t *__restrict__ in, uint32_t *__restrict__ out, size_t n) {
  size_t tid = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  size_t stride = size_t(gridDim.x) * blockDim.x;
  size_t past = (reinterpret_cast<uintptr_t>(in) / sizeof(uint32_t)) % 4;
  size_t head = past == 0 ? 0 : (4 - past < n ? 4 - past : n);
  size_t nv = (n - head) / 4;
  size_t tail = head + nv * 4;
  if (tid < head) {
    out[tid] = in[tid];
  }
  const uint4 *vin = reinterpret_cast<const uint4 *>(in + head);
  uint4 *vout = reinterpret_cast<uint4 *>(out + head);
  for (size_t v = tid; v < nv; v += stride) {
    vout[v] = vin[v];
  }
  if (tid < n - tail) {
    out[tail + tid] = in[tail + tid];
  }
}

// snippet: digits
// A key's bits in sort order. Unsigned keys: as they are. Float keys (their bits): negative -> all
// bits flipped, otherwise the sign bit flipped, so that unsigned order is float order; -0.0 is
// first made +0.0, so the two zeros are equal and keep their input order (as CUB 3.0.1 does,
// cub/block/radix_rank_sort_operations.cuh, ProcessFloatMinusZero). NaNs sort by their bits:
// -NaN before -inf, +NaN after +inf. The key itself is moved unchanged; only digits use this.
// Needs: <cstdint>
__host__ __device__ inline uint32_t orderedBits(uint32_t key, bool isFloat) {
  if (!isFloat) {
    return key;
  }
  key = key == 0x80000000u ? 0u : key;
  return (key & 0x80000000u) != 0 ? ~key : key ^ 0x80000000u;
}
// The digit of `bits` bits at `shift` of a key.
// Needs: orderedBits, <cstdint>
__host__ __device__ inline unsigned int digitOf(uint32_t key, int shift, int bits, bool isFloat) {
  return (orderedBits(key, isFloat) >> shift) & ((1u << bits) - 1u);
}
// end snippet

// Inclusive scan of one count a lane across a warp (Kogge-Stone: step k adds the lane 2^k below).
// Call with all 32 lanes (the mask is the whole warp).
// Needs: kWarp, kFullMask
__device__ unsigned int warpInclusiveScan(unsigned int v) {
  unsigned int lane = threadIdx.x % kWarp;
  for (int offset = 1; offset < kWarp; offset *= 2) {
    unsigned int below = __shfl_up_sync(kFullMask, v, offset);
    if (lane >= unsigned(offset)) {
      v += below;
    }
  }
  return v;
}

// The scan lesson's blockScanShuffle (code/day39-scan/scan.cu), made exclusive and on counts:
// each warp scans its 32 values, lane 31 writes the warp's total to one shared slot, warp 0 scans
// those slots, each warp adds the totals of the warps before it. Every thread of the block calls
// it (barriers inside); blockDim.x a multiple of 32, at most 1024; warpTotals holds blockDim.x /
// 32 counts. Returns the sum of the values of the threads before this one; `total` gets the
// block's sum.
// Needs: kWarp, kFullMask, warpInclusiveScan
__device__ unsigned int blockExclusiveScan(unsigned int v, unsigned int *warpTotals,
                                           unsigned int &total) {
  unsigned int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp, warps = blockDim.x / kWarp;
  unsigned int inclusive = warpInclusiveScan(v);
  if (lane == kWarp - 1) {
    warpTotals[warp] = inclusive;
  }
  __syncthreads();
  if (warp == 0) { // the whole of warp 0 takes this branch: the full mask inside is right
    unsigned int t = warpInclusiveScan(lane < warps ? warpTotals[lane] : 0u);
    if (lane < warps) {
      warpTotals[lane] = t;
    }
  }
  __syncthreads();
  unsigned int before = (warp > 0 ? warpTotals[warp - 1] : 0u) + inclusive - v;
  total = warpTotals[warps - 1];
  __syncthreads(); // every thread has read warpTotals before a next call writes it
  return before;
}

// The ladder's chunks: block b of a pass owns keys [b * chunk, (b + 1) * chunk), whole tiles (the
// last chunk ends at n). Its counts of each digit go to counts[digit * chunks + b]: digit-major,
// so ONE exclusive scan of the whole array gives every (digit, chunk) its first output place.
// Needs: nothing
__host__ __device__ inline size_t chunkEnd(size_t b, size_t chunk, size_t n) {
  return (b + 1) * chunk < n ? (b + 1) * chunk : n;
}

// Pass, kernel 1 (CUB calls it the upsweep; not the scan tree's up-sweep): block b counts the
// digits (`bits` bits at `shift`: 1, 4 or 8) of its chunk into counts[digit * gridDim.x + b].
// Assumes: one block a chunk, blockDim.x <= kBlock (the loops stride by it); shared-memory
// atomics, then one plain store a digit.
// Launch: countDigits<<<1, kBlock>>>(keys, n, n, 0, 8, counts)
// Needs: kBins, chunkEnd, digitOf, orderedBits, <cstdint>
__global__ void __launch_bounds__(kBlock)
    countDigits(const uint32_t *__restrict__ keys, size_t n, size_t chunk, int shift, int bits,
                unsigned int *counts) {
  __shared__ unsigned int hist[kBins];
  unsigned int bins = 1u << bits;
  for (unsigned int d = threadIdx.x; d < bins; d += blockDim.x) {
    hist[d] = 0;
  }
  __syncthreads();
  size_t end = chunkEnd(blockIdx.x, chunk, n);
  for (size_t i = blockIdx.x * chunk + threadIdx.x; i < end; i += blockDim.x) {
    atomicAdd(&hist[digitOf(keys[i], shift, bits, false)], 1u);
  }
  __syncthreads();
  for (unsigned int d = threadIdx.x; d < bins; d += blockDim.x) {
    counts[size_t(d) * gridDim.x + blockIdx.x] = hist[d];
  }
}

// Pass, kernel 2: ONE block turns counts[0, count) into their exclusive scan, in place: thread t
// takes the t-th of blockDim.x consecutive runs, adds it up, the block scans the run totals, and
// each thread writes its run's running sums. Assumes: <<<1, kMaxChunks>>>; count < 2^32. At 8-bit
// digits that is up to 256 x 1024 counts, 256 a thread in series: the 8-bit, warp row's bottleneck
// at mid n (2.1 ms at 2^21 on the H200, against 0.18 ms for up-front counts, which scans by digit).
// Needs: kMaxChunks, blockExclusiveScan, warpInclusiveScan, kWarp, kFullMask
__global__ void __launch_bounds__(kMaxChunks) scanCounts(unsigned int *counts, size_t count) {
  __shared__ unsigned int warpTotals[kMaxChunks / kWarp];
  size_t run = (count + blockDim.x - 1) / blockDim.x;
  size_t first = threadIdx.x * run, last = first + run < count ? first + run : count;
  unsigned int sum = 0, total = 0;
  for (size_t i = first; i < last; ++i) {
    sum += counts[i];
  }
  unsigned int before = blockExclusiveScan(sum, warpTotals, total);
  for (size_t i = first; i < last; ++i) {
    unsigned int c = counts[i];
    counts[i] = before;
    before += c;
  }
}

// Pass, kernel 3 (the downsweep) of one bit, 4-bit digits and local sort: block b walks its chunk
// one tile of kTile keys at a time, in order, and sends each key to its place. Thread t owns the
// kItems consecutive keys from tile + t * kItems. Ranking by a scan of counters: each thread
// counts its keys of each digit into cnt[digit][t]; ONE exclusive scan of cnt in digit-major order
// (the block's counts laid end to end, digit 0's first) gives cnt[d][t] = the keys of the tile
// with a smaller digit, plus those of digit d held by threads before t: where thread t's first key
// of digit d goes in the tile sorted by digit. Stable, since ties keep thread and item order.
// offsets: the scanned counts (offsets[d * gridDim.x + b]: where chunk b's keys of digit d start).
// localSort: first place the keys in shared memory in that order, then write them from there in
// tile order, so that a warp's 32 stores go to at most a few runs of consecutive addresses
// (coalesced), instead of each store to its own place. Assumes: blockDim.x == kBlock, one block a
// chunk (chunk a multiple of kTile); bits <= 4. keysIn != keysOut.
// Launch: scatterCounters<<<1, kBlock>>>(keys, sorted, n, n, 0, 4, offsets, false)
// Needs: kBlock, kItems, kTile, kMaxSmallBins, kWarpsPerBlock, chunkEnd, digitOf, orderedBits,
//   blockExclusiveScan, warpInclusiveScan, kWarp, kFullMask, <cstdint>
__global__ void __launch_bounds__(kBlock)
    scatterCounters(const uint32_t *__restrict__ keysIn, uint32_t *__restrict__ keysOut, size_t n,
                    size_t chunk, int shift, int bits, const unsigned int *offsets,
                    bool localSort) {
  __shared__ unsigned int cnt[kMaxSmallBins * kBlock]; // cnt[d * kBlock + t]
  __shared__ unsigned int tileStart[kMaxSmallBins + 1], running[kMaxSmallBins];
  __shared__ unsigned int warpTotals[kWarpsPerBlock];
  __shared__ uint32_t stage[kTile];
  const unsigned int t = threadIdx.x, bins = 1u << bits;
  if (t < bins) {
    running[t] = offsets[size_t(t) * gridDim.x + blockIdx.x];
  }
  size_t end = chunkEnd(blockIdx.x, chunk, n);
  for (size_t tile = blockIdx.x * chunk; tile < end; tile += kTile) {
    unsigned int valid = unsigned(end - tile < size_t(kTile) ? end - tile : kTile);
    uint32_t k[kItems];
    for (unsigned int d = 0; d < bins; ++d) {
      cnt[d * kBlock + t] = 0;
    }
#pragma unroll
    for (int j = 0; j < kItems; ++j) {
      unsigned int i = t * kItems + j;
      k[j] = i < valid ? keysIn[tile + i] : 0u;
      if (i < valid) {
        ++cnt[digitOf(k[j], shift, bits, false) * kBlock + t];
      }
    }
    __syncthreads();
    // The exclusive scan of cnt[0, bins * kBlock): thread t scans the `bins` consecutive entries
    // from t * bins (the block's counts end to end), seeded by the block scan of the run sums.
    unsigned int sum = 0, total = 0;
    for (unsigned int e = t * bins; e < (t + 1) * bins; ++e) {
      sum += cnt[e];
    }
    unsigned int before = blockExclusiveScan(sum, warpTotals, total);
    for (unsigned int e = t * bins; e < (t + 1) * bins; ++e) {
      unsigned int c = cnt[e];
      cnt[e] = before;
      before += c;
    }
    __syncthreads();
    if (t <= bins) {
      tileStart[t] = t < bins ? cnt[t * kBlock] : valid; // the tile's first place of digit t
    }
    __syncthreads();
#pragma unroll
    for (int j = 0; j < kItems; ++j) {
      if (t * kItems + j < valid) {
        unsigned int d = digitOf(k[j], shift, bits, false);
        unsigned int pos = cnt[d * kBlock + t]++; // only thread t touches column t
        if (localSort) {
          stage[pos] = k[j];
        } else {
          keysOut[running[d] + pos - tileStart[d]] = k[j];
        }
      }
    }
    __syncthreads();
    if (localSort) {
      for (unsigned int i = t; i < valid; i += kBlock) {
        uint32_t key = stage[i];
        unsigned int d = digitOf(key, shift, bits, false);
        keysOut[running[d] + i - tileStart[d]] = key;
      }
      __syncthreads();
    }
    if (t < bins) {
      running[t] += tileStart[t + 1] - tileStart[t]; // the tile's keys of digit t
    }
    __syncthreads();
  }
}

// snippet: rank
// 8-bit digits, ranked inside each warp, in two steps: counts first, ranks after, the order of
// CUB 3.0.1's BlockRadixRankMatchEarlyCounts (cub/block/block_radix_rank.cuh), so that onesweep
// can publish a tile's counts before it ranks. The tile's keys are warp-striped: warp w holds
// kKeys x 32 consecutive keys, lane l's key j is key w * kKeys * 32 + j * 32 + l of the tile, so
// every load is one contiguous 128-byte piece a warp and key order is (warp, j, lane). Keys of the
// tile at or past `valid` are not keys. Both are called by every thread of the block (barriers
// inside); kThreads a multiple of 32, >= 256. warpHist: kThreads / 32 x 256 counters.
//
// countTile: each warp counts its keys of each digit (one shared-memory atomic a key, on the
// warp's own 256 counters); then one thread a digit turns the warps' counts into where each warp's
// keys of the digit start among the tile's keys of that digit (warp order), and digitCount[d] =
// the tile's count of digit d.
// Needs: kWarp, kFullMask, kBins, digitOf, orderedBits, <cstdint>
template <int kThreads, int kKeys>
__device__ void countTile(const uint32_t (&k)[kKeys], unsigned int valid, int shift, bool isFloat,
                          unsigned int *warpHist, unsigned int *digitCount) {
  static_assert(kThreads % kWarp == 0 && kThreads >= kBins, "whole warps, a thread a digit");
  const unsigned int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  unsigned int *hist = warpHist + warp * kBins;
  for (int d = lane; d < kBins; d += kWarp) {
    hist[d] = 0;
  }
  __syncwarp(kFullMask);
#pragma unroll
  for (int j = 0; j < kKeys; ++j) {
    if (warp * kKeys * kWarp + j * kWarp + lane < valid) {
      atomicAdd(&hist[digitOf(k[j], shift, 8, isFloat)], 1u);
    }
  }
  __syncthreads();
  if (threadIdx.x < kBins) { // digit threadIdx.x
    unsigned int count = 0;
    for (int w = 0; w < kThreads / kWarp; ++w) {
      unsigned int c = warpHist[w * kBins + threadIdx.x];
      warpHist[w * kBins + threadIdx.x] = count;
      count += c;
    }
    digitCount[threadIdx.x] = count;
  }
  __syncthreads();
}

// The lanes of the warp whose d equals this lane's d (0..256: a digit, or 256 for "no key"): nine
// ballots, one a bit of d, each keeping the lanes that agree on that bit. It is what
// __match_any_sync(kFullMask, d) returns, and faster: CUB 3.0.1 ranks its 8-bit digits the same way
// (cub/util_ptx.cuh, warp_matcher_t: "match.any.sync.b32 is slower when matching a few bits";
// read in the CUDA 13.0 toolkit, 2026-12-02). In C++ a step is
//     unsigned int set = __ballot_sync(kFullMask, (d >> bit) & 1u);
//     peers &= (d >> bit) & 1u ? set : ~set;
// which nvcc 13.0 compiles to about twice the SASS instructions of the same step written as CUB
// writes it, four PTX instructions (the bit, a predicate, the vote, a `not` where the bit is 0),
// in every spelling tried. On the H200 onesweep's 256 x 16 tiles took 12.40 ms at 2^28 keys with
// __match_any_sync, 9.09 with the C++ ballots, 8.80 with these
// (research/experiments/day39_sort_tuning-rank-variants-*, -ptx-*). Every lane of the warp calls it
// (the vote names all 32), and every lane uses `peers` after it, so the compiler cannot sink a vote
// into a branch (a plain asm, as CUB's). sm_70+. Needs: kFullMask
template <int kBits>
__device__ inline unsigned int matchDigit(unsigned int d) {
  unsigned int peers = kFullMask;
#pragma unroll
  for (int bit = 0; bit < kBits; ++bit) {
    unsigned int set; // the lanes whose bit `bit` of d equals this lane's
    asm("{\n .reg .pred p;\n and.b32 %0, %1, %2;\n setp.ne.u32 p, %0, 0;\n"
        " vote.ballot.sync.b32 %0, p, %3;\n @!p not.b32 %0, %0;\n}"
        : "=r"(set)
        : "r"(d), "r"(1u << bit), "n"(kFullMask));
    peers &= set;
  }
  return peers;
}

// rankCounted, after countTile: digitStart[d] = the tile's first place of digit d (an exclusive
// scan over the 256 digits), and the warps' counters become places in the tile. Then for each j
// in order, the lanes holding the same digit find each other (matchDigit), the highest of them
// adds their number to the warp's counter of that digit, and each lane's place is the counter
// before the add plus the matching lanes below it. pos[j] becomes key j's place in the tile
// ordered stably by digit. The add is a plain read and write: the counters are the warp's own and
// in one step one lane a digit (the leader) touches each (CUB 3.0.1's
// BlockRadixRankMatchEarlyCounts uses an atomicAdd here; the plain add measured 0.8 % faster at
// 2^28, the rank variants' record). Item j's add comes before item j + 1's read: a __syncwarp
// orders them in the PTX memory model's terms. digitStart: 256; warpTotals: kThreads / 32. Needs:
// kWarp, kFullMask, kBins, matchDigit, digitOf, orderedBits, blockExclusiveScan,
//   warpInclusiveScan, <cstdint>
template <int kThreads, int kKeys>
__device__ void rankCounted(const uint32_t (&k)[kKeys], unsigned int (&pos)[kKeys],
                            unsigned int valid, int shift, bool isFloat, unsigned int *warpHist,
                            const unsigned int *digitCount, unsigned int *digitStart,
                            unsigned int *warpTotals) {
  const unsigned int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  const unsigned int lanesBelow = (1u << lane) - 1u;
  unsigned int total = 0;
  unsigned int start = blockExclusiveScan(threadIdx.x < kBins ? digitCount[threadIdx.x] : 0u,
                                          warpTotals, total); // threads >= 256 add 0
  if (threadIdx.x < kBins) {
    digitStart[threadIdx.x] = start;
    for (int w = 0; w < kThreads / kWarp; ++w) {
      warpHist[w * kBins + threadIdx.x] += start;
    }
  }
  __syncthreads();
  unsigned int *hist = warpHist + warp * kBins;
#pragma unroll
  for (int j = 0; j < kKeys; ++j) {
    bool in = warp * kKeys * kWarp + j * kWarp + lane < valid;
    unsigned int d = in ? digitOf(k[j], shift, 8, isFloat) : kBins; // kBins: no key
    unsigned int peers = matchDigit<9>(d);
    unsigned int leader = kWarp - 1 - __clz(peers);
    unsigned int placed = 0;
    if (in && lane == leader) {
      placed = hist[d];
      hist[d] = placed + __popc(peers);
    }
    pos[j] = __shfl_sync(kFullMask, placed, leader) + __popc(peers & lanesBelow);
    __syncwarp(kFullMask); // item j's adds before item j + 1's reads, in the memory model's terms
  }
  __syncthreads(); // every thread has read warpHist and digitStart before they are reused
}
// end snippet

// Loads a tile's keys warp-striped (countTile's layout) from `first`; keys at or past `valid`
// are 0.
// Needs: kWarp, <cstdint>
template <int kKeys>
__device__ void loadStriped(const uint32_t *__restrict__ src, size_t first, unsigned int valid,
                            uint32_t (&k)[kKeys]) {
  const unsigned int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
#pragma unroll
  for (int j = 0; j < kKeys; ++j) {
    unsigned int i = warp * kKeys * kWarp + j * kWarp + lane;
    k[j] = i < valid ? src[first + i] : 0u;
  }
}

// Pass, kernel 3 of the 8-bit rows: as scatterCounters with localSort, but 256 digits and the
// tile ranked by countTile and rankCounted (warp-striped keys). Assumes: blockDim.x == kBlock, one
// block a chunk (chunk a multiple of kTile); offsets[d * gridDim.x + b]: where chunk b's keys of
// digit d start.
// Launch: scatterWarpRanked<<<1, kBlock>>>(keys, sorted, n, n, 0, offsets)
// Needs: kBlock, kItems, kTile, kBins, kWarpsPerBlock, chunkEnd, loadStriped, countTile,
//   rankCounted, matchDigit, digitOf, orderedBits, blockExclusiveScan, warpInclusiveScan, kWarp,
//   kFullMask, <cstdint>
__global__ void __launch_bounds__(kBlock)
    scatterWarpRanked(const uint32_t *__restrict__ keysIn, uint32_t *__restrict__ keysOut, size_t n,
                      size_t chunk, int shift, const unsigned int *offsets) {
  __shared__ unsigned int warpHist[kWarpsPerBlock * kBins];
  __shared__ unsigned int digitCount[kBins], digitStart[kBins], running[kBins];
  __shared__ unsigned int warpTotals[kWarpsPerBlock];
  __shared__ uint32_t stage[kTile];
  running[threadIdx.x] = offsets[size_t(threadIdx.x) * gridDim.x + blockIdx.x]; // kBlock == kBins
  size_t end = chunkEnd(blockIdx.x, chunk, n);
  for (size_t tile = blockIdx.x * chunk; tile < end; tile += kTile) {
    unsigned int valid = unsigned(end - tile < size_t(kTile) ? end - tile : kTile);
    uint32_t k[kItems];
    unsigned int pos[kItems];
    loadStriped(keysIn, tile, valid, k);
    countTile<kBlock, kItems>(k, valid, shift, false, warpHist, digitCount);
    rankCounted<kBlock, kItems>(k, pos, valid, shift, false, warpHist, digitCount, digitStart,
                                warpTotals);
#pragma unroll
    for (int j = 0; j < kItems; ++j) {
      if ((threadIdx.x / kWarp) * kItems * kWarp + j * kWarp + threadIdx.x % kWarp < valid) {
        stage[pos[j]] = k[j];
      }
    }
    __syncthreads();
    for (unsigned int i = threadIdx.x; i < valid; i += kBlock) {
      uint32_t key = stage[i];
      unsigned int d = digitOf(key, shift, 8, false);
      keysOut[running[d] + i - digitStart[d]] = key;
    }
    __syncthreads();
    running[threadIdx.x] += digitCount[threadIdx.x];
    __syncthreads();
  }
}

// up-front counts: the histograms of all four 8-bit digits in ONE read of the keys.
// counts[p * 256 + d]: keys whose digit p (bits 8p .. 8p + 7 of orderedBits) is d; 0 at launch.
// Any grid (grid-stride), blockDim.x <= kBlock; shared-memory atomics, one global atomic a bin a
// block.
// Launch: countAllDigits<<<64, kBlock>>>(keys, n, false, counts)
// Needs: kBins, kDigitPasses, orderedBits, <cstdint>
__global__ void __launch_bounds__(kBlock)
    countAllDigits(const uint32_t *__restrict__ keys, size_t n, bool isFloat,
                   unsigned int *counts) {
  __shared__ unsigned int hist[kDigitPasses * kBins];
  for (int i = threadIdx.x; i < kDigitPasses * kBins; i += blockDim.x) {
    hist[i] = 0;
  }
  __syncthreads();
  size_t stride = size_t(gridDim.x) * blockDim.x;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    uint32_t b = orderedBits(keys[i], isFloat);
#pragma unroll
    for (int p = 0; p < kDigitPasses; ++p) {
      atomicAdd(&hist[p * kBins + ((b >> (8 * p)) & 0xFFu)], 1u);
    }
  }
  __syncthreads();
  for (int i = threadIdx.x; i < kDigitPasses * kBins; i += blockDim.x) {
    if (hist[i] != 0) {
      atomicAdd(&counts[i], hist[i]);
    }
  }
}

// Then each pass's 256 counts become where each digit starts: starts[p * 256 + d], an exclusive
// scan; and the counts go back to 0, ready for the next call (no memset). Launch:
// <<<kDigitPasses, kBins>>>, block p scans counts[p * 256, p * 256 + 256).
// Needs: kBins, blockExclusiveScan, warpInclusiveScan, kWarp, kFullMask
__global__ void __launch_bounds__(kBins)
    scanDigitStarts(unsigned int *counts, unsigned int *starts) {
  __shared__ unsigned int warpTotals[kBins / kWarp];
  size_t i = size_t(blockIdx.x) * kBins + threadIdx.x;
  unsigned int count = counts[i], total = 0;
  counts[i] = 0; // only this thread reads it
  starts[i] = blockExclusiveScan(count, warpTotals, total);
}

// With the digits' starts known, a pass's counts scan digit by digit, in parallel: block d scans
// the chunk counts of digit d, counts[d * chunks, (d + 1) * chunks), exclusively, from starts[d].
// Assumes: <<<256, kMaxChunks>>>, chunks <= kMaxChunks.
// Needs: kMaxChunks, blockExclusiveScan, warpInclusiveScan, kWarp, kFullMask
__global__ void __launch_bounds__(kMaxChunks)
    scanCountsByDigit(unsigned int *counts, unsigned int chunks, const unsigned int *starts) {
  __shared__ unsigned int warpTotals[kMaxChunks / kWarp];
  unsigned int *c = counts + size_t(blockIdx.x) * chunks, total = 0;
  unsigned int v = threadIdx.x < chunks ? c[threadIdx.x] : 0u;
  unsigned int before = blockExclusiveScan(v, warpTotals, total);
  if (threadIdx.x < chunks) {
    c[threadIdx.x] = starts[blockIdx.x] + before;
  }
}

// Publishing and reading a status word: relaxed atomics are enough, because the reader uses
// nothing but the word itself (status and count travel together in 32 bits; nothing else is
// ordered by it) - as the scan lesson's look-back, and CUB's onesweep (relaxed loads and stores).
// Needs: <cuda/atomic>
__device__ inline void publish(unsigned int *word, unsigned int status, unsigned int count) {
  cuda::atomic_ref<unsigned int, cuda::thread_scope_device>(*word).store(
      status << 30 | count, cuda::memory_order_relaxed);
}
// Needs: <cuda/atomic>
__device__ inline unsigned int readWord(unsigned int *word) {
  return cuda::atomic_ref<unsigned int, cuda::thread_scope_device>(*word).load(
      cuda::memory_order_relaxed);
}

// onesweep (Adinets & Merrill 2022, arXiv 2206.01784): ONE kernel a pass. A block draws its tile
// from *tileCounter (not blockIdx.x: a tile waits for the tiles before it, and nothing guarantees
// that the block of tile k - 1 has been scheduled when block k spins; a tile drawn from a counter
// waits only for tiles drawn before it by blocks that run). It loads and counts its kThreads x
// kKeys keys (countTile) and at once publishes, one thread a digit, the tile's count as an
// aggregate, so that its successors can go past it. Then it ranks its keys (rankCounted) and
// places them in shared memory in digit order; only then does each digit's thread look back over
// the tiles before it - adding aggregates until it meets an inclusive count, by now most likely
// published - publish its own inclusive count, and so know where its keys of the digit go: the
// digit's start (digitStarts, from the up-front counts) + the keys of that digit in the tiles
// before. Then the keys go out from shared memory (coalesced runs). kFloat: float keys (digits of
// orderedBits), a template parameter so that no digit of a key pays a runtime select (5 % at 2^28
// on 384 x 20 tiles: the upper-bounds record's `ptx-nofloat`). kPairs: the values
// (valsIn[i] belongs to keysIn[i]) go where their keys go.
// No memset a pass: the four passes take turns with two counters and two sets of words; a pass
// zeroes the other set's words of its own tile and the other counter, which the pass before it
// used and the pass after it uses (kernels of one stream run one after the other).
// Assumes: blockDim.x == kThreads, grid = ceil(n / (kThreads x kKeys)) blocks; *tileCounter == 0
// and status (one word a digit a tile: grid x 256) 0 at launch; keysIn != keysOut, valsIn !=
// valsOut; nextCounter, nextStatus: the next pass's (zeroed here).
// Launch: sortPassOneSweep<256, 8, false, false><<<(n + 2047) / 2048, 256>>>(keys, sorted, nullptr,
//   nullptr, n, 0, counter, status, counter + 1, status2, starts)
// Needs: kWarp, kFullMask, kBins, kAggregate, kInclusive, kCountMask, loadStriped, countTile,
//   rankCounted, matchDigit, digitOf, orderedBits, blockExclusiveScan, warpInclusiveScan, publish,
//   readWord, DELAY_BEFORE_PUBLISH, <cuda/atomic>, <cstdint>
// ptx: atom
template <int kThreads, int kKeys, bool kPairs, bool kFloat>
__global__ void __launch_bounds__(kThreads)
    sortPassOneSweep(const uint32_t *__restrict__ keysIn, uint32_t *__restrict__ keysOut,
                     const uint32_t *__restrict__ valsIn, uint32_t *__restrict__ valsOut, size_t n,
                     int shift, unsigned int *tileCounter, unsigned int *status,
                     unsigned int *nextCounter, unsigned int *nextStatus,
                     const unsigned int *digitStarts) {
  constexpr int kTileKeys = kThreads * kKeys;
  static_assert(4 * (kThreads / kWarp * kBins + 3 * kBins + kThreads / kWarp + kTileKeys + 1) <=
                    48 * 1024,
                "a block's static shared memory is at most 48 KiB");
  __shared__ unsigned int warpHist[kThreads / kWarp * kBins];
  __shared__ unsigned int digitCount[kBins], digitStart[kBins], digitBase[kBins];
  __shared__ unsigned int warpTotals[kThreads / kWarp];
  __shared__ uint32_t stage[kTileKeys];
  __shared__ unsigned int drawn;
  if (threadIdx.x == 0) {
    drawn = atomicAdd(tileCounter, 1u);
  }
  __syncthreads();
  const unsigned int tile = drawn;
  const size_t first = size_t(tile) * kTileKeys;
  const unsigned int valid = unsigned(n - first < size_t(kTileKeys) ? n - first : kTileKeys);
  uint32_t k[kKeys], v[kKeys];
  unsigned int pos[kKeys], dest[kKeys] = {};
  loadStriped(keysIn, first, valid, k);
  if constexpr (kPairs) {
    loadStriped(valsIn, first, valid, v);
  }
  for (int d = threadIdx.x; d < kBins; d += kThreads) { // the next pass's words of this tile
    nextStatus[size_t(tile) * kBins + d] = 0;
  }
  if (tile == 0 && threadIdx.x == 0) {
    *nextCounter = 0; // every block of the pass before this one drew from it, and has finished
  }
  countTile<kThreads, kKeys>(k, valid, shift, kFloat, warpHist, digitCount);
  if (threadIdx.x == 0) {
    DELAY_BEFORE_PUBLISH(tile);
  }
  __syncthreads(); // the whole tile waits while the chosen tile sleeps (the test program's hook)
  for (int d = threadIdx.x; d < kBins; d += kThreads) { // at once: a successor needs only this
    publish(status + size_t(tile) * kBins + d, tile == 0 ? kInclusive : kAggregate, digitCount[d]);
  }
  rankCounted<kThreads, kKeys>(k, pos, valid, shift, kFloat, warpHist, digitCount, digitStart,
                               warpTotals);
  const unsigned int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
#pragma unroll
  for (int j = 0; j < kKeys; ++j) {
    if (warp * kKeys * kWarp + j * kWarp + lane < valid) {
      stage[pos[j]] = k[j];
    }
  }
  for (int d = threadIdx.x; d < kBins; d += kThreads) {
    unsigned int before = 0;
    if (tile > 0) {
      for (unsigned int p = tile - 1;; --p) {
        unsigned int w;
        do {
          w = readWord(status + size_t(p) * kBins + d);
        } while ((w >> 30) == 0); // tile p has drawn its tile, so it will publish
        before += w & kCountMask;
        if ((w >> 30) == kInclusive) {
          break; // tile 0 is always inclusive: the walk ends
        }
      }
      publish(status + size_t(tile) * kBins + d, kInclusive, before + digitCount[d]);
    }
    digitBase[d] = digitStarts[d] + before - digitStart[d]; // + place in tile = output index
  }
  __syncthreads();
#pragma unroll
  for (int m = 0; m < kKeys; ++m) {
    unsigned int i = threadIdx.x + m * kThreads;
    if (i < valid) {
      uint32_t key = stage[i];
      dest[m] = digitBase[digitOf(key, shift, 8, kFloat)] + i;
      keysOut[dest[m]] = key;
    }
  }
  if constexpr (kPairs) {
    __syncthreads(); // every key is out of the stage before the values take it
#pragma unroll
    for (int j = 0; j < kKeys; ++j) {
      if (warp * kKeys * kWarp + j * kWarp + lane < valid) {
        stage[pos[j]] = v[j];
      }
    }
    __syncthreads();
#pragma unroll
    for (int m = 0; m < kKeys; ++m) {
      unsigned int i = threadIdx.x + m * kThreads;
      if (i < valid) {
        valsOut[dest[m]] = stage[i];
      }
    }
  }
}

// ---- counts in flight: the up-front histograms fed by 16-byte loads --------------------------
// countAllDigits keeps ONE 4-byte load in flight a thread: the loop waits a whole memory latency
// for every key, so the bytes in flight (threads x 4) are far below what the memory needs to run
// at full speed (Little's law: bandwidth x latency; day 25). Here a thread issues kCountLoads
// 16-byte loads before it counts any of them: 16 x kCountLoads bytes in flight, and the grid is
// as many blocks as fit on the device at once (countBlocksFor), each striding over the keys.
// counts[p * 256 + d] as countAllDigits (0 at launch). keys 4-byte aligned; head and tail (fewer
// than 4 keys each) go one key a thread.
// Launch: countAllDigitsWide<<<64, kBlock>>>(keys, n, false, counts)
// Needs: kBins, kDigitPasses, kCountLoads, orderedBits, <cstdint>
constexpr int kCountLoads = 4; // 16-byte loads in flight a thread
__global__ void __launch_bounds__(kBlock)
    countAllDigitsWide(const uint32_t *__restrict__ keys, size_t n, bool isFloat,
                       unsigned int *counts) {
  __shared__ unsigned int hist[kDigitPasses * kBins];
  for (int i = threadIdx.x; i < kDigitPasses * kBins; i += blockDim.x) {
    hist[i] = 0;
  }
  __syncthreads();
  auto count = [&](uint32_t key) {
    uint32_t b = orderedBits(key, isFloat);
#pragma unroll
    for (int p = 0; p < kDigitPasses; ++p) {
      atomicAdd(&hist[p * kBins + ((b >> (8 * p)) & 0xFFu)], 1u);
    }
  };
  const size_t tid = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  const size_t past = (reinterpret_cast<uintptr_t>(keys) / sizeof(uint32_t)) % 4;
  const size_t head = past == 0 ? 0 : (4 - past < n ? 4 - past : n);
  const size_t nv = (n - head) / 4, tail = head + nv * 4;
  if (tid < head) {
    count(keys[tid]);
  }
  if (tid < n - tail) {
    count(keys[tail + tid]);
  }
  const uint4 *v = reinterpret_cast<const uint4 *>(keys + head);
  for (size_t first = tid; first < nv; first += kCountLoads * stride) {
    uint4 q[kCountLoads];
#pragma unroll
    for (int u = 0; u < kCountLoads; ++u) { // every load issued before the first count
      size_t i = first + u * stride;
      q[u] = i < nv ? v[i] : make_uint4(0, 0, 0, 0);
    }
#pragma unroll
    for (int u = 0; u < kCountLoads; ++u) {
      if (first + u * stride < nv) {
        count(q[u].x), count(q[u].y), count(q[u].z), count(q[u].w);
      }
    }
  }
  __syncthreads();
  for (int i = threadIdx.x; i < kDigitPasses * kBins; i += blockDim.x) {
    if (hist[i] != 0) {
      atomicAdd(&counts[i], hist[i]);
    }
  }
}

// ---- full tiles: the pass with no per-key tests ------------------------------------------------
// Keys in sort order (the bits orderedBits gives), computed ONCE when a key is loaded and undone
// once when it is stored (CUB's twiddle), instead of at each digit taken. -0.0 and +0.0 keep
// different bits here, so only their digits treat them alike (digitAt's kFloat case).
// Needs: <cstdint>
__host__ __device__ inline uint32_t toOrdered(uint32_t key, bool isFloat) {
  return !isFloat ? key : (key & 0x80000000u) != 0 ? ~key : key ^ 0x80000000u;
}
__host__ __device__ inline uint32_t fromOrdered(uint32_t bits, bool isFloat) {
  return !isFloat ? bits : (bits & 0x80000000u) != 0 ? bits ^ 0x80000000u : ~bits;
}
// Digit `pass` (byte pass) of ordered bits in one instruction (PRMT: byte `pass`, then zeros); a
// float's -0.0 (ordered 0x7FFFFFFF) takes +0.0's digits (0x80000000), so the two stay in input
// order, as CUB keeps them. Needs: <cstdint>
template <bool kFloat>
__device__ inline unsigned int digitAt(uint32_t bits, int pass) {
  if (kFloat && bits == 0x7FFFFFFFu) {
    bits = 0x80000000u;
  }
  return __byte_perm(bits, 0u, 0x4440u | unsigned(pass));
}
// The largest ordered key: the last tile is padded with it, so every tile is full. A pad ranks
// after every real key of the tile (digit 255 in each pass, and later in the tile than any real
// key), so the pads take the tile's last places, past `valid`, and are never stored.
constexpr uint32_t kPadKey = 0xFFFFFFFFu;

// Loads a tile warp-striped (countTile's layout), in ordered bits, padded past `valid`.
// Needs: kWarp, kPadKey, toOrdered, <cstdint>
template <int kKeys, bool kFloat>
__device__ void loadPadded(const uint32_t *__restrict__ src, size_t first, unsigned int valid,
                           uint32_t (&k)[kKeys]) {
  const unsigned int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  const uint32_t *p = src + first + warp * kKeys * kWarp + lane;
  if (valid == unsigned(blockDim.x) * kKeys) {
#pragma unroll
    for (int j = 0; j < kKeys; ++j) {
      k[j] = toOrdered(p[j * kWarp], kFloat);
    }
  } else {
#pragma unroll
    for (int j = 0; j < kKeys; ++j) {
      unsigned int i = warp * kKeys * kWarp + j * kWarp + lane;
      k[j] = i < valid ? toOrdered(p[j * kWarp], kFloat) : kPadKey;
    }
  }
}

// countTile and rankCounted for a full tile: no key is tested against `valid`, the digit is one
// instruction, and the leader of the lanes that share a digit takes their places with ONE shared
// atomicAdd (the next item's leader reads after this item's shuffle, which waits for the add: no
// __syncwarp). rankFullTile stores each key in stage[] at its place as soon as it is known, so a
// key's register is free after its step (fewer registers: more blocks an SM). kKeepPos (pairs):
// the places are kept too, 16 bits each (a tile holds < 65536 keys), two to a register: pos[j / 2]'s
// low half is key j's place if j is even, its high half if odd.
// Every thread of the block calls each (barriers inside); kThreads a multiple of 32, >= 256.
// Needs: kWarp, kFullMask, kBins, digitAt, <cstdint>
template <int kThreads, int kKeys, bool kFloat>
__device__ void countFullTile(const uint32_t (&k)[kKeys], int pass, unsigned int *warpHist,
                              unsigned int *digitCount) {
  static_assert(kThreads % kWarp == 0 && kThreads >= kBins, "whole warps, a thread a digit");
  const unsigned int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  unsigned int *hist = warpHist + warp * kBins;
  for (int d = lane; d < kBins; d += kWarp) {
    hist[d] = 0;
  }
  __syncwarp(kFullMask);
#pragma unroll
  for (int j = 0; j < kKeys; ++j) {
    atomicAdd(&hist[digitAt<kFloat>(k[j], pass)], 1u);
  }
  __syncthreads();
  if (threadIdx.x < kBins) { // digit threadIdx.x: where each warp's keys of it start (warp order)
    unsigned int count = 0;
    for (int w = 0; w < kThreads / kWarp; ++w) {
      unsigned int c = warpHist[w * kBins + threadIdx.x];
      warpHist[w * kBins + threadIdx.x] = count;
      count += c;
    }
    digitCount[threadIdx.x] = count;
  }
  __syncthreads();
}
// Needs: kWarp, kFullMask, kBins, digitAt, matchDigit, blockExclusiveScan, warpInclusiveScan,
//   <cstdint>
template <int kThreads, int kKeys, bool kFloat, bool kKeepPos>
__device__ void rankFullTile(const uint32_t (&k)[kKeys], uint32_t *stage,
                             unsigned int (&pos)[kKeepPos ? (kKeys + 1) / 2 : 1], int pass,
                             unsigned int *warpHist, const unsigned int *digitCount,
                             unsigned int *digitStart, unsigned int *warpTotals) {
  const unsigned int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  const unsigned int lanesBelow = (1u << lane) - 1u;
  unsigned int total = 0;
  unsigned int start = blockExclusiveScan(threadIdx.x < kBins ? digitCount[threadIdx.x] : 0u,
                                          warpTotals, total);
  if (threadIdx.x < kBins) {
    digitStart[threadIdx.x] = start;
    for (int w = 0; w < kThreads / kWarp; ++w) {
      warpHist[w * kBins + threadIdx.x] += start;
    }
  }
  __syncthreads();
  unsigned int *hist = warpHist + warp * kBins;
#pragma unroll
  for (int j = 0; j < kKeys; ++j) {
    unsigned int d = digitAt<kFloat>(k[j], pass);
    unsigned int peers = matchDigit<8>(d);
    unsigned int leader = kWarp - 1 - __clz(peers);
    unsigned int placed = 0;
    if (lane == leader) {
      placed = atomicAdd(&hist[d], unsigned(__popc(peers)));
    }
    unsigned int p = __shfl_sync(kFullMask, placed, leader) + __popc(peers & lanesBelow);
    stage[p] = k[j];
    if constexpr (kKeepPos) {
      pos[j / 2] = j % 2 == 0 ? p : pos[j / 2] | p << 16;
    }
  }
  __syncthreads(); // every thread has read warpHist and digitStart before they are reused
}

// onesweep on full tiles: sortPassOneSweep's protocol (tiles from a counter, aggregates at once,
// look-back, status words taking turns), with the full-tile helpers above. kMinBlocks: blocks an
// SM that the compiler must leave registers for (__launch_bounds__); 3 x 384 threads leave 56
// registers a thread, which the 16-bit ranks make enough. kPairs: the values are loaded only after
// the keys are out, so keys and values are never in registers together.
// Assumes: as sortPassOneSweep; n < 2^32.
// Launch: sortPassFullTiles<384, 20, false, false, 3><<<(n + 7679) / 7680, 384>>>(keys, sorted,
//   nullptr, nullptr, n, 0, counter, status, counter + 1, status2, starts)
// Needs: kWarp, kFullMask, kBins, kAggregate, kInclusive, kCountMask, kPadKey, loadPadded,
//   loadStriped, toOrdered, fromOrdered, digitAt, countFullTile, rankFullTile, matchDigit,
//   blockExclusiveScan, warpInclusiveScan, publish, readWord, DELAY_BEFORE_PUBLISH,
//   <cuda/atomic>, <cstdint>
// ptx: atom
template <int kThreads, int kKeys, bool kPairs, bool kFloat, int kMinBlocks>
__global__ void __launch_bounds__(kThreads, kMinBlocks)
    sortPassFullTiles(const uint32_t *__restrict__ keysIn, uint32_t *__restrict__ keysOut,
                      const uint32_t *__restrict__ valsIn, uint32_t *__restrict__ valsOut,
                      size_t n, int pass, unsigned int *tileCounter, unsigned int *status,
                      unsigned int *nextCounter, unsigned int *nextStatus,
                      const unsigned int *digitStarts) {
  constexpr int kTileKeys = kThreads * kKeys;
  static_assert(kTileKeys < 65536, "a place fits 16 bits");
  static_assert(4 * (kThreads / kWarp * kBins + 3 * kBins + kThreads / kWarp + kTileKeys + 1) <=
                    48 * 1024,
                "a block's static shared memory is at most 48 KiB");
  __shared__ unsigned int warpHist[kThreads / kWarp * kBins];
  __shared__ unsigned int digitCount[kBins], digitStart[kBins], digitBase[kBins];
  __shared__ unsigned int warpTotals[kThreads / kWarp];
  __shared__ uint32_t stage[kTileKeys];
  __shared__ unsigned int drawn;
  if (threadIdx.x == 0) {
    drawn = atomicAdd(tileCounter, 1u);
  }
  __syncthreads();
  const unsigned int tile = drawn;
  const size_t first = size_t(tile) * kTileKeys;
  const unsigned int valid = unsigned(n - first < size_t(kTileKeys) ? n - first : kTileKeys);
  uint32_t k[kKeys];
  unsigned int pos[kPairs ? (kKeys + 1) / 2 : 1];
  loadPadded<kKeys, kFloat>(keysIn, first, valid, k);
  for (int d = threadIdx.x; d < kBins; d += kThreads) { // this tile's words of the next pass
    nextStatus[size_t(tile) * kBins + d] = 0;
  }
  if (tile == 0 && threadIdx.x == 0) {
    *nextCounter = 0;
  }
  countFullTile<kThreads, kKeys, kFloat>(k, pass, warpHist, digitCount);
  if (threadIdx.x == 0) {
    DELAY_BEFORE_PUBLISH(tile);
  }
  __syncthreads();
  for (int d = threadIdx.x; d < kBins; d += kThreads) {
    publish(status + size_t(tile) * kBins + d, tile == 0 ? kInclusive : kAggregate, digitCount[d]);
  }
  rankFullTile<kThreads, kKeys, kFloat, kPairs>(k, stage, pos, pass, warpHist, digitCount,
                                                digitStart, warpTotals);
  for (int d = threadIdx.x; d < kBins; d += kThreads) {
    unsigned int before = 0;
    if (tile > 0) {
      for (unsigned int p = tile - 1;; --p) {
        unsigned int w;
        do {
          w = readWord(status + size_t(p) * kBins + d);
        } while ((w >> 30) == 0);
        before += w & kCountMask;
        if ((w >> 30) == kInclusive) {
          break;
        }
      }
      publish(status + size_t(tile) * kBins + d, kInclusive, before + digitCount[d]);
    }
    digitBase[d] = digitStarts[d] + before - digitStart[d];
  }
  __syncthreads();
  unsigned int dest[kPairs ? kKeys : 1]; // pairs: where each staged key went
#pragma unroll
  for (int m = 0; m < kKeys; ++m) {
    unsigned int i = threadIdx.x + m * kThreads;
    if (i < valid) {
      uint32_t bits = stage[i];
      unsigned int to = digitBase[digitAt<kFloat>(bits, pass)] + i;
      keysOut[to] = fromOrdered(bits, kFloat);
      if constexpr (kPairs) {
        dest[m] = to;
      }
    }
  }
  if constexpr (kPairs) {
    __syncthreads(); // every key is out of the stage before the values take it
    loadStriped(valsIn, first, valid, k); // the values, where the keys were
#pragma unroll
    for (int j = 0; j < kKeys; ++j) {
      stage[j % 2 == 0 ? pos[j / 2] & 0xFFFFu : pos[j / 2] >> 16] = k[j];
    }
    __syncthreads();
#pragma unroll
    for (int m = 0; m < kKeys; ++m) {
      unsigned int i = threadIdx.x + m * kThreads;
      if (i < valid) {
        valsOut[dest[m]] = stage[i];
      }
    }
  }
}

// snippet: one-block
// The shared memory sortOneBlock<kThreads, kKeys, ...> takes, in bytes: above 48 KiB a block gets
// it only after cudaFuncSetAttribute(..., cudaFuncAttributeMaxDynamicSharedMemorySize, bytes), and
// only up to the device's sharedMemPerBlockOptin (a T4: 64 KiB; an H200: 227 KiB). best's largest
// one block, 512 x 8, takes 34 KiB: no opt-in.
// Needs: kWarp, kBins
__host__ __device__ constexpr size_t oneBlockBytes(int threads, int keys) {
  return 4 *
         (size_t(threads) / kWarp * kBins + 2 * kBins + threads / kWarp + size_t(threads) * keys);
}

// best, small n: ONE block sorts all of in[0, n) in shared memory: the keys stay in registers
// (warp-striped, in ordered bits, padded to the block's tile), and each of the four passes ranks
// them (countFullTile, rankFullTile), places them in shared memory in digit order and reads them
// back striped; the pads stay at the end. No counts in global memory, no scan kernel, no status
// words: one launch, one read, one write. kPairs: values follow their keys; kFloat: float keys.
// Assumes: <<<1, kThreads, oneBlockBytes(kThreads, kKeys)>>>, n <= kThreads x kKeys.
// Launch: sortOneBlock<512, 8, false, false><<<1, 512, oneBlockBytes(512, 8)>>>(keys, sorted,
//   nullptr, nullptr, n); with n = 4096
// Needs: kWarp, kFullMask, kBins, kDigitPasses, kPadKey, oneBlockBytes, loadPadded, loadStriped,
//   toOrdered, fromOrdered, digitAt, countFullTile, rankFullTile, matchDigit, blockExclusiveScan,
//   warpInclusiveScan, <cstdint>
template <int kThreads, int kKeys, bool kPairs, bool kFloat>
__global__ void __launch_bounds__(kThreads)
    sortOneBlock(const uint32_t *__restrict__ keysIn, uint32_t *__restrict__ keysOut,
                 const uint32_t *__restrict__ valsIn, uint32_t *__restrict__ valsOut, size_t n) {
  extern __shared__ unsigned int oneBlockShared[]; // oneBlockBytes(kThreads, kKeys) bytes
  unsigned int *warpHist = oneBlockShared;         // kThreads / 32 x 256
  unsigned int *digitCount = warpHist + kThreads / kWarp * kBins, *digitStart = digitCount + kBins;
  unsigned int *warpTotals = digitStart + kBins;   // kThreads / 32
  uint32_t *stage = warpTotals + kThreads / kWarp; // kThreads x kKeys
  const unsigned int valid = unsigned(n), lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  uint32_t k[kKeys], v[kPairs ? kKeys : 1];
  unsigned int pos[kPairs ? (kKeys + 1) / 2 : 1];
  loadPadded<kKeys, kFloat>(keysIn, 0, valid, k);
  if constexpr (kPairs) {
    loadStriped(valsIn, 0, valid, v);
  }
#pragma unroll 1
  for (int p = 0; p < kDigitPasses; ++p) {
    countFullTile<kThreads, kKeys, kFloat>(k, p, warpHist, digitCount);
    rankFullTile<kThreads, kKeys, kFloat, kPairs>(k, stage, pos, p, warpHist, digitCount,
                                                  digitStart, warpTotals);
    __syncthreads();
#pragma unroll
    for (int j = 0; j < kKeys; ++j) {
      k[j] = stage[warp * kKeys * kWarp + j * kWarp + lane];
    }
    if constexpr (kPairs) {
      __syncthreads();
#pragma unroll
      for (int j = 0; j < kKeys; ++j) {
        stage[j % 2 == 0 ? pos[j / 2] & 0xFFFFu : pos[j / 2] >> 16] = v[j];
      }
      __syncthreads();
#pragma unroll
      for (int j = 0; j < kKeys; ++j) {
        v[j] = stage[warp * kKeys * kWarp + j * kWarp + lane];
      }
    }
    __syncthreads();
  }
#pragma unroll
  for (int j = 0; j < kKeys; ++j) {
    unsigned int i = warp * kKeys * kWarp + j * kWarp + lane;
    if (i < valid) {
      keysOut[i] = fromOrdered(k[j], kFloat);
      if constexpr (kPairs) {
        valsOut[i] = v[j];
      }
    }
  }
}
// end snippet

// ---------------------------------------------------------------------------------------------
// The inputs and the exact checks (device side).
// ---------------------------------------------------------------------------------------------

// The inputs, each key a function of (seed, index, n): uniform random 32-bit keys (the lesson's);
// the test program's low entropy (keys & 0xF), all equal (the skew worst case: one digit holds
// every key), sorted and reverse sorted; and float keys: random bit patterns (negatives, NaNs,
// infinities among them) with every 64th key one of -0.0, +0.0, -inf, +inf, -NaN, +NaN in turn.
enum class Input { Random, LowEntropy, Equal, Sorted, Reverse, Floats };

// splitmix64's finalizer over seed and index (Steele, Lea & Flood 2014): 32 well-mixed bits.
// Needs: <cstdint>
__host__ __device__ inline uint32_t hashIndex(uint64_t seed, uint64_t i) {
  uint64_t z = seed * 0x9E3779B97F4A7C15ull + i + 1;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return uint32_t((z ^ (z >> 31)) >> 32);
}
// Needs: Input, hashIndex, <cstdint>
__host__ __device__ inline uint32_t inputKey(Input kind, uint64_t seed, size_t i, size_t n) {
  const uint32_t specials[6] = {0x80000000u, 0x00000000u, 0xFF800000u,
                                0x7F800000u, 0xFFC00000u, 0x7FC00000u};
  uint32_t spread = uint32_t((uint64_t(i) << 32) / n); // 0 .. 2^32 - 1, increasing with i
  switch (kind) {
  case Input::LowEntropy:
    return hashIndex(seed, i) & 0xFu;
  case Input::Equal:
    return hashIndex(seed, 0);
  case Input::Sorted:
    return spread;
  case Input::Reverse:
    return ~spread;
  case Input::Floats:
    return i % 64 == 0 ? specials[(i / 64) % 6] : hashIndex(seed, i);
  default:
    return hashIndex(seed, i);
  }
}

// Fills a ring of copies: p[j] = key j % slot of the input if j % slot < n, else kPoison (the
// guard after each copy). values: the key's index instead (SortPairs' values). Any grid.
// Needs: Input, inputKey, hashIndex, kPoison, <cstdint>
__global__ void fillRing(uint32_t *p, size_t count, size_t slot, size_t n, Input kind,
                         uint64_t seed, bool values) {
  size_t stride = size_t(gridDim.x) * blockDim.x;
  for (size_t j = size_t(blockIdx.x) * blockDim.x + threadIdx.x; j < count; j += stride) {
    size_t i = j % slot;
    p[j] = i >= n ? kPoison : values ? uint32_t(i) : inputKey(kind, seed, i, n);
  }
}

// The check's counters (one array of unsigned long long, zeroed before each check).
enum Counter {
  kDiffer,   // keys of out[0, n) that differ from the reference
  kFirst,    // the smallest such index (atomicMin; ~0 if none)
  kStrays,   // words of [n, slot) that are not kPoison: written past n
  kDisorder, // i with orderedBits(out[i]) > orderedBits(out[i + 1])
  kValueBad, // pairs: value[i] >= n, or key_in[value[i]] != key_out[i]
  kRepeated, // pairs: an index that appears twice
  kUnstable, // pairs: equal keys whose values are not increasing
  kCounters
};

// Keys: out against ref (bit for bit), out sorted (ordered: false for the copy), and the guard.
// Any grid (grid-stride).
// Needs: Counter, orderedBits, kPoison, <cstdint>
__global__ void checkKeys(const uint32_t *out, const uint32_t *ref, size_t n, size_t slot,
                          bool isFloat, bool ordered, unsigned long long *counts) {
  size_t stride = size_t(gridDim.x) * blockDim.x;
  unsigned long long differ = 0, strays = 0, disorder = 0;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < slot; i += stride) {
    uint32_t key = out[i];
    if (i >= n) {
      strays += key != kPoison;
      continue;
    }
    if (key != ref[i]) {
      ++differ;
      atomicMin(&counts[kFirst], (unsigned long long)i);
    }
    disorder +=
        ordered && i + 1 < n && orderedBits(key, isFloat) > orderedBits(out[i + 1], isFloat);
  }
  atomicAdd(&counts[kDiffer], differ);
  atomicAdd(&counts[kStrays], strays);
  atomicAdd(&counts[kDisorder], disorder);
}

// The multiset of keys[0, n), order-independent: sig[p * 256 + d] counts the keys whose byte p is
// d (four histograms of the raw bits), sig[1024] is the sum, mod 2^64, of a 64-bit hash of each
// key. Equal for input and output unless a key was lost, doubled or changed. sig zeroed before.
// Any grid.
// Needs: kBins, kDigitPasses, <cstdint>
__global__ void signatureOf(const uint32_t *keys, size_t n, unsigned long long *sig) {
  __shared__ unsigned int hist[kDigitPasses * kBins];
  for (int i = threadIdx.x; i < kDigitPasses * kBins; i += blockDim.x) {
    hist[i] = 0;
  }
  __syncthreads();
  size_t stride = size_t(gridDim.x) * blockDim.x;
  unsigned long long hash = 0;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    uint32_t key = keys[i];
    for (int p = 0; p < kDigitPasses; ++p) {
      atomicAdd(&hist[p * kBins + ((key >> (8 * p)) & 0xFFu)], 1u);
    }
    unsigned long long z = (key + 0x9E3779B97F4A7C15ull) * 0xBF58476D1CE4E5B9ull;
    hash += z ^ (z >> 29);
  }
  __syncthreads();
  for (int i = threadIdx.x; i < kDigitPasses * kBins; i += blockDim.x) {
    atomicAdd(&sig[i], (unsigned long long)hist[i]);
  }
  atomicAdd(&sig[kDigitPasses * kBins], hash);
}

// Pairs: the values are the keys' input indices. Every value < n with key_in[value[i]] ==
// key_out[i], no index twice (seen: n bits, zeroed before), equal neighbours in index order
// (stable), and the values' guard. With the keys' own check this fixes the output completely.
// Any grid.
// Needs: Counter, kPoison, <cstdint>
__global__ void checkPairs(const uint32_t *keysOut, const uint32_t *valsOut, const uint32_t *keysIn,
                           size_t n, size_t slot, unsigned int *seen, unsigned long long *counts) {
  size_t stride = size_t(gridDim.x) * blockDim.x;
  unsigned long long bad = 0, repeated = 0, unstable = 0, strays = 0;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < slot; i += stride) {
    uint32_t v = valsOut[i];
    if (i >= n) {
      strays += v != kPoison;
      continue;
    }
    if (v >= n || keysIn[v] != keysOut[i]) {
      ++bad;
    } else {
      repeated += (atomicOr(&seen[v / 32], 1u << (v % 32)) >> (v % 32)) & 1u;
    }
    unstable += i + 1 < n && keysOut[i] == keysOut[i + 1] && v >= valsOut[i + 1];
  }
  atomicAdd(&counts[kValueBad], bad);
  atomicAdd(&counts[kRepeated], repeated);
  atomicAdd(&counts[kUnstable], unstable);
  atomicAdd(&counts[kStrays], strays);
}

// ---------------------------------------------------------------------------------------------
// Host side: the library calls, the rows' launchers, the exact check.
// ---------------------------------------------------------------------------------------------

// The library rows: called once with temp == nullptr, which only writes the bytes they need into
// `tempBytes` (no launch), then with that storage; all 32 bits. n <= 2^28 fits CUB's int count on
// every CUDA 12.x and 13.x. keysIn is not changed (CUB sorts through its own temporary copy).
// Needs: <cub/device/device_radix_sort.cuh>
static cudaError_t cubSortKeys(void *temp, size_t &tempBytes, const uint32_t *in, uint32_t *out,
                               size_t n, cudaStream_t stream) {
  return cub::DeviceRadixSort::SortKeys(temp, tempBytes, in, out, int(n), 0, 32, stream);
}
static cudaError_t cubSortFloats(void *temp, size_t &tempBytes, const uint32_t *in, uint32_t *out,
                                 size_t n, cudaStream_t stream) {
  return cub::DeviceRadixSort::SortKeys(temp, tempBytes, reinterpret_cast<const float *>(in),
                                        reinterpret_cast<float *>(out), int(n), 0, 32, stream);
}
static cudaError_t cubSortPairs(void *temp, size_t &tempBytes, const uint32_t *keysIn,
                                uint32_t *keysOut, const uint32_t *valsIn, uint32_t *valsOut,
                                size_t n, cudaStream_t stream) {
  return cub::DeviceRadixSort::SortPairs(temp, tempBytes, keysIn, keysOut, valsIn, valsOut, int(n),
                                         0, 32, stream);
}

// The rows, in table order (kRows below: one line each, same order).
enum class Row {
  Copy,
  CubKeys,
  CubFloats,
  CubPairs,
  OneBit,
  FourBit,
  LocalSort,
  WarpRanked,
  UpFront,
  OneSweep,
  CountsInFlight,
  FullTiles,
  ThreeBlocks,
  Best,
  BestFloats,
  BestPairs,
  Count
};
constexpr int kRowCount = int(Row::Count);
enum class Keys { Copy, Unsigned, Floats, Pairs }; // what a row sorts

// What the launchers use: the device, and scratch allocated once for the largest n.
struct Setup {
  cudaDeviceProp prop;
  uint32_t *tmpKeys = nullptr, *tmpVals = nullptr; // the passes' ping-pong buffers, maxN each
  unsigned int *chunkCounts = nullptr;             // ladder: 256 x kMaxChunks counts, then offsets
  unsigned int *digitCounts = nullptr;             // up-front: 4 x 256 (0 between calls)
  unsigned int *digitStarts = nullptr;             //   and their starts
  unsigned int countBlocks = 0;                    // counts in flight: blocks the device holds
  unsigned int *counters = nullptr;                // onesweep: two tile counters (0 at first)
  unsigned int *status = nullptr;                  //   and two sets of words, statusWords each
  size_t statusWords = 0;                          //   (0 at first; the passes zero them)
  void *cubTemp = nullptr;
  size_t cubTempBytes = 0;
  unsigned long long *counts = nullptr; // the check's kCounters counters
  unsigned long long *sig = nullptr;    // a signature: 1025 counters
  unsigned int *seen = nullptr;         // pairs: a bit an index
};

// One call of one row: keysIn[0, n) -> keysOut[0, n) (and the values) on `stream`.
struct Call {
  const Setup &s;
  const uint32_t *keysIn;
  uint32_t *keysOut;
  const uint32_t *valsIn;
  uint32_t *valsOut;
  size_t n;
  cudaStream_t stream;
};

// The chunks of a ladder pass: whole tiles, at most kMaxChunks chunks.
struct Chunks {
  unsigned int count;
  size_t keys;
};
static Chunks chunksFor(size_t n) {
  size_t tiles = (n + kTile - 1) / kTile;
  size_t perChunk = (tiles + kMaxChunks - 1) / kMaxChunks; // tiles a chunk
  return {unsigned((tiles + perChunk - 1) / perChunk), perChunk * kTile};
}

// The launchers only enqueue (no allocation, no synchronization: safe inside a graph capture);
// launchRow checks the last launch, a launcher of several checks the ones before.
static void launchCopy(const Call &c) {
  size_t blocks = std::min<size_t>((c.n / 4 + kBlock - 1) / kBlock, 65536);
  copyKernel<<<unsigned(std::max<size_t>(1, blocks)), kBlock, 0, c.stream>>>(c.keysIn, c.keysOut,
                                                                             c.n);
}
static void launchCubKeys(const Call &c) {
  size_t bytes = c.s.cubTempBytes;
  CUDA_CHECK(cubSortKeys(c.s.cubTemp, bytes, c.keysIn, c.keysOut, c.n, c.stream));
}
static void launchCubFloats(const Call &c) {
  size_t bytes = c.s.cubTempBytes;
  CUDA_CHECK(cubSortFloats(c.s.cubTemp, bytes, c.keysIn, c.keysOut, c.n, c.stream));
}
static void launchCubPairs(const Call &c) {
  size_t bytes = c.s.cubTempBytes;
  CUDA_CHECK(
      cubSortPairs(c.s.cubTemp, bytes, c.keysIn, c.keysOut, c.valsIn, c.valsOut, c.n, c.stream));
}
// The passes' buffers: pass 0 reads the input, even passes write tmp, odd passes write the output
// (every row has an even number of passes, so the last one lands in keysOut; keysIn is only read).
static const uint32_t *passSource(const Call &c, int p) {
  return p == 0 ? c.keysIn : p % 2 == 1 ? c.s.tmpKeys : c.keysOut;
}
static uint32_t *passTarget(const Call &c, int p) {
  return p % 2 == 0 ? c.s.tmpKeys : c.keysOut;
}
// The up-front counts of all four digits, and their starts (up-front counts, onesweep, and best
// above its one-block sizes).
// wide: countAllDigitsWide on as many blocks as the device holds at once (s.countBlocks).
static void countUpFront(const Call &c, bool isFloat, bool wide = false) {
  if (wide) {
    size_t perBlock = size_t(kBlock) * 4 * kCountLoads; // keys a block takes in one sweep
    unsigned int blocks = unsigned(std::min<size_t>((c.n + perBlock - 1) / perBlock, c.s.countBlocks));
    countAllDigitsWide<<<blocks, kBlock, 0, c.stream>>>(c.keysIn, c.n, isFloat, c.s.digitCounts);
  } else {
    unsigned int blocks =
        unsigned(std::min<size_t>((c.n + 4095) / 4096, 2 * size_t(c.s.prop.multiProcessorCount)));
    countAllDigits<<<blocks, kBlock, 0, c.stream>>>(c.keysIn, c.n, isFloat, c.s.digitCounts);
  }
  CUDA_CHECK(cudaGetLastError());
  scanDigitStarts<<<kDigitPasses, kBins, 0, c.stream>>>(c.s.digitCounts, c.s.digitStarts);
  CUDA_CHECK(cudaGetLastError());
}
// The ladder: 32 / bits passes of count, scan, scatter.
enum class Scatter { Counters, CountersLocalSort, WarpRanked, WarpRankedUpFront };
static void ladder(const Call &c, int bits, Scatter how) {
  if (c.n == 0) {
    return; // nothing to sort (and no chunk to divide it into)
  }
  Chunks k = chunksFor(c.n);
  bool upFront = how == Scatter::WarpRankedUpFront;
  if (upFront) {
    countUpFront(c, false);
  }
  for (int p = 0; p < 32 / bits; ++p) {
    const uint32_t *src = passSource(c, p);
    uint32_t *dst = passTarget(c, p);
    countDigits<<<k.count, kBlock, 0, c.stream>>>(src, c.n, k.keys, p * bits, bits,
                                                  c.s.chunkCounts);
    CUDA_CHECK(cudaGetLastError());
    if (upFront) {
      scanCountsByDigit<<<kBins, kMaxChunks, 0, c.stream>>>(c.s.chunkCounts, k.count,
                                                            c.s.digitStarts + p * kBins);
    } else {
      scanCounts<<<1, kMaxChunks, 0, c.stream>>>(c.s.chunkCounts, size_t(k.count) << bits);
    }
    CUDA_CHECK(cudaGetLastError());
    if (how == Scatter::Counters || how == Scatter::CountersLocalSort) {
      scatterCounters<<<k.count, kBlock, 0, c.stream>>>(src, dst, c.n, k.keys, p * bits, bits,
                                                        c.s.chunkCounts,
                                                        how == Scatter::CountersLocalSort);
    } else {
      scatterWarpRanked<<<k.count, kBlock, 0, c.stream>>>(src, dst, c.n, k.keys, p * bits,
                                                          c.s.chunkCounts);
    }
    if (p + 1 < 32 / bits) {
      CUDA_CHECK(cudaGetLastError());
    }
  }
}
static void launchOneBit(const Call &c) {
  ladder(c, 1, Scatter::Counters);
}
static void launchFourBit(const Call &c) {
  ladder(c, 4, Scatter::Counters);
}
static void launchLocalSort(const Call &c) {
  ladder(c, 4, Scatter::CountersLocalSort);
}
static void launchWarpRanked(const Call &c) {
  ladder(c, 8, Scatter::WarpRanked);
}
static void launchUpFront(const Call &c) {
  ladder(c, 8, Scatter::WarpRankedUpFront);
}
// onesweep: the up-front counts, then four one-kernel passes taking turns with the two counters
// and the two sets of status words.
template <int kThreads, int kKeys, bool kPairs>
static void oneSweep(const Call &c, bool isFloat, bool wideCounts = false) {
  constexpr size_t kTileKeys = size_t(kThreads) * kKeys;
  unsigned int tiles = unsigned((c.n + kTileKeys - 1) / kTileKeys);
  if (tiles == 0) {
    return; // n == 0: nothing to sort (a grid of 0 blocks is not a launch)
  }
  countUpFront(c, isFloat, wideCounts);
  for (int p = 0; p < kDigitPasses; ++p) {
    const uint32_t *vsrc = p == 0 ? c.valsIn : p % 2 == 1 ? c.s.tmpVals : c.valsOut;
    uint32_t *vdst = p % 2 == 0 ? c.s.tmpVals : c.valsOut;
    unsigned int *status = c.s.status + (p % 2) * c.s.statusWords;
    unsigned int *next = c.s.status + ((p + 1) % 2) * c.s.statusWords;
    auto pass = isFloat ? sortPassOneSweep<kThreads, kKeys, kPairs, true>
                        : sortPassOneSweep<kThreads, kKeys, kPairs, false>;
    pass<<<tiles, kThreads, 0, c.stream>>>(
        passSource(c, p), passTarget(c, p), vsrc, vdst, c.n, 8 * p, c.s.counters + p % 2, status,
        c.s.counters + (p + 1) % 2, next, c.s.digitStarts + p * kBins);
    if (p + 1 < kDigitPasses) {
      CUDA_CHECK(cudaGetLastError());
    }
  }
}
static void launchOneSweep(const Call &c) {
  oneSweep<kBestThreads, kBestKeys, false>(c, false);
}
static void launchCountsInFlight(const Call &c) {
  oneSweep<kBestThreads, kBestKeys, false>(c, false, true);
}
// onesweep on full tiles (sortPassFullTiles), after the wide up-front counts.
template <int kThreads, int kKeys, bool kPairs, int kMinBlocks>
static void oneSweepFull(const Call &c, bool isFloat) {
  constexpr size_t kTileKeys = size_t(kThreads) * kKeys;
  unsigned int tiles = unsigned((c.n + kTileKeys - 1) / kTileKeys);
  if (tiles == 0) {
    return; // n == 0: nothing to sort
  }
  countUpFront(c, isFloat, true);
  for (int p = 0; p < kDigitPasses; ++p) {
    const uint32_t *vsrc = p == 0 ? c.valsIn : p % 2 == 1 ? c.s.tmpVals : c.valsOut;
    uint32_t *vdst = p % 2 == 0 ? c.s.tmpVals : c.valsOut;
    unsigned int *status = c.s.status + (p % 2) * c.s.statusWords;
    unsigned int *next = c.s.status + ((p + 1) % 2) * c.s.statusWords;
    auto pass = isFloat ? sortPassFullTiles<kThreads, kKeys, kPairs, true, kMinBlocks>
                        : sortPassFullTiles<kThreads, kKeys, kPairs, false, kMinBlocks>;
    pass<<<tiles, kThreads, 0, c.stream>>>(
        passSource(c, p), passTarget(c, p), vsrc, vdst, c.n, p, c.s.counters + p % 2, status,
        c.s.counters + (p + 1) % 2, next, c.s.digitStarts + p * kBins);
    if (p + 1 < kDigitPasses) {
      CUDA_CHECK(cudaGetLastError());
    }
  }
}
static void launchFullTiles(const Call &c) {
  oneSweepFull<kBestThreads, kBestKeys, false, 2>(c, false);
}
static void launchThreeBlocks(const Call &c) {
  oneSweepFull<kBestThreads, kBestKeys, false, 3>(c, false);
}
// best: ONE block up to kOneBlockMax keys, the smallest that holds n; onesweep on 256 x 8 tiles up
// to kSmallSweepMax; above, onesweep on kBestThreads x kBestKeys tiles (pairs: kBestPairsThreads x
// kBestPairsKeys).
template <int kThreads, int kKeys, bool kPairs>
static void oneBlock(const Call &c, bool isFloat) {
  if (c.n == 0) {
    return; // nothing to sort: no launch
  }
  auto sort = isFloat ? sortOneBlock<kThreads, kKeys, kPairs, true>
                      : sortOneBlock<kThreads, kKeys, kPairs, false>;
  sort<<<1, kThreads, oneBlockBytes(kThreads, kKeys), c.stream>>>(c.keysIn, c.keysOut, c.valsIn,
                                                                  c.valsOut, c.n);
}
template <bool kPairs>
static void best(const Call &c, bool isFloat) {
  if (c.n <= 1024) {
    oneBlock<256, 4, kPairs>(c, isFloat);
  } else if (c.n <= 2048) {
    oneBlock<256, 8, kPairs>(c, isFloat);
  } else if (c.n <= kOneBlockMax) {
    oneBlock<kOneBlock4096Threads, 4096 / kOneBlock4096Threads, kPairs>(c, isFloat);
  } else if (c.n <= kSmallSweepMax) {
    oneSweepFull<kBlock, kItems, kPairs, kSmallBlocks>(c, isFloat);
  } else if constexpr (kPairs) {
    oneSweepFull<kBestPairsThreads, kBestPairsKeys, true, 2>(c, isFloat);
  } else {
    oneSweepFull<kBestThreads, kBestKeys, false, 3>(c, isFloat);
  }
}
static void launchBest(const Call &c) {
  best<false>(c, false);
}
static void launchBestFloats(const Call &c) {
  best<false>(c, true);
}
static void launchBestPairs(const Call &c) {
  best<true>(c, false);
}

// The row table, indexed by Row. bytes: the model's bytes moved a key at large n (0: not given).
struct RowDef {
  const char *name;
  Keys keys;
  Row cub; // the CUB row it is compared with
  int bytes;
  void (*launch)(const Call &);
};
static const RowDef kRows[kRowCount] = {
    {"copy", Keys::Copy, Row::Copy, 8, launchCopy},
    {"CUB", Keys::Unsigned, Row::CubKeys, 0, launchCubKeys},
    {"CUB float", Keys::Floats, Row::CubFloats, 0, launchCubFloats},
    {"CUB pairs", Keys::Pairs, Row::CubPairs, 0, launchCubPairs},
    {"one bit", Keys::Unsigned, Row::CubKeys, 32 * 12, launchOneBit},
    {"4-bit digits", Keys::Unsigned, Row::CubKeys, 8 * 12, launchFourBit},
    {"local sort", Keys::Unsigned, Row::CubKeys, 8 * 12, launchLocalSort},
    {"8-bit, warp", Keys::Unsigned, Row::CubKeys, 4 * 12, launchWarpRanked},
    {"up-front counts", Keys::Unsigned, Row::CubKeys, 4 + 4 * 12, launchUpFront},
    {"onesweep", Keys::Unsigned, Row::CubKeys, 4 + 4 * 8, launchOneSweep},
    {"counts in flight", Keys::Unsigned, Row::CubKeys, 4 + 4 * 8, launchCountsInFlight},
    {"full tiles", Keys::Unsigned, Row::CubKeys, 4 + 4 * 8, launchFullTiles},
    {"3 blocks an SM", Keys::Unsigned, Row::CubKeys, 4 + 4 * 8, launchThreeBlocks},
    {"best", Keys::Unsigned, Row::CubKeys, 4 + 4 * 8, launchBest},
    {"best float", Keys::Floats, Row::CubFloats, 4 + 4 * 8, launchBestFloats},
    {"best pairs", Keys::Pairs, Row::CubPairs, 4 + 4 * 16, launchBestPairs},
};
// Enqueues one call of row r on `stream` and checks the launch.
static void launchRow(Row r, const Call &c) {
  kRows[int(r)].launch(c);
  CUDA_CHECK(cudaGetLastError());
}

// What a check compares with, for one size: the input's copy 0 (keys, float keys, values), CUB's
// sorted outputs of it, and the input's signatures (host copies).
struct Reference {
  size_t n, slot;
  const uint32_t *keys, *floats, *values; // the inputs
  const uint32_t *sortedKeys, *sortedFloats;
  std::vector<unsigned long long> keysSig, floatsSig;
};

struct Check {
  bool ok;
  std::string why; // the first thing that differs, with got and want
};

// Where a size's inputs (keys of the chosen input, float keys, values = indices) and outputs live:
// `buffers` copies of each, a slot apart (main's rings; the test program's single copies).
struct Rings {
  uint32_t *keys, *floats, *values, *keysOut, *valsOut;
};

// The signature of keys[0, n) (signatureOf), on the host.
static std::vector<unsigned long long> signature(const Setup &s, const uint32_t *keys, size_t n,
                                                 cudaStream_t stream) {
  std::vector<unsigned long long> sig(kDigitPasses * kBins + 1);
  CUDA_CHECK(cudaMemsetAsync(s.sig, 0, sig.size() * 8, stream));
  signatureOf<<<256, 256, 0, stream>>>(keys, n, s.sig);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaMemcpyAsync(sig.data(), s.sig, sig.size() * 8, cudaMemcpyDeviceToHost, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  return sig;
}

// Checks what row r left in keysOut[0, slot) (and valsOut): see Counter and the file's header.
static Check checkRow(Row r, const Setup &s, const Reference &ref, const uint32_t *keysIn,
                      const uint32_t *keysOut, const uint32_t *valsOut, cudaStream_t stream) {
  Keys kind = kRows[int(r)].keys;
  bool isFloat = kind == Keys::Floats;
  const uint32_t *want = kind == Keys::Copy ? keysIn : isFloat ? ref.sortedFloats : ref.sortedKeys;
  unsigned long long c[kCounters] = {0, ~0ull};
  CUDA_CHECK(cudaMemcpyAsync(s.counts, c, sizeof c, cudaMemcpyHostToDevice, stream));
  checkKeys<<<1024, 256, 0, stream>>>(keysOut, want, ref.n, ref.slot, isFloat, kind != Keys::Copy,
                                      s.counts);
  CUDA_CHECK(cudaGetLastError());
  if (kind == Keys::Pairs) {
    CUDA_CHECK(cudaMemsetAsync(s.seen, 0, (ref.n + 31) / 32 * 4, stream));
    checkPairs<<<1024, 256, 0, stream>>>(keysOut, valsOut, keysIn, ref.n, ref.slot, s.seen,
                                         s.counts);
    CUDA_CHECK(cudaGetLastError());
  }
  CUDA_CHECK(cudaMemcpyAsync(c, s.counts, sizeof c, cudaMemcpyDeviceToHost, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  char why[256] = "";
  if (c[kDiffer] != 0) {
    uint32_t got = 0, wanted = 0;
    CUDA_CHECK(cudaMemcpy(&got, keysOut + c[kFirst], 4, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(&wanted, want + c[kFirst], 4, cudaMemcpyDeviceToHost));
    std::snprintf(why, sizeof why, "key %llu got 0x%08x want 0x%08x (%llu keys differ)", c[kFirst],
                  got, wanted, c[kDiffer]);
  } else if (c[kDisorder] + c[kStrays] + c[kValueBad] + c[kRepeated] + c[kUnstable] != 0) {
    std::snprintf(why, sizeof why,
                  "got %llu out of order, %llu written past n, %llu wrong values, %llu repeated, "
                  "%llu unstable; want 0",
                  c[kDisorder], c[kStrays], c[kValueBad], c[kRepeated], c[kUnstable]);
  } else if (kind != Keys::Copy &&
             signature(s, keysOut, ref.n, stream) != (isFloat ? ref.floatsSig : ref.keysSig)) {
    std::snprintf(why, sizeof why,
                  "got a different multiset of keys than the input's (a digit "
                  "histogram or the hash sum differs); want the same");
  }
  return {why[0] == '\0', why};
}

// ---------------------------------------------------------------------------------------------
// Timing: CUDA events around batches of calls of ONE row at ONE size.
// ---------------------------------------------------------------------------------------------

struct Timing {
  double us;     // median over batches of (batch us / calls): us per call
  double spread; // (slowest batch - fastest batch) / median, in percent
};

// Stream mode. launch() enqueues one call of the row on `stream`; poison() enqueues memsets that
// make the row's outputs wrong. Warm-up first (a kernel's first launch pays its module load), then
// kTimingBatches batches: poison() OUTSIDE the event pair, then `calls` back-to-back calls between
// the events. So every batch starts from poison, and the outputs afterwards hold what the LAST
// timed call wrote.
template <typename Launch, typename Poison>
Timing timeKernel(Launch launch, Poison poison, int calls, cudaStream_t stream) {
  launch();
  CUDA_CHECK(cudaStreamSynchronize(stream));
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  std::vector<double> perCall;
  for (int b = 0; b < kTimingBatches; ++b) {
    poison();
    CUDA_CHECK(cudaEventRecord(start, stream));
    for (int i = 0; i < calls; ++i) {
      launch();
    }
    CUDA_CHECK(cudaEventRecord(stop, stream));
    CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0.0f;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    perCall.push_back(1000.0 * double(ms) / calls);
  }
  CUDA_CHECK(cudaEventDestroy(start));
  CUDA_CHECK(cudaEventDestroy(stop));
  std::sort(perCall.begin(), perCall.end());
  double median = perCall[perCall.size() / 2];
  return {median, 100.0 * (perCall.back() - perCall.front()) / median};
}

// Graph mode: the same `calls` calls captured once into a CUDA graph (the legacy stream cannot be
// captured: `stream` is the program's own), instantiated once, and ONE replay timed as one launch
// by timeKernel; per call = replay / calls. The host's launch cost leaves; the GPU's gaps stay.
template <typename Launch, typename Poison>
Timing timeGraph(Launch launch, Poison poison, int calls, cudaStream_t stream) {
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  for (int i = 0; i < calls; ++i) {
    launch();
  }
  CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  auto replay = [&] { CUDA_CHECK(cudaGraphLaunch(exec, stream)); };
  Timing t = timeKernel(replay, poison, 1, stream);
  t.us /= calls;
  CUDA_CHECK(cudaGraphExecDestroy(exec));
  CUDA_CHECK(cudaGraphDestroy(graph));
  return t;
}

// The device buffers of a run, allocated once for its largest size (main, the test program).
struct Buffers {
  enum {
    Keys,
    Floats,
    Values,
    KeysOut,
    ValsOut,
    SortedKeys,
    SortedFloats,
    TmpKeys,
    TmpVals,
    ChunkCounts,
    Digits,
    Counters,
    Status,
    Seen,
    Count
  };
  size_t words[Count]; // each buffer's length in 4-byte words
  uint32_t *p[Count] = {};
};
// Sizes every buffer for n <= maxN, with `ring` words for each input and output (their copies and
// guards), CUB's temporary storage for its three rows and the onesweep words for the smallest
// tile; returns the bytes they need. Allocates nothing (CUB's size queries launch nothing).
static size_t planBuffers(Setup &s, Buffers &b, size_t maxN, size_t ring) {
  size_t bytes = 0;
  CUDA_CHECK(cubSortKeys(nullptr, s.cubTempBytes, nullptr, nullptr, maxN, 0));
  CUDA_CHECK(cubSortFloats(nullptr, bytes, nullptr, nullptr, maxN, 0));
  s.cubTempBytes = std::max(s.cubTempBytes, bytes);
  CUDA_CHECK(cubSortPairs(nullptr, bytes, nullptr, nullptr, nullptr, nullptr, maxN, 0));
  s.cubTempBytes = std::max(s.cubTempBytes, bytes);
  s.statusWords = (maxN + kTile - 1) / kTile * kBins;
  const size_t words[Buffers::Count] = {ring,
                                        ring,
                                        ring,
                                        ring,
                                        ring,
                                        maxN,
                                        maxN,
                                        maxN,
                                        maxN,
                                        size_t(kBins) * kMaxChunks,
                                        2 * kDigitPasses * kBins,
                                        2,
                                        2 * s.statusWords,
                                        (maxN + 31) / 32};
  size_t need = s.cubTempBytes + (kCounters + kDigitPasses * kBins + 1) * 8;
  for (int i = 0; i < Buffers::Count; ++i) {
    b.words[i] = words[i];
    need += words[i] * 4;
  }
  return need;
}
// Allocates what planBuffers sized, zeroes what must start at 0 (the up-front counts, the onesweep
// counters and words: once), and points s at its scratch. Returns the rings' first words.
static Rings allocateBuffers(Setup &s, Buffers &b) {
  for (int i = 0; i < Buffers::Count; ++i) {
    CUDA_CHECK(cudaMalloc(&b.p[i], std::max<size_t>(1, b.words[i]) * 4));
  }
  for (int i : {Buffers::Digits, Buffers::Counters, Buffers::Status}) {
    CUDA_CHECK(cudaMemset(b.p[i], 0, b.words[i] * 4));
  }
  CUDA_CHECK(cudaMalloc(&s.cubTemp, std::max<size_t>(1, s.cubTempBytes)));
  CUDA_CHECK(cudaMalloc(&s.counts, kCounters * 8));
  CUDA_CHECK(cudaMalloc(&s.sig, (kDigitPasses * kBins + 1) * 8));
  CUDA_CHECK(cudaDeviceSynchronize()); // the legacy stream's memsets, before any other stream
  s.tmpKeys = b.p[Buffers::TmpKeys], s.tmpVals = b.p[Buffers::TmpVals];
  s.chunkCounts = b.p[Buffers::ChunkCounts], s.digitCounts = b.p[Buffers::Digits];
  s.digitStarts = b.p[Buffers::Digits] + kDigitPasses * kBins, s.counters = b.p[Buffers::Counters];
  s.status = b.p[Buffers::Status], s.seen = b.p[Buffers::Seen];
  int perSM = 0; // counts in flight: one wave of blocks, each striding over the keys
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSM, countAllDigitsWide, kBlock, 0));
  s.countBlocks = unsigned(std::max(1, perSM) * s.prop.multiProcessorCount);
  return {b.p[Buffers::Keys], b.p[Buffers::Floats], b.p[Buffers::Values], b.p[Buffers::KeysOut],
          b.p[Buffers::ValsOut]};
}
static void freeBuffers(Setup &s, Buffers &b) { // one cleanup path
  for (uint32_t *q : b.p) {
    CUDA_CHECK(cudaFree(q));
  }
  for (void *q : {s.cubTemp, (void *)s.counts, (void *)s.sig}) {
    CUDA_CHECK(cudaFree(q));
  }
}

// The test program (tests/harness/day39-sort.cu) defines REDUCTION_HARNESS (the course's name for
// it since day 24) and brings its own main(): what follows is this program's alone.
#ifndef REDUCTION_HARNESS
// ---------------------------------------------------------------------------------------------
// The table: input rotation, one measured row, the printer, the options, main.
// ---------------------------------------------------------------------------------------------

// One size's copies: `buffers` copies of each input and output, `slot` words apart (n + a poisoned
// guard, rounded up to 256 bytes). One copy when 8n bytes pass kL2Multiple x L2, else enough that
// the copies do; call k reads input copy k % buffers and writes output copy k % buffers.
struct Layout {
  size_t n, slot;
  int buffers;
  long long next = 0;
  int last = 0;
};
static Layout layoutFor(size_t n, size_t l2Bytes) {
  double target = double(kL2Multiple) * double(l2Bytes), bytes = 8.0 * double(n);
  return {n, (n + kGuard + 63) / 64 * 64, bytes >= target ? 1 : int(std::ceil(target / bytes))};
}
static int callsPerBatch(size_t n) {
  return int(std::max<double>(kMinCalls, std::min<double>(kMaxCalls, kBatchKeys / double(n))));
}

struct Measured {
  size_t n;
  Row row;
  int buffers; // distinct copies touched between two touches of the same one
  bool dram;   // those copies add up to kL2Multiple x L2 or more
  Timing t;
  bool ok;
};

// Checks row r once, times it (every batch from poisoned outputs), checks what the LAST timed call
// wrote. A failure prints `CHECK FAILED: <row> n=... <what differs, got, want>`.
static Measured measureRow(Row r, bool graph, const Setup &s, const Reference &ref, const Rings &g,
                           Layout &l, cudaStream_t stream, int &checks, int &failures) {
  int calls = callsPerBatch(l.n);
  Measured m{l.n, r, graph ? std::min(l.buffers, calls) : l.buffers, false, {0.0, 0.0}, true};
  m.dram = m.buffers * 8.0 * double(l.n) >= double(kL2Multiple) * double(s.prop.l2CacheSize);
  Keys kind = kRows[int(r)].keys;
  const uint32_t *in = kind == Keys::Floats ? g.floats : g.keys;
  size_t ring = size_t(l.buffers) * l.slot;
  auto at = [&](const uint32_t *base, int k) { return const_cast<uint32_t *>(base) + k * l.slot; };
  auto poison = [&] {
    CUDA_CHECK(cudaMemsetAsync(g.keysOut, 0xA5, ring * 4, stream)); // kPoison in every word
    if (kind == Keys::Pairs) {
      CUDA_CHECK(cudaMemsetAsync(g.valsOut, 0xA5, ring * 4, stream));
    }
  };
  auto call = [&](int k) {
    launchRow(r, {s, at(in, k), at(g.keysOut, k), at(g.values, k), at(g.valsOut, k), l.n, stream});
  };
  auto count = [&](int k, const char *when) {
    Check c = checkRow(r, s, ref, at(in, k), at(g.keysOut, k), at(g.valsOut, k), stream);
    ++checks;
    if (!c.ok) {
      std::printf("CHECK FAILED: %s n=%zu %s [%s, %s timing]\n", kRows[int(r)].name, l.n,
                  c.why.c_str(), graph ? "graph" : "stream", when);
      ++failures;
      m.ok = false;
    }
  };
  poison();
  call(0);
  CUDA_CHECK(cudaStreamSynchronize(stream));
  count(0, "before");
  auto timed = [&] {
    l.last = int(l.next++ % l.buffers);
    call(l.last);
  };
  m.t = graph ? timeGraph(timed, poison, calls, stream) : timeKernel(timed, poison, calls, stream);
  CUDA_CHECK(cudaStreamSynchronize(stream));
  count(l.last, "after");
  return m;
}

// One mode's table (kRowCount lines a size) and its summary. G keys/s = n / us / 1000; % of floor
// = the time the 36-byte floor (pairs: 68) takes at the copy row's bandwidth / the row's time,
// only where 8n bytes pass kL2Multiple x L2; vs CUB = the matching CUB row's us / this row's.
static void printTable(bool graph, const std::vector<Measured> &out, double l2Bytes) {
  std::printf("\n%s: %d batches, median; %s\n\n", graph ? "graph" : "stream", kTimingBatches,
              graph ? "a batch is ONE replay of a CUDA graph of back-to-back calls"
                    : "a batch is back-to-back calls on one stream");
  std::printf("|          n | row             | buffers | input   |        us | spread %% | "
              "G keys/s | B a key | %% of floor | vs CUB | produces | check |\n"
              "|------------|-----------------|---------|---------|-----------|----------|-------"
              "---|---------|------------|--------|----------|-------|\n");
  int atOrAbove[3] = {0, 0, 0}, sizes[3] = {0, 0, 0};
  std::string where[3]; // the sizes at which best, best float, best pairs are at or above CUB
  for (size_t i = 0; i < out.size(); ++i) {
    const Measured &m = out[i], &copy = out[i - i % kRowCount];
    const RowDef &d = kRows[int(m.row)];
    double vs = out[i - i % kRowCount + int(d.cub)].t.us / m.t.us;
    double floorUs = copy.t.us * (d.keys == Keys::Pairs ? kFloorBytesPairs : kFloorBytes) / 8.0;
    char bytes[16] = "-", pct[16] = "-", ratio[16] = "-";
    if (d.bytes > 0) {
      std::snprintf(bytes, sizeof bytes, "%d", d.bytes);
    }
    if (m.row != Row::Copy && 8.0 * double(m.n) >= kL2Multiple * l2Bytes) {
      std::snprintf(pct, sizeof pct, "%.1f", 100.0 * floorUs / m.t.us);
    }
    if (d.cub != m.row) {
      std::snprintf(ratio, sizeof ratio, "%.2f", vs);
    }
    std::printf("| %10zu | %-15s | %7d | %-7s | %9.2f | %8.1f | %8.2f | %7s | %10s | %6s | %-8s "
                "| %-5s |\n",
                m.n, d.name, m.buffers, m.dram ? "DRAM" : "L2-warm", m.t.us, m.t.spread,
                double(m.n) / m.t.us / 1000.0, bytes, pct, ratio,
                d.keys == Keys::Copy    ? "copy"
                : d.keys == Keys::Pairs ? "n pairs"
                                        : "n keys",
                m.ok ? "exact" : "FAIL");
    int b = m.row == Row::Best         ? 0
            : m.row == Row::BestFloats ? 1
            : m.row == Row::BestPairs  ? 2
                                       : -1;
    if (b >= 0 && m.n >= (size_t(1) << 16)) {
      bool at = std::round(100.0 * vs) / 100.0 >= 1.0; // as the table prints it
      ++sizes[b];
      atOrAbove[b] += at;
      if (at) {
        where[b] += std::string(where[b].empty() ? "" : " ") + std::to_string(m.n);
      }
    }
  }
  std::printf("\nsummary (%s), n >= 2^16: best >= CUB at %d of %d sizes (%s); best float >= CUB "
              "float at %d of %d (%s); best pairs >= CUB pairs at %d of %d (%s)\n",
              graph ? "graph" : "stream", atOrAbove[0], sizes[0], where[0].c_str(), atOrAbove[1],
              sizes[1], where[1].c_str(), atOrAbove[2], sizes[2], where[2].c_str());
}

struct Options {
  bool stream = true, graph = true;
  size_t minN = kMinN, maxN = kMaxN, seed = 39;
  Input input = Input::Random;
};
static const char *kUsage =
    "usage: sort [--mode stream|graph|both] [--min-n N] [--max-n N] [--seed S] [--input I]\n"
    "  --mode           stream: back-to-back calls; graph: replays of a CUDA graph; both "
    "(default)\n"
    "  --min-n, --max-n powers of two, 1024 <= min <= max <= 268435456 (default 2^10 .. 2^28;\n"
    "                   the largest needs about 11 GiB of device memory)\n"
    "  --seed           the keys' seed (default 39)\n"
    "  --input          the unsigned rows' keys: random (default), low (keys & 0xF), equal,\n"
    "                   sorted, reverse; the float rows always take random floats and specials\n"
    "exit codes: 0 all checks passed; 1 a check failed, a CUDA error, or a device the day cannot\n"
    "  use; 2 bad usage or a --max-n the card's free memory cannot hold.\n";

// Options: each flag takes one value (digits only, or a word); bad usage is exit 2.
static Options parseOptions(int argc, char **argv) {
  Options o;
  const char *inputs[] = {"random", "low", "equal", "sorted", "reverse"};
  for (int i = 1; i < argc; i += 2) {
    std::string a = argv[i], v = i + 1 < argc ? argv[i + 1] : "", why;
    size_t *x = a == "--min-n"   ? &o.minN
                : a == "--max-n" ? &o.maxN
                : a == "--seed"  ? &o.seed
                                 : nullptr;
    int in = int(std::find(inputs, inputs + 5, v) - inputs);
    if (a == "--help" || a == "-h") {
      std::printf("%s", kUsage);
      std::exit(0);
    } else if (a == "--mode" && (v == "stream" || v == "graph" || v == "both")) {
      o.stream = v != "graph", o.graph = v != "stream";
    } else if (a == "--input" && in < 5) {
      o.input = Input(in);
    } else if (x && !v.empty() && v.size() < 20 && v.find_first_not_of("0123456789") == v.npos) {
      *x = std::stoull(v);
    } else {
      why = a == "--mode"    ? "--mode needs stream, graph or both"
            : a == "--input" ? "--input needs random, low, equal, sorted or reverse"
            : x              ? a + " needs a whole number (digits only)"
                             : "unknown option '" + a + "'";
      std::fprintf(stderr, "error: %s (see --help)\n", why.c_str());
      std::exit(2);
    }
  }
  if (!isPowerOfTwo(o.minN) || !isPowerOfTwo(o.maxN) || o.minN < kMinN || o.maxN > kMaxN ||
      o.minN > o.maxN) {
    std::fprintf(stderr, "error: --min-n and --max-n must be powers of two, 1024 <= --min-n <= "
                         "--max-n <= 268435456 (see --help)\n");
    std::exit(2);
  }
  return o;
}

// The device line, and whether the device has what the warp ranks need (one line and false if
// not: exit 1).
static bool deviceCanSort(const cudaDeviceProp &p) {
  std::printf("GPU: %s | cc %d.%d | %d SMs | %d MiB L2 | warp %d\n", p.name, p.major, p.minor,
              p.multiProcessorCount, p.l2CacheSize >> 20, p.warpSize);
  if (p.warpSize == kWarp && p.major >= 7) {
    return true;
  }
  std::fprintf(stderr,
               "error: the warp ranks need %d lanes a warp, and the day is built and checked "
               "for cc 7.0 or newer; this device has %d lanes, cc %d.%d\n",
               kWarp, p.warpSize, p.major, p.minor);
  return false;
}
// What the run sorts and with what shapes, before the tables.
static void printSetup(const Options &o, const Setup &s) {
  const char *inputs[] = {"random", "low (keys & 0xF)", "all equal", "sorted", "reverse sorted"};
  std::printf(
      "keys: %s, seed %zu; float keys: random bits + -0, +0, -inf, +inf, -NaN, +NaN; "
      "values: indices\nladder: %d threads x %d keys a tile, chunks <= %d; onesweep "
      "tiles %d x %d; best: one block up to n = %zu, onesweep %d x %d up to %zu, else %d x %d "
      "(pairs %d x %d)\n"
      "CUB %d.%d.%d: cub::DeviceRadixSort, %zu bytes of temporary storage\n",
      inputs[int(o.input)], o.seed, kBlock, kItems, kMaxChunks, kBlock, kItems, kOneBlockMax,
      kBlock, kItems, kSmallSweepMax, kBestThreads, kBestKeys, kBestPairsThreads, kBestPairsKeys,
      CUB_MAJOR_VERSION, CUB_MINOR_VERSION, CUB_SUBMINOR_VERSION, s.cubTempBytes);
}

int main(int argc, char **argv) {
  Options o = parseOptions(argc, argv);
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "error: no usable CUDA device\n");
    return 1;
  }
  // 1. The device, and the memory the largest size needs (refused before anything is allocated).
  Setup s;
  CUDA_CHECK(cudaGetDeviceProperties(&s.prop, 0));
  size_t l2 = size_t(s.prop.l2CacheSize), ring = 0, freeBytes = 0, totalBytes = 0;
  for (size_t n = o.minN; n <= o.maxN; n *= 2) {
    Layout l = layoutFor(n, l2);
    ring = std::max(ring, size_t(l.buffers) * l.slot);
  }
  Buffers b;
  size_t need = planBuffers(s, b, o.maxN, ring) + (size_t(64) << 20);
  CUDA_CHECK(cudaMemGetInfo(&freeBytes, &totalBytes));
  if (need > freeBytes) {
    std::fprintf(stderr,
                 "error: --max-n %zu needs %zu MiB of device memory, %zu MiB are free on "
                 "%s: pass a smaller --max-n\n",
                 o.maxN, need >> 20, freeBytes >> 20, s.prop.name);
    return 2;
  }
  if (!deviceCanSort(s.prop)) {
    return 1;
  }
  // 2. Buffers, allocated once for the largest size; the onesweep words and counters zeroed once.
  cudaStream_t stream; // the program's own: graph capture cannot use the legacy stream
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  Rings g = allocateBuffers(s, b);
  uint32_t *sortedKeys = b.p[Buffers::SortedKeys], *sortedFloats = b.p[Buffers::SortedFloats];
  printSetup(o, s);
  // 3. Every size: fill its copies, sort copy 0 with CUB for the check, then every row, both modes.
  int checks = 0, failures = 0;
  std::vector<Measured> streamOut, graphOut;
  for (size_t n = o.minN; n <= o.maxN; n *= 2) {
    Layout l = layoutFor(n, l2);
    size_t ring = size_t(l.buffers) * l.slot;
    fillRing<<<1024, 256, 0, stream>>>(g.keys, ring, l.slot, n, o.input, o.seed, false);
    fillRing<<<1024, 256, 0, stream>>>(g.floats, ring, l.slot, n, Input::Floats, o.seed, false);
    fillRing<<<1024, 256, 0, stream>>>(g.values, ring, l.slot, n, o.input, o.seed, true);
    CUDA_CHECK(cudaGetLastError());
    launchCubKeys({s, g.keys, sortedKeys, nullptr, nullptr, n, stream});
    launchCubFloats({s, g.floats, sortedFloats, nullptr, nullptr, n, stream});
    Reference ref{n, l.slot, g.keys, g.floats, g.values, sortedKeys, sortedFloats, {}, {}};
    ref.keysSig = signature(s, g.keys, n, stream),
    ref.floatsSig = signature(s, g.floats, n, stream);
    for (int k = 0; k < kRowCount; ++k) {
      for (bool graph : {false, true}) {
        if (graph ? o.graph : o.stream) {
          (graph ? graphOut : streamOut)
              .push_back(measureRow(Row(k), graph, s, ref, g, l, stream, checks, failures));
        }
      }
    }
  }
  // 4. The tables.
  if (o.stream) {
    printTable(false, streamOut, double(l2));
  }
  if (o.graph) {
    printTable(true, graphOut, double(l2));
  }
  std::printf(
      "\nB a key: the model's bytes moved a key (reads + writes of keys; pairs: and values) "
      "at large n; the\nfloor is 36 (one read for the counts, then a read and a write a "
      "pass; pairs 68). %% of floor is printed only where\n8n bytes pass %d x L2; below that every "
      "row is launch latency. vs CUB: the CUB row of the same keys.\n",
      kL2Multiple);
  freeBuffers(s, b);
  CUDA_CHECK(cudaStreamDestroy(stream));
  if (failures == 0) {
    std::printf("\nRESULT: PASS (%d checks, all exact)\n", checks);
    return 0;
  }
  std::printf("\nRESULT: FAIL (%d of %d checks failed)\n", failures, checks);
  return 1;
}
#endif // REDUCTION_HARNESS
