// Day 28: cooperative groups — one launch with grid.sync(), and a block sum for any whole-warp
// block size.
//
// One program, one input (n floats, all 1.0f, so the right sum is n), one table at n = 2^16, 2^20,
// 2^24 and 2^26 (day 27's sizes, so the two transcripts compare). Rows, in order, with the one
// change between neighbours:
//   copy                      the ceiling: a float4 copy of the same buffer (bytes read + written).
//   v8 two passes, shuffle    day 25's v8 shape: float4 loads, a warp-shuffle block sum; pass 1 on
//                             1024 blocks leaves one partial a block, pass 2 (one block) adds them.
//   cooperative, shuffle      the same two phases in ONE launch: every block writes its partial,
//                             grid.sync() waits for all of them, block 0 adds them. The grid is
//                             what can be co-resident (occupancy x SMs), launched with
//                             cudaLaunchCooperativeKernel.
//   cooperative, cg::reduce   the block sum written with cooperative groups: cg::reduce over
//                             32-lane tiles, one shared slot a warp, no log-step loop of our own.
//   two passes, cg::reduce    the two-pass shape with the cg::reduce block sum at 32, 96, 192, 256,
//                             480, 768 and 1024 threads (at the largest n only): no power-of-two
//                             block size needed.
// Every reduction row leaves ONE float on the device.
//
// How the work is shared (every reduction row): the input is a scalar head up to 16-byte alignment,
// whole tiles of 1024 floats (256 float4s), and a rest shorter than a tile. Tile t belongs to block
// t % B; the finishing block adds the partials, the head and the rest. Why tiles and not a plain
// grid-stride loop: the cooperative grid is not a power of two (e.g. 8 x 132 SMs = 1056 blocks), so
// threads would get unequal counts, and above 2^24 a float sum of ones is exact only if every
// partial is a multiple of some 2^k and every running sum stays <= 2^(24+k). With whole tiles every
// block partial is a multiple of 2^10, so the sums stay exact up to n = 2^34 (we allow 2^32).
//
// Build and run (any card; a Colab T4 is sm_75, an H200 sm_90; no -rdc needed, see below):
//   nvcc -std=c++17 -O3 -arch=sm_75 -o cooperative code/day28-cooperative/cooperative.cu
//   ./cooperative                 the table
//   ./cooperative --threads 160   the cg::reduce two-pass row at one block size of your choice
//   ./cooperative --self-test     every row over the day-25 edge matrix (--help: all the knobs)
// grid.sync() needs a cooperative launch but no relocatable device code: since CUDA 11 it is inline
// code in <cooperative_groups.h> (research/day28-cooperative.md).
//
// What is checked: every row's one float, exactly, before it is timed and again after (a race can
// show only under repetition). Out-of-range reads are caught by NaN guards around the input,
// unwritten outputs by NaN poison. Bad knobs are refused before anything is allocated: a block size
// that is not a whole number of warps, and a cooperative grid larger than can be co-resident (a
// launch that could hang is never made). What is NOT checked: speed; no threshold decides a
// pass or a fail.
//
// Exit codes: 0 every check passed, 1 a check failed or a CUDA error, 2 bad usage.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <string>
#include <vector>

#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cuda_runtime.h>

namespace cg = cooperative_groups;

// One statement: prints the call's text, file:line and the error string, then exits 1.
#define CUDA_CHECK(call)                                                                           \
  do {                                                                                             \
    cudaError_t err_ = (call);                                                                     \
    if (err_ != cudaSuccess) {                                                                     \
      std::fprintf(stderr, "CUDA error: %s at %s:%d: %s\n", #call, __FILE__, __LINE__,             \
                   cudaGetErrorString(err_));                                                      \
      std::exit(1);                                                                                \
    }                                                                                              \
  } while (0)

// ---------------------------------------------------------------------------------------------
// The lesson's constants and the exactness argument they must keep.
// ---------------------------------------------------------------------------------------------
constexpr int kBlock = 256;                        // threads a block: copy, v8, cooperative rows
constexpr int kWarp = 32;                          // lanes a warp = a tile (checked on the GPU)
constexpr int kMaxWarps = 1024 / kWarp;            // slots of the per-warp shared array
constexpr size_t kDefaultN = size_t(1) << 26;      // 2^26 floats = 256 MiB, the largest timed n
constexpr int kTwoPassGrid = 1024;                 // blocks of pass 1 in every two-pass row
constexpr size_t kExactAnyOrder = size_t(1) << 24; // a float holds every integer up to 2^24
constexpr size_t kMaxN = size_t(1) << 32;          // largest --n (needs 2 x 16 GiB on the device)
constexpr int kMaxGridArg = 65536;                 // largest --blocks we parse; the GPU sets less
constexpr int kTileVec4 = 256;                     // float4s a tile
constexpr size_t kTileFloats = 4 * kTileVec4;      // floats a tile: 1024 = 2^10
constexpr int kPad = 4;                            // NaN guard floats before and after the input
// Block sizes of the cg::reduce two-pass rows: whole warps, most of them not powers of two.
constexpr int kLadder[] = {32, 96, 192, 256, 480, 768, 1024};
constexpr int kLadderCount = int(sizeof(kLadder) / sizeof(kLadder[0]));
// The sizes of the table (day 27's, so the two transcripts compare): latency-bound, L2-resident,
// 2^24 and 2^26 from DRAM. The ladder rows run at the largest only.
constexpr size_t kTimedSizes[] = {size_t(1) << 16, size_t(1) << 20, size_t(1) << 24, kDefaultN};

__host__ __device__ constexpr bool isPowerOfTwo(size_t x) {
  return x != 0 && (x & (x - 1)) == 0;
}
constexpr bool wholeWarps(int threads) {
  return threads >= kWarp && threads <= 1024 && threads % kWarp == 0;
}
constexpr bool allWholeWarps(const int *sizes, int count) {
  for (int i = 0; i < count; ++i) {
    if (!wholeWarps(sizes[i])) {
      return false;
    }
  }
  return true;
}
// Most tiles one of `blocks` blocks can own when n floats are split into whole tiles.
__host__ __device__ constexpr size_t tilesPerBlockMax(size_t n, size_t blocks) {
  return (n / kTileFloats + blocks - 1) / blocks;
}

// The block sums below give every 32-lane tile one shared slot: a block must be whole warps.
static_assert(wholeWarps(kBlock) && allWholeWarps(kLadder, kLadderCount), "whole warps");
// Exactness above 2^24 (the lemma): if every value added is a multiple of 2^k, every running sum is
// exact while it stays <= 2^(24+k). Block partials are whole tiles of ones, multiples of 2^10, so
// the finishing sums are exact up to 2^34 >= the largest n.
static_assert(isPowerOfTwo(kTileFloats) && kMaxN <= kExactAnyOrder * kTileFloats, "tile lemma");
// Inside a block the running sums reach its partial, so a partial must stay <= 2^24: true for the
// two-pass grid at the largest n (the cooperative grid is checked on the host, it is the GPU's).
static_assert(tilesPerBlockMax(kMaxN, kTwoPassGrid) * kTileFloats <= kExactAnyOrder,
              "two-pass block partials exact");
// Above 2^24 only offset 0 and powers of two are allowed: whole tiles, no head, no rest.
static_assert(isPowerOfTwo(kDefaultN) && kDefaultN % kTileFloats == 0, "default n is whole tiles");

// ---------------------------------------------------------------------------------------------
// timeKernel: CUDA events around batches of back-to-back launches of ONE kernel configuration.
// ---------------------------------------------------------------------------------------------
constexpr int kTimingBatches = 11;    // odd, so the median is one batch
constexpr int kLaunchesPerBatch = 20; // back-to-back launches between one event pair

struct Timing {
  double ms;     // median over batches of (batch ms / launches): ms per launch
  double spread; // (slowest batch - fastest batch) / median, in percent
};

// launch: a callable that enqueues one run on the default stream and checks cudaGetLastError().
// Warm-up: the same callable, run and synchronized first (lazy loading makes a kernel's first
// launch pay its module load). Returns ms per launch (median over kTimingBatches) and the spread in
// percent. Errors: any CUDA failure exits 1 through CUDA_CHECK.
template <typename Launch>
Timing timeKernel(Launch launch) {
  launch();
  CUDA_CHECK(cudaDeviceSynchronize());
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  std::vector<double> perLaunch;
  for (int b = 0; b < kTimingBatches; ++b) {
    CUDA_CHECK(cudaEventRecord(start));
    for (int i = 0; i < kLaunchesPerBatch; ++i) {
      launch();
    }
    CUDA_CHECK(cudaEventRecord(stop));
    CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0.0f;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    perLaunch.push_back(double(ms) / kLaunchesPerBatch);
  }
  CUDA_CHECK(cudaEventDestroy(start));
  CUDA_CHECK(cudaEventDestroy(stop));
  std::sort(perLaunch.begin(), perLaunch.end());
  double median = perLaunch[perLaunch.size() / 2];
  return {median, 100.0 * (perLaunch.back() - perLaunch.front()) / median};
}

// ---------------------------------------------------------------------------------------------
// Kernels and the device functions they share, in row order.
// ---------------------------------------------------------------------------------------------

// Floats from `p` to the next 16-byte boundary (0..3), at most n: the scalar head that is peeled so
// that every float4 load starts on a 16-byte boundary.
__host__ __device__ inline size_t headToAlign16(const float *p, size_t n) {
  size_t past = (reinterpret_cast<uintptr_t>(p) / sizeof(float)) % 4; // floats past a boundary
  size_t head = past == 0 ? 0 : 4 - past;
  return head < n ? head : n;
}

// copy (the ceiling): out[i] = in[i] for i < n. Any block size, any grid (grid-stride). in and out
// share their misalignment (both start `offset` floats past a 256-byte-aligned allocation), so one
// scalar head aligns both; float4 body; scalar tail. Counts 8 bytes an element (read + write).
// ptx: v4-loads
__global__ void copyKernel(const float *__restrict__ in, float *__restrict__ out, size_t n) {
  size_t tid = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  size_t stride = size_t(gridDim.x) * blockDim.x;
  size_t head = headToAlign16(in, n);
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

// The input as every reduction row splits it: a scalar head (0..3 floats) up to the first 16-byte
// boundary, whole tiles of kTileVec4 float4s (the only part shared out among blocks), and the rest
// after the last whole tile (fewer than kTileFloats + 3 floats).
struct Split {
  const float4 *tiles; // tile 0 starts here, 16-byte aligned
  size_t numTiles;     // whole tiles
  size_t head;         // floats before tile 0
  size_t restFrom;     // first float after the last whole tile
};

__device__ inline Split splitInput(const float *x, size_t n) {
  Split s;
  s.head = headToAlign16(x, n);
  s.tiles = reinterpret_cast<const float4 *>(x + s.head);
  s.numTiles = (n - s.head) / kTileFloats;
  s.restFrom = s.head + s.numTiles * kTileFloats;
  return s;
}

// One thread's share of the tiles its block owns: tiles block, block + blocks, block + 2 blocks,
// ... The block's threads walk those tiles' float4s together, consecutive threads on consecutive
// float4s (coalesced). Any blockDim.x. Indices are size_t: tile * kTileVec4 passes 2^31 once n
// does. Exact: the per-thread sums and the block's running sums stay below its partial, <= 2^24
// (host check), and every partial is a whole number of tiles, a multiple of 2^10.
__device__ inline float sumOwnedTiles(const Split &s, size_t block, size_t blocks) {
  size_t owned = s.numTiles > block ? (s.numTiles - block + blocks - 1) / blocks : 0;
  size_t count = owned * kTileVec4;
  float v = 0.0f;
#pragma unroll 4 // four independent float4 loads in flight a thread, not one
  for (size_t i = threadIdx.x; i < count; i += blockDim.x) {
    size_t tile = block + (i / kTileVec4) * blocks;
    float4 f = s.tiles[tile * kTileVec4 + i % kTileVec4];
    v += (f.x + f.y) + (f.z + f.w);
  }
  return v;
}

// The finishing block's share for one thread: some of the block partials, plus the head and the
// rest that no tile covers. `partials` is read without __restrict__ on purpose: the cooperative
// kernels wrote it earlier in the same launch, so it must not go through the read-only cache.
// Exact: above 2^24 the allowed inputs (offset 0, n a power of two) have no head and no rest, and
// sums of multiples of 2^10 are exact up to 2^34; at or below 2^24 every order is exact.
__device__ inline float sumPartialsAndRest(const float *x, size_t n, const Split &s,
                                           const float *partials, size_t count) {
  float v = 0.0f;
  for (size_t i = threadIdx.x; i < count; i += blockDim.x) {
    v += partials[i];
  }
  for (size_t i = threadIdx.x; i < s.head; i += blockDim.x) {
    v += x[i];
  }
  for (size_t i = s.restFrom + threadIdx.x; i < n; i += blockDim.x) {
    v += x[i];
  }
  return v;
}

// snippet: block-sum-shuffle
// Block sum with warp shuffles: each warp adds its 32 values with __shfl_down_sync, lane 0 writes
// the warp's sum to one shared slot, one barrier, then warp 0 adds the slots (lanes past the number
// of warps add 0). Launch: blockDim.x a multiple of 32 up to 1024 (the full mask 0xffffffff names
// 32 lanes that are all present). Every thread of the block must call it (it has barriers). Returns
// the block's sum in thread 0 (the other lanes of warp 0 hold part of it, the other warps 0).
__device__ float blockSumShuffle(float v) {
  __shared__ float warpSums[kMaxWarps];
  unsigned int lane = threadIdx.x % kWarp;
  unsigned int warp = threadIdx.x / kWarp;
  for (int offset = kWarp / 2; offset > 0; offset /= 2) {
    v += __shfl_down_sync(0xffffffffu, v, offset);
  }
  if (lane == 0) {
    warpSums[warp] = v;
  }
  __syncthreads();
  float total = 0.0f;
  if (warp == 0) { // the whole of warp 0: the full mask below is true
    total = lane < blockDim.x / kWarp ? warpSums[lane] : 0.0f;
    for (int offset = kWarp / 2; offset > 0; offset /= 2) {
      total += __shfl_down_sync(0xffffffffu, total, offset);
    }
  }
  __syncthreads(); // warp 0 has read the slots: a second call may overwrite them
  return total;
}
// end snippet

// v8 two passes, pass 1: block b sums the tiles it owns and writes partials[b].
// Launch: blockDim.x a multiple of 32 up to 1024, any grid >= 1 (kTwoPassGrid here).
// ptx: v4-loads shfl
__global__ void twoPassTilesShuffle(const float *__restrict__ x, size_t n,
                                    float *__restrict__ partials) {
  Split s = splitInput(x, n);
  float v = blockSumShuffle(sumOwnedTiles(s, blockIdx.x, gridDim.x));
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = v;
  }
}

// v8 two passes, pass 2: ONE block adds the `count` partials, the head and the rest; writes *out.
// Launch: grid = 1 block, blockDim.x a multiple of 32 up to 1024.
// ptx: shfl
__global__ void twoPassFinishShuffle(const float *__restrict__ x, size_t n,
                                     const float *__restrict__ partials, unsigned int count,
                                     float *__restrict__ out) {
  Split s = splitInput(x, n);
  float v = blockSumShuffle(sumPartialsAndRest(x, n, s, partials, count));
  if (threadIdx.x == 0) {
    *out = v;
  }
}

// cooperative, shuffle: pass 1 and pass 2 of v8 in one launch, a grid-wide barrier between them.
// Launch: cudaLaunchCooperativeKernel ONLY (after a <<<>>> launch the grid group is invalid and
// grid.sync() traps), a grid no larger than can be co-resident, blockDim.x a multiple of 32 up to
// 1024. Writes partials[0, gridDim.x) and *out.
// ptx: v4-loads shfl
__global__ void cooperativeShuffle(const float *__restrict__ x, size_t n, float *partials,
                                   float *out) {
  cg::grid_group grid = cg::this_grid();
  Split s = splitInput(x, n);
  float v = blockSumShuffle(sumOwnedTiles(s, blockIdx.x, gridDim.x));
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = v;
  }
  grid.sync();           // every block's partial is written and visible to every other block
  if (blockIdx.x == 0) { // the same for all threads of a block: its barriers are reached by all
    v = blockSumShuffle(sumPartialsAndRest(x, n, s, partials, gridDim.x));
    if (threadIdx.x == 0) {
      *out = v;
    }
  }
}

// snippet: block-sum-cg
// Block sum with cooperative groups: cg::reduce adds each 32-lane tile's values (a shuffle
// reduction for float; hardware-accelerated only for 4-byte integers on cc 8.0+), lane 0 of each
// tile writes one shared slot, one block.sync(), then the first tile adds the slots; lanes past the
// number of tiles add 0. No power-of-two block size and no log-step loop of our own. Launch:
// blockDim.x a multiple of 32 up to 1024: tiled_partition<32> needs the block to divide into whole
// tiles. Every thread of the block must call it. Returns the block's sum in thread 0 (all of the
// first tile), 0 elsewhere.
__device__ float blockSumCg(const cg::thread_block &block, float v) {
  __shared__ float warpSums[kMaxWarps];
  cg::thread_block_tile<kWarp> tile = cg::tiled_partition<kWarp>(block);
  v = cg::reduce(tile, v, cg::plus<float>());
  if (tile.thread_rank() == 0) {
    warpSums[tile.meta_group_rank()] = v;
  }
  block.sync();
  float total = 0.0f;
  if (tile.meta_group_rank() == 0) {
    total = tile.thread_rank() < tile.meta_group_size() ? warpSums[tile.thread_rank()] : 0.0f;
    total = cg::reduce(tile, total, cg::plus<float>());
  }
  block.sync(); // the first tile has read the slots: a second call may overwrite them
  return total;
}
// end snippet

// snippet: cooperative-cg
// cooperative, cg::reduce: one launch, one float. Phase 1: block b sums the tiles it owns
// (b, b + B, ...) and writes partials[b]. grid.sync(): no block goes on until every block has
// arrived, and the partials written before it are visible after it. Phase 2: block 0 adds the B
// partials, the head and the rest, and writes *out. Launch: cudaLaunchCooperativeKernel ONLY, with
// at most (cudaOccupancyMaxActiveBlocksPerMultiprocessor x SMs) blocks, so that every block is
// resident at once (a block waiting in grid.sync() for one that cannot start would wait forever);
// blockDim.x a multiple of 32 up to 1024.
// ptx: v4-loads shfl
__global__ void cooperativeCg(const float *__restrict__ x, size_t n, float *partials, float *out) {
  cg::grid_group grid = cg::this_grid();
  cg::thread_block block = cg::this_thread_block();
  size_t b = block.group_index().x;
  Split s = splitInput(x, n);
  float v = blockSumCg(block, sumOwnedTiles(s, b, grid.num_blocks()));
  if (block.thread_rank() == 0) {
    partials[b] = v;
  }
  grid.sync();
  if (b == 0) { // the whole of block 0: the barriers inside blockSumCg are reached by all
    v = blockSumCg(block, sumPartialsAndRest(x, n, s, partials, grid.num_blocks()));
    if (block.thread_rank() == 0) {
      *out = v;
    }
  }
}
// end snippet

// two passes, cg::reduce, pass 1: as twoPassTilesShuffle with the cg::reduce block sum.
// Launch: blockDim.x a multiple of 32 up to 1024 (the rows use 32 ... 1024), any grid >= 1.
// ptx: v4-loads shfl
__global__ void twoPassTilesCg(const float *__restrict__ x, size_t n,
                               float *__restrict__ partials) {
  cg::thread_block block = cg::this_thread_block();
  Split s = splitInput(x, n);
  float v = blockSumCg(block, sumOwnedTiles(s, block.group_index().x, gridDim.x));
  if (block.thread_rank() == 0) {
    partials[block.group_index().x] = v;
  }
}

// two passes, cg::reduce, pass 2: ONE block adds the partials, the head and the rest.
// Launch: grid = 1 block, blockDim.x a multiple of 32 up to 1024.
// ptx: shfl
__global__ void twoPassFinishCg(const float *__restrict__ x, size_t n,
                                const float *__restrict__ partials, unsigned int count,
                                float *__restrict__ out) {
  cg::thread_block block = cg::this_thread_block();
  Split s = splitInput(x, n);
  float v = blockSumCg(block, sumPartialsAndRest(x, n, s, partials, count));
  if (block.thread_rank() == 0) {
    *out = v;
  }
}

// Fills p[0, count) with `value`. Any grid (grid-stride).
__global__ void fillKernel(float *p, size_t count, float value) {
  size_t stride = size_t(gridDim.x) * blockDim.x;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    p[i] = value;
  }
}

// ---------------------------------------------------------------------------------------------
// Host side: the cooperative launch, buffers, launchers, checks.
// ---------------------------------------------------------------------------------------------

// The signature both cooperative kernels share.
typedef void (*CooperativeKernel)(const float *, size_t, float *, float *);

// snippet: launch-cooperative
// How many blocks of kBlock threads of `kernel` can be resident at once on the whole GPU: the
// largest grid a cooperative launch accepts (cudaLaunchCooperativeKernel refuses more with
// cudaErrorCooperativeLaunchTooLarge; it never starts a grid that could hang in grid.sync()).
static int coResidentBlocks(CooperativeKernel kernel, int sms) {
  int perSm = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, kernel, kBlock, 0));
  return perSm * sms;
}

// One cooperative launch on the default stream: the arguments go as an array of pointers to them.
// The kernel is passed as `const void *` on purpose: in CUDA 12.0-12.5 the C++ template overload
// takes `const T *func`, which cannot deduce T from a function pointer, so passing `kernel` as it
// is does not compile there (12.6 changed it to `T *func`); that template only does this cast.
static void launchCooperative(CooperativeKernel kernel, unsigned int blocks, const float *x,
                              size_t n, float *partials, float *out) {
  void *args[] = {&x, &n, &partials, &out};
  CUDA_CHECK(cudaLaunchCooperativeKernel(reinterpret_cast<const void *>(kernel), dim3(blocks),
                                         dim3(kBlock), args, 0, 0));
  CUDA_CHECK(cudaGetLastError());
}
// end snippet

// Device buffers, allocated once for the largest size a run needs.
struct Buffers {
  float *inAlloc = nullptr;  // kPad + 3 + maxN + kPad floats: NaN guards around the input
  float *outAlloc = nullptr; // the copy's destination, same layout
  float *partials = nullptr; // one float a block of pass 1 / of the cooperative grid
  float *result = nullptr;   // the one float every reduction row leaves
  size_t maxN = 0;
  size_t maxPartials = 0;
};

// Where an input of n elements starts `offset` floats past a 256-byte-aligned address.
// cudaMalloc returns 256-byte-aligned memory; kPad (4 floats = 16 bytes) keeps float4 alignment.
static float *inputStart(const Buffers &b, int offset) {
  return b.inAlloc + kPad + offset;
}
static float *outputStart(const Buffers &b, int offset) {
  return b.outAlloc + kPad + offset;
}
static size_t allocFloats(size_t maxN) {
  return size_t(kPad) + 3 + maxN + kPad;
}
static size_t bytesNeeded(size_t maxN, size_t maxPartials) {
  return 2 * allocFloats(maxN) * sizeof(float) + (maxPartials + 1) * sizeof(float);
}

static void freeBuffers(Buffers &b) {
  // cudaFree(nullptr) is a no-op, so this is safe on every path.
  CUDA_CHECK(cudaFree(b.inAlloc));
  CUDA_CHECK(cudaFree(b.outAlloc));
  CUDA_CHECK(cudaFree(b.partials));
  CUDA_CHECK(cudaFree(b.result));
  b = Buffers{};
}

// Allocates for inputs up to maxN elements and up to maxPartials partials. Returns false (nothing
// left allocated) if the device is out of memory, so the caller can report it as a clear error.
static bool allocBuffers(Buffers &b, size_t maxN, size_t maxPartials) {
  b.maxN = maxN;
  b.maxPartials = maxPartials;
  size_t floats = allocFloats(maxN);
  if (cudaMalloc(&b.inAlloc, floats * sizeof(float)) != cudaSuccess ||
      cudaMalloc(&b.outAlloc, floats * sizeof(float)) != cudaSuccess ||
      cudaMalloc(&b.partials, maxPartials * sizeof(float)) != cudaSuccess ||
      cudaMalloc(&b.result, sizeof(float)) != cudaSuccess) {
    (void)cudaGetLastError(); // clear the allocation error
    freeBuffers(b);
    return false;
  }
  return true;
}

// Input of n ones starting `offset` floats in, NaN everywhere else in the allocation: a kernel that
// reads one element too far (or before the start) adds NaN and fails its check.
static void prepareInput(const Buffers &b, size_t n, int offset) {
  size_t floats = allocFloats(b.maxN);
  fillKernel<<<1024, 256>>>(b.inAlloc, floats, std::nanf(""));
  CUDA_CHECK(cudaGetLastError());
  fillKernel<<<1024, 256>>>(inputStart(b, offset), n, 1.0f);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
}

// A row of the table: what it runs, and on how many threads a block and blocks.
enum class Kind { Copy, TwoPassShuffle, CooperativeShuffle, CooperativeCg, TwoPassCg };
struct Row {
  Kind kind;
  int threads;         // threads a block
  unsigned int blocks; // the grid (pass 1 for two-pass rows)
};

static std::string rowName(const Row &r) {
  switch (r.kind) {
  case Kind::Copy:
    return "copy";
  case Kind::TwoPassShuffle:
    return "v8 two passes, shuffle";
  case Kind::CooperativeShuffle:
    return "cooperative, shuffle";
  case Kind::CooperativeCg:
    return "cooperative, cg::reduce";
  case Kind::TwoPassCg:
    return "two passes, cg::reduce, " + std::to_string(r.threads);
  }
  return "?";
}
static const char *rowProduces(const Row &r) {
  return r.kind == Kind::Copy ? "copy" : "one float";
}

// The copy's grid: one float4 a thread at most, capped (the copy is a ceiling, not a lesson).
static unsigned int copyGrid(size_t n) {
  size_t blocks = (n / 4 + kBlock - 1) / kBlock;
  return unsigned(std::max<size_t>(1, std::min<size_t>(blocks, 65536)));
}

// Bytes a row moves: the copy reads and writes n floats; a reduction row reads n floats and then
// its partials (one float a block of pass 1 or of the cooperative grid).
static double rowBytes(const Row &r, size_t n) {
  double b = double(n) * sizeof(float);
  if (r.kind == Kind::Copy) {
    return 2 * b;
  }
  return b + double(r.blocks) * sizeof(float);
}

// Enqueues one run of row r over n elements starting `offset` floats in. Checks every launch. No
// synchronization.
static void launchRow(const Row &r, const Buffers &b, size_t n, int offset) {
  const float *in = inputStart(b, offset);
  switch (r.kind) {
  case Kind::Copy:
    copyKernel<<<r.blocks, r.threads>>>(in, outputStart(b, offset), n);
    CUDA_CHECK(cudaGetLastError());
    break;
  case Kind::TwoPassShuffle:
    twoPassTilesShuffle<<<r.blocks, r.threads>>>(in, n, b.partials);
    CUDA_CHECK(cudaGetLastError());
    twoPassFinishShuffle<<<1, r.threads>>>(in, n, b.partials, r.blocks, b.result);
    CUDA_CHECK(cudaGetLastError());
    break;
  case Kind::CooperativeShuffle:
    launchCooperative(cooperativeShuffle, r.blocks, in, n, b.partials, b.result);
    break;
  case Kind::CooperativeCg:
    launchCooperative(cooperativeCg, r.blocks, in, n, b.partials, b.result);
    break;
  case Kind::TwoPassCg:
    twoPassTilesCg<<<r.blocks, r.threads>>>(in, n, b.partials);
    CUDA_CHECK(cudaGetLastError());
    twoPassFinishCg<<<1, r.threads>>>(in, n, b.partials, r.blocks, b.result);
    CUDA_CHECK(cudaGetLastError());
    break;
  }
}

// The outcome of one exact check: `got` as the device left it, `want` = n; `detail` says what was
// wrong when not ok.
struct Check {
  bool ok;
  double got;
  double want;
  std::string detail;
};

// Runs row r once (outputs poisoned with NaN first, so an unwritten output fails) and checks it
// exactly: copy — every destination element is 1.0f and nothing outside it was written; a
// reduction row — its one float is n.
static Check runAndCheck(const Row &r, const Buffers &b, size_t n, int offset) {
  if (r.kind == Kind::Copy) {
    CUDA_CHECK(cudaMemset(b.outAlloc, 0xFF, allocFloats(b.maxN) * sizeof(float)));
  } else {
    CUDA_CHECK(cudaMemset(b.partials, 0xFF, b.maxPartials * sizeof(float)));
    CUDA_CHECK(cudaMemset(b.result, 0xFF, sizeof(float)));
  }
  launchRow(r, b, n, offset);
  CUDA_CHECK(cudaDeviceSynchronize());

  Check c{true, 0.0, double(n), ""};
  if (r.kind == Kind::Copy) {
    std::vector<float> host(allocFloats(b.maxN));
    CUDA_CHECK(
        cudaMemcpy(host.data(), b.outAlloc, host.size() * sizeof(float), cudaMemcpyDeviceToHost));
    size_t first = size_t(kPad) + offset;
    size_t ones = 0, strays = 0;
    for (size_t i = 0; i < host.size(); ++i) {
      bool inside = i >= first && i < first + n;
      if (inside && host[i] == 1.0f) {
        ++ones;
      } else if (!inside && !std::isnan(host[i])) {
        ++strays;
      }
    }
    c.got = double(ones);
    if (ones != n || strays != 0) {
      c.ok = false;
      c.detail = "copied " + std::to_string(ones) + " ones, wrote " + std::to_string(strays) +
                 " elements outside the destination";
    }
    return c;
  }
  float got = 0.0f;
  CUDA_CHECK(cudaMemcpy(&got, b.result, sizeof(float), cudaMemcpyDeviceToHost));
  c.got = double(got); // NaN compares unequal: an unwritten result or a NaN guard read fails
  if (!(c.got == c.want)) {
    c.ok = false;
  }
  return c;
}

// Prints one failed check: got, want, and the difference in elements.
static void reportFailure(const char *what, const Row &r, size_t n, int offset, const Check &c) {
  std::printf("CHECK FAILED: %s %s n=%zu offset=%d threads=%d blocks=%u got %.0f want %.0f (off by "
              "%.0f elements)%s%s\n",
              what, rowName(r).c_str(), n, offset, r.threads, r.blocks, c.got, c.want,
              c.got - c.want, c.detail.empty() ? "" : ": ", c.detail.c_str());
}

// ---------------------------------------------------------------------------------------------
// Options.
// ---------------------------------------------------------------------------------------------
struct Options {
  size_t n = kDefaultN;
  bool haveN = false; // no --n: the table runs at every size of kTimedSizes
  int offset = 0;
  int blocks = 0;  // --blocks: the cooperative grid; 0 = every block that can be co-resident
  int threads = 0; // --threads: one block size for the cg::reduce two-pass rows; 0 = kLadder
  bool selfTest = false;
  size_t selfTestMaxN = kExactAnyOrder; // --max-n: trims the self-test matrix (sanitizer runs)
  bool help = false;
};

static const char *kUsage =
    "usage: cooperative [--n N] [--offset K] [--blocks B] [--threads T] [--self-test [--max-n N]]\n"
    "                   [--help]\n"
    "  --n N        one size instead of the table's 2^16, 2^20, 2^24 and 2^26; elements, all "
    "1.0f.\n"
    "               Exact domain: any N from 1 to 16777216 (2^24); above that a power of two up\n"
    "               to 4294967296 (2^32), with --offset 0, where device memory allows (2 x 4 N\n"
    "               bytes).\n"
    "  --offset K   the input starts K floats (K = 0..3) past a 256-byte-aligned address (with\n"
    "               an --n up to 2^24).\n"
    "  --blocks B   the cooperative grid (default: every block that can be co-resident, from\n"
    "               cudaOccupancyMaxActiveBlocksPerMultiprocessor x SMs). More is refused:\n"
    "               grid.sync() needs every block resident at once. Two-pass rows: 1024 blocks.\n"
    "  --threads T  run the cg::reduce two-pass row at T threads a block only, instead of 32, 96,\n"
    "               192, 256, 480, 768, 1024: a multiple of 32 from 32 to 1024 (whole warps).\n"
    "  --self-test  every row over an edge matrix of n x offsets {0,1,2,3} x cooperative grids\n"
    "               {1, 3, SMs, co-resident maximum} (or --blocks), no timing; one line per\n"
    "               failure; exit 1 on any.\n"
    "  --max-n N    with --self-test: only the sizes up to N (for compute-sanitizer runs).\n"
    "exit codes: 0 all checks passed, 1 a check failed or a CUDA error, 2 bad usage.\n";

// Parses a decimal count: digits only (no sign, exponent, hex or trailing text), at most `max`.
static bool parseCount(const char *s, size_t max, size_t &out) {
  if (s == nullptr || *s == '\0' || std::strlen(s) > 20) {
    return false;
  }
  size_t v = 0;
  for (const char *p = s; *p; ++p) {
    if (*p < '0' || *p > '9') {
      return false;
    }
    size_t d = size_t(*p - '0');
    if (d > max || v > (max - d) / 10) {
      return false; // larger than max (and no overflow on the way)
    }
    v = v * 10 + d;
  }
  out = v;
  return true;
}

// Fills `o` from argv. Returns "" on success, else the one-line reason (the caller prints it and
// exits 2). Touches no device.
static std::string parseOptions(int argc, char **argv, Options &o) {
  bool haveOffset = false, haveMaxN = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      o.help = true;
    } else if (a == "--self-test") {
      o.selfTest = true;
    } else if (a == "--n" || a == "--offset" || a == "--blocks" || a == "--threads" ||
               a == "--max-n") {
      const char *v = (i + 1 < argc) ? argv[++i] : nullptr;
      if (v == nullptr) {
        return a + " needs a value (see --help)";
      }
      size_t x = 0;
      if (a == "--n") {
        if (!parseCount(v, kMaxN, x) || x == 0) {
          return "--n " + std::string(v) +
                 ": must be a whole number from 1 to 4294967296 (2^32), digits only";
        }
        o.n = x;
        o.haveN = true;
      } else if (a == "--offset") {
        if (!parseCount(v, 3, x)) {
          return "--offset " + std::string(v) + ": must be 0, 1, 2 or 3 (floats past alignment)";
        }
        o.offset = int(x);
        haveOffset = true;
      } else if (a == "--blocks") {
        if (!parseCount(v, kMaxGridArg, x) || x == 0) {
          return "--blocks " + std::string(v) +
                 ": must be a whole number from 1 to 65536 (and no more than can be co-resident)";
        }
        o.blocks = int(x);
      } else if (a == "--threads") {
        if (!parseCount(v, 1024, x) || !wholeWarps(int(x))) {
          return "--threads " + std::string(v) +
                 ": must be a multiple of 32 from 32 to 1024; the block sum splits the block into "
                 "32-lane tiles (tiled_partition<32>), which needs whole warps";
        }
        o.threads = int(x);
      } else {
        if (!parseCount(v, kExactAnyOrder, x) || x == 0) {
          return "--max-n " + std::string(v) + ": must be a whole number from 1 to 16777216";
        }
        o.selfTestMaxN = x;
        haveMaxN = true;
      }
    } else {
      return "unknown option '" + a + "' (see --help)";
    }
  }
  if (haveMaxN && !o.selfTest) {
    return "--max-n only trims --self-test";
  }
  if (o.selfTest && (o.haveN || haveOffset)) {
    return "--self-test runs its own sizes and offsets; trim it with --max-n, not --n or --offset";
  }
  if (o.n > kExactAnyOrder && !isPowerOfTwo(o.n)) {
    return "--n " + std::to_string(o.n) +
           ": above 16777216 (2^24) a float sum of ones is exact only for a power of two";
  }
  if (o.offset != 0 && (o.n > kExactAnyOrder || !o.haveN)) {
    return "--offset " + std::to_string(o.offset) +
           ": above n = 2^24 (the default sizes go to 2^26) only offset 0 keeps the input whole "
           "tiles (exact sum); give an --n up to 16777216 with it";
  }
  return "";
}

// ---------------------------------------------------------------------------------------------
// The runs: the table and the self-test.
// ---------------------------------------------------------------------------------------------

struct Measured {
  Row row;
  size_t n;
  double mb;
  Timing t;
  bool ok;
};

static void printBanner(const cudaDeviceProp &p) {
  std::printf("GPU: %s | cc %d.%d | %d SMs | %zu KiB shared/block | %d MiB L2 | warp %d\n", p.name,
              p.major, p.minor, p.multiProcessorCount, p.sharedMemPerBlock / 1024,
              p.l2CacheSize / (1024 * 1024), p.warpSize);
}

// The input and the copy's destination together fit in L2: repeated timed runs then read L2.
static bool fitsInL2(size_t n, const cudaDeviceProp &p) {
  return 2 * n * sizeof(float) <= size_t(p.l2CacheSize);
}

static void printTableHeader() {
  std::printf(
      "| row                        |          n | fits L2 | threads | blocks |       MB |    "
      "    us | spread %% |    GB/s | %% of copy | vs two-pass | produces  | check |\n");
  std::printf(
      "|----------------------------|------------|---------|---------|--------|----------|---"
      "-------|----------|---------|-----------|-------------|-----------|-------|\n");
}

// One table row. GB/s = MB / us x 1000; % of copy and `vs two-pass` (v8's us / this row's us)
// compare numbers measured at the same n in this run.
static void printRow(const Measured &m, const Measured &copy, const Measured &v8, bool inL2) {
  double us = 1000.0 * m.t.ms;
  double gbs = m.mb / m.t.ms;
  double copyGBs = copy.mb / copy.t.ms;
  char vs[16];
  if (m.row.kind == Kind::Copy) {
    std::snprintf(vs, sizeof vs, "-");
  } else {
    std::snprintf(vs, sizeof vs, "%.2fx", v8.t.ms / m.t.ms);
  }
  std::printf("| %-26s | %10zu | %-7s | %7d | %6u | %8.3f | %9.2f | %8.1f | %7.1f | %9.1f | %11s "
              "| %-9s | %-5s |\n",
              rowName(m.row).c_str(), m.n, inL2 ? "yes" : "no", m.row.threads, m.row.blocks, m.mb,
              us, m.t.spread, gbs, 100.0 * gbs / copyGBs, vs, rowProduces(m.row),
              m.ok ? "exact" : "FAIL");
}

// Checks row r, times it, checks it again. Failures are printed and counted in `failures`.
static Measured measureRow(const Row &r, const Buffers &b, size_t n, int offset, int &checks,
                           int &failures) {
  Measured m{r, n, rowBytes(r, n) / 1e6, {0.0, 0.0}, true};
  Check before = runAndCheck(r, b, n, offset);
  ++checks;
  if (!before.ok) {
    reportFailure("before timing", r, n, offset, before);
    ++failures;
    m.ok = false;
  }
  m.t = timeKernel([&] { launchRow(r, b, n, offset); });
  Check after = runAndCheck(r, b, n, offset);
  ++checks;
  if (!after.ok) {
    reportFailure("after timing", r, n, offset, after);
    ++failures;
    m.ok = false;
  }
  return m;
}

// The block sizes of the cg::reduce two-pass rows: the ladder, or the one --threads gave.
static std::vector<int> ladderSizes(const Options &o) {
  if (o.threads != 0) {
    return {o.threads};
  }
  return std::vector<int>(kLadder, kLadder + kLadderCount);
}

// The sizes of the table: kTimedSizes, or the one --n gave.
static std::vector<size_t> tableSizes(const Options &o) {
  if (o.haveN) {
    return {o.n};
  }
  return std::vector<size_t>(std::begin(kTimedSizes), std::end(kTimedSizes));
}

// At every size: copy, v8 two passes, the two cooperative rows. At the largest size, after those,
// the cg::reduce two-pass rows at every block size of the ladder.
static int runTable(const Options &o, const Buffers &b, const cudaDeviceProp &p,
                    unsigned int coopGrid, int perSm, int &checks, int &failures) {
  std::vector<size_t> sizes = tableSizes(o);
  std::vector<int> ladder = ladderSizes(o);
  std::vector<Measured> out;
  std::vector<size_t> copyAt, v8At; // index in `out` of the copy and v8 rows of each row's size
  for (size_t n : sizes) {
    prepareInput(b, n, o.offset);
    std::vector<Row> rows = {{Kind::Copy, kBlock, copyGrid(n)},
                             {Kind::TwoPassShuffle, kBlock, kTwoPassGrid},
                             {Kind::CooperativeShuffle, kBlock, coopGrid},
                             {Kind::CooperativeCg, kBlock, coopGrid}};
    if (n == sizes.back()) {
      for (int t : ladder) {
        rows.push_back({Kind::TwoPassCg, t, kTwoPassGrid});
      }
    }
    size_t first = out.size();
    for (const Row &r : rows) {
      out.push_back(measureRow(r, b, n, o.offset, checks, failures));
      copyAt.push_back(first);
      v8At.push_back(first + 1);
    }
  }
  size_t expected = 4 * sizes.size() + ladder.size();
  if (out.size() != expected) { // a real branch: Release builds delete assert()
    std::printf("internal error: %zu rows measured, the table has %zu\n", out.size(), expected);
    return 1;
  }
  std::printf(
      "\nreductions: blocks own whole tiles of %zu floats (float4 loads, offset %d); median "
      "of %d batches of %d calls, the same buffers every call\n",
      kTileFloats, o.offset, kTimingBatches, kLaunchesPerBatch);
  if (o.blocks == 0) {
    std::printf("cooperative grid: %u blocks of %d threads = %d co-resident a SM "
                "(cudaOccupancyMaxActiveBlocksPerMultiprocessor) x %d SMs\n\n",
                coopGrid, kBlock, perSm, p.multiProcessorCount);
  } else {
    std::printf("cooperative grid: %u blocks of %d threads (--blocks; at most %d co-resident a SM "
                "x %d SMs)\n\n",
                coopGrid, kBlock, perSm, p.multiProcessorCount);
  }
  printTableHeader();
  for (size_t i = 0; i < out.size(); ++i) {
    printRow(out[i], out[copyAt[i]], out[v8At[i]], fitsInL2(out[i].n, p));
  }
  std::printf(
      "\nEvery reduction row leaves one float on the device: the two-pass rows with a second\n"
      "launch (one block adds the %d partials), the cooperative rows with grid.sync() and block 0\n"
      "in the same launch. vs two-pass = v8's us / this row's us at the same n (above 1.00x the\n"
      "row is faster than the two launches of v8).\n"
      "The copy row counts bytes read + written (8 a float); reduction rows count bytes read (4 a\n"
      "float, plus the partials), so a reduction can pass 100 %% of copy: the percentage compares\n"
      "two numbers from this run, not a limit.\n"
      "fits L2 = yes: the input and the copy's destination fit in this GPU's %d MiB L2 and every\n"
      "timed call reads the same buffers, so those rows measure L2, not DRAM bandwidth.\n",
      kTwoPassGrid, p.l2CacheSize / (1024 * 1024));
  return 0;
}

static int runSelfTest(const Options &o, const Buffers &b, const std::vector<unsigned int> &grids,
                       int &checks, int &failures) {
  const size_t sizes[] = {1,    2,    3,     4,     5,     7,       31,       32,      33,   255,
                          256,  257,  511,   512,   513,   1023,    1024,     1025,    1027, 4095,
                          4096, 4097, 65535, 65536, 65537, 1048577, 16776605, 16777216};
  std::vector<Row> rows = {{Kind::Copy, kBlock, 0}, {Kind::TwoPassShuffle, kBlock, kTwoPassGrid}};
  for (unsigned int g : grids) {
    rows.push_back({Kind::CooperativeShuffle, kBlock, g});
    rows.push_back({Kind::CooperativeCg, kBlock, g});
  }
  for (int t : ladderSizes(o)) {
    rows.push_back({Kind::TwoPassCg, t, kTwoPassGrid});
  }
  int tested = 0;
  for (size_t n : sizes) {
    if (n > o.selfTestMaxN) {
      continue;
    }
    for (int offset = 0; offset < 4; ++offset) {
      prepareInput(b, n, offset);
      for (Row r : rows) {
        if (r.kind == Kind::Copy) {
          r.blocks = copyGrid(n);
        }
        Check c = runAndCheck(r, b, n, offset);
        ++checks;
        ++tested;
        if (!c.ok) {
          ++failures;
          reportFailure("self-test", r, n, offset, c);
        }
      }
    }
  }
  std::string gridList;
  for (unsigned int g : grids) {
    gridList += (gridList.empty() ? "" : ", ") + std::to_string(g);
  }
  std::string threadList;
  for (int t : ladderSizes(o)) {
    threadList += (threadList.empty() ? "" : ", ") + std::to_string(t);
  }
  std::printf("self-test: %d row runs over n <= %zu, offsets 0..3, cooperative grids {%s}, "
              "cg::reduce two-pass threads {%s}: %d failed\n",
              tested, o.selfTestMaxN, gridList.c_str(), threadList.c_str(), failures);
  return 0;
}

int main(int argc, char **argv) {
  Options o;
  std::string err = parseOptions(argc, argv, o);
  if (!err.empty()) {
    std::fprintf(stderr, "error: %s\n", err.c_str());
    return 2;
  }
  if (o.help) {
    std::printf("%s", kUsage);
    return 0;
  }

  int devices = 0;
  cudaError_t probe = cudaGetDeviceCount(&devices);
  if (probe != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "error: no usable CUDA device (%s)\n",
                 probe != cudaSuccess ? cudaGetErrorString(probe) : "none found");
    return 1;
  }
  cudaDeviceProp prop;
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaGetDeviceProperties(&prop, device));

  // Everything that can refuse the run (exit 2) comes before the first allocation.
  int cooperative = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch, device));
  if (!cooperative) {
    std::fprintf(stderr,
                 "error: %s does not support cooperative launch (cudaDevAttrCooperativeLaunch = "
                 "0), which grid.sync() needs\n",
                 prop.name);
    return 2;
  }
  int sms = prop.multiProcessorCount;
  int maxCoResident =
      std::min(coResidentBlocks(cooperativeShuffle, sms), coResidentBlocks(cooperativeCg, sms));
  int perSm = maxCoResident / sms;
  if (maxCoResident < 1) {
    std::fprintf(stderr, "error: no block of %d threads of the cooperative kernels fits on a SM\n",
                 kBlock);
    return 2;
  }
  if (o.blocks > maxCoResident) {
    std::fprintf(stderr,
                 "error: --blocks %d: at most %d blocks of %d threads can be co-resident on %s (%d "
                 "a SM x %d SMs), and grid.sync() needs every block resident at once\n",
                 o.blocks, maxCoResident, kBlock, prop.name, perSm, sms);
    return 2;
  }
  unsigned int coopGrid = unsigned(o.blocks != 0 ? o.blocks : maxCoResident);
  // o.n is the largest size of the table (kDefaultN when there is no --n).
  if (!o.selfTest && o.n > kExactAnyOrder &&
      tilesPerBlockMax(o.n, coopGrid) * kTileFloats > kExactAnyOrder) {
    std::fprintf(stderr,
                 "error: --n %zu on a cooperative grid of %u blocks: a block would own %zu floats, "
                 "above 2^24, where its partial stops being exact; use at least %zu blocks\n",
                 o.n, coopGrid, tilesPerBlockMax(o.n, coopGrid) * kTileFloats,
                 o.n / kExactAnyOrder);
    return 2;
  }
  std::vector<unsigned int> grids; // the self-test's cooperative grids
  if (o.blocks != 0) {
    grids.push_back(unsigned(o.blocks));
  } else {
    for (int g : {1, 3, sms, maxCoResident}) {
      if (g <= maxCoResident && std::find(grids.begin(), grids.end(), unsigned(g)) == grids.end()) {
        grids.push_back(unsigned(g));
      }
    }
  }

  // Sizes this run needs, refused (exit 2) if the device cannot hold them.
  size_t maxN = o.selfTest ? std::min(o.selfTestMaxN, kExactAnyOrder) : o.n;
  size_t maxPartials = std::max<size_t>(kTwoPassGrid, size_t(maxCoResident));
  size_t freeBytes = 0, totalBytes = 0;
  CUDA_CHECK(cudaMemGetInfo(&freeBytes, &totalBytes));
  size_t need = bytesNeeded(maxN, maxPartials);
  if (need > freeBytes) {
    std::fprintf(stderr,
                 "error: --n %zu needs %.2f GiB of device memory (input and copy destination); "
                 "%.2f GiB are free on %s\n",
                 o.n, need / double(1u << 30), freeBytes / double(1u << 30), prop.name);
    return 2;
  }
  printBanner(prop);
  if (prop.warpSize != kWarp) {
    std::printf("error: this program's 32-lane tiles assume %d lanes a warp; the device has %d\n",
                kWarp, prop.warpSize);
    return 1;
  }

  Buffers b;
  if (!allocBuffers(b, maxN, maxPartials)) {
    std::fprintf(stderr, "error: cudaMalloc of %.2f GiB failed on %s\n", need / double(1u << 30),
                 prop.name);
    return 1;
  }

  int checks = 0, failures = 0, status = 0;
  if (o.selfTest) {
    status = runSelfTest(o, b, grids, checks, failures);
  } else {
    status = runTable(o, b, prop, coopGrid, perSm, checks, failures);
  }
  freeBuffers(b);

  if (failures == 0 && status == 0) {
    std::printf("\nRESULT: PASS (%d checks, all exact)\n", checks);
    return 0;
  }
  std::printf("\nRESULT: FAIL (%d of %d checks failed)\n", failures, checks);
  return 1;
}
