// Day 39, scan: cub::DeviceScan::InclusiveSum head to head with a prefix-sum ladder, 2^10..2^30.
//
// out[i] = in[0] + ... + in[i]. Rows, one change from above (words moved a call, n floats each):
//   copy              the ceiling: a float4 copy (2n); bytes read + written, 8 a float, every row.
//   CUB               cub::DeviceScan::InclusiveSum (2n); temporary storage allocated once.
//   scan-propagate    4n, 3 kernels: scan each chunk (a shared-memory tree), scan the chunk totals
//                     in one block, add each chunk's prefix back.
//   reduce-then-scan  3n: REDUCE each chunk first, scan the partials, scan each chunk from them.
//   warp shuffles     the block scan by __shfl_up_sync inside each warp, one shared slot a warp.
//   items a thread    8 consecutive floats a thread (two float4 loads), scanned in registers first.
//   chained           ONE pass, 2n: a tile waits for its predecessor's inclusive prefix.
//   look-back         a tile publishes its own sum first; one warp adds its predecessors' sums.
//   best              by n: ONE warp or block up to 2^13; above, the look-back on warp-striped
//                     tiles, status words 128 bytes apart and launch-tagged (no memset).
// Exact: a seeded +1/-1 walk whose prefix range is <= 2^24 (the lemma by the static_asserts), so
// every row is exact in any association; every output element is checked bit for bit, once untimed
// and on what the LAST timed call wrote. Exit 0 pass; 1 a check, CUDA error or unfit GPU; 2 usage.
// Edge matrix, in place, other inputs, guards, 10^4 launches, delays, n = 0: tests/harness/.
// Build: nvcc -std=c++17 -O3 -arch=sm_75 -o scan code/day39-scan/scan.cu
// Run:   ./scan  (both timing modes, 2^10..2^30: 2 x 4 GiB of device memory; --help)

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

// snippet: includes
#include <cub/device/device_scan.cuh>
#include <cuda/atomic>
#include <cuda_runtime.h>
// end snippet

#define CUDA_CHECK(call)                                                                           \
  do {                                                                                             \
    cudaError_t err_ = (call);                                                                     \
    if (err_ != cudaSuccess) {                                                                     \
      std::fprintf(stderr, "CUDA error: %s at %s:%d: %s\n", #call, __FILE__, __LINE__,             \
                   cudaGetErrorString(err_));                                                      \
      std::exit(1);                                                                                \
    }                                                                                              \
  } while (0)

// The test program's delay injection (tests/harness/day39-scan.cu) makes a chosen tile sleep here,
// just before it publishes; in the lesson the hook is empty.
#ifndef DELAY_BEFORE_PUBLISH
#define DELAY_BEFORE_PUBLISH(tile)
#endif

// snippet: constants
constexpr int kWarp = 32;                       // lanes a warp (checked on the device)
constexpr unsigned int kFullMask = 0xffffffffu; // every lane of a warp: each shuffle's mask
// end snippet
constexpr int kBlock = 256;                       // threads a block of the ladder rows
constexpr int kWarpsPerBlock = kBlock / kWarp;    // shared slots of a block scan
constexpr int kMaxChunks = 1024;                  // reduce-then-scan: chunks, one block scans them
constexpr int kItems = 8;                         // items a thread: 8 consecutive floats
constexpr size_t kTile = size_t(kBlock) * kItems; // floats a tile of the one-pass ladder: 2048
// best's shapes by n (measured on the H200: research/day39-scan.md). Tiles are threads x float4
// loads a thread (all issued at once) x 4 floats.
constexpr size_t kOneWarpMax = 1024;               // ONE warp, 32 x 8 float4, up to here;
constexpr size_t kOneBlock256Max = 4096;           // ONE block of 256 x 4 float4 up to here;
constexpr size_t kDefaultOneBlockMax = 8192;       // ONE block of 512 x 4 float4 up to here;
constexpr size_t kSmallTilesMax = size_t(1) << 16; // look-back, tiles of 64 x 8 float4;
constexpr size_t kMidTilesMax = size_t(1) << 22;   // look-back, tiles of 256 x 8 float4;
constexpr int kBigLoads = 8;                       // above: 128 x 8 float4 (4096 floats),
constexpr unsigned int kFirstPollNs = 1100;        // polling after CUB 3.0.1's sm_90 float
constexpr unsigned int kPollNs = 700;              // delays (ns)
constexpr size_t kMinBestTile = 64 * 8 * 4;        // the smallest tile: 2048 floats
// best's status words lie kStatusSpread words (128 bytes) apart: no two tiles share a cache line,
// so a tile's publish and its successors' polls of other tiles do not queue on one line.
constexpr unsigned int kStatusSpread = 16;
// A tile's status word: ONE 64-bit word, so that no reader ever sees a status without its value:
// bits 0-31 the float, 32-33 the status, 34-63 the launch epoch (best; 0 in the ladder rows).
constexpr unsigned int kAggregate = 1; // the tile's own sum is published
// snippet: status-constants
constexpr unsigned int kInclusive = 2; // the tile's inclusive prefix (its sum and all before it)
constexpr unsigned int kEpochMask = (1u << 30) - 1;
// end snippet

constexpr size_t kMinN = size_t(1) << 10;  // smallest timed size
constexpr size_t kMaxN = size_t(1) << 30;  // largest (4 GiB in, 4 GiB out)
constexpr size_t kExact = size_t(1) << 24; // a float holds every integer up to 2^24
constexpr int kCheckChunk = 4096;          // the check: a warp walks 4096 outputs in order
constexpr int kL2Multiple = 4;             // inputs under 4 x L2 bytes are rotated
constexpr size_t kGuard = 64;              // NaN floats after each input and output copy
constexpr double kBatchBytes = 2.0 * (size_t(1) << 30); // input bytes a timed batch aims to read
constexpr int kMinCalls = 4, kMaxCalls = 1024;       // calls a batch (2^28 and up: 4; 2^10: 1024)
constexpr size_t kChainedMaxTimed = size_t(1) << 24; // chained is checked, not timed, above this:
                                                     // one link a tile: 2.3 ms at 2^24 (H200)
constexpr int kTimingBatches = 7;                    // odd, so the median is one batch

__host__ __device__ constexpr bool isPowerOfTwo(size_t x) {
  return x != 0 && (x & (x - 1)) == 0;
}

// Exactness lemma. The inputs are integers with |x| <= 1, P(i) = x[0] + ... + x[i], P(-1) = 0.
//  (a) A sum of a CONTIGUOUS range x[i..j] is P(j) - P(i-1): its magnitude is at most
//      R = max P - min P (over i = -1 .. n-1). The host computes R for the run's input and refuses
//      the run when R > 2^24.
//  (b) A sum of any m inputs has magnitude at most m.
// Every intermediate of every row is of kind (a): the register, warp (__shfl_up_sync) and block
// scans add neighbours to neighbours, a tile's prefix is added to the tile's own sums, and the
// look-back adds its window in lane order (below) - or of kind (b) with m at most one chunk: the
// reduce of reduce-then-scan adds a chunk's floats in a strided order. So with R <= 2^24 and every
// chunk <= 2^24 floats, every intermediate is an integer a float holds exactly, and every row is
// exact whatever the association. With all-ones R = n, so ones are exact only up to n = 2^24; the
// +1/-1 walk keeps R near sqrt(n) (38839 at 2^30 for seed 39, the run's banner line).
static_assert(kMaxN / kMaxChunks + kTile <= kExact, "(b): a chunk has at most 2^24 floats");
static_assert(kBlock % kWarp == 0 && kItems % 4 == 0, "whole warps, whole float4s");
static_assert(kMaxChunks <= 1024 && kMaxChunks % kWarp == 0, "one block scans the partials");
static_assert(isPowerOfTwo(kTile), "the ladder's tiles: a power of two");
static_assert(kCheckChunk % kWarp == 0, "the check's warps walk whole chunks");

// ---------------------------------------------------------------------------------------------
// The kernels, in ladder order.
// ---------------------------------------------------------------------------------------------

// copy (the ceiling): out[i] = in[i] for i < n. Any block size and grid (grid-stride); in and out
// share their misalignment, so one scalar head aligns both; float4 body; scalar tail.
// Needs: <cstdint>
// ptx: v4-loads
__global__ void copyKernel(const float *__restrict__ in, float *__restrict__ out, size_t n) {
  size_t tid = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  size_t stride = size_t(gridDim.x) * blockDim.x;
  size_t past = (reinterpret_cast<uintptr_t>(in) / sizeof(float)) % 4;
  size_t head = past == 0 ? 0 : (4 - past < n ? 4 - past : n);
  size_t nv = (n - head) / 4;
  size_t tail = head + nv * 4;
  if (tid < head) {
    out[tid] = in[tid];
  }
  const float4 *vin = reinterpret_cast<const float4 *>(in + head);
  float4 *vout = reinterpret_cast<float4 *>(out + head);
  for (size_t v = tid; v < nv; v += stride) {
    vout[v] = vin[v];
  }
  if (tid < n - tail) {
    out[tail + tid] = in[tail + tid];
  }
}

// The textbook block scan (Hillis & Steele 1986; GPU Gems 3, ch. 39's first scan): one float a
// thread in shared memory, log2(blockDim.x) steps, step k adds the value 2^k places to the left.
// Every thread of the block calls it (barriers inside); blockDim.x <= 1024; s holds blockDim.x
// floats. Returns this thread's inclusive prefix within the block; `total` gets the block's sum.
// Needs: nothing
__device__ float blockScanShared(float v, float *s, float &total) {
  unsigned int t = threadIdx.x;
  s[t] = v;
  __syncthreads();
  for (unsigned int offset = 1; offset < blockDim.x; offset *= 2) {
    float left = t >= offset ? s[t - offset] : 0.0f;
    __syncthreads(); // every read of this step before any write of it
    s[t] += left;
    __syncthreads(); // every write of this step before the next step's reads
  }
  float mine = s[t];
  total = s[blockDim.x - 1];
  __syncthreads(); // every thread has read s before a next call writes it
  return mine;
}

// snippet: block-scans
// Inclusive scan of one float a lane across a warp: step k adds the value of the lane 2^k below
// (Kogge-Stone). Call with all 32 lanes (the mask is the whole warp).
// Needs: kWarp, kFullMask
__device__ float warpInclusiveScan(float v) {
  unsigned int lane = threadIdx.x % kWarp;
  for (int offset = 1; offset < kWarp; offset *= 2) {
    float below = __shfl_up_sync(kFullMask, v, offset);
    if (lane >= unsigned(offset)) {
      v += below;
    }
  }
  return v;
}

// The block scan by shuffles: each warp scans its 32 values, lane 31 writes the warp's total to one
// shared slot, warp 0 scans those slots, each warp adds the total of the warps before it. Every
// thread calls it; blockDim.x a multiple of 32 up to 1024; warpTotals: blockDim.x / 32 floats.
// Returns this thread's inclusive prefix in the block, `total` the block's sum. Three barriers,
// where blockScanShared's tree takes 2 x log2(blockDim.x) + 2 (18 at 256 threads).
// Needs: kWarp, kFullMask, warpInclusiveScan
__device__ float blockScanShuffle(float v, float *warpTotals, float &total) {
  unsigned int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp, warps = blockDim.x / kWarp;
  v = warpInclusiveScan(v);
  if (lane == kWarp - 1) {
    warpTotals[warp] = v;
  }
  __syncthreads();
  if (warp == 0) { // the whole of warp 0 takes this branch: the full mask inside is right
    float t = warpInclusiveScan(lane < warps ? warpTotals[lane] : 0.0f);
    if (lane < warps) {
      warpTotals[lane] = t;
    }
  }
  __syncthreads();
  if (warp > 0) {
    v += warpTotals[warp - 1];
  }
  total = warpTotals[warps - 1];
  __syncthreads(); // every thread has read warpTotals before a next call writes it
  return v;
}
// end snippet

// The ladder's chunks: block b of a reduce-then-scan or scan-propagate row owns the floats
// [b * chunk, (b + 1) * chunk) of the input (the last chunk ends at n). Chunks are whole tiles.
// Needs: nothing
__device__ inline size_t chunkEnd(size_t first, size_t chunk, size_t n) {
  return first + chunk < n ? first + chunk : n;
}

enum class BlockScan { SharedTree, Shuffle };

// scan-propagate pass 1 and reduce-then-scan pass 3: block b scans its chunk one tile of blockDim.x
// floats (one a thread) at a time, carrying the running sum from tile to tile. seeds: nullptr (the
// chunk starts from 0) or the inclusive scan of the chunk partials (chunk b starts from
// seeds[b - 1]); totals: nullptr or where the chunk's total goes. how: the block scan. Assumes:
// blockDim.x == kBlock, one block a chunk (one block with chunk = n scans all of n). Plain loads,
// no __restrict__: in == out (in place) is allowed, each thread reads its element before it writes.
// Launch: scanChunks<<<1, kBlock>>>(in, out, n, n, nullptr, nullptr, BlockScan::SharedTree);
//   check prefixErrors(out, host) == 0
// Needs: kBlock, BlockScan, chunkEnd, blockScanShared, blockScanShuffle, warpInclusiveScan, kWarp,
//        kFullMask
// ptx: shfl
__global__ void __launch_bounds__(kBlock)
    scanChunks(const float *in, float *out, size_t n, size_t chunk, const float *seeds,
               float *totals, BlockScan how) {
  __shared__ float s[kBlock];
  size_t first = size_t(blockIdx.x) * chunk, end = chunkEnd(first, chunk, n);
  float carry = seeds != nullptr && blockIdx.x > 0 ? seeds[blockIdx.x - 1] : 0.0f;
  for (size_t base = first; base < end; base += kBlock) { // the same trips in every thread
    size_t i = base + threadIdx.x;
    float v = i < end ? in[i] : 0.0f, total = 0.0f;
    float p =
        how == BlockScan::Shuffle ? blockScanShuffle(v, s, total) : blockScanShared(v, s, total);
    if (i < end) {
      out[i] = carry + p;
    }
    carry += total;
  }
  if (totals != nullptr && threadIdx.x == 0) {
    totals[blockIdx.x] = carry;
  }
}

// The middle pass of both: ONE block scans the chunk partials in place (inclusive). Launch:
// <<<1, kMaxChunks>>>, count <= kMaxChunks.
// Needs: kMaxChunks, BlockScan, blockScanShared, blockScanShuffle, warpInclusiveScan, kWarp,
//        kFullMask
// ptx: shfl
__global__ void __launch_bounds__(kMaxChunks)
    scanPartials(float *partials, unsigned int count, BlockScan how) {
  __shared__ float s[kMaxChunks];
  float v = threadIdx.x < count ? partials[threadIdx.x] : 0.0f, total = 0.0f;
  float p =
      how == BlockScan::Shuffle ? blockScanShuffle(v, s, total) : blockScanShared(v, s, total);
  if (threadIdx.x < count) {
    partials[threadIdx.x] = p;
  }
}

// scan-propagate pass 3: chunk b >= 1 adds the sum of every chunk before it, scanned[b - 1], to
// each of its outputs. Launch: blockDim.x == kBlock, one block a chunk (block 0 has nothing to do).
// Needs: kBlock, chunkEnd
__global__ void __launch_bounds__(kBlock)
    addChunkPrefix(float *out, size_t n, size_t chunk, const float *scanned) {
  if (blockIdx.x == 0) {
    return;
  }
  float prefix = scanned[blockIdx.x - 1];
  size_t first = size_t(blockIdx.x) * chunk, end = chunkEnd(first, chunk, n);
  for (size_t i = first + threadIdx.x; i < end; i += kBlock) {
    out[i] = prefix + out[i];
  }
}

// The block sum of days 25-27 (shuffle first, one shared slot a warp): every thread calls it;
// blockDim.x a multiple of 32; warpSums holds blockDim.x / 32 floats. The sum is in thread 0.
// Needs: kWarp, kFullMask
__device__ float blockReduceSum(float v, float *warpSums) {
  unsigned int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  for (int offset = kWarp / 2; offset > 0; offset >>= 1) {
    v += __shfl_down_sync(kFullMask, v, offset);
  }
  if (lane == 0) {
    warpSums[warp] = v;
  }
  __syncthreads();
  if (warp == 0) { // the whole of warp 0 takes this branch
    v = lane < blockDim.x / kWarp ? warpSums[lane] : 0.0f;
    for (int offset = kWarp / 2; offset > 0; offset >>= 1) {
      v += __shfl_down_sync(kFullMask, v, offset);
    }
  }
  return v;
}

// reduce-then-scan pass 1 (the module's tile reduction): block b adds the floats of its chunk into
// partials[b]. vec: float4 loads (in 16-byte aligned, chunk a multiple of 4), else one float a
// load. Launch: blockDim.x == kBlock, one block a chunk. Exact by (b): a chunk's floats, any order.
// Needs: kBlock, kWarp, kWarpsPerBlock, kFullMask, chunkEnd, blockReduceSum
// ptx: v4-loads shfl
__global__ void __launch_bounds__(kBlock)
    reduceChunks(const float *in, size_t n, size_t chunk, float *partials, bool vec) {
  __shared__ float warpSums[kWarpsPerBlock];
  size_t first = size_t(blockIdx.x) * chunk, end = chunkEnd(first, chunk, n);
  size_t scalarFrom = first; // where the float4 part stops
  float v = 0.0f;
  if (vec) {
    const float4 *in4 = reinterpret_cast<const float4 *>(in + first);
    size_t whole = (end - first) / 4;
    for (size_t k = threadIdx.x; k < whole; k += kBlock) {
      float4 f = in4[k];
      v += (f.x + f.y) + (f.z + f.w);
    }
    scalarFrom = first + whole * 4;
  }
  for (size_t i = scalarFrom + threadIdx.x; i < end; i += kBlock) {
    v += in[i];
  }
  v = blockReduceSum(v, warpSums);
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = v;
  }
}

// One tile of kBlock x kItems floats from `first`, guarded against `end`: thread t owns the kItems
// consecutive floats from first + t * kItems, loads them (kItems / 4 float4 loads when vec and the
// thread's floats are all inside), scans them in registers (kItems - 1 adds), and the block scans
// the thread totals (shuffles). x[] becomes this thread's inclusive prefixes within the tile;
// returns the tile's sum, in every thread. Every thread of the block calls it. vec: in 16-byte
// aligned (first is a multiple of kTile).
// Needs: kBlock, kItems, blockScanShuffle, warpInclusiveScan, kWarp, kFullMask
__device__ float scanTileItems(const float *in, size_t end, size_t first, bool vec,
                               float (&x)[kItems], float *warpTotals) {
  size_t mine = first + size_t(threadIdx.x) * kItems;
  if (vec && mine + kItems <= end) {
#pragma unroll
    for (int k = 0; k < kItems; k += 4) {
      float4 f = *reinterpret_cast<const float4 *>(in + mine + k);
      x[k] = f.x, x[k + 1] = f.y, x[k + 2] = f.z, x[k + 3] = f.w;
    }
  } else {
#pragma unroll
    for (int k = 0; k < kItems; ++k) {
      x[k] = mine + k < end ? in[mine + k] : 0.0f;
    }
  }
#pragma unroll
  for (int k = 1; k < kItems; ++k) {
    x[k] += x[k - 1];
  }
  float total = 0.0f;
  float before = blockScanShuffle(x[kItems - 1], warpTotals, total) - x[kItems - 1]; // exact: (a)
#pragma unroll
  for (int k = 0; k < kItems; ++k) {
    x[k] = before + x[k];
  }
  return total;
}

// Writes prefix + x[k] to this thread's kItems floats of the tile (as scanTileItems loaded them).
// Needs: kItems
__device__ void storeTileItems(float *out, size_t end, size_t first, bool vec,
                               const float (&x)[kItems], float prefix) {
  size_t mine = first + size_t(threadIdx.x) * kItems;
  if (vec && mine + kItems <= end) {
#pragma unroll
    for (int k = 0; k < kItems; k += 4) {
      *reinterpret_cast<float4 *>(out + mine + k) =
          make_float4(prefix + x[k], prefix + x[k + 1], prefix + x[k + 2], prefix + x[k + 3]);
    }
  } else {
#pragma unroll
    for (int k = 0; k < kItems; ++k) {
      if (mine + k < end) {
        out[mine + k] = prefix + x[k];
      }
    }
  }
}

// items a thread, reduce-then-scan pass 3: as scanChunks with seeds, but a tile is kTile floats,
// kItems a thread. Launch: blockDim.x == kBlock, one block a chunk, chunk a multiple of kTile.
// Needs: kBlock, kItems, kTile, chunkEnd, scanTileItems, storeTileItems, blockScanShuffle,
//        warpInclusiveScan, kWarp, kWarpsPerBlock, kFullMask
// ptx: v4-loads shfl
__global__ void __launch_bounds__(kBlock)
    scanChunksItems(const float *in, float *out, size_t n, size_t chunk, const float *seeds,
                    bool vec) {
  __shared__ float warpTotals[kWarpsPerBlock];
  size_t first = size_t(blockIdx.x) * chunk, end = chunkEnd(first, chunk, n);
  float carry = blockIdx.x > 0 ? seeds[blockIdx.x - 1] : 0.0f;
  for (size_t base = first; base < end; base += kTile) {
    float x[kItems];
    float total = scanTileItems(in, end, base, vec, x, warpTotals);
    storeTileItems(out, end, base, vec, x, carry);
    carry += total;
  }
}

// snippet: status-words
// A tile's status word (see kAggregate): epoch 0 in the ladder rows, zeroed before each call;
// best's carry the launch's epoch, so a word left by an earlier launch reads as "not yet".
// Needs: kEpochMask
__device__ inline unsigned long long statusWord(unsigned int epoch, unsigned int status, float v) {
  return (static_cast<unsigned long long>(epoch & kEpochMask) << 34) |
         (static_cast<unsigned long long>(status) << 32) | __float_as_uint(v);
}
// Word w's status in this launch: 0 (nothing yet, or another epoch's), kAggregate or kInclusive.
// Needs: kEpochMask
__device__ inline unsigned int statusOf(unsigned long long w, unsigned int epoch) {
  return unsigned(w >> 34) == (epoch & kEpochMask) ? unsigned(w >> 32) & 3u : 0u;
}
// Publishing and reading a status word: relaxed atomics are enough, as the reader uses nothing but
// the word itself (status and value travel together) - why it is one word, not a flag and a value.
// Needs: statusWord, kEpochMask, <cuda/atomic>
__device__ inline void publish(unsigned long long *word, unsigned int epoch, unsigned int status,
                               float v) {
  cuda::atomic_ref<unsigned long long, cuda::thread_scope_device> w(*word);
  w.store(statusWord(epoch, status, v), cuda::memory_order_relaxed);
}
// Needs: <cuda/atomic>
__device__ inline unsigned long long readWord(unsigned long long *word) {
  cuda::atomic_ref<unsigned long long, cuda::thread_scope_device> w(*word);
  return w.load(cuda::memory_order_relaxed);
}
// end snippet

// chained: ONE pass over n. Launch: blockDim.x == kBlock, grid = ceil(n / kTile) blocks, one tile
// each; *counter == 0 and every status word 0 at launch (the launcher memsets them in the timed
// call). Why a counter and not blockIdx.x: a block spins until tile - 1 publishes. Were the tile
// blockIdx.x, block k could be resident and spinning while block k - 1 has not been scheduled at
// all (nothing guarantees the order in which blocks get an SM): every SM full of spinners, a
// deadlock. A tile drawn from a counter is drawn by a block that runs, and every smaller tile was
// drawn before by a block that runs too, so the tile it waits for is being worked on.
// Launch: scanChained<<<(n + kTile - 1) / kTile, kBlock>>>(in, out, n, true, counter, status);
//   check prefixErrors(out, host) == 0
// Needs: kBlock, kTile, kItems, kWarpsPerBlock, kInclusive, scanTileItems, storeTileItems,
//        publish, readWord, statusOf, statusWord, blockScanShuffle, warpInclusiveScan, kWarp,
//        kFullMask, kEpochMask, DELAY_BEFORE_PUBLISH, <cuda/atomic>
// ptx: v4-loads shfl atom
__global__ void __launch_bounds__(kBlock)
    scanChained(const float *in, float *out, size_t n, bool vec, unsigned int *counter,
                unsigned long long *status) {
  __shared__ float warpTotals[kWarpsPerBlock];
  __shared__ unsigned int sTile;
  __shared__ float sPrefix;
  if (threadIdx.x == 0) {
    sTile = atomicAdd(counter, 1u);
  }
  __syncthreads();
  const unsigned int tile = sTile;
  const size_t first = size_t(tile) * kTile;
  float x[kItems];
  float total = scanTileItems(in, n, first, vec, x, warpTotals);
  if (threadIdx.x == 0) { // ONE thread waits, then publishes
    float prefix = 0.0f;
    if (tile > 0) {
      unsigned long long w;
      while (statusOf(w = readWord(&status[tile - 1]), 0) != kInclusive) {
      }
      prefix = __uint_as_float(unsigned(w));
    }
    DELAY_BEFORE_PUBLISH(tile);
    publish(&status[tile], 0, kInclusive, prefix + total);
    sPrefix = prefix;
  }
  __syncthreads(); // hands sPrefix to the block
  storeTileItems(out, n, first, vec, x, sPrefix);
}

// snippet: look-back
// Decoupled look-back (Merrill & Garland 2016) by ONE whole warp of tile `tile` >= 1: returns the
// sum of every tile before it. Lane l waits until tile window - l has published something; lanes up
// to the nearest inclusive prefix add their values, and with none in the window it moves 32 tiles
// back. The adds run in lane order (shuffle offsets 1, 2, 4, ...), so each sum covers consecutive
// tiles: exact by lemma (a). Tile t's word is status[t * spread] (best: kStatusSpread, else 1).
// firstPollNs, pollNs: __nanosleep (sm_70+) before the first read and between reads of a word with
// nothing yet (0: spin); best's large tiles use CUB's delays.
// Needs: kWarp, kFullMask, kInclusive, statusOf, readWord, kEpochMask, <cuda/atomic>
__device__ float lookBack(unsigned long long *status, unsigned int spread, unsigned int tile,
                          unsigned int epoch, unsigned int firstPollNs, unsigned int pollNs) {
  unsigned int lane = threadIdx.x % kWarp;
  float exclusive = 0.0f;
  if (firstPollNs > 0) {
    __nanosleep(firstPollNs);
  }
  for (long long window = (long long)tile - 1;; window -= kWarp) {
    long long pred = window - lane;
    unsigned long long w = 0;
    unsigned int st = kInclusive; // before tile 0: an inclusive prefix of 0
    if (pred >= 0) {
      while ((st = statusOf(w = readWord(&status[size_t(pred) * spread]), epoch)) == 0) {
        if (pollNs > 0) {
          __nanosleep(pollNs);
        }
      }
    }
    unsigned int inclusive = __ballot_sync(kFullMask, st == kInclusive);
    unsigned int stop = inclusive != 0 ? __ffs(inclusive) - 1 : kWarp - 1;
    float v = lane <= stop ? __uint_as_float(unsigned(w)) : 0.0f;
    for (int offset = 1; offset < kWarp; offset *= 2) {
      v += __shfl_down_sync(kFullMask, v, offset);
    }
    exclusive += __shfl_sync(kFullMask, v, 0);
    if (inclusive != 0) {
      return exclusive;
    }
  }
}
// end snippet

// look-back: chained, except that each tile publishes its own sum (an aggregate) before it looks
// back, so a successor never waits for a whole chain, only for its window. Same launch contract as
// scanChained.
// Launch: scanLookBack<<<(n + kTile - 1) / kTile, kBlock>>>(in, out, n, true, counter, status);
//   check prefixErrors(out, host) == 0
// Needs: kBlock, kTile, kItems, kWarp, kWarpsPerBlock, kAggregate, kInclusive, scanTileItems,
//        storeTileItems, lookBack, publish, readWord, statusOf, statusWord, blockScanShuffle,
//        warpInclusiveScan, kFullMask, kEpochMask, DELAY_BEFORE_PUBLISH, <cuda/atomic>
// ptx: v4-loads shfl atom
__global__ void __launch_bounds__(kBlock)
    scanLookBack(const float *in, float *out, size_t n, bool vec, unsigned int *counter,
                 unsigned long long *status) {
  __shared__ float warpTotals[kWarpsPerBlock];
  __shared__ unsigned int sTile;
  __shared__ float sPrefix;
  if (threadIdx.x == 0) {
    sTile = atomicAdd(counter, 1u);
  }
  __syncthreads();
  const unsigned int tile = sTile;
  const size_t first = size_t(tile) * kTile;
  float x[kItems];
  float total = scanTileItems(in, n, first, vec, x, warpTotals);
  if (threadIdx.x == 0) {
    DELAY_BEFORE_PUBLISH(tile);
    publish(&status[tile], 0, tile == 0 ? kInclusive : kAggregate, total);
  }
  if (threadIdx.x < kWarp) { // warp 0, whole: tile is the same in every lane
    float prefix = tile == 0 ? 0.0f : lookBack(status, 1, tile, 0, 0, 0);
    if (threadIdx.x == 0) {
      if (tile > 0) {
        publish(&status[tile], 0, kInclusive, prefix + total);
      }
      sPrefix = prefix;
    }
  }
  __syncthreads();
  storeTileItems(out, n, first, vec, x, sPrefix);
}

// best's tile, warp-striped: warp w owns kLoads x 128 consecutive floats from first + w x kLoads
// x 128; lane l loads float4 j of them at 4 x (j x 32 + l): each load instruction of a warp reads
// 512 contiguous bytes (piece j), and all kLoads loads are issued before the first add. v[j]
// becomes the lane's 4 inclusive sums within its part of piece j, before[j] the sum of the warp's
// floats before that part, warpBefore the sum of the tile's floats before the warp; returns the
// tile's sum. Every thread of the block calls it. full: in 16-byte aligned and the whole tile
// inside n (else guarded scalar loads).
// Needs: kWarp, kFullMask, warpInclusiveScan
template <int kThreads, int kLoads>
__device__ float scanTileStriped(const float *in, size_t n, size_t first, bool full,
                                 float4 (&v)[kLoads], float (&before)[kLoads], float &warpBefore,
                                 float *warpTotals) {
  const unsigned int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  const size_t part = first + size_t(warp) * kLoads * kWarp * 4 + size_t(lane) * 4;
  if (full) {
#pragma unroll
    for (int j = 0; j < kLoads; ++j) {
      v[j] = *reinterpret_cast<const float4 *>(in + part + size_t(j) * kWarp * 4);
    }
  } else {
#pragma unroll
    for (int j = 0; j < kLoads; ++j) {
      size_t i = part + size_t(j) * kWarp * 4;
      v[j] = make_float4(i < n ? in[i] : 0.0f, i + 1 < n ? in[i + 1] : 0.0f,
                         i + 2 < n ? in[i + 2] : 0.0f, i + 3 < n ? in[i + 3] : 0.0f);
    }
  }
  float carry = 0.0f; // the warp's pieces before piece j
#pragma unroll
  for (int j = 0; j < kLoads; ++j) {
    v[j].y += v[j].x;
    v[j].z += v[j].y;
    v[j].w += v[j].z;
    float upTo = warpInclusiveScan(v[j].w);           // lanes 0..lane of piece j
    before[j] = carry + (upTo - v[j].w);              // exact: (a)
    carry += __shfl_sync(kFullMask, upTo, kWarp - 1); // + piece j's total
  }
  if (lane == 0) {
    warpTotals[warp] = carry;
  }
  __syncthreads();
  float tileTotal = 0.0f;
  warpBefore = 0.0f;
#pragma unroll
  for (int w = 0; w < kThreads / kWarp; ++w) { // in order: every partial sum is contiguous
    float t = warpTotals[w];
    warpBefore += unsigned(w) < warp ? t : 0.0f;
    tileTotal += t;
  }
  return tileTotal;
}

// Writes base + before[j] + v[j] to the floats scanTileStriped loaded (base: the sum of all floats
// before this warp's part of the tile, i.e. the tile's prefix + warpBefore).
// Needs: kWarp
template <int kLoads>
__device__ void storeTileStriped(float *out, size_t n, size_t first, bool full,
                                 const float4 (&v)[kLoads], const float (&before)[kLoads],
                                 float base) {
  const unsigned int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  const size_t part = first + size_t(warp) * kLoads * kWarp * 4 + size_t(lane) * 4;
#pragma unroll
  for (int j = 0; j < kLoads; ++j) {
    size_t i = part + size_t(j) * kWarp * 4;
    float b = base + before[j];
    float4 o = make_float4(b + v[j].x, b + v[j].y, b + v[j].z, b + v[j].w);
    if (full) {
      *reinterpret_cast<float4 *>(out + i) = o;
    } else {
      const float parts[4] = {o.x, o.y, o.z, o.w};
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        if (i + k < n) {
          out[i + k] = parts[k];
        }
      }
    }
  }
}

// best, small n: ONE block scans all of in[0, n), tile by tile, carrying the running sum (best uses
// it for n <= --one-block-max, 8192 by default). No counter, no status words, one launch. Launch:
// <<<1, kThreads>>>, kThreads a multiple of 32 (one warp will do); vec: in and out 16-byte aligned.
// Needs: kWarp, kFullMask, scanTileStriped, storeTileStriped, warpInclusiveScan
// ptx: v4-loads shfl
template <int kThreads, int kLoads>
__global__ void __launch_bounds__(kThreads)
    scanOneBlock(const float *in, float *out, size_t n, bool vec) {
  __shared__ float warpTotals[kThreads / kWarp];
  constexpr size_t kTileFloats = size_t(kThreads) * kLoads * 4;
  float carry = 0.0f;
  for (size_t first = 0; first < n; first += kTileFloats) {
    bool full = vec && first + kTileFloats <= n;
    float4 v[kLoads];
    float before[kLoads], warpBefore = 0.0f;
    float total =
        scanTileStriped<kThreads, kLoads>(in, n, first, full, v, before, warpBefore, warpTotals);
    storeTileStriped<kLoads>(out, n, first, full, v, before, carry + warpBefore);
    carry += total;
    __syncthreads(); // every thread has read warpTotals before the next tile writes it
  }
}

// best above one block: the look-back on warp-striped tiles, no memset a call. The counter word is
// epoch << 32 | tiles drawn: one fetch_add gives a block its tile AND the launch's epoch; the last
// drawer (all others drew before it) stores (epoch + 1) << 32 for the next launch. Status words
// carry the epoch, so words of an earlier launch read as "not yet" (unless one survives 2^30
// launches unwritten). Assumes: blockDim.x == kThreads, grid = ceil(n / tile); counter and status
// words zeroed once; launches sharing a counter run one after the other (one stream). firstPollNs,
// pollNs: lookBack's sleeps.
// Launch: scanBest<256, 8><<<(n + 8191) / 8192, 256>>>(in, out, n, true, counter, status, 0,
//   0); check prefixErrors(out, host) == 0
// Needs: kWarp, kFullMask, kAggregate, kInclusive, kEpochMask, scanTileStriped, storeTileStriped,
//        warpInclusiveScan, lookBack, publish, readWord, statusOf, statusWord,
//        DELAY_BEFORE_PUBLISH, <cuda/atomic>
// ptx: v4-loads shfl atom
template <int kThreads, int kLoads>
__global__ void __launch_bounds__(kThreads)
    scanBest(const float *in, float *out, size_t n, bool vec, unsigned long long *counter,
             unsigned long long *status, unsigned int firstPollNs, unsigned int pollNs) {
  __shared__ float warpTotals[kThreads / kWarp];
  __shared__ unsigned int sTile, sEpoch;
  __shared__ float sPrefix;
  constexpr size_t kTileFloats = size_t(kThreads) * kLoads * 4;
  if (threadIdx.x == 0) {
    cuda::atomic_ref<unsigned long long, cuda::thread_scope_device> draws(*counter);
    unsigned long long drawn = draws.fetch_add(1ull, cuda::memory_order_relaxed);
    sTile = unsigned(drawn);
    sEpoch = unsigned(drawn >> 32);
    if (sTile == gridDim.x - 1) { // the last draw of this launch
      draws.store(static_cast<unsigned long long>(sEpoch + 1) << 32, cuda::memory_order_relaxed);
    }
  }
  __syncthreads();
  const unsigned int tile = sTile, epoch = sEpoch;
  const size_t first = size_t(tile) * kTileFloats;
  const bool full = vec && first + kTileFloats <= n;
  float4 v[kLoads];
  float before[kLoads], warpBefore = 0.0f;
  float total =
      scanTileStriped<kThreads, kLoads>(in, n, first, full, v, before, warpBefore, warpTotals);
  if (threadIdx.x == 0) {
    DELAY_BEFORE_PUBLISH(tile);
    publish(&status[size_t(tile) * kStatusSpread], epoch, tile == 0 ? kInclusive : kAggregate,
            total);
  }
  if (threadIdx.x < kWarp) { // all 32 lanes of warp 0: lookBack's full masks are right
    float prefix =
        tile == 0 ? 0.0f : lookBack(status, kStatusSpread, tile, epoch, firstPollNs, pollNs);
    if (threadIdx.x == 0) {
      if (tile > 0) {
        publish(&status[size_t(tile) * kStatusSpread], epoch, kInclusive, prefix + total);
      }
      sPrefix = prefix;
    }
  }
  __syncthreads();
  storeTileStriped<kLoads>(out, n, first, full, v, before, sPrefix + warpBefore);
}

// ---------------------------------------------------------------------------------------------
// The input and the exact check (device side).
// ---------------------------------------------------------------------------------------------

// The inputs, every one a function of (seed, index) alone, so the check can recompute any element:
// the lesson's +1/-1 walk; the test program's all-ones and random 0/1 (exact only up to 2^24).
enum class Input { PlusMinusOne, Ones, ZeroOne };

// splitmix64's finalizer over seed and index (Steele, Lea & Flood 2014): 32 well-mixed bits.
// Needs: <cstdint>
__host__ __device__ inline uint32_t hashIndex(uint64_t seed, uint64_t i) {
  uint64_t z = seed + (i + 1) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return uint32_t((z ^ (z >> 31)) >> 32);
}
// Needs: Input, hashIndex, <cstdint>
__host__ __device__ inline int inputValue(Input kind, uint64_t seed, uint64_t i) {
  uint32_t bit = hashIndex(seed, i) & 1u;
  return kind == Input::Ones ? 1 : kind == Input::ZeroOne ? int(bit) : bit ? 1 : -1;
}

// Fills a ring of copies: p[j] = input element j % slot if j % slot < n, else NaN (the guard after
// each copy). Any grid (grid-stride).
// Needs: Input, inputValue, hashIndex, <cstdint>
__global__ void fillRing(float *p, size_t count, size_t slot, size_t n, Input kind, uint64_t seed) {
  size_t stride = size_t(gridDim.x) * blockDim.x;
  for (size_t j = size_t(blockIdx.x) * blockDim.x + threadIdx.x; j < count; j += stride) {
    size_t i = j % slot;
    p[j] = i < n ? float(inputValue(kind, seed, i)) : __int_as_float(0x7fc00000);
  }
}

// The check: warp c walks outputs [c x kCheckChunk, (c + 1) x kCheckChunk) in order, recomputing
// the input and its exact prefix in integers (32-bit lane scans, a 64-bit running sum: no rounding
// at all), starting from seeds[c], the exact prefix before the chunk (computed on the host).
// counts[0] += outputs in [0, n) whose bits differ from float(prefix); counts[1] += floats of [n,
// slot) that are not NaN; counts[2] = the smallest index that differs (atomicMin). Any grid of
// whole warps.
// Needs: kWarp, kFullMask, kCheckChunk, Input, inputValue, hashIndex, <cstdint>
__global__ void checkScan(const float *out, size_t n, size_t slot, Input kind, uint64_t seed,
                          const long long *seeds, unsigned long long *counts) {
  unsigned int lane = threadIdx.x % kWarp;
  size_t warps = size_t(gridDim.x) * blockDim.x / kWarp;
  unsigned long long wrong = 0, strays = 0;
  for (size_t c = (size_t(blockIdx.x) * blockDim.x + threadIdx.x) / kWarp; c * kCheckChunk < n;
       c += warps) {
    long long running = seeds[c];
    for (int k = 0; k < kCheckChunk; k += kWarp) {
      size_t i = c * kCheckChunk + k + lane;
      int p = i < n ? inputValue(kind, seed, i) : 0;
      for (int offset = 1; offset < kWarp; offset *= 2) {
        int below = __shfl_up_sync(kFullMask, p, offset);
        p += lane >= unsigned(offset) ? below : 0;
      }
      float want = float(running + p);
      if (i < n && __float_as_uint(out[i]) != __float_as_uint(want)) {
        ++wrong;
        atomicMin(&counts[2], (unsigned long long)i);
      }
      running += __shfl_sync(kFullMask, p, kWarp - 1);
    }
  }
  size_t stride = size_t(gridDim.x) * blockDim.x;
  for (size_t i = n + size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < slot; i += stride) {
    strays += !isnan(out[i]);
  }
  if (wrong != 0) {
    atomicAdd(&counts[0], wrong);
  }
  if (strays != 0) {
    atomicAdd(&counts[1], strays);
  }
}

// The copy's check: counts[0] += elements of out[0, n) that differ from in, counts[1] += floats of
// [n, slot) that are not NaN, counts[2] = the smallest index that differs. Any grid.
// Needs: nothing
__global__ void checkCopy(const float *in, const float *out, size_t n, size_t slot,
                          unsigned long long *counts) {
  size_t stride = size_t(gridDim.x) * blockDim.x;
  unsigned long long wrong = 0, strays = 0;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < slot; i += stride) {
    float v = out[i];
    if (i < n && __float_as_uint(v) != __float_as_uint(in[i])) {
      ++wrong;
      atomicMin(&counts[2], (unsigned long long)i);
    }
    strays += i >= n && !isnan(v);
  }
  if (wrong != 0) {
    atomicAdd(&counts[0], wrong);
  }
  if (strays != 0) {
    atomicAdd(&counts[1], strays);
  }
}

// ---------------------------------------------------------------------------------------------
// Host side: the library call, the rows' launchers, the exact check.
// ---------------------------------------------------------------------------------------------

// The library row: called once with temp == nullptr, which only writes the bytes it needs into
// `tempBytes` (no launch), then with that storage. n <= 2^30 fits CUB's int count on every CUDA
// 12.x and 13.x. In place (in == out) is allowed. Nothing is allocated or synchronized here.
// Needs: <cub/device/device_scan.cuh>
static cudaError_t cubScan(void *temp, size_t &tempBytes, const float *in, float *out, size_t n,
                           cudaStream_t stream) {
  return cub::DeviceScan::InclusiveSum(temp, tempBytes, in, out, int(n), stream);
}

// The rows, in table order (kRows below: one line each, same order).
enum class Row {
  Copy,
  Cub,
  ScanPropagate,
  ReduceScan,
  Shuffles,
  Items,
  Chained,
  LookBack,
  Best,
  Count
};
constexpr int kRowCount = int(Row::Count);

// What the launchers use: the device, and scratch allocated once for the largest n.
struct Setup {
  cudaDeviceProp prop;
  size_t oneBlockMax = kDefaultOneBlockMax; // best runs ONE block for n <= this
  float *partials = nullptr;                // kMaxChunks floats: chunk totals, then their scan
  unsigned long long *state = nullptr;      // chained, look-back: [0] the counter, then a word a
  size_t stateWords = 0;                    //   tile (memset by each call)
  unsigned long long *bestState = nullptr;  // best: [0] epoch << 32 | draws, then a word a tile
  size_t bestStateWords = 0;                //   (zeroed once)
  void *cubTemp = nullptr;
  size_t cubTempBytes = 0;
  unsigned long long *counts = nullptr; // the check's 3 counters
  long long *seeds = nullptr;           // the check: exact prefix before each check chunk
};

// One call of one row: in[0, n) -> out[0, n) on `stream`.
struct Call {
  const Setup &s;
  const float *in;
  float *out;
  size_t n;
  cudaStream_t stream;
};

static bool aligned16(const void *p) {
  return reinterpret_cast<uintptr_t>(p) % 16 == 0;
}

// The chunks of a reduce-then-scan or scan-propagate row: whole tiles, at most kMaxChunks chunks.
struct Chunks {
  unsigned int count;
  size_t floats;
};
static Chunks chunksFor(size_t n, size_t tile) {
  size_t tiles = (n + tile - 1) / tile;
  size_t perChunk = (tiles + kMaxChunks - 1) / kMaxChunks; // tiles a chunk
  return {unsigned((tiles + perChunk - 1) / perChunk), perChunk * tile};
}

// The launchers only enqueue (no allocation, no synchronization: safe inside a graph capture);
// launchRow checks the last launch, a launcher of several checks the ones before.
static void launchCopy(const Call &c) {
  if (c.n == 0) {
    return; // nothing to scan: no launch (CUB's rule too)
  }
  size_t blocks = std::min<size_t>((c.n / 4 + kBlock - 1) / kBlock, 65536);
  copyKernel<<<unsigned(std::max<size_t>(1, blocks)), kBlock, 0, c.stream>>>(c.in, c.out, c.n);
}
static void launchCub(const Call &c) {
  if (c.n == 0) {
    return; // nothing to scan: no launch (CUB's rule too)
  }
  size_t bytes = c.s.cubTempBytes;
  CUDA_CHECK(cubScan(c.s.cubTemp, bytes, c.in, c.out, c.n, c.stream));
}
static void launchScanPropagate(const Call &c) { // scan, scan the totals, add the prefixes: 4n
  if (c.n == 0) {
    return; // nothing to scan: no launch (CUB's rule too)
  }
  Chunks k = chunksFor(c.n, kBlock);
  scanChunks<<<k.count, kBlock, 0, c.stream>>>(c.in, c.out, c.n, k.floats, nullptr, c.s.partials,
                                               BlockScan::SharedTree);
  CUDA_CHECK(cudaGetLastError());
  scanPartials<<<1, kMaxChunks, 0, c.stream>>>(c.s.partials, k.count, BlockScan::SharedTree);
  CUDA_CHECK(cudaGetLastError());
  addChunkPrefix<<<k.count, kBlock, 0, c.stream>>>(c.out, c.n, k.floats, c.s.partials);
}
static void reduceThenScan(const Call &c, BlockScan how) { // reduce, scan the partials, scan: 3n
  if (c.n == 0) {
    return; // nothing to scan: no launch (chunksFor would divide by 0)
  }
  Chunks k = chunksFor(c.n, kBlock);
  reduceChunks<<<k.count, kBlock, 0, c.stream>>>(c.in, c.n, k.floats, c.s.partials, false);
  CUDA_CHECK(cudaGetLastError());
  scanPartials<<<1, kMaxChunks, 0, c.stream>>>(c.s.partials, k.count, how);
  CUDA_CHECK(cudaGetLastError());
  scanChunks<<<k.count, kBlock, 0, c.stream>>>(c.in, c.out, c.n, k.floats, c.s.partials, nullptr,
                                               how);
}
static void launchReduceScan(const Call &c) {
  reduceThenScan(c, BlockScan::SharedTree);
}
static void launchShuffles(const Call &c) {
  reduceThenScan(c, BlockScan::Shuffle);
}
static void launchItems(const Call &c) { // reduce-then-scan, kItems a thread, float4 loads
  if (c.n == 0) {
    return; // nothing to scan: no launch (CUB's rule too)
  }
  Chunks k = chunksFor(c.n, kTile);
  bool vec = aligned16(c.in) && aligned16(c.out);
  reduceChunks<<<k.count, kBlock, 0, c.stream>>>(c.in, c.n, k.floats, c.s.partials, vec);
  CUDA_CHECK(cudaGetLastError());
  scanPartials<<<1, kMaxChunks, 0, c.stream>>>(c.s.partials, k.count, BlockScan::Shuffle);
  CUDA_CHECK(cudaGetLastError());
  scanChunksItems<<<k.count, kBlock, 0, c.stream>>>(c.in, c.out, c.n, k.floats, c.s.partials, vec);
}
// chained and look-back: counter and status words zeroed by a memset in the same call (timed).
static void launchOnePass(const Call &c, bool lookBack) {
  if (c.n == 0) {
    return; // nothing to scan: a grid of 0 blocks is not a launch
  }
  unsigned int tiles = unsigned((c.n + kTile - 1) / kTile);
  bool vec = aligned16(c.in) && aligned16(c.out);
  CUDA_CHECK(
      cudaMemsetAsync(c.s.state, 0, (1 + size_t(tiles)) * sizeof(unsigned long long), c.stream));
  auto counter = reinterpret_cast<unsigned int *>(c.s.state);
  if (lookBack) {
    scanLookBack<<<tiles, kBlock, 0, c.stream>>>(c.in, c.out, c.n, vec, counter, c.s.state + 1);
  } else {
    scanChained<<<tiles, kBlock, 0, c.stream>>>(c.in, c.out, c.n, vec, counter, c.s.state + 1);
  }
}
static void launchChained(const Call &c) {
  launchOnePass(c, false);
}
static void launchLookBack(const Call &c) {
  launchOnePass(c, true);
}
// best's look-back tile (floats) at n: 0 where best runs one block.
static size_t bestTile(size_t n, size_t oneBlockMax) {
  return n <= oneBlockMax      ? 0
         : n <= kSmallTilesMax ? 64 * 8 * 4
         : n <= kMidTilesMax   ? 256 * 8 * 4
                               : 128 * kBigLoads * 4;
}
// best's counter and status words for every n up to maxN: the counter alone on its 64 bytes, then
// one word every kStatusSpread words, a tile of the smallest tile size each.
static size_t bestStateWordsFor(size_t maxN) {
  return kStatusSpread * (1 + (maxN + kMinBestTile - 1) / kMinBestTile);
}
// best: one warp, or one block of 256 or 512, or the look-back on its tile of the size.
static void launchBest(const Call &c) {
  if (c.n == 0) {
    return; // nothing to scan: no launch (CUB's rule too)
  }
  bool vec = aligned16(c.in) && aligned16(c.out);
  size_t n = c.n, tile = bestTile(n, c.s.oneBlockMax);
  unsigned int tiles = tile ? unsigned((n + tile - 1) / tile) : 1;
  unsigned long long *counter = c.s.bestState, *status = c.s.bestState + kStatusSpread;
  if (tile == 0 && n <= kOneWarpMax) {
    scanOneBlock<32, 8><<<1, 32, 0, c.stream>>>(c.in, c.out, n, vec);
  } else if (tile == 0 && n <= kOneBlock256Max) {
    scanOneBlock<256, 4><<<1, 256, 0, c.stream>>>(c.in, c.out, n, vec);
  } else if (tile == 0) {
    scanOneBlock<512, 4><<<1, 512, 0, c.stream>>>(c.in, c.out, n, vec);
  } else if (n <= kSmallTilesMax) {
    scanBest<64, 8><<<tiles, 64, 0, c.stream>>>(c.in, c.out, n, vec, counter, status, 0, 0);
  } else if (n <= kMidTilesMax) {
    scanBest<256, 8><<<tiles, 256, 0, c.stream>>>(c.in, c.out, n, vec, counter, status, 0, 0);
  } else {
    scanBest<128, kBigLoads>
        <<<tiles, 128, 0, c.stream>>>(c.in, c.out, n, vec, counter, status, kFirstPollNs, kPollNs);
  }
}

// The row table, indexed by Row. A new row: a Row entry, a launcher, a line here.
struct RowDef {
  const char *name, *produces;
  void (*launch)(const Call &);
};
static const RowDef kRows[kRowCount] = {
    {"copy", "copy", launchCopy},
    {"CUB", "n floats", launchCub},
    {"scan-propagate", "n floats", launchScanPropagate},
    {"reduce-then-scan", "n floats", launchReduceScan},
    {"warp shuffles", "n floats", launchShuffles},
    {"items a thread", "n floats", launchItems},
    {"chained", "n floats", launchChained},
    {"look-back", "n floats", launchLookBack},
    {"best", "n floats", launchBest},
};
// Enqueues one call of row r on `stream` and checks the launch.
static void launchRow(Row r, const Setup &s, const float *in, float *out, size_t n,
                      cudaStream_t stream) {
  kRows[int(r)].launch({s, in, out, n, stream});
  CUDA_CHECK(cudaGetLastError());
}

// The exact prefix of an input on the host, before anything is allocated: seeds[c] = P(c x
// kCheckChunk - 1) for every check chunk of [0, maxN), and the range R = max P - min P of lemma (a)
// (P(-1) = 0 included). One pass of maxN hashes (about a second at 2^30).
struct Reference {
  Input kind;
  uint64_t seed;
  std::vector<long long> seeds;
  long long range;
};
static Reference referenceFor(Input kind, uint64_t seed, size_t maxN) {
  Reference ref{kind, seed, {}, 0};
  long long p = 0, lo = 0, hi = 0;
  for (size_t i = 0; i < maxN; ++i) {
    if (i % kCheckChunk == 0) {
      ref.seeds.push_back(p);
    }
    p += inputValue(kind, seed, i);
    lo = std::min(lo, p);
    hi = std::max(hi, p);
  }
  ref.range = hi - lo;
  return ref;
}

struct Check {
  bool ok;
  unsigned long long wrong, strays, first; // elements that differ, writes past n, first index
  double got, want;
};

// Checks what row r left in out[0, slot): every element of [0, n) bit for bit (the copy: against
// in; the scans: against the exact prefix of ref), and [n, slot) still NaN. s.seeds holds
// ref.seeds. On a mismatch got/want are those of the first differing element.
static Check checkRow(Row r, const Setup &s, const Reference &ref, const float *in,
                      const float *out, size_t n, size_t slot, cudaStream_t stream) {
  unsigned long long counts[3] = {0, 0, ~0ull};
  CUDA_CHECK(cudaMemcpyAsync(s.counts, counts, sizeof counts, cudaMemcpyHostToDevice, stream));
  if (r == Row::Copy) {
    checkCopy<<<1024, 256, 0, stream>>>(in, out, n, slot, s.counts);
  } else {
    checkScan<<<1024, 256, 0, stream>>>(out, n, slot, ref.kind, ref.seed, s.seeds, s.counts);
  }
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaMemcpyAsync(counts, s.counts, sizeof counts, cudaMemcpyDeviceToHost, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  Check c{counts[0] == 0 && counts[1] == 0, counts[0], counts[1], counts[2], 0.0, 0.0};
  if (counts[0] != 0) {
    float got = 0.0f;
    CUDA_CHECK(cudaMemcpy(&got, out + c.first, sizeof got, cudaMemcpyDeviceToHost));
    long long want = ref.seeds[c.first / kCheckChunk];
    for (size_t i = c.first / kCheckChunk * kCheckChunk; i <= c.first; ++i) {
      want += inputValue(ref.kind, ref.seed, i);
    }
    c.got = got;
    c.want = r == Row::Copy ? double(inputValue(ref.kind, ref.seed, c.first)) : double(want);
  }
  return c;
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

#ifndef REDUCTION_HARNESS
// ---------------------------------------------------------------------------------------------
// The table: input rotation, one measured row, the printer, the options, main.
// ---------------------------------------------------------------------------------------------

// One size's copies: `buffers` input copies and as many output copies, `slot` floats apart (n + a
// NaN guard, rounded up to 256 bytes). One copy when 8n bytes pass kL2Multiple x L2, else enough
// that the copies do; call k reads input copy k % buffers and writes output copy k % buffers.
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
  double calls = kBatchBytes / (4.0 * double(n));
  return int(std::max<double>(kMinCalls, std::min<double>(kMaxCalls, calls)));
}

struct Measured {
  size_t n;
  Row row;
  int buffers; // distinct copies touched between two touches of the same one
  bool dram;   // those copies add up to kL2Multiple x L2 or more
  Timing t;
  bool ok;
  bool timed; // false: checked once, not timed (chained above kChainedMaxTimed)
};

// Checks row r once, times it (every batch from poisoned outputs), checks what the LAST timed call
// wrote. A failure prints `CHECK FAILED: <row> n=... element i got G want W (...)`.
static Measured measureRow(Row r, bool graph, const Setup &s, const Reference &ref, float *in,
                           float *out, Layout &l, cudaStream_t stream, int &checks, int &failures) {
  int calls = callsPerBatch(l.n);
  Measured m{l.n,        r,    graph ? std::min(l.buffers, calls) : l.buffers, false,
             {0.0, 0.0}, true, r != Row::Chained || l.n <= kChainedMaxTimed};
  m.dram = m.buffers * 8.0 * double(l.n) >= double(kL2Multiple) * double(s.prop.l2CacheSize);
  size_t ring = size_t(l.buffers) * l.slot;
  auto at = [&](float *base, int k) { return base + size_t(k) * l.slot; };
  auto poison = [&] {
    CUDA_CHECK(cudaMemsetAsync(out, 0xFF, ring * sizeof(float), stream));
    CUDA_CHECK(cudaMemsetAsync(s.partials, 0xFF, kMaxChunks * sizeof(float), stream));
  };
  auto count = [&](const Check &c, const char *when) {
    ++checks;
    if (!c.ok) {
      std::printf("CHECK FAILED: %s n=%zu element %llu got %.0f want %.0f (off by %.0f; %llu of "
                  "n differ, %llu written past n) [%s, %s timing]\n",
                  kRows[int(r)].name, l.n, c.first, c.got, c.want, c.got - c.want, c.wrong,
                  c.strays, graph ? "graph" : "stream", when);
      ++failures;
      m.ok = false;
    }
  };
  poison();
  launchRow(r, s, at(in, 0), at(out, 0), l.n, stream);
  CUDA_CHECK(cudaStreamSynchronize(stream));
  count(checkRow(r, s, ref, at(in, 0), at(out, 0), l.n, l.slot, stream), "before");
  if (!m.timed) {
    return m;
  }
  auto call = [&] {
    l.last = int(l.next++ % l.buffers);
    launchRow(r, s, at(in, l.last), at(out, l.last), l.n, stream);
  };
  m.t = graph ? timeGraph(call, poison, calls, stream) : timeKernel(call, poison, calls, stream);
  CUDA_CHECK(cudaStreamSynchronize(stream));
  count(checkRow(r, s, ref, at(in, l.last), at(out, l.last), l.n, l.slot, stream), "after");
  return m;
}

// One mode's table (kRowCount lines a size) and its summary. GB/s counts 8 bytes a float (read +
// written) for every row; % of copy = copy's us / this row's us, only where 8n bytes pass
// kL2Multiple x L2; vs CUB = CUB's us / this row's us.
static void printTable(bool graph, const std::vector<Measured> &out, double l2Bytes) {
  std::printf("\n%s: %d batches, median; %s\n\n", graph ? "graph" : "stream", kTimingBatches,
              graph ? "a batch is ONE replay of a CUDA graph of back-to-back calls"
                    : "a batch is back-to-back calls on one stream");
  std::printf("|          n | row              | buffers | input   |       MB |        us | "
              "spread %% |    GB/s | %% of copy | vs CUB | produces | check |\n|------------|--"
              "----------------|---------|---------|----------|-----------|----------|---------|--"
              "---------|--------|----------|-------|\n");
  int atOrAbove = 0, sizes = 0;
  double smallest = 1e30, copyLo = 1e30, copyHi = 0;
  size_t smallestN = 0;
  std::string below;
  for (size_t i = 0; i < out.size(); ++i) {
    const Measured &m = out[i], &copy = out[i - i % kRowCount];
    const Measured &cub = out[i - i % kRowCount + int(Row::Cub)];
    double mb = 8.0 * double(m.n) / 1e6, vs = cub.t.us / m.t.us;
    char us[16] = "-", spread[16] = "-", gbs[16] = "-", pct[16] = "-", ratio[16] = "-";
    if (m.timed) {
      std::snprintf(us, sizeof us, "%.2f", m.t.us);
      std::snprintf(spread, sizeof spread, "%.1f", m.t.spread);
      std::snprintf(gbs, sizeof gbs, "%.1f", 1000.0 * mb / m.t.us);
    }
    if (m.timed && 8.0 * double(m.n) >= kL2Multiple * l2Bytes) {
      std::snprintf(pct, sizeof pct, "%.1f", 100.0 * copy.t.us / m.t.us);
    }
    if (m.timed && m.row != Row::Copy) {
      std::snprintf(ratio, sizeof ratio, "%.2f", vs);
    }
    std::printf("| %10zu | %-16s | %7d | %-7s | %8.3f | %9s | %8s | %7s | %9s | %6s | %-8s "
                "| %-5s |\n",
                m.n, kRows[int(m.row)].name, m.buffers, m.dram ? "DRAM" : "L2-warm", mb, us, spread,
                gbs, pct, ratio, kRows[int(m.row)].produces, m.ok ? "exact" : "FAIL");
    if (m.row == Row::Best) {
      double rounded = std::round(100.0 * vs) / 100.0; // as the table prints it
      ++sizes;
      atOrAbove += rounded >= 1.0;
      if (rounded < 1.0) {
        below += (below.empty() ? "" : ", ") + std::to_string(m.n);
      }
      if (rounded < smallest) {
        smallest = rounded;
        smallestN = m.n;
      }
      if (m.n >= (size_t(1) << 26)) {
        copyLo = std::min(copyLo, copy.t.us / m.t.us);
        copyHi = std::max(copyHi, copy.t.us / m.t.us);
      }
    }
  }
  std::printf("\nsummary (%s): best >= CUB (vs CUB >= 1.00) at %d of %d sizes; below at: %s; "
              "smallest ratio %.2f at n = %zu",
              graph ? "graph" : "stream", atOrAbove, sizes, below.empty() ? "none" : below.c_str(),
              smallest, smallestN);
  if (copyHi > 0) {
    std::printf("; best at n >= 2^26: %.1f-%.1f %% of copy", 100.0 * copyLo, 100.0 * copyHi);
  }
  std::printf("\n");
}

struct Options {
  bool stream = true, graph = true;
  size_t minN = kMinN, maxN = kMaxN, oneBlockMax = kDefaultOneBlockMax, seed = 39;
};
static const char *kUsage =
    "usage: scan [--mode stream|graph|both] [--min-n N] [--max-n N] [--seed S] [--one-block-max "
    "M]\n"
    "  --mode           stream: back-to-back calls; graph: replays of a CUDA graph; both "
    "(default)\n"
    "  --min-n, --max-n powers of two, 1024 <= min <= max <= 1073741824 (default 2^10 .. 2^30;\n"
    "                   the largest needs 2 x 4 GiB of device memory)\n"
    "  --seed           the +1/-1 input's seed (default 39)\n"
    "  --one-block-max  best runs ONE block for n <= M (0 .. 1073741824; default 8192)\n"
    "exit codes: 0 all checks passed, 1 a check failed or a CUDA error, 2 bad usage.\n";

// Options: each flag takes one value (digits only, or the mode word); bad usage is exit 2.
static Options parseOptions(int argc, char **argv) {
  Options o;
  auto fail = [](const std::string &why) {
    std::fprintf(stderr, "error: %s (see --help)\n", why.c_str());
    std::exit(2);
  };
  for (int i = 1; i < argc; i += 2) {
    std::string a = argv[i], v = i + 1 < argc ? argv[i + 1] : "";
    size_t *target = a == "--min-n"           ? &o.minN
                     : a == "--max-n"         ? &o.maxN
                     : a == "--seed"          ? &o.seed
                     : a == "--one-block-max" ? &o.oneBlockMax
                                              : nullptr;
    if (a == "--help" || a == "-h") {
      std::printf("%s", kUsage);
      std::exit(0);
    } else if (a == "--mode" && (v == "stream" || v == "graph" || v == "both")) {
      o.stream = v != "graph";
      o.graph = v != "stream";
    } else if (a == "--mode" || target == nullptr) {
      fail(a == "--mode" ? "--mode needs stream, graph or both" : "unknown option '" + a + "'");
    } else if (v.empty() || v.size() > 19 || v.find_first_not_of("0123456789") != v.npos) {
      fail(a + " needs a whole number (digits only)");
    } else {
      *target = std::stoull(v);
    }
  }
  if (!isPowerOfTwo(o.minN) || !isPowerOfTwo(o.maxN) || o.minN < kMinN || o.maxN > kMaxN ||
      o.minN > o.maxN || o.oneBlockMax > kMaxN) {
    fail("--min-n and --max-n must be powers of two, 1024 <= --min-n <= --max-n <= 1073741824; "
         "--one-block-max at most 1073741824");
  }
  return o;
}

// Sizes the buffers for o.minN..o.maxN (s.stateWords, s.bestStateWords, CUB's temporary storage,
// ringFloats: the floats of the input ring, and of the output ring) and checks that they fit the
// device's free memory: 0, or 2 with one line on stderr. Nothing is allocated.
static int planBuffers(const Options &o, const Reference &ref, Setup &s, size_t &ringFloats) {
  size_t l2 = size_t(s.prop.l2CacheSize), freeBytes = 0, totalBytes = 0;
  ringFloats = 0;
  for (size_t n = o.minN; n <= o.maxN; n *= 2) {
    Layout l = layoutFor(n, l2);
    ringFloats = std::max(ringFloats, size_t(l.buffers) * l.slot);
  }
  s.stateWords = 1 + (o.maxN + kTile - 1) / kTile;
  s.bestStateWords = bestStateWordsFor(o.maxN);
  CUDA_CHECK(cubScan(nullptr, s.cubTempBytes, nullptr, nullptr, o.maxN, 0));
  CUDA_CHECK(cudaMemGetInfo(&freeBytes, &totalBytes));
  size_t need = 2 * ringFloats * sizeof(float) + (s.stateWords + s.bestStateWords) * 8 +
                s.cubTempBytes + ref.seeds.size() * 8 + (size_t(64) << 20);
  if (need <= freeBytes) {
    return 0;
  }
  std::fprintf(stderr,
               "error: --max-n %zu needs %zu MiB of device memory, %zu MiB are free on "
               "%s: pass a smaller --max-n\n",
               o.maxN, need >> 20, freeBytes >> 20, s.prop.name);
  return 2;
}

// Allocates what planBuffers sized, once for the largest size: the two rings (in, out), the
// partials, both look-back states (best's zeroed once: every launch resets it), CUB's temporary
// storage, the check's counters and the chunks' exact prefixes (copied from ref).
static void allocateBuffers(Setup &s, const Reference &ref, size_t ringFloats, float *&in,
                            float *&out) {
  CUDA_CHECK(cudaMalloc(&in, ringFloats * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&out, ringFloats * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&s.partials, kMaxChunks * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&s.state, s.stateWords * 8));
  CUDA_CHECK(cudaMalloc(&s.bestState, s.bestStateWords * 8));
  CUDA_CHECK(cudaMalloc(&s.cubTemp, std::max<size_t>(1, s.cubTempBytes)));
  CUDA_CHECK(cudaMalloc(&s.counts, 3 * sizeof(unsigned long long)));
  CUDA_CHECK(cudaMalloc(&s.seeds, ref.seeds.size() * sizeof(long long)));
  CUDA_CHECK(cudaMemcpy(s.seeds, ref.seeds.data(), ref.seeds.size() * 8, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemset(s.bestState, 0, s.bestStateWords * 8));
  CUDA_CHECK(cudaDeviceSynchronize()); // the legacy stream's copies, before the program's stream
}

// The lines before the tables (the input and its range, the shapes, CUB) and after them.
static void printSetup(const Options &o, const Reference &ref, const Setup &s) {
  std::printf("input: +1/-1, seed %zu, max P - min P = %lld up to n = %zu (exact below 2^24)\n"
              "ladder: %d threads, chunks <= %d; items a thread %d (tiles of %zu floats); best: "
              "one warp (32 x 8 float4) up to n = %zu, one block (256 or 512 x 4 float4) up to "
              "%zu; look-back tiles of 64 x 8 float4 up to %zu, 256 x 8 up to %zu, above 128 x %d "
              "polling after %u ns, then every %u ns; status words %zu bytes apart\n"
              "CUB %d.%d.%d: cub::DeviceScan::InclusiveSum, %zu bytes of temporary storage\n",
              o.seed, ref.range, o.maxN, kBlock, kMaxChunks, kItems, kTile,
              std::min(kOneWarpMax, s.oneBlockMax), s.oneBlockMax, kSmallTilesMax, kMidTilesMax,
              kBigLoads, kFirstPollNs, kPollNs, kStatusSpread * sizeof(unsigned long long),
              CUB_MAJOR_VERSION, CUB_MINOR_VERSION, CUB_SUBMINOR_VERSION, s.cubTempBytes);
}
static void printFootnote() {
  std::printf("\nEvery scan row writes n floats. MB counts 8 bytes a float (read + written) for "
              "every row; %% of copy is\nprinted only where 8n bytes pass %d x L2, below that "
              "every row is launch latency; vs CUB = CUB's us / the row's us.\nchained is "
              "checked but not timed above n = %zu: its tiles wait for each other in a chain, "
              "one link a tile.\n",
              kL2Multiple, kChainedMaxTimed);
}

int main(int argc, char **argv) {
  Options o = parseOptions(argc, argv);
  // 1. The input's exact prefixes, on the host, before anything is allocated (lemma (a)).
  Reference ref = referenceFor(Input::PlusMinusOne, o.seed, o.maxN);
  if (ref.range > (long long)kExact) {
    std::fprintf(stderr,
                 "error: seed %zu: max P - min P = %lld > 2^24 up to n = %zu, where a "
                 "float scan may round: choose another --seed or a smaller --max-n\n",
                 o.seed, ref.range, o.maxN);
    return 2;
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "error: no usable CUDA device\n");
    return 1;
  }
  // 2. The device, and the memory the largest size needs.
  Setup s;
  CUDA_CHECK(cudaGetDeviceProperties(&s.prop, 0));
  s.oneBlockMax = o.oneBlockMax;
  size_t l2 = size_t(s.prop.l2CacheSize), ringFloats = 0;
  if (int rc = planBuffers(o, ref, s, ringFloats); rc != 0) {
    return rc;
  }
  std::printf("GPU: %s | cc %d.%d | %d SMs | %zu KiB shared/block | %d MiB L2 | warp %d\n",
              s.prop.name, s.prop.major, s.prop.minor, s.prop.multiProcessorCount,
              s.prop.sharedMemPerBlock / 1024, s.prop.l2CacheSize >> 20, s.prop.warpSize);
  if (s.prop.warpSize != kWarp) {
    std::printf("error: the shuffle scans assume %d lanes a warp; this device has %d\n", kWarp,
                s.prop.warpSize);
    return 1;
  }
  // 3. Buffers, allocated once for the largest size.
  cudaStream_t stream; // the program's own: graph capture cannot use the legacy stream
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  float *in = nullptr, *out = nullptr;
  allocateBuffers(s, ref, ringFloats, in, out);
  printSetup(o, ref, s);
  // 4. Every size: fill its copies, then every row in both modes.
  int checks = 0, failures = 0;
  std::vector<Measured> streamOut, graphOut;
  for (size_t n = o.minN; n <= o.maxN; n *= 2) {
    Layout l = layoutFor(n, l2);
    fillRing<<<1024, 256, 0, stream>>>(in, size_t(l.buffers) * l.slot, l.slot, n, ref.kind, o.seed);
    CUDA_CHECK(cudaGetLastError());
    for (int k = 0; k < kRowCount; ++k) {
      for (bool graph : {false, true}) {
        if (graph ? o.graph : o.stream) {
          (graph ? graphOut : streamOut)
              .push_back(measureRow(Row(k), graph, s, ref, in, out, l, stream, checks, failures));
        }
      }
    }
  }
  // 5. The tables.
  if (o.stream) {
    printTable(false, streamOut, double(l2));
  }
  if (o.graph) {
    printTable(true, graphOut, double(l2));
  }
  printFootnote();
  for (void *p : {(void *)in, (void *)out, (void *)s.partials, (void *)s.state, (void *)s.bestState,
                  s.cubTemp, (void *)s.counts, (void *)s.seeds}) {
    CUDA_CHECK(cudaFree(p)); // one cleanup path
  }
  CUDA_CHECK(cudaStreamDestroy(stream));
  if (failures == 0) {
    std::printf("\nRESULT: PASS (%d checks, all exact)\n", checks);
    return 0;
  }
  std::printf("\nRESULT: FAIL (%d of %d checks failed)\n", failures, checks);
  return 1;
}
#endif // REDUCTION_HARNESS
