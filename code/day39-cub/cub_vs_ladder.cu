// Day 39: the library arrives. cub::DeviceReduce::Sum head to head with the ladder, 2^10..2^30.
//
// Every power of two, in two timing modes (stream: back-to-back calls; graph: one replay of a CUDA
// graph of them). Rows, one change from above:
//   copy              the ceiling: a float4 copy (day 27's), bytes read + written.
//   CUB Sum           cub::DeviceReduce::Sum; temporary storage sized and allocated once.
//   v8 two passes     days 25/27: float4 grid-stride loads on 1024 x 256, a second launch adds.
//   atomic per block  day 26: one element a thread, one atomicAdd a block into a zeroed float.
//   last block        day 27: partial, fence, ticket; the block with the last ticket adds them.
//   cooperative       day 28: whole tiles a block, grid.sync(), block 0 adds the partials.
//   best              last block, tuned, its shape by n: ONE block up to 2^15; one CUB-sized tile
//                     a block up to 2^22; above, 8192-float tiles on one resident wave.
//   best + PDL        Hopper only, NOT what CUB does: from 2^16 to 2^22 a PAIR of kernels, the
//                     second launched early by programmatic dependent launch; refused elsewhere.
// Exact: the input is 1.0f, so the sum is n (the lemma by the static_asserts: whole tiles a block
// keep it exact above 2^24 on any grid). Every row at every size and mode is checked once untimed
// and on what the LAST timed call wrote; inputs under 4 x L2 are rotated over copies and labelled.
// Edge matrix, second input, guards, sanitizers: tests/harness/day39-cub.cu. Exit 0 pass, 1 fail.
// Build: nvcc -std=c++17 -O3 -arch=sm_75 -o cub_vs_ladder code/day39-cub/cub_vs_ladder.cu
// Run:   ./cub_vs_ladder  (both modes, 2^10..2^30: 2 x 4 GiB of device memory; --help)

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <cooperative_groups.h>
#include <cub/device/device_reduce.cuh>
#include <cuda/atomic>
#include <cuda_runtime.h>

namespace cg = cooperative_groups;

#define CUDA_CHECK(call)                                                                           \
  do {                                                                                             \
    cudaError_t err_ = (call);                                                                     \
    if (err_ != cudaSuccess) {                                                                     \
      std::fprintf(stderr, "CUDA error: %s at %s:%d: %s\n", #call, __FILE__, __LINE__,             \
                   cudaGetErrorString(err_));                                                      \
      std::exit(1);                                                                                \
    }                                                                                              \
  } while (0)

// The test program's delay injection (tests/harness/delay.h) makes a chosen block sleep here, just
// before it publishes its partial; in the lesson the hook is empty.
#ifndef DELAY_BEFORE_PUBLISH
#define DELAY_BEFORE_PUBLISH(block)
#endif

// The lesson's constants and the exactness argument they must keep.
constexpr int kBlock = 256; // threads a block: copy and the ladder rows
// snippet: constants
constexpr int kWarp = 32;                   // lanes a warp (checked on the device too)
constexpr unsigned kFullMask = 0xffffffffu; // all 32 lanes: the mask of every shuffle
// end snippet
constexpr int kWarpsPerBlock = kBlock / kWarp;        // shared slots of the ladder's block sum
constexpr int kLadderGrid = 1024;                     // v8 and last block: day 25/27's grid
constexpr int kCoopTileVec4 = 256;                    // cooperative (day 28): float4s a tile
constexpr size_t kCoopTileFloats = 4 * kCoopTileVec4; // floats a tile: 1024 = 2^10
constexpr size_t kExactAnyOrder = size_t(1) << 24;    // a float holds every integer up to 2^24

// best's shapes by n (measured on the H200: research/day39-cub.md; the banner prints them). Every
// shape loads tiles of kBestLoads float4s a thread, all in flight at once.
constexpr int kBestLoads = 4;
// n <= kDefaultSmallMax: ONE block, no partials, no ticket, one launch. A block of 256 threads is
// one tile of 4096 floats (every load issued at once) and starts fastest; 512 and 1024 threads
// win once the input is two or more of its tiles.
constexpr size_t kSmall256Max = size_t(1) << 12; // n <= this: 256 threads
constexpr size_t kSmall512Max = size_t(1) << 14; // n <= this: 512 threads; above: 1024
constexpr size_t kDefaultSmallMax = size_t(1) << 15;
// n <= kDefaultMidMax: CUB's tile (256 threads x 4 float4 = 4096 floats), ONE tile a block, so
// every load of the input is issued before any block adds; a last block finishes. 2^22 / 4096 =
// 1024 blocks at most.
constexpr int kMidThreads = 256;
constexpr size_t kMidTile = size_t(kMidThreads) * kBestLoads * 4; // floats: 4096
constexpr size_t kDefaultMidMax = size_t(1) << 22;
// Larger n: tiles of 512 x 4 float4 = 8192 floats on a grid of ONE wave (SMs x occupancy) below
// kBestManyWavesFrom, kBestWavesLarge waves from there: at 2^24..2^26 one resident wave beat 8
// waves by 2-6 % (fewer tickets, no tail of block launches); at 2^28..2^30 8 waves kept best at
// or above CUB.
constexpr int kBestThreads = 512;
constexpr size_t kBestTile = size_t(kBestThreads) * kBestLoads * 4; // floats: 8192
constexpr int kBestWaves = 1;
constexpr int kBestWavesLarge = 8;
constexpr size_t kBestManyWavesFrom = size_t(1) << 27;
constexpr int kFinishLoads = 8; // the last block's loads of the partials in flight a thread
// snippet: best-load-knob
// Loads of the input: false = __ldg (ld.global.nc: the read-only path, as CUB's LOAD_LDG);
// true = ld.global.nc.L1::no_allocate (do not keep the streamed lines in L1 at all).
constexpr bool kBestL1NoAllocate = false;
// end snippet

constexpr size_t kMinN = size_t(1) << 10;        // smallest timed size
constexpr size_t kDefaultMaxN = size_t(1) << 30; // largest timed size by default (4 GiB)
constexpr size_t kMaxN = size_t(1) << 32;        // largest --max-n (2 x 16 GiB on the device)
constexpr int kL2Multiple = 4;                   // inputs under 4 x L2 bytes are rotated
constexpr size_t kGuard = 64;                    // NaN floats before the first copy, after each
constexpr double kBatchBytes = 8.0 * (size_t(1) << 30); // input bytes a batch aims to read
constexpr int kMinLaunchesPerBatch = 4;    // at n = 2^30 a batch is 4 calls (about 4 ms)
constexpr int kMaxLaunchesPerBatch = 1024; // at small n a batch is 1024 calls (1-4 ms)

__host__ __device__ constexpr bool isPowerOfTwo(size_t x) {
  return x != 0 && (x & (x - 1)) == 0;
}

// The block sum (shuffle first, one shared slot a warp): whole warps, at most 32 of them.
static_assert(kBlock % kWarp == 0 && kBlock <= 1024 && isPowerOfTwo(kBlock), "ladder block");
static_assert(kBestThreads % kWarp == 0 && kBestThreads <= 1024, "best: whole warps, <= 1024");
static_assert(kMidThreads % kWarp == 0 && kMidThreads <= 1024, "mid: whole warps, <= 1024");
// Exactness lemma: a float sum of values that are all integer multiples of 2^k is exact at every
// step while every running sum stays <= 2^(24+k).
//  - Up to n = 2^24 every value is a multiple of 1 and every running sum <= 2^24: any order.
//  - v8 and last block (day 27's argument): above 2^24 n and the grid are powers of two, so every
//    thread adds the same power-of-two count and every partial is a power of two.
//  - cooperative (day 28's argument): its grid is the GPU's (SMs x occupancy), not a power of
//    two, so blocks own whole tiles of 2^10 floats: partials are multiples of 2^10, exact up to
//    2^34; inside a block the sums stay below its partial, which the host keeps <= 2^24 (the row
//    is refused at a size where it would not be).
//  - atomic per block: every block adds 256 elements (k = 8), so n <= 2^32 = 2^(24+8).
//  - best, one block and one tile a block: n <= 2^24 (host-checked), any order.
//  - best above kDefaultMidMax: block b owns WHOLE tiles of kBestTile = 2^13 floats, so every
//    block partial is a multiple of 2^13, on ANY grid (the SM count need not be a power of
//    two): exact up to n = 2^(24+13) when n is a multiple of the tile (above 2^24 n is a power of
//    two, so it is).
//    Inside a block every thread adds the same 4 x kBestLoads floats a tile, at most
//    n / kBestTile tiles: each thread sum c <= 2^23 is exact, and the block's tree adds equal
//    values pair by pair (c, 2c, 4c, ...), exact too. A tile cut short by n exists only when n is
//    not a multiple of the tile, that is only below 2^24, where any order is exact.
static_assert(isPowerOfTwo(kBestTile) && isPowerOfTwo(kMidTile), "tiles: powers of two");
static_assert(kDefaultSmallMax <= kExactAnyOrder && kDefaultMidMax <= kExactAnyOrder, "any order");
static_assert(kMaxN / kBestTile * (4 * kBestLoads) <= kExactAnyOrder, "per-thread sum exact");
static_assert(kMaxN <= kExactAnyOrder * kBestTile, "best: block partials multiples of the tile");
static_assert(kMaxN <= kExactAnyOrder * kBlock, "atomic per block: k = log2(256) = 8");
static_assert(kMaxN / (size_t(kBlock) * kLadderGrid) <= kExactAnyOrder, "ladder per-thread sum");
static_assert(isPowerOfTwo(kLadderGrid), "ladder grid: a power of two");
static_assert(isPowerOfTwo(kCoopTileFloats) && kMaxN <= kExactAnyOrder * kCoopTileFloats,
              "cooperative: tile lemma");
static_assert(kCoopTileVec4 == kBlock, "cooperative: one float4 a thread a tile");
static_assert(kMinLaunchesPerBatch >= 1 && kMaxLaunchesPerBatch >= kMinLaunchesPerBatch, "batch");

// Device helpers (day 27's), then the kernels in row order. CUB's kernels are the library's.
// Floats from `p` to the next 16-byte boundary (0..3), at most n: the scalar head peeled so that
// every float4 load starts on a 16-byte boundary.
// Needs: <cstdint>
__host__ __device__ inline size_t headToAlign16(const float *p, size_t n) {
  size_t past = (reinterpret_cast<uintptr_t>(p) / sizeof(float)) % 4; // floats past a boundary
  size_t head = past == 0 ? 0 : 4 - past;
  return head < n ? head : n;
}

// This thread's share of in[0, n): grid-stride over float4s of the aligned body, plus head element
// t and tail element t for grid thread t (head and tail are 0..3 floats each). Any grid >= 1 block
// of >= 3 threads. 64-bit indices throughout: n reaches 2^32. `in` is read through __ldg (the
// read-only path), so nobody may write it while the kernel runs.
// Needs: headToAlign16, <cstdint>
__device__ float gridStrideSum(const float *__restrict__ in, size_t n) {
  size_t tid = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  size_t stride = size_t(gridDim.x) * blockDim.x;
  size_t head = headToAlign16(in, n);
  size_t nv = (n - head) / 4;  // whole float4s in the aligned body
  size_t tail = head + nv * 4; // first element no float4 covers
  const float4 *vin = reinterpret_cast<const float4 *>(in + head);
  float v = 0.0f;
  if (tid < head) {
    v += __ldg(&in[tid]);
  }
  for (size_t i = tid; i < nv; i += stride) {
    float4 f = __ldg(&vin[i]);
    v += (f.x + f.y) + (f.z + f.w);
  }
  if (tid < n - tail) {
    v += __ldg(&in[tail + tid]);
  }
  return v;
}

// snippet: helpers
// Block sum, shuffle first (day 27's): each warp adds its 32 values, lane 0 writes one shared slot,
// warp 0 adds the slots. Every thread calls it (a barrier); blockDim.x whole warps up to 1024;
// warpSums holds blockDim.x / 32 floats; the sum is in thread 0. kFullMask is right: every lane
// runs both loops. Reusing warpSums needs a __syncthreads() between two calls.
// Needs: kWarp, kFullMask
__device__ float blockReduceSum(float v, float *warpSums) {
  unsigned int lane = threadIdx.x % kWarp;
  unsigned int warp = threadIdx.x / kWarp;
  for (int offset = kWarp / 2; offset > 0; offset >>= 1) {
    v += __shfl_down_sync(kFullMask, v, offset);
  }
  if (lane == 0) {
    warpSums[warp] = v;
  }
  __syncthreads(); // every thread reaches it: no branch is open here
  if (warp == 0) {
    v = lane < blockDim.x / kWarp ? warpSums[lane] : 0.0f;
    for (int offset = kWarp / 2; offset > 0; offset >>= 1) {
      v += __shfl_down_sync(kFullMask, v, offset);
    }
  }
  return v; // meaningful in thread 0 only
}

// One float4 of the input, which nobody writes while the kernel runs: __ldg, the read-only path
// (ld.global.nc) CUB's reduction uses, or with L1::no_allocate also no L1 line kept. Neither
// changes the bytes from DRAM (PTX ISA `ld`; CUB's LOAD_LDG: research/day39-cub.md).
// Needs: kBestL1NoAllocate
__device__ __forceinline__ float4 loadStreaming(const float4 *p) {
  if constexpr (kBestL1NoAllocate) {
    float4 v;
    asm("ld.global.nc.L1::no_allocate.v4.f32 {%0, %1, %2, %3}, [%4];"
        : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
        : "l"(p));
    return v;
  } else {
    return __ldg(p);
  }
}
// end snippet

// copy (the ceiling): out[i] = in[i] for i < n. Any block size, any grid (grid-stride). in and out
// share their misalignment, so one scalar head aligns both; float4 body; scalar tail. Counts 8
// bytes an element (read + write).
// Needs: headToAlign16, <cstdint>
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

// v8, each pass (day 25/27): in[0, n) -> partials[blockIdx.x]. Launch: blockDim.x == kBlock (the
// launch bounds and warpSums are sized for it), any grid >= 1, any alignment of `in`. Pass 1 runs
// it over the input on kLadderGrid blocks; pass 2 on ONE block over the partials (cudaMalloc'd,
// so aligned), which leaves the sum in the result. The kernel boundary between the passes is the
// grid-wide barrier.
// Needs: kBlock, kWarp, kWarpsPerBlock, gridStrideSum, headToAlign16, blockReduceSum, <cstdint>
// ptx: v4-loads shfl
__global__ void __launch_bounds__(kBlock)
    reduceToPartials(const float *__restrict__ in, float *__restrict__ partials, size_t n) {
  __shared__ float warpSums[kWarpsPerBlock];
  float v = blockReduceSum(gridStrideSum(in, n), warpSums);
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = v;
  }
}

// atomic per block (day 26): the block adds its kBlock elements (one a thread), then thread 0
// does the block's one atomicAdd: n / 256 atomics on ONE address. Launch: blockDim.x == kBlock,
// grid = ceil(n / kBlock). *result must be 0 before the launch (each call memsets it).
// Needs: kBlock, kWarp, kWarpsPerBlock, blockReduceSum
// ptx: shfl atom
__global__ void __launch_bounds__(kBlock)
    atomicPerBlock(const float *__restrict__ in, size_t n, float *result) {
  __shared__ float warpSums[kWarpsPerBlock];
  size_t i = size_t(blockIdx.x) * kBlock + threadIdx.x; // 64-bit before the multiply
  float v = i < n ? in[i] : 0.0f;
  v = blockReduceSum(v, warpSums);
  if (threadIdx.x == 0) {
    atomicAdd(result, v);
  }
}

// last block (day 27, the fence version): ONE launch leaves the sum in *result. Launch:
// blockDim.x == kBlock, any grid of 1..65536 blocks; *ticket == 0 at launch (cudaMemset once;
// every launch leaves it at 0). partials holds gridDim.x floats; NOT `const __restrict__`: the
// last block reads what other blocks wrote during this launch. Publisher (thread 0 of every
// block): write the partial, __threadfence() (release: the partial is visible device-wide before
// the ticket), atomicAdd the ticket. The thread that draws gridDim.x - 1 fences again (acquire),
// and its block reads the partials with __ldcg (L2 only: no stale L1 line can answer), adds them
// and resets the counter for the next launch.
// Needs: kBlock, kWarp, kWarpsPerBlock, gridStrideSum, headToAlign16, blockReduceSum, <cstdint>,
//        DELAY_BEFORE_PUBLISH
// ptx: v4-loads shfl atom
__global__ void __launch_bounds__(kBlock)
    reduceLastBlock(const float *__restrict__ in, size_t n, float *partials, unsigned int *ticket,
                    float *result) {
  __shared__ float warpSums[kWarpsPerBlock];
  __shared__ bool isLastBlockDone;
  float v = blockReduceSum(gridStrideSum(in, n), warpSums);
  if (threadIdx.x == 0) { // ONE thread: it wrote the partial, it takes the ticket
    DELAY_BEFORE_PUBLISH(blockIdx.x);
    partials[blockIdx.x] = v;
    __threadfence(); // release: the partial before the ticket, for every block of the device
    unsigned int drawn = atomicAdd(ticket, 1u);
    bool last = drawn == gridDim.x - 1;
    if (last) {
      __threadfence(); // acquire: the partials read below come after every block's fence
    }
    isLastBlockDone = last;
  }
  __syncthreads();       // every thread reaches it; it hands isLastBlockDone to the whole block
  if (isLastBlockDone) { // the same value in every thread: the barrier inside is reached by all
    float s = 0.0f;
    for (unsigned int b = threadIdx.x; b < gridDim.x; b += blockDim.x) {
      s += __ldcg(&partials[b]);
    }
    s = blockReduceSum(s, warpSums);
    if (threadIdx.x == 0) {
      *result = s;
      *ticket = 0u; // reset for the next launch
    }
  }
}

// cooperative (day 28), its input split: a scalar head (0..3 floats) up to the first 16-byte
// boundary, whole tiles of kCoopTileVec4 float4s (the only part shared out among blocks), and the
// rest after the last whole tile (fewer than kCoopTileFloats + 3 floats).
struct Split {
  const float4 *tiles; // tile 0 starts here, 16-byte aligned
  size_t numTiles;     // whole tiles
  size_t head;         // floats before tile 0
  size_t restFrom;     // first float after the last whole tile
};

// Needs: Split, headToAlign16, kCoopTileFloats, <cstdint>
__device__ inline Split splitInput(const float *x, size_t n) {
  Split s;
  s.head = headToAlign16(x, n);
  s.tiles = reinterpret_cast<const float4 *>(x + s.head);
  s.numTiles = (n - s.head) / kCoopTileFloats;
  s.restFrom = s.head + s.numTiles * kCoopTileFloats;
  return s;
}

// One thread's share of the tiles its block owns: tiles block, block + blocks, ... The block's
// threads walk those tiles' float4s together (coalesced). Any blockDim.x; size_t indices. Exact:
// the block's sums stay below its partial, <= 2^24 (host check), and every partial is a whole
// number of tiles, a multiple of 2^10.
// Needs: Split, kCoopTileVec4
__device__ inline float sumOwnedTiles(const Split &s, size_t block, size_t blocks) {
  size_t owned = s.numTiles > block ? (s.numTiles - block + blocks - 1) / blocks : 0;
  size_t count = owned * kCoopTileVec4;
  float v = 0.0f;
#pragma unroll 4 // four independent float4 loads in flight a thread, not one
  for (size_t i = threadIdx.x; i < count; i += blockDim.x) {
    size_t tile = block + (i / kCoopTileVec4) * blocks;
    float4 f = s.tiles[tile * kCoopTileVec4 + i % kCoopTileVec4];
    v += (f.x + f.y) + (f.z + f.w);
  }
  return v;
}

// The finishing block's share for one thread: some of the block partials, plus the head and the
// rest that no tile covers. `partials` is read without __restrict__ on purpose: the kernel wrote
// it earlier in the same launch, so it must not go through the read-only cache.
// Needs: Split
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

// cooperative (day 28's cooperativeShuffle, with this file's block sum): pass 1 and pass 2 of v8
// in ONE launch, a grid-wide barrier between them. Launch: cudaLaunchCooperativeKernel ONLY (after
// a <<<>>> launch the grid group is invalid and grid.sync() traps), a grid no larger than can be
// co-resident (SMs x occupancy: the launch is refused, never hangs, otherwise), blockDim.x ==
// kBlock. No thread returns before grid.sync(). Writes partials[0, gridDim.x) and *out. The grid
// (e.g. 132 x 8 = 1056) is not a power of two: whole tiles a block keep the sum exact.
// Needs: kBlock, kWarp, kWarpsPerBlock, kCoopTileVec4, kCoopTileFloats, Split, splitInput,
//        sumOwnedTiles, sumPartialsAndRest, headToAlign16, blockReduceSum, cg,
//        <cooperative_groups.h>, <cstdint>, DELAY_BEFORE_PUBLISH
// ptx: v4-loads shfl
__global__ void __launch_bounds__(kBlock)
    reduceCooperative(const float *__restrict__ x, size_t n, float *partials, float *out) {
  __shared__ float warpSums[kWarpsPerBlock];
  cg::grid_group grid = cg::this_grid();
  Split s = splitInput(x, n);
  float v = blockReduceSum(sumOwnedTiles(s, blockIdx.x, gridDim.x), warpSums);
  if (threadIdx.x == 0) {
    DELAY_BEFORE_PUBLISH(blockIdx.x);
    partials[blockIdx.x] = v;
  }
  grid.sync();           // every block's partial is written and visible; warp 0 is done with
                         // warpSums, so the second block sum below may reuse it
  if (blockIdx.x == 0) { // the same for all threads of a block: its barrier is reached by all
    v = blockReduceSum(sumPartialsAndRest(x, n, s, partials, gridDim.x), warpSums);
    if (threadIdx.x == 0) {
      *out = v;
    }
  }
}

// snippet: best-tiles
// best, the loads: this thread's share of in[0, n) when block `block` of `blocks` owns tiles
// block, block + blocks, ... A tile is kThreads x kLoads float4s; thread t loads float4s t,
// t + kThreads, ...: each warp load is one contiguous 512 bytes, and all kLoads loads are issued
// before the first add, so kLoads x 16 bytes a thread are in flight. The partial last tile goes
// to the block that would own the next one (guarded loads, the last n % 4 floats scalar). Whole
// tiles a block keep the sum exact above 2^24 on any grid. blockDim.x == kThreads; `in` 16-byte
// aligned (the launcher checks); 64-bit indices.
// Needs: loadStreaming, kBestL1NoAllocate
template <int kThreads, int kLoads>
__device__ float tileSum(const float *__restrict__ in, size_t n, unsigned int block,
                         unsigned int blocks) {
  constexpr size_t kTile4 = size_t(kThreads) * kLoads; // float4s a tile
  const float4 *in4 = reinterpret_cast<const float4 *>(in);
  const size_t n4 = n / 4;
  const size_t fullTiles = n4 / kTile4;
  float sum = 0.0f;
  for (size_t t = block; t < fullTiles; t += blocks) {
    const float4 *tile = in4 + t * kTile4 + threadIdx.x;
    float4 v[kLoads];
#pragma unroll
    for (int u = 0; u < kLoads; ++u) {
      v[u] = loadStreaming(tile + u * kThreads); // kLoads independent loads ...
    }
#pragma unroll
    for (int u = 0; u < kLoads; ++u) {
      sum += (v[u].x + v[u].y) + (v[u].z + v[u].w); // ... then the adds
    }
  }
  if (fullTiles * kTile4 * 4 < n && block == fullTiles % blocks) { // the partial last tile
    const size_t first4 = fullTiles * kTile4;
    const float4 *tile = in4 + first4 + threadIdx.x;
    float4 v[kLoads];
#pragma unroll
    for (int u = 0; u < kLoads; ++u) {
      bool inside = first4 + u * kThreads + threadIdx.x < n4;
      v[u] = inside ? loadStreaming(tile + u * kThreads) : make_float4(0.f, 0.f, 0.f, 0.f);
    }
#pragma unroll
    for (int u = 0; u < kLoads; ++u) {
      sum += (v[u].x + v[u].y) + (v[u].z + v[u].w);
    }
    if (threadIdx.x < n % 4) {
      sum += __ldg(&in[n4 * 4 + threadIdx.x]);
    }
  }
  return sum;
}
// end snippet

// snippet: best-single-block
// best, small n: ONE block adds everything and writes the result. No partials, no atomics, no
// fence, one launch. Assumes: <<<1, kThreads>>>; `in` 16-byte aligned; n <= 2^24 (host-checked).
// Launch: bestSingleBlock<256, 4><<<1, 256>>>(in, n, result)
// Needs: kWarp, tileSum, loadStreaming, blockReduceSum, kBestL1NoAllocate, kFullMask
// ptx: v4-loads shfl
template <int kThreads, int kLoads>
__global__ void __launch_bounds__(kThreads)
    bestSingleBlock(const float *__restrict__ in, size_t n, float *result) {
  __shared__ float warpSums[kThreads / kWarp];
  float v = blockReduceSum(tileSum<kThreads, kLoads>(in, n, 0, 1), warpSums);
  if (threadIdx.x == 0) {
    *result = v;
  }
}
// end snippet

// best, the rest of n: each block adds its whole tiles, then finishes as day 27's last-block
// atomic_ref: fetch_add(acq_rel) at device scope releases this block's partial and, in the block
// drawing the last ticket, acquires every other; its threads inherit that through __syncthreads()
// and read the partials with __ldcg in a fixed order (the same bits every run). blockDim.x ==
// kThreads; 1 .. ceil(n / tile) blocks; *ticket == 0 at launch and left 0; partials holds
// gridDim.x floats; `in` 16-byte aligned. Run with one tile a block at mid n, above on SMs x
// occupancy x waves blocks: tile ownership keeps that exact. (research/day39-cub.md)
// Launch: bestLastBlock<512, 4><<<(n + 8191) / 8192, 512>>>(in, n, partials, ticket, result)
// Needs: kWarp, kFinishLoads, tileSum, loadStreaming, blockReduceSum, kBestL1NoAllocate,
//        <cuda/atomic>, DELAY_BEFORE_PUBLISH, kFullMask
// ptx: v4-loads shfl atom
template <int kThreads, int kLoads>
__global__ void __launch_bounds__(kThreads)
    bestLastBlock(const float *__restrict__ in, size_t n, float *partials, unsigned int *ticket,
                  float *result) {
  __shared__ float warpSums[kThreads / kWarp];
  __shared__ bool isLastBlockDone;
  float v = blockReduceSum(tileSum<kThreads, kLoads>(in, n, blockIdx.x, gridDim.x), warpSums);
  if (threadIdx.x == 0) { // ONE thread: it wrote the partial, it takes the ticket
    DELAY_BEFORE_PUBLISH(blockIdx.x);
    partials[blockIdx.x] = v;
    cuda::atomic_ref<unsigned int, cuda::thread_scope_device> counter(*ticket);
    isLastBlockDone = counter.fetch_add(1u, cuda::memory_order_acq_rel) == gridDim.x - 1;
  }
  __syncthreads();       // every thread reaches it; also separates the two uses of warpSums
  if (isLastBlockDone) { // block-uniform: every thread of this block reaches the barrier inside
    float s = 0.0f;
    for (unsigned int first = threadIdx.x; first < gridDim.x; first += kThreads * kFinishLoads) {
      float p[kFinishLoads]; // kFinishLoads loads in flight before the first add, as in the tiles
#pragma unroll
      for (int u = 0; u < kFinishLoads; ++u) {
        unsigned int b = first + u * kThreads;
        p[u] = b < gridDim.x ? __ldcg(&partials[b]) : 0.0f; // L2: never a stale L1 line
      }
#pragma unroll
      for (int u = 0; u < kFinishLoads; ++u) {
        s += p[u];
      }
    }
    s = blockReduceSum(s, warpSums);
    if (threadIdx.x == 0) {
      *result = s;
      cuda::atomic_ref<unsigned int, cuda::thread_scope_device> counter(*ticket);
      counter.store(0u, cuda::memory_order_relaxed); // every block has drawn: reset for the next
    }
  }
}

// best + PDL, pass 1 (Hopper and newer): one tile a block -> partials[blockIdx.x]. Its FIRST
// statement lets the dependent kernel (pass 2) be scheduled now, onto SMs this grid leaves free.
// The trigger promises nothing about this grid's writes: the dependent waits for those in
// cudaGridDependencySynchronize(). (Triggered at the END, PDL measured slower than none.) Built
// below compute_90 (e.g. -arch=sm_75, even on an H200) the calls compile out and the host
// refuses the row (pdlRefusal). (CUDA Programming Guide, "Programmatic Dependent Launch and
// Synchronization"; research/day39-cub.md.)
// Launch: blockDim.x == kThreads, grid = tiles of n; `in` 16-byte aligned.
// Needs: kWarp, tileSum, loadStreaming, blockReduceSum, kBestL1NoAllocate, DELAY_BEFORE_PUBLISH
// ptx: v4-loads shfl
template <int kThreads, int kLoads>
__global__ void __launch_bounds__(kThreads)
    bestPdlPartials(const float *__restrict__ in, size_t n, float *partials) {
#if __CUDA_ARCH__ >= 900
  cudaTriggerProgrammaticLaunchCompletion();
#endif
  __shared__ float warpSums[kThreads / kWarp];
  float v = blockReduceSum(tileSum<kThreads, kLoads>(in, n, blockIdx.x, gridDim.x), warpSums);
  if (threadIdx.x == 0) {
    DELAY_BEFORE_PUBLISH(blockIdx.x);
    partials[blockIdx.x] = v;
  }
}

// best + PDL, pass 2: ONE block adds partials[0, count) in a fixed order. It may start while
// pass 1 still runs, so nothing touches the partials before cudaGridDependencySynchronize(),
// which returns once pass 1 has completed and its writes are visible. Launch: <<<1, kThreads>>>
// through cudaLaunchKernelEx with cudaLaunchAttributeProgrammaticStreamSerialization, on pass 1's
// stream; captured, it becomes a programmatic graph edge (run with CUDA 13.0 only: if an older
// toolkit's capture fails, the program exits 1 and --mode stream still runs the row).
// Needs: kWarp, blockReduceSum
// ptx: shfl
template <int kThreads>
__global__ void __launch_bounds__(kThreads)
    bestPdlFinish(const float *partials, unsigned int count, float *result) {
#if __CUDA_ARCH__ >= 900
  cudaGridDependencySynchronize();
#endif
  __shared__ float warpSums[kThreads / kWarp];
  float s = 0.0f;
  for (unsigned int b = threadIdx.x; b < count; b += kThreads) {
    s += __ldcg(&partials[b]);
  }
  s = blockReduceSum(s, warpSums);
  if (threadIdx.x == 0) {
    *result = s;
  }
}

// Fills a ring of copies: element j of p[0, count) is 1.0f if j % slot < n, else NaN (the guard
// after each copy). Any grid (grid-stride).
// Needs: nothing
__global__ void fillRing(float *p, size_t count, size_t slot, size_t n) {
  size_t stride = size_t(gridDim.x) * blockDim.x;
  for (size_t j = size_t(blockIdx.x) * blockDim.x + threadIdx.x; j < count; j += stride) {
    p[j] = j % slot < n ? 1.0f : __int_as_float(0x7fc00000);
  }
}

// The copy's check, on the device (no host copy of a 4 GiB buffer): over out[0, slot), counts[0]
// += elements of [0, n) that differ from in[i], counts[1] += elements of the guard [n, slot) that
// are not NaN (a write past the end). Any grid (grid-stride); counts zeroed before.
// Needs: nothing
__global__ void checkCopy(const float *in, const float *out, size_t n, size_t slot,
                          unsigned long long *counts) {
  size_t stride = size_t(gridDim.x) * blockDim.x;
  unsigned long long wrong = 0, strays = 0;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < slot; i += stride) {
    float v = out[i];
    if (i < n) {
      wrong += !(v == in[i]);
    } else {
      strays += !isnan(v);
    }
  }
  if (wrong != 0) {
    atomicAdd(&counts[0], wrong);
  }
  if (strays != 0) {
    atomicAdd(&counts[1], strays);
  }
}

// ---------------------------------------------------------------------------------------------
// Host side: the library call, the row table and its launchers, the exact check.
// ---------------------------------------------------------------------------------------------

// The library row. cub::DeviceReduce::Sum is called twice in its life: with temp == nullptr it
// only writes the bytes it needs into `tempBytes` (no launch); then for real with that storage.
// The count's type picks CUB's offsets (CUB 2.2+, CUDA 12.3+): `int` (32-bit, fast) while n fits,
// `long long` above, so n reaches 2^32. It only enqueues CUB's kernels: no allocation, no sync.
// (CUB's DeviceReduce reference and the CUDA 13.0 headers: research/day39-cub.md.)
// Needs: <cub/device/device_reduce.cuh>, <climits>
static cudaError_t cubSum(void *temp, size_t &tempBytes, const float *in, float *out, size_t n,
                          cudaStream_t stream) {
  if (n <= size_t(INT_MAX)) {
    return cub::DeviceReduce::Sum(temp, tempBytes, in, out, int(n), stream);
  }
  return cub::DeviceReduce::Sum(temp, tempBytes, in, out, (long long)n, stream);
}

// The rows, in table order (kRows below: one line each, same order).
enum class Row { Copy, Cub, V8, AtomicPerBlock, LastBlock, Cooperative, Best, BestPdl, Count };
constexpr int kRowCount = int(Row::Count);

// What the launchers use: the device's grids (queryDevice) and the buffers, allocated once for the
// largest size (by main, or by the harness, which also forces each of best's paths).
struct Setup {
  cudaDeviceProp prop;
  bool cooperativeLaunch = false;         // cudaDevAttrCooperativeLaunch
  int coopOccupancy = 0;                  // blocks of reduceCooperative an SM holds at once
  unsigned int coopGrid = 0;              // SMs x coopOccupancy, all co-resident (0: refused)
  bool coopInGraph = false;               // the driver captures a cooperative launch into a graph
  int bestOccupancy = 0;                  // blocks of bestLastBlock<kBestThreads> an SM holds
  int pdlPtx = 0;                         // XX of the compute_XX the PDL kernels were built for
  size_t bestSmallMax = kDefaultSmallMax; // best runs ONE block for n <= this, else
  size_t bestMidMax = kDefaultMidMax;     // one tile a block for n <= this, else on:
  unsigned int bestGrid = 0, bestGridLarge = 0; // one wave below kBestManyWavesFrom; from there
  float *out = nullptr, *results = nullptr;     // copy destinations; one result float a row
  size_t outFloats = 0;                         // the copy destinations' floats (poisoned whole)
  float *partials[kRowCount] = {};              // each row's partials (nullptr: none) ...
  size_t partialsCount[kRowCount] = {};         // ... and how many (set by queryDevice)
  unsigned int *tickets = nullptr;              // one counter a row, 0 between launches
  unsigned long long *copyCounts = nullptr;     // 2: the copy check's counters
  void *cubTemp = nullptr;
  size_t cubTempBytes = 0;
};

static Setup queryDevice() {
  Setup s;
  int device = 0, coop = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaGetDeviceProperties(&s.prop, device));
  CUDA_CHECK(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, device));
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&s.coopOccupancy, reduceCooperative,
                                                           kBlock, 0));
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &s.bestOccupancy, bestLastBlock<kBestThreads, kBestLoads>, kBestThreads, 0));
  cudaFuncAttributes pdl; // ptxVersion: what __CUDA_ARCH__ was when the kernel was compiled
  CUDA_CHECK(cudaFuncGetAttributes(&pdl, bestPdlPartials<kMidThreads, kBestLoads>));
  s.pdlPtx = pdl.ptxVersion;
  unsigned int sms = unsigned(s.prop.multiProcessorCount);
  s.cooperativeLaunch = coop != 0;
  s.coopGrid = s.cooperativeLaunch ? sms * unsigned(s.coopOccupancy) : 0;
  s.bestGrid = sms * unsigned(std::max(1, s.bestOccupancy) * kBestWaves);
  s.bestGridLarge = sms * unsigned(std::max(1, s.bestOccupancy) * kBestWavesLarge);
  s.partialsCount[int(Row::V8)] = s.partialsCount[int(Row::LastBlock)] = kLadderGrid;
  s.partialsCount[int(Row::Cooperative)] = std::max(1u, s.coopGrid);
  size_t midGrid = kDefaultMidMax / kMidTile;
  s.partialsCount[int(Row::Best)] =
      std::max<size_t>(midGrid, std::max(s.bestGrid, s.bestGridLarge));
  s.partialsCount[int(Row::BestPdl)] = s.partialsCount[int(Row::Best)];
  return s;
}

// One call of one row: in[0, n) (the copy writes out[0, n)) on `stream`, into the row's outputs.
struct Call {
  const Setup &s;
  const float *in;
  float *out, *result, *partials;
  unsigned int *ticket;
  size_t n;
  cudaStream_t stream;
};

// The launchers: they only enqueue (no synchronization, no allocation: safe inside a capture).
// launchRow checks the last launch with cudaGetLastError; a row of two checks its first.
static void launchCopy(const Call &c) { // one float4 a thread, capped: a ceiling, not a lesson
  size_t blocks = std::min<size_t>((c.n / 4 + kBlock - 1) / kBlock, 65536);
  copyKernel<<<unsigned(std::max<size_t>(1, blocks)), kBlock, 0, c.stream>>>(c.in, c.out, c.n);
}
static void launchCub(const Call &c) {
  size_t bytes = c.s.cubTempBytes;
  CUDA_CHECK(cubSum(c.s.cubTemp, bytes, c.in, c.result, c.n, c.stream));
}
static void launchV8(const Call &c) { // pass 1 on kLadderGrid blocks, pass 2 on ONE block
  reduceToPartials<<<kLadderGrid, kBlock, 0, c.stream>>>(c.in, c.partials, c.n);
  CUDA_CHECK(cudaGetLastError());
  reduceToPartials<<<1, kBlock, 0, c.stream>>>(c.partials, c.result, kLadderGrid);
}
static void launchAtomicPerBlock(const Call &c) { // zeroes the float the atomics add into
  CUDA_CHECK(cudaMemsetAsync(c.result, 0, sizeof(float), c.stream));
  atomicPerBlock<<<unsigned((c.n + kBlock - 1) / kBlock), kBlock, 0, c.stream>>>(c.in, c.n,
                                                                                 c.result);
}
static void launchLastBlock(const Call &c) {
  reduceLastBlock<<<kLadderGrid, kBlock, 0, c.stream>>>(c.in, c.n, c.partials, c.ticket, c.result);
}
// Returns its error (the graph probe needs that). The grid must not pass SMs x occupancy
// (cudaLaunchCooperativeKernel's reference; research/day39-cub.md, entry 7).
static cudaError_t launchCooperativeOrError(const Call &c) {
  void *args[] = {(void *)&c.in, (void *)&c.n, (void *)&c.partials, (void *)&c.result};
  return cudaLaunchCooperativeKernel((const void *)reduceCooperative, dim3(c.s.coopGrid),
                                     dim3(kBlock), args, 0, c.stream);
}
static void launchCooperative(const Call &c) {
  CUDA_CHECK(launchCooperativeOrError(c));
}
// best: one block (its size by n), one tile a block with a last block, or whole tiles on a
// resident wave with a last block (research/day39-cub.md, 18: the fastest shape at each n).
static void launchBest(const Call &c) {
  if (reinterpret_cast<uintptr_t>(c.in) % 16 != 0) { // tileSum's float4 loads start at `in`
    std::fprintf(stderr, "error: best needs a 16-byte-aligned input\n");
    std::exit(1);
  }
  if (c.n <= c.s.bestSmallMax && c.n <= kSmall256Max) {
    bestSingleBlock<256, kBestLoads><<<1, 256, 0, c.stream>>>(c.in, c.n, c.result);
  } else if (c.n <= c.s.bestSmallMax && c.n <= kSmall512Max) {
    bestSingleBlock<512, kBestLoads><<<1, 512, 0, c.stream>>>(c.in, c.n, c.result);
  } else if (c.n <= c.s.bestSmallMax) {
    bestSingleBlock<1024, kBestLoads><<<1, 1024, 0, c.stream>>>(c.in, c.n, c.result);
  } else if (c.n <= c.s.bestMidMax) {
    unsigned int tiles = unsigned((c.n + kMidTile - 1) / kMidTile); // one tile a block
    bestLastBlock<kMidThreads, kBestLoads>
        <<<tiles, kMidThreads, 0, c.stream>>>(c.in, c.n, c.partials, c.ticket, c.result);
  } else {
    size_t tiles = (c.n + kBestTile - 1) / kBestTile; // never more blocks than tiles
    size_t grid =
        std::min<size_t>(tiles, c.n < kBestManyWavesFrom ? c.s.bestGrid : c.s.bestGridLarge);
    bestLastBlock<kBestThreads, kBestLoads>
        <<<unsigned(std::max<size_t>(1, grid)), kBestThreads, 0, c.stream>>>(c.in, c.n, c.partials,
                                                                             c.ticket, c.result);
  }
}
// best + PDL: best, except that its one-tile-a-block range runs as two kernels, the second
// launched with the programmatic-serialization attribute (CUDA 11.8+; takes effect on cc 9.0+).
// `in` must be 16-byte aligned: launchBest checks it, this launcher does not (in the mid range a
// misaligned input is a CUDA error, exit 1, not a wrong sum); every caller here passes aligned.
// Call it only where pdlRefusal is "": without the PDL calls compiled in, pass 2 would race.
// Needs: bestPdlPartials, bestPdlFinish, launchBest, Call, Setup, pdlRefusal, kMidTile,
//        kMidThreads, kBestLoads, CUDA_CHECK; build with -arch=sm_90 or newer
static void launchBestPdl(const Call &c) {
  if (c.n <= c.s.bestSmallMax || c.n > c.s.bestMidMax) {
    launchBest(c);
    return;
  }
  unsigned int tiles = unsigned((c.n + kMidTile - 1) / kMidTile);
  bestPdlPartials<kMidThreads, kBestLoads>
      <<<tiles, kMidThreads, 0, c.stream>>>(c.in, c.n, c.partials);
  CUDA_CHECK(cudaGetLastError());
  cudaLaunchAttribute early = {};
  early.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  early.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(1);
  config.blockDim = dim3(kMidThreads);
  config.stream = c.stream;
  config.attrs = &early;
  config.numAttrs = 1;
  const float *partials = c.partials;
  CUDA_CHECK(cudaLaunchKernelEx(&config, bestPdlFinish<kMidThreads>, partials, tiles, c.result));
}

// Why best + PDL cannot run ("": it can): the GPU, or kernels compiled for an older architecture
// (an -arch=sm_75 build runs on an H200 through its compute_75 PTX, without the PDL calls).
static std::string pdlRefusal(const Setup &s, size_t, bool) {
  if (s.prop.major < 9) {
    return "programmatic dependent launch needs compute capability 9.0 or newer; this GPU is " +
           std::to_string(s.prop.major) + "." + std::to_string(s.prop.minor);
  } else if (s.pdlPtx < 90) {
    return "this build's kernels are compute_" + std::to_string(s.pdlPtx) +
           ", without the PDL calls: build with -arch=sm_90 (or newer) for this row";
  }
  return "";
}

// Why cooperative cannot run at n ("": it can): no cooperative launch, no block fits, no graph
// capture, or a block would own more than 2^24 floats (inexact partial: day 28's host check).
static std::string coopRefusal(const Setup &s, size_t n, bool graph) {
  size_t owned = s.coopGrid ? (n / kCoopTileFloats + s.coopGrid - 1) / s.coopGrid : 0;
  if (s.coopGrid == 0) {
    return s.cooperativeLaunch ? "no block of it fits on an SM"
                               : "this device does not support cooperative launches";
  } else if (graph && !s.coopInGraph) {
    return "this driver would not capture a cooperative launch into a graph";
  } else if (n > kExactAnyOrder && owned * kCoopTileFloats > kExactAnyOrder) {
    return "on " + std::to_string(s.coopGrid) + " blocks a block would own " +
           std::to_string(owned * kCoopTileFloats) +
           " floats, above 2^24, where its partial stops being exact";
  }
  return "";
}

// The row table, indexed by Row. tickets: a one-launch row whose counter must be back at 0 after
// each launch (checked). refusal: why the row cannot run at n in a mode ("" or nullptr: it can).
// A new row: a Row entry, a launcher, a line here (and its partials count in queryDevice).
struct RowDef {
  const char *name, *produces; // produces: "copy" (checked element by element) or "one float"
  bool tickets;
  void (*launch)(const Call &);
  std::string (*refusal)(const Setup &, size_t n, bool graph);
};
static const RowDef kRows[kRowCount] = {
    {"copy", "copy", false, launchCopy, nullptr},
    {"CUB Sum", "one float", false, launchCub, nullptr},
    {"v8 two passes", "one float", false, launchV8, nullptr},
    {"atomic per block", "one float", false, launchAtomicPerBlock, nullptr},
    {"last block", "one float", true, launchLastBlock, nullptr},
    {"cooperative", "one float", false, launchCooperative, coopRefusal},
    {"best", "one float", true, launchBest, nullptr},
    {"best + PDL", "one float", true, launchBestPdl, pdlRefusal},
};
static std::string refusal(Row r, const Setup &s, size_t n, bool graph) {
  return kRows[int(r)].refusal ? kRows[int(r)].refusal(s, n, graph) : "";
}
static Call callOf(Row r, const Setup &s, const float *in, float *out, size_t n, cudaStream_t st) {
  int k = int(r);
  return {s, in, out, s.results + k, s.partials[k], s.tickets + k, n, st};
}
// Enqueues one call of row r on `stream` and checks the launch.
static void launchRow(Row r, const Setup &s, const float *in, float *out, size_t n,
                      cudaStream_t stream) {
  kRows[int(r)].launch(callOf(r, s, in, out, n, stream));
  CUDA_CHECK(cudaGetLastError());
}

// Enqueues what makes row r's outputs wrong: NaN (0xFF bytes) in its result and partials, or in
// the copy's whole destination. Tickets are not poisoned: the check reads them instead.
static void poisonRow(Row r, const Setup &s, cudaStream_t stream) {
  int k = int(r);
  float *p = r == Row::Copy ? s.out : s.results + k;
  CUDA_CHECK(cudaMemsetAsync(p, 0xFF, (r == Row::Copy ? s.outFloats : 1) * sizeof(float), stream));
  if (s.partials[k] != nullptr) {
    CUDA_CHECK(cudaMemsetAsync(s.partials[k], 0xFF, s.partialsCount[k] * sizeof(float), stream));
  }
}

struct Check {
  bool ok;
  double got, want;
  std::string detail; // what else was wrong
};

// The exact check of what row r left. A reduction: its one float == want (the lesson passes n, its
// inputs being ones; the harness the count of ones of a random 0/1 input), its ticket back at 0.
// The copy: out[0, n) == in[0, n) and out[n, slot) still NaN, counted on the device (n may be
// 2^32: no host copy of the buffer). counts: elements that differ, writes past the end.
static Check checkRow(Row r, const Setup &s, const float *in, const float *out, size_t n,
                      size_t slot, double want, cudaStream_t stream) {
  int k = int(r);
  unsigned long long counts[2] = {0, 0};
  float got = 0.0f;
  unsigned int ticket = 0;
  if (r == Row::Copy) {
    CUDA_CHECK(cudaMemsetAsync(s.copyCounts, 0, sizeof counts, stream));
    checkCopy<<<1024, 256, 0, stream>>>(in, out, n, slot, s.copyCounts);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(
        cudaMemcpyAsync(counts, s.copyCounts, sizeof counts, cudaMemcpyDeviceToHost, stream));
  } else {
    CUDA_CHECK(cudaMemcpyAsync(&got, s.results + k, sizeof got, cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(
        cudaMemcpyAsync(&ticket, s.tickets + k, sizeof ticket, cudaMemcpyDeviceToHost, stream));
  }
  CUDA_CHECK(cudaStreamSynchronize(stream));
  if (r == Row::Copy) {
    return {counts[0] == 0 && counts[1] == 0, double(n - counts[0]), double(n),
            std::to_string(counts[0]) + " elements differ from the source, " +
                std::to_string(counts[1]) + " written past the end"};
  }
  Check c{double(got) == want, double(got), want, ""}; // NaN (an unwritten result) fails too
  if (kRows[k].tickets && ticket != 0u) {
    c = {false, c.got, want,
         "the ticket counter was left at " + std::to_string(ticket) + ", not reset to 0"};
    // Reset it, so that this failure is reported once instead of failing every later run.
    CUDA_CHECK(cudaMemsetAsync(s.tickets + k, 0, sizeof ticket, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  return c;
}

// Poisons row r's outputs, runs it once, synchronizes, checks it against `want`. CUB's storage was
// sized once, at the largest n: CUB is asked again first (a host-side query, no launch).
static Check runAndCheck(Row r, const Setup &s, const float *in, float *out, size_t n, size_t slot,
                         double want, cudaStream_t stream) {
  size_t needed = 0;
  CUDA_CHECK(cubSum(nullptr, needed, in, s.results, n, stream));
  if (r == Row::Cub && needed > s.cubTempBytes) {
    std::fprintf(stderr, "error: CUB needs %zu bytes of temporary storage at n = %zu, has %zu\n",
                 needed, n, s.cubTempBytes);
    std::exit(1);
  }
  poisonRow(r, s, stream);
  launchRow(r, s, in, out, n, stream);
  CUDA_CHECK(cudaStreamSynchronize(stream));
  return checkRow(r, s, in, out, n, slot, want, stream);
}

// Captures one cooperative launch into a graph and instantiates it, reporting failure instead of
// exiting: a driver that cannot do that gets "refused" graph rows (s.coopInGraph).
static bool cooperativeCaptures(const Setup &s, const float *in, size_t n, cudaStream_t stream) {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  bool ok = cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal) == cudaSuccess;
  if (ok) {
    ok = launchCooperativeOrError(callOf(Row::Cooperative, s, in, nullptr, n, stream)) ==
         cudaSuccess;
    ok = cudaStreamEndCapture(stream, &graph) == cudaSuccess && ok &&
         cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess;
  }
  if (exec != nullptr) {
    CUDA_CHECK(cudaGraphExecDestroy(exec));
  }
  if (graph != nullptr) {
    CUDA_CHECK(cudaGraphDestroy(graph));
  }
  (void)cudaGetLastError(); // a refused capture leaves a (non-sticky) error: clear it
  return ok;
}

// ---------------------------------------------------------------------------------------------
// timeKernel and timeGraph: CUDA events around batches of calls of one row at one size.
// ---------------------------------------------------------------------------------------------

constexpr int kTimingBatches = 7; // odd, so the median is one batch

struct Timing {
  double us;     // median over batches of (batch us / calls): us per call
  double spread; // (slowest batch - fastest batch) / median, in percent
};

// Stream mode. launch() enqueues one call of the row (all its launches, each followed by
// cudaGetLastError) on `stream`; poison() enqueues there memsets that make the row's outputs wrong.
// Day 39 varies the calls a batch (they scale with n) and the stream (graph capture needs one the
// program created). Warm-up first (lazy loading makes a kernel's first launch pay its module
// load), then kTimingBatches batches: poison() OUTSIDE the event pair, then `calls` back-to-back
// calls between the events. So every batch starts from poison, and what the outputs hold
// afterwards is what the LAST timed call wrote.
template <typename Launch, typename Poison>
Timing timeKernel(Launch launch, Poison poison, int calls, cudaStream_t stream) {
  launch();
  CUDA_CHECK(cudaDeviceSynchronize());
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

// Graph mode. launch() is called `calls` times while `stream` is captured (each launch becomes a
// graph node; the legacy stream cannot be captured), the graph instantiated once, and ONE replay
// of it timed as one launch by timeKernel: its warm-up replay uploads the graph, each batch is
// poison() then one replay, and afterwards the outputs hold what the LAST replay wrote.
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
  t.us /= calls; // per call; the spread, a ratio, stays
  CUDA_CHECK(cudaGraphExecDestroy(exec));
  CUDA_CHECK(cudaGraphDestroy(graph));
  return t;
}

#ifndef REDUCTION_HARNESS
// The tables: input rotation, one measured row, one table printer; then main.
//
// The input copies of one size: `buffers` copies of n ones, `slot` floats apart (n + a NaN guard,
// rounded up to 64 floats = 256 bytes, so every copy starts 256-byte aligned), after kGuard NaNs.
// One copy when n floats already pass kL2Multiple x L2, else enough that the copies together do.
// Calls take the copies in turn: `next` is the next call's, `last` the latest call's.
struct Layout {
  size_t n, slot;
  int buffers;
  long long next = 0;
  int last = 0;
};
static Layout layoutFor(size_t n, size_t l2Bytes) {
  double target = double(kL2Multiple) * double(l2Bytes), bytes = double(n) * sizeof(float);
  return {n, (n + kGuard + 63) / 64 * 64, bytes >= target ? 1 : int(std::ceil(target / bytes))};
}

// Calls a batch aims for: kBatchBytes of input, clamped; at least a few ms of work either way.
static int launchesPerBatch(size_t n) {
  double calls = kBatchBytes / (double(n) * sizeof(float));
  return int(std::max<double>(kMinLaunchesPerBatch, std::min<double>(kMaxLaunchesPerBatch, calls)));
}

struct Measured {
  size_t n;
  Row row;
  int buffersRead; // distinct copies read between two reads of the same one
  bool dram;       // those copies add up to kL2Multiple x L2 or more
  double mb;       // input bytes (the copy: read + written), 10^6
  Timing t;
  bool ok;
  std::string why; // why the row was refused ("": it ran)
};

// Checks row r once, times it (every batch from poisoned outputs), then checks what the LAST timed
// call wrote. A failed check prints `CHECK FAILED: <row> n=... got G want W (off by D)`.
static Measured measureRow(Row r, bool graph, const Setup &s, float *in, Layout &l,
                           cudaStream_t stream, int &checks, int &failures) {
  int calls = launchesPerBatch(l.n);
  double bytes = double(l.n) * sizeof(float), want = double(l.n); // the inputs are ones
  Measured m{l.n,
             r,
             graph ? std::min(l.buffers, calls) : l.buffers,
             false,
             bytes * (r == Row::Copy ? 2 : 1) / 1e6,
             {0.0, 0.0},
             true,
             refusal(r, s, l.n, graph)};
  m.dram = m.buffersRead * bytes >= double(kL2Multiple) * double(s.prop.l2CacheSize);
  auto at = [&](float *base, int i) { return base + kGuard + size_t(i) * l.slot; };
  auto count = [&](const Check &c, const char *when) {
    ++checks;
    if (!c.ok) {
      std::printf("CHECK FAILED: %s n=%zu got %.0f want %.0f (off by %.0f) [%s, %s timing]%s%s\n",
                  kRows[int(r)].name, l.n, c.got, c.want, c.got - c.want,
                  graph ? "graph" : "stream", when, c.detail.empty() ? "" : ": ", c.detail.c_str());
      ++failures;
      m.ok = false;
    }
  };
  if (!m.why.empty()) {
    return m;
  }
  count(runAndCheck(r, s, at(in, 0), at(s.out, 0), l.n, l.slot, want, stream), "before");
  auto call = [&] {
    l.last = int(l.next % l.buffers);
    ++l.next;
    launchRow(r, s, at(in, l.last), at(s.out, l.last), l.n, stream);
  };
  auto poison = [&] { poisonRow(r, s, stream); };
  m.t = graph ? timeGraph(call, poison, calls, stream) : timeKernel(call, poison, calls, stream);
  CUDA_CHECK(cudaStreamSynchronize(stream));
  count(checkRow(r, s, at(in, l.last), at(s.out, l.last), l.n, l.slot, want, stream), "after");
  return m;
}

// One mode's table (kRowCount lines a size), its refusals, its summary. GB/s = MB / us x 1000;
// % of copy = this row's GB/s / the copy's, only where n floats pass kL2Multiple x L2; vs CUB =
// CUB's us / this row's us. The summary: the sizes where best is at or above CUB (two decimals).
static void printTable(bool graph, const std::vector<Measured> &out, double l2Bytes) {
  std::printf(graph ? "\ngraph: the same calls captured once into a CUDA graph (%d calls at the "
                      "smallest n .. %d at the largest); each batch is one replay between two "
                      "events; median of %d batches\n\n"
                    : "\nstream: each batch is back-to-back calls on one stream between two events "
                      "(%d calls at the smallest n .. %d at the largest); median of %d batches\n\n",
              launchesPerBatch(out.front().n), launchesPerBatch(out.back().n), kTimingBatches);
  std::printf("|          n | row              | buffers | input   |       MB |        us | "
              "spread %% |    GB/s | %% of copy | vs CUB | produces  | check   |\n|------------|--"
              "----------------|---------|---------|----------|-----------|----------|---------|--"
              "---------|--------|-----------|---------|\n");
  struct Tally { // best's and best + PDL's standing against CUB
    int atOrAbove = 0, ran = 0;
    double smallest = 1e30;
    size_t smallestN = 0;
    std::string below;
  } tally[2];
  size_t sizes = out.size() / kRowCount;
  std::string refused, lastWhy[kRowCount];
  for (size_t i = 0; i < out.size(); ++i) {
    const Measured &m = out[i], &copy = out[i - i % kRowCount];
    const Measured &cub = out[i - i % kRowCount + int(Row::Cub)];
    char us[16] = "-", spread[16] = "-", gbs[16] = "-", pct[16] = "-", vs[16] = "-", one[200];
    if (m.why.empty()) {
      std::snprintf(us, sizeof us, "%.2f", m.t.us);
      std::snprintf(spread, sizeof spread, "%.1f", m.t.spread);
      std::snprintf(gbs, sizeof gbs, "%.1f", 1000.0 * m.mb / m.t.us);
    }
    if (m.why.empty() && double(m.n) * sizeof(float) >= kL2Multiple * l2Bytes) {
      std::snprintf(pct, sizeof pct, "%.1f", 100.0 * (m.mb / m.t.us) / (copy.mb / copy.t.us));
    }
    if (m.why.empty() && m.row != Row::Copy) {
      std::snprintf(vs, sizeof vs, "%.2f", cub.t.us / m.t.us);
    }
    std::printf("| %10zu | %-16s | %7d | %-7s | %8.3f | %9s | %8s | %7s | %9s | %6s | %-9s | %-7s "
                "|\n",
                m.n, kRows[int(m.row)].name, m.buffersRead, m.dram ? "DRAM" : "L2-warm", m.mb, us,
                spread, gbs, pct, vs, kRows[int(m.row)].produces,
                !m.why.empty() ? "refused"
                : m.ok         ? "exact"
                               : "FAIL");
    if (m.why != lastWhy[int(m.row)]) { // a reason once, from the first size it applies to
      std::snprintf(one, sizeof one, "\nrefused: %s from n = %zu: ", kRows[int(m.row)].name, m.n);
      refused += one + m.why;
      lastWhy[int(m.row)] = m.why;
    }
    if ((m.row == Row::Best || m.row == Row::BestPdl) && m.why.empty()) {
      Tally &t = tally[m.row == Row::BestPdl];
      double ratio = std::round(100.0 * cub.t.us / m.t.us) / 100.0; // as its line prints it
      if (ratio < 1.0) {
        std::snprintf(one, sizeof one, "%s%zu (%.2f)", t.below.empty() ? "" : ", ", m.n, ratio);
        t.below += one;
      }
      t.atOrAbove += ratio >= 1.0;
      t.ran += 1;
      if (ratio < t.smallest) {
        t.smallest = ratio;
        t.smallestN = m.n;
      }
    }
  }
  const Measured &lastCub = out[out.size() - kRowCount + int(Row::Cub)];
  const Measured &lastBest = out[out.size() - kRowCount + int(Row::Best)];
  std::printf("%s\nsummary (%s): best >= CUB (vs CUB >= 1.00) at %d of %zu sizes; below at: %s; "
              "smallest ratio %.2f at n = %zu; at n = %zu best reads %.1f GB/s, CUB %.1f GB/s\n",
              refused.c_str(), graph ? "graph" : "stream", tally[0].atOrAbove, sizes,
              tally[0].below.empty() ? "none" : tally[0].below.c_str(), tally[0].smallest,
              tally[0].smallestN, lastBest.n, 1000.0 * lastBest.mb / lastBest.t.us,
              1000.0 * lastCub.mb / lastCub.t.us);
  if (tally[1].ran > 0) {
    std::printf("summary (%s): best + PDL >= CUB at %d of %d sizes; below at: %s\n",
                graph ? "graph" : "stream", tally[1].atOrAbove, tally[1].ran,
                tally[1].below.empty() ? "none" : tally[1].below.c_str());
  }
}

static const char *kUsage =
    "usage: cub_vs_ladder [--mode stream|graph|both] [--min-n N] [--max-n N] [--best-small-max S]\n"
    "  --mode M            stream: back-to-back calls on one stream; graph: replays of a CUDA\n"
    "                      graph of the same calls; both (default).\n"
    "  --min-n N           smallest n, a power of two from 1024 (the default) to --max-n.\n"
    "  --max-n N           largest n, a power of two up to 4294967296 (2^32); default 1073741824\n"
    "                      (2^30), which needs 2 x 4 GiB of device memory.\n"
    "  --best-small-max S  best runs ONE block for n <= S (0 to 16777216; default 32768; 0: "
    "never).\n"
    "exit codes: 0 all checks passed, 1 a check failed or a CUDA error, 2 bad usage.\n";

// Digits only (no sign, exponent, hex or trailing text), at most `max`.
static bool parseCount(const std::string &s, size_t max, size_t &out) {
  bool digits = !s.empty() && s.size() < 20 && s.find_first_not_of("0123456789") == s.npos;
  return digits && (out = std::stoull(s)) <= max;
}

// Bad usage: one line on stderr and exit 2 (nothing is allocated when it is called).
[[noreturn]] static void usage(const std::string &why) {
  std::fprintf(stderr, "error: %s (see --help)\n", why.c_str());
  std::exit(2);
}

struct Options {
  bool doStream = true, doGraph = true;
  size_t minN = kMinN, maxN = kDefaultMaxN, smallMax = kDefaultSmallMax;
};
// The options; --help prints kUsage and exits 0, bad usage exits 2 (usage), before any device call.
static Options parseOptions(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i], v = i + 1 < argc ? argv[i + 1] : ""; // all but --help take a value
    bool isN = a == "--min-n" || a == "--max-n", isS = a == "--best-small-max";
    if (a == "--help" || a == "-h") {
      std::printf("%s", kUsage);
      std::exit(0);
    } else if (a == "--mode" && v != "stream" && v != "graph" && v != "both") {
      usage("--mode needs stream, graph or both");
    } else if (isN && !parseCount(v, kMaxN, a == "--min-n" ? o.minN : o.maxN)) {
      usage(a + " needs a power of two from 1024 to 4294967296, digits only");
    } else if (isS && !parseCount(v, kExactAnyOrder, o.smallMax)) {
      usage("--best-small-max needs a whole number from 0 to 16777216 (one block's sum of ones "
            "is exact only up to 2^24)");
    } else if (a != "--mode" && !isN && !isS) {
      usage("unknown option '" + a + "'");
    }
    o.doStream = a == "--mode" ? v != "graph" : o.doStream;
    o.doGraph = a == "--mode" ? v != "stream" : o.doGraph;
    ++i;
  }
  // Powers of two only: above 2^24 a float sum of ones is exact only for those.
  if (!isPowerOfTwo(o.minN) || o.minN < kMinN || !isPowerOfTwo(o.maxN) || o.maxN < o.minN) {
    usage("--min-n and --max-n must be powers of two with 1024 <= --min-n <= --max-n <= "
          "4294967296 (above 2^24 a float sum of ones is exact only for a power of two)");
  }
#if CUB_VERSION < 200200
  if (o.maxN > size_t(INT_MAX)) {
    usage("--max-n: this CUB (before 2.2, CUDA 12.3) takes an int count: at most 1073741824");
  }
#endif
  return o;
}

// The device buffers: the input (kGuard NaNs, then its copies; s.out the same layout, allocFloats
// each), one result a row, the rows' partials, tickets (zeroed once: the kernels reset them), the
// copy check's counters, and CUB's temporary storage, queried once at the largest n (its size is
// set by CUB's grid, which stops growing with n), allocated once, outside every timed region.
// Returns the input.
static float *allocateBuffers(Setup &s, size_t allocFloats, size_t maxN, cudaStream_t stream) {
  float *in = nullptr;
  CUDA_CHECK(cudaMalloc(&in, allocFloats * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&s.out, (s.outFloats = allocFloats) * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&s.results, kRowCount * sizeof(float)));
  for (int k = 0; k < kRowCount; ++k) {
    if (s.partialsCount[k] != 0) {
      CUDA_CHECK(cudaMalloc(&s.partials[k], s.partialsCount[k] * sizeof(float)));
    }
  }
  CUDA_CHECK(cudaMalloc(&s.tickets, kRowCount * sizeof(unsigned int)));
  CUDA_CHECK(cudaMalloc(&s.copyCounts, 2 * sizeof(unsigned long long)));
  CUDA_CHECK(cudaMemset(s.tickets, 0, kRowCount * sizeof(unsigned int)));
  CUDA_CHECK(cubSum(nullptr, s.cubTempBytes, in + kGuard, s.results + int(Row::Cub), maxN, stream));
  CUDA_CHECK(cudaMalloc(&s.cubTemp, std::max<size_t>(1, s.cubTempBytes)));
  CUDA_CHECK(cudaDeviceSynchronize()); // the legacy-stream memset, before the program's stream
  return in;
}

// The lines before the tables: best's shapes, PDL, the ladder's grids, CUB, the rotation.
static void printSetup(const Setup &s, bool doGraph) {
  int sms = s.prop.multiProcessorCount, l2x = kL2Multiple * s.prop.l2CacheSize / (1024 * 1024);
  std::printf("best: ONE block for n <= %zu (256 threads up to %zu, 512 up to %zu, else 1024; "
              "%d float4 loads a thread a tile); one tile of %d x %d float4 (%zu floats) a block "
              "and a last block for n <= %zu; above, %d x %d float4 (%zu floats) tiles on %d SMs "
              "x %d = %u blocks (occupancy %d a SM), %u from n = %zu; ticket cuda::atomic_ref "
              "acq_rel; loads %s\n",
              s.bestSmallMax, kSmall256Max, kSmall512Max, kBestLoads, kMidThreads, kBestLoads,
              kMidTile, s.bestMidMax, kBestThreads, kBestLoads, kBestTile, sms,
              int(s.bestGrid) / sms, s.bestGrid, s.bestOccupancy, s.bestGridLarge,
              kBestManyWavesFrom, kBestL1NoAllocate ? "ld.global.nc.L1::no_allocate" : "__ldg");
  std::string pdlWhy = pdlRefusal(s, 0, false);
  std::printf("best + PDL: %s\n",
              pdlWhy.empty() ? "best, but for n in its one-tile-a-block range a pair of kernels, "
                               "the second launched early by programmatic dependent launch "
                               "(CUB's DeviceReduce does not use PDL)"
                             : ("refused: " + pdlWhy).c_str());
  std::printf("ladder: %d threads a block; v8 and last block on %d blocks; atomic per block on "
              "n/%d blocks; ",
              kBlock, kLadderGrid, kBlock);
  if (s.coopGrid > 0) {
    std::printf("cooperative on %u blocks (%d SMs x occupancy %d), tiles of %zu floats\n",
                s.coopGrid, sms, s.coopOccupancy, kCoopTileFloats);
  } else {
    std::printf("cooperative refused: %s\n", coopRefusal(s, 0, false).c_str());
  }
  std::printf("CUB %d.%d.%d: cub::DeviceReduce::Sum, %zu bytes of temporary storage (queried at "
              "the largest n, allocated once)\n",
              CUB_MAJOR_VERSION, CUB_MINOR_VERSION, CUB_SUBMINOR_VERSION, s.cubTempBytes);
  if (doGraph && s.coopGrid > 0 && !s.coopInGraph) {
    std::printf("cooperative: this driver refused to capture a cooperative launch into a "
                "graph; its graph rows say \"refused\"\n");
  }
  std::printf("rotation: inputs under %d x L2 = %d MiB are copied enough times that the copies "
              "add up to %d MiB; calls cycle through them\n",
              kL2Multiple, l2x, l2x);
}

// The lines after the tables: how to read them.
static void printFootnote(const Setup &s) {
  int l2x = kL2Multiple * s.prop.l2CacheSize / (1024 * 1024);
  std::printf(
      "\nEvery reduction row leaves one float on the device. vs CUB = CUB's us / this row's us at\n"
      "the same n and mode (above 1.00 the row is faster than the library). MB counts the input\n"
      "once for every reduction row (4 bytes a float, whatever a row reads of its own partials),\n"
      "so rows compare at equal work; the copy counts bytes read + written (8 a float), so a\n"
      "reduction can pass 100 %% of copy. %% of copy is printed only where n floats pass %d x L2\n"
      "(%d MiB); below that every row is launch latency, not bandwidth. buffers = the distinct\n"
      "copies of the input read between two reads of the same copy: DRAM when they add up to\n"
      "%d x L2 or more, L2-warm when not (graph batches at the smallest n: a replay re-reads the\n"
      "copies of the previous replay, part of which may still be in L2).\n",
      kL2Multiple, l2x, kL2Multiple);
}

int main(int argc, char **argv) {
  Options o = parseOptions(argc, argv);
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "error: no usable CUDA device\n");
    return 1;
  }
  Setup s = queryDevice();
  s.bestSmallMax = o.smallMax;
  size_t l2Bytes = size_t(s.prop.l2CacheSize), allocFloats = 0, freeBytes = 0, totalBytes = 0;
  for (size_t n = o.minN; n <= o.maxN; n *= 2) { // the largest layout this run needs
    Layout l = layoutFor(n, l2Bytes);
    allocFloats = std::max(allocFloats, kGuard + size_t(l.buffers) * l.slot);
  }
  CUDA_CHECK(cudaMemGetInfo(&freeBytes, &totalBytes));
  size_t need = 2 * allocFloats * sizeof(float) + (size_t(64) << 20); // + CUB, partials, slack
  if (need > freeBytes) {
    usage("--max-n " + std::to_string(o.maxN) + " needs " + std::to_string(need >> 20) +
          " MiB of device memory; " + std::to_string(freeBytes >> 20) + " MiB are free on " +
          s.prop.name + ": pass a smaller --max-n");
  }
  std::printf("GPU: %s | cc %d.%d | %d SMs | %zu KiB shared/block | %d MiB L2 | warp %d\n",
              s.prop.name, s.prop.major, s.prop.minor, s.prop.multiProcessorCount,
              s.prop.sharedMemPerBlock / 1024, s.prop.l2CacheSize / (1024 * 1024), s.prop.warpSize);
  if (s.prop.warpSize != kWarp) {
    std::printf("error: the warp-shuffle sums assume %d lanes a warp; the device has %d\n", kWarp,
                s.prop.warpSize);
    return 1;
  }
  cudaStream_t stream; // created by the program: graph capture cannot use the legacy stream
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  float *in = allocateBuffers(s, allocFloats, o.maxN, stream);
  s.coopInGraph =
      o.doGraph && s.coopGrid > 0 && cooperativeCaptures(s, in + kGuard, o.minN, stream);
  printSetup(s, o.doGraph);

  // Every size: fill its copies (NaN between them), then every row in both modes.
  int checks = 0, failures = 0;
  std::vector<Measured> streamOut, graphOut;
  for (size_t n = o.minN; n <= o.maxN; n *= 2) {
    Layout l = layoutFor(n, l2Bytes);
    CUDA_CHECK(cudaMemsetAsync(in, 0xFF, allocFloats * sizeof(float), stream));
    fillRing<<<1024, 256, 0, stream>>>(in + kGuard, size_t(l.buffers) * l.slot, l.slot, n);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaStreamSynchronize(stream));
    for (int k = 0; k < kRowCount; ++k) {
      if (o.doStream) {
        streamOut.push_back(measureRow(Row(k), false, s, in, l, stream, checks, failures));
      }
      if (o.doGraph) {
        graphOut.push_back(measureRow(Row(k), true, s, in, l, stream, checks, failures));
      }
    }
  }
  if (o.doStream) {
    printTable(false, streamOut, double(l2Bytes));
  }
  if (o.doGraph) {
    printTable(true, graphOut, double(l2Bytes));
  }
  printFootnote(s);

  for (void *p : {(void *)in, (void *)s.out, (void *)s.results, (void *)s.tickets,
                  (void *)s.copyCounts, s.cubTemp}) {
    CUDA_CHECK(cudaFree(p)); // one cleanup path
  }
  for (float *p : s.partials) {
    CUDA_CHECK(cudaFree(p));
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
