// Day 28: cooperative groups: one launch with grid.sync(), a block sum for any whole-warp size.
//
// Rows at n = 2^16, 2^20, 2^24, 2^26, one change between neighbours:
//   copy                      the ceiling: a float4 copy of the same buffer (bytes read + written).
//   v8 two passes, shuffle    day 25's v8 shape: float4 loads, a warp-shuffle block sum; pass 1 on
//                             1024 blocks leaves one partial a block, pass 2 (one block) adds them.
//   cooperative, shuffle      both passes in ONE cooperative launch on the co-resident grid
//                             (occupancy x SMs): partials, grid.sync(), block 0 adds them.
//   cooperative, cg::reduce   its block sum by cg::reduce over 32-lane groups, one slot a warp.
//   two passes, cg::reduce    v8 with it at 32, 96, 192, 256, 480, 768, 1024 threads (largest n).
//
// Exact: the input is 1.0f, so the sum is n. Blocks own whole tiles of 1024 floats, so every
// partial is a multiple of 2^10 and the sum stays exact to 2^34 on a grid that is no power of two.
// Every row is checked before timing and on what the LAST timed launch left; speed is not. A block
// that is not whole warps and a grid that cannot be co-resident are refused (exit 2), never run.
// Edge matrix, second input, guard bands, sanitizers: tests/harness/day28-cooperative.cu.
// Build: nvcc -std=c++17 -O3 -arch=sm_75 -o cooperative code/day28-cooperative/cooperative.cu
// Run:   ./cooperative [--help]; exit 0 pass, 1 a failed check, a CUDA error or a device that
//        lacks cooperative launch, 2 bad usage. (No -rdc: grid.sync() is inline header code.)

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <string>
#include <vector>

// snippet: includes
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cuda_runtime.h>

namespace cg = cooperative_groups; // `cg` in the Needs lines below

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

// Empty in the lesson; the test program's delay.h makes a chosen block sleep before it publishes.
#ifndef DELAY_BEFORE_PUBLISH
#define DELAY_BEFORE_PUBLISH(block)
#endif
// end snippet

// ==== The lesson's constants and the exactness argument they must keep.
// snippet: constants
constexpr int kBlock = 256;             // threads a block: copy, v8, cooperative rows
constexpr int kWarp = 32;               // lanes a warp (the program refuses a device with other)
constexpr int kMaxWarps = 1024 / kWarp; // slots of the per-warp shared array
constexpr int kTileVec4 = 256;          // float4s a tile (a tile is a chunk of the input)
constexpr size_t kTileFloats = 4 * kTileVec4; // floats a tile: 1024 = 2^10
// end snippet
constexpr unsigned kFullMask = 0xffffffffu;        // all 32 lanes: the mask of every shuffle
constexpr size_t kDefaultN = size_t(1) << 26;      // 2^26 floats = 256 MiB, the largest timed n
constexpr int kTwoPassGrid = 1024;                 // blocks of pass 1 in every two-pass row
constexpr size_t kExactAnyOrder = size_t(1) << 24; // a float holds every integer up to 2^24
constexpr size_t kMaxN = size_t(1) << 32;          // largest --n (needs 2 x 16 GiB on the device)
// The cg::reduce two-pass rows' block sizes (whole warps, most not powers of two); the table's n.
constexpr int kLadder[] = {32, 96, 192, 256, 480, 768, 1024};
constexpr size_t kTimedSizes[] = {size_t(1) << 16, size_t(1) << 20, size_t(1) << 24, kDefaultN};

constexpr bool isPowerOfTwo(size_t x) {
  return x != 0 && (x & (x - 1)) == 0;
}
// The block sums need whole warps (one shared slot a warp, 32-lane groups); so does --threads.
constexpr bool wholeWarps(int threads) {
  return threads >= kWarp && threads <= 1024 && threads % kWarp == 0;
}
// Most tiles one of `blocks` blocks can own when n floats are split into whole tiles.
constexpr size_t tilesPerBlockMax(size_t n, size_t blocks) {
  return (n / kTileFloats + blocks - 1) / blocks;
}
constexpr bool ladderIsWholeWarps(size_t i = 0) {
  return i == std::size(kLadder) || (wholeWarps(kLadder[i]) && ladderIsWholeWarps(i + 1));
}
static_assert(wholeWarps(kBlock) && ladderIsWholeWarps(), "every block size is whole warps");
// The lemma: sums of multiples of 2^k are exact while <= 2^(24+k). Partials are whole tiles of
// ones, multiples of 2^10, so the finishing sums are exact up to 2^34 >= the largest n.
static_assert(isPowerOfTwo(kTileFloats) && kMaxN <= kExactAnyOrder * kTileFloats, "tile lemma");
// Block partials (a block's running sums reach them) <= 2^24: two-pass here, cooperative on host.
static_assert(tilesPerBlockMax(kMaxN, kTwoPassGrid) * kTileFloats <= kExactAnyOrder,
              "two-pass block partials exact");
// Above 2^24 only offset 0 and powers of two: whole tiles, no head, no rest.
static_assert(isPowerOfTwo(kDefaultN) && kDefaultN % kTileFloats == 0, "default n is whole tiles");

// ==== Kernels and the device functions they share, in row order.

// snippet: helpers
// Floats from `p` to the next 16-byte boundary (0..3), at most n: the scalar head peeled first.
// Needs: <cstdint>
__host__ __device__ inline size_t headToAlign16(const float *p, size_t n) {
  size_t past = (reinterpret_cast<uintptr_t>(p) / sizeof(float)) % 4; // floats past a boundary
  size_t head = past == 0 ? 0 : 4 - past;
  return head < n ? head : n;
}

// The input as every row splits it: a scalar head to 16-byte alignment, whole tiles of kTileVec4
// float4s (the only part shared out among blocks), and the rest after the last whole tile.
// Needs: nothing
struct Split {
  const float4 *tiles; // tile 0 starts here, 16-byte aligned
  size_t numTiles;     // whole tiles
  size_t head;         // floats before tile 0
  size_t restFrom;     // first float after the last whole tile
};

// Needs: Split, kTileVec4, kTileFloats, headToAlign16, <cstdint>
__device__ inline Split splitInput(const float *x, size_t n) {
  Split s;
  s.head = headToAlign16(x, n);
  s.tiles = reinterpret_cast<const float4 *>(x + s.head);
  s.numTiles = (n - s.head) / kTileFloats;
  s.restFrom = s.head + s.numTiles * kTileFloats;
  return s;
}

// One thread's share of the tiles its block owns: block, block + blocks, ..., a tile's float4s
// walked by the block's threads together (coalesced). Any blockDim.x; size_t indices.
// Needs: Split, kTileVec4
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

// The finishing block's share for one thread: some partials, the head and the rest. `partials`
// has no __restrict__: written earlier in the same launch, it must not take the read-only path.
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
// end snippet

// copy (the ceiling): out[i] = in[i] for i < n. Any block size, any grid (grid-stride). in and out
// share their misalignment (both start `offset` floats past a 256-byte-aligned allocation), so one
// scalar head aligns both; float4 body; scalar tail. Counts 8 bytes an element (read + write).
// Needs: headToAlign16
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

// Block sum with warp shuffles: each warp adds its 32 values with __shfl_down_sync, lane 0 writes
// the warp's sum to one shared slot, one barrier, then warp 0 adds the slots (lanes past the number
// of warps add 0). Launch: blockDim.x a multiple of 32 up to 1024 (the full mask kFullMask names
// 32 lanes that are all present). Every thread of the block must call it (it has barriers). Returns
// the block's sum in thread 0 (the other lanes of warp 0 hold part of it, the other warps 0).
// Needs: kWarp, kMaxWarps, kFullMask
__device__ float blockSumShuffle(float v) {
  __shared__ float warpSums[kMaxWarps];
  unsigned int lane = threadIdx.x % kWarp;
  unsigned int warp = threadIdx.x / kWarp;
  for (int offset = kWarp / 2; offset > 0; offset /= 2) {
    v += __shfl_down_sync(kFullMask, v, offset);
  }
  if (lane == 0) {
    warpSums[warp] = v;
  }
  __syncthreads();
  float total = 0.0f;
  if (warp == 0) { // the whole of warp 0: the full mask below is true
    total = lane < blockDim.x / kWarp ? warpSums[lane] : 0.0f;
    for (int offset = kWarp / 2; offset > 0; offset /= 2) {
      total += __shfl_down_sync(kFullMask, total, offset);
    }
  }
  __syncthreads(); // warp 0 has read the slots: a second call may overwrite them
  return total;
}

// v8 two passes, pass 1: block b sums the tiles it owns and writes partials[b].
// Launch: blockDim.x a multiple of 32 up to 1024, any grid >= 1 (kTwoPassGrid here).
// Needs: splitInput, sumOwnedTiles, blockSumShuffle
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
// Needs: splitInput, sumPartialsAndRest, blockSumShuffle
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
// Needs: <cooperative_groups.h>, cg, splitInput, sumOwnedTiles, sumPartialsAndRest,
//        blockSumShuffle, DELAY_BEFORE_PUBLISH
// ptx: v4-loads shfl
__global__ void cooperativeShuffle(const float *__restrict__ x, size_t n, float *partials,
                                   float *out) {
  cg::grid_group grid = cg::this_grid();
  Split s = splitInput(x, n);
  float v = blockSumShuffle(sumOwnedTiles(s, blockIdx.x, gridDim.x));
  if (threadIdx.x == 0) {
    DELAY_BEFORE_PUBLISH(blockIdx.x);
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
// Block sum with cooperative groups: cg::reduce adds each warp's 32-lane group (shuffles for
// float; the hardware reduce is for 4-byte integers on cc 8.0+), lane 0 writes one shared slot,
// block.sync(), warp 0 adds the slots. No power-of-two block size, no log-step loop of our own.
// blockDim.x a multiple of 32 up to 1024 (tiled_partition<32> needs whole warps); every thread
// calls it. The sum is in thread 0 (all of warp 0), 0 elsewhere.
// Needs: <cooperative_groups.h>, <cooperative_groups/reduce.h>, cg, kWarp, kMaxWarps
__device__ float blockSumCg(const cg::thread_block &block, float v) {
  __shared__ float warpSums[kMaxWarps];
  cg::thread_block_tile<kWarp> warp = cg::tiled_partition<kWarp>(block);
  v = cg::reduce(warp, v, cg::plus<float>());
  if (warp.thread_rank() == 0) {
    warpSums[warp.meta_group_rank()] = v;
  }
  block.sync();
  float total = 0.0f;
  if (warp.meta_group_rank() == 0) {
    total = warp.thread_rank() < warp.meta_group_size() ? warpSums[warp.thread_rank()] : 0.0f;
    total = cg::reduce(warp, total, cg::plus<float>());
  }
  block.sync(); // warp 0 has read the slots: a second call may overwrite them
  return total;
}
// end snippet

// snippet: cooperative-cg
// cooperative, cg::reduce: one launch, one float. Phase 1: block b sums the tiles it owns
// (b, b + B, ...) and writes partials[b]. grid.sync(): no block goes on until every block has
// arrived, and the partials written before it are visible after it. Phase 2: block 0 adds the B
// partials, the head and the rest, and writes *out. Assumes: cudaLaunchCooperativeKernel ONLY, with
// at most (cudaOccupancyMaxActiveBlocksPerMultiprocessor x SMs) blocks, so that every block is
// resident at once (a block waiting in grid.sync() for one that cannot start would wait forever);
// blockDim.x a multiple of 32 up to 1024. Writes partials[0, B) and *out.
// Launch: cooperative cooperativeCg<<<resident, 256>>>(in, n, partials, result)
// Needs: <cstdint>, <cooperative_groups.h>, <cooperative_groups/reduce.h>, cg, kWarp, kMaxWarps,
//   kTileVec4, kTileFloats, headToAlign16, Split, splitInput, sumOwnedTiles,
//   sumPartialsAndRest, blockSumCg, DELAY_BEFORE_PUBLISH
// ptx: v4-loads shfl
__global__ void cooperativeCg(const float *__restrict__ x, size_t n, float *partials, float *out) {
  cg::grid_group grid = cg::this_grid();
  cg::thread_block block = cg::this_thread_block();
  size_t b = block.group_index().x;
  Split s = splitInput(x, n);
  float v = blockSumCg(block, sumOwnedTiles(s, b, grid.num_blocks()));
  if (block.thread_rank() == 0) {
    DELAY_BEFORE_PUBLISH(b);
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
// Needs: <cooperative_groups.h>, cg, splitInput, sumOwnedTiles, blockSumCg
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
// Needs: <cooperative_groups.h>, cg, splitInput, sumPartialsAndRest, blockSumCg
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

// The input: p[0, count) = value. Any grid (grid-stride).
// Needs: nothing
__global__ void fillKernel(float *p, size_t count, float value) {
  size_t stride = size_t(gridDim.x) * blockDim.x;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    p[i] = value;
  }
}

// The copy check: adds to *count the i < n where a[i] != b[i] (a NaN left by the poison counts).
// Any grid (grid-stride); one atomic a thread that found a difference.
// Needs: nothing
__global__ void countDifferences(const float *a, const float *b, size_t n,
                                 unsigned long long *count) {
  size_t stride = size_t(gridDim.x) * blockDim.x;
  unsigned long long differ = 0;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    differ += !(a[i] == b[i]);
  }
  if (differ != 0) {
    atomicAdd(count, differ);
  }
}

// ==== Host side: the cooperative launch, the rows' launchers, the exact check.

// The signature both cooperative kernels share.
typedef void (*CooperativeKernel)(const float *, size_t, float *, float *);

// Blocks of kBlock threads of `kernel` resident at once on the whole GPU: the largest grid a
// cooperative launch accepts (more: cudaErrorCooperativeLaunchTooLarge, never a hang).
static int coResidentBlocks(CooperativeKernel kernel, int sms) {
  int perSm = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, kernel, kBlock, 0));
  return perSm * sms;
}

// One cooperative launch on the default stream; the arguments go as an array of pointers to them.
// `const void *` on purpose: CUDA 12.0-12.5's template overload takes `const T *func`, which
// cannot deduce T from a function pointer (12.6 takes `T *func`); the template only casts.
static void launchCooperative(CooperativeKernel kernel, unsigned int blocks, const float *x,
                              size_t n, float *partials, float *out) {
  void *args[] = {&x, &n, &partials, &out};
  CUDA_CHECK(cudaLaunchCooperativeKernel(reinterpret_cast<const void *>(kernel), dim3(blocks),
                                         dim3(kBlock), args, 0, 0));
  CUDA_CHECK(cudaGetLastError());
}

// The device buffers a row uses. in and out already point at the element the row starts at.
struct Buffers {
  const float *in;          // n input floats
  float *out;               // the copy's destination, n floats, same misalignment as in
  float *partials;          // maxPartials floats: one a block of pass 1 or of the cooperative grid
  size_t maxPartials;       // floats at partials (poisonRow covers them all)
  float *result;            // the one float every reduction row leaves
  unsigned long long *diff; // the copy check's counter
};

// A row of the table: what it runs, on how many threads a block and blocks.
enum class Kind { Copy, TwoPassShuffle, CooperativeShuffle, CooperativeCg, TwoPassCg };
struct Row {
  Kind kind;
  int threads;         // threads a block (cooperative rows: kBlock, which launchCooperative uses)
  unsigned int blocks; // the grid (pass 1 for two-pass rows)
};

static std::string rowName(const Row &r) { // in the order of Kind
  const char *names[] = {"copy", "v8 two passes, shuffle", "cooperative, shuffle",
                         "cooperative, cg::reduce", "two passes, cg::reduce, "};
  return names[int(r.kind)] + (r.kind == Kind::TwoPassCg ? std::to_string(r.threads) : "");
}

// The copy's grid: one float4 a thread at most, capped (the copy is a ceiling, not a lesson).
static unsigned int copyGrid(size_t n) {
  size_t blocks = (n / 4 + kBlock - 1) / kBlock;
  return unsigned(std::max<size_t>(1, std::min<size_t>(blocks, 65536)));
}

// Enqueues one run of row r over b.in[0, n). Checks every launch. No synchronization.
static void launchRow(const Row &r, const Buffers &b, size_t n) {
  switch (r.kind) {
  case Kind::Copy:
    copyKernel<<<r.blocks, r.threads>>>(b.in, b.out, n);
    CUDA_CHECK(cudaGetLastError());
    break;
  case Kind::TwoPassShuffle:
    twoPassTilesShuffle<<<r.blocks, r.threads>>>(b.in, n, b.partials);
    CUDA_CHECK(cudaGetLastError());
    twoPassFinishShuffle<<<1, r.threads>>>(b.in, n, b.partials, r.blocks, b.result);
    CUDA_CHECK(cudaGetLastError());
    break;
  case Kind::CooperativeShuffle:
  case Kind::CooperativeCg:
    launchCooperative(r.kind == Kind::CooperativeCg ? cooperativeCg : cooperativeShuffle, r.blocks,
                      b.in, n, b.partials, b.result);
    break;
  case Kind::TwoPassCg:
    twoPassTilesCg<<<r.blocks, r.threads>>>(b.in, n, b.partials);
    CUDA_CHECK(cudaGetLastError());
    twoPassFinishCg<<<1, r.threads>>>(b.in, n, b.partials, r.blocks, b.result);
    CUDA_CHECK(cudaGetLastError());
    break;
  }
}

// Enqueues NaN (0xFF bytes) over row r's outputs on the default stream: the copy's destination, or
// the partials and the result. A launch that leaves one unwritten fails the check after it.
static void poisonRow(const Row &r, const Buffers &b, size_t n) {
  if (r.kind == Kind::Copy) {
    CUDA_CHECK(cudaMemsetAsync(b.out, 0xFF, n * sizeof(float)));
  } else {
    CUDA_CHECK(cudaMemsetAsync(b.partials, 0xFF, b.maxPartials * sizeof(float)));
    CUDA_CHECK(cudaMemsetAsync(b.result, 0xFF, sizeof(float)));
  }
}

// The exact check of what row r left (it runs no row). Reduction rows: the one float == want (n
// for the lesson's ones; the harness passes the count of ones of its random 0/1 input); NaN never
// equals, so an unwritten result fails. Copy: got = destination elements equal to their source,
// counted on the device (no 16 GiB host buffer at n = 2^32), want = n. Prints CHECK FAILED if not.
static bool checkRow(const Row &r, const Buffers &b, size_t n, double want, const char *when) {
  double got = 0.0;
  if (r.kind == Kind::Copy) {
    unsigned long long differ = 0;
    CUDA_CHECK(cudaMemset(b.diff, 0, sizeof differ));
    countDifferences<<<copyGrid(n), kBlock>>>(b.in, b.out, n, b.diff);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(&differ, b.diff, sizeof differ, cudaMemcpyDeviceToHost));
    got = double(n - differ);
    want = double(n);
  } else {
    float f = 0.0f;
    CUDA_CHECK(cudaMemcpy(&f, b.result, sizeof f, cudaMemcpyDeviceToHost));
    got = double(f);
  }
  if (got == want) {
    return true;
  }
  std::printf("CHECK FAILED: %s n=%zu %s got %.0f want %.0f (off by %.0f)\n", rowName(r).c_str(), n,
              when, got, want, got - want);
  return false;
}

// ==== timeKernel: CUDA events around batches of back-to-back launches of ONE row.
constexpr int kTimingBatches = 11;    // odd, so the median is one batch
constexpr int kLaunchesPerBatch = 20; // back-to-back launches between one event pair

struct Timing {
  double ms;     // median over batches of (batch ms / launches): ms per launch
  double spread; // (slowest batch - fastest batch) / median, in percent
};

// launch: enqueues one run of the row on the default stream (and checks cudaGetLastError()).
// poison: enqueues cudaMemsetAsync 0xFF (NaN) of the row's outputs on the default stream.
// Warm-up first: launch() once, synchronized (lazy loading makes a kernel's first launch pay its
// module load). Then kTimingBatches batches: poison() BEFORE each batch, outside the event pair,
// then kLaunchesPerBatch launches between one event pair. So every batch starts from poison, and
// what the outputs hold when this returns is what the LAST timed launch wrote: the caller checks
// it. Returns ms per launch (median) and the spread. Any CUDA failure exits 1 through CUDA_CHECK.
template <typename Launch, typename Poison>
Timing timeKernel(Launch launch, Poison poison) {
  launch();
  CUDA_CHECK(cudaDeviceSynchronize());
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  std::vector<double> perLaunch;
  for (int b = 0; b < kTimingBatches; ++b) {
    poison();
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

#ifndef REDUCTION_HARNESS
// ==== main: the options, then every row checked, timed and checked again, then the table.
static const char *kUsage =
    R"(usage: cooperative [--n N] [--offset K] [--blocks B] [--threads T] [--help]
  --n N        one size, not 2^16 .. 2^26: 1..2^24, or a power of two up to 2^32 (exact sums)
  --offset K   the input starts K = 0..3 floats past a 256-byte boundary (needs --n <= 2^24)
  --blocks B   the cooperative grid: 1 .. what can be co-resident (default: all of it)
  --threads T  the cg::reduce two-pass row at T threads only: a multiple of 32 up to 1024
exit codes: 0 all exact; 1 a check failed, CUDA error, device lacks a feature; 2 bad usage
)";

// The knobs (0: the default), and what the device offers the run.
struct Options {
  size_t n = 0, offset = 0, blocks = 0, threads = 0;
};
struct Device {
  cudaDeviceProp p;
  int sms = 0, l2MiB = 0, maxCoResident = 0; // blocks of both cooperative kernels, whole GPU
  unsigned int coopGrid = 0;                 // --blocks, else all that can be co-resident
  size_t maxPartials = 0;                    // floats of the partials buffer
};

// Every refusal, before any allocation: -1 the run can go; else the exit code (0 after --help; 2
// bad usage or a knob the device cannot honour; 1 a device without a feature: one line on stderr).
static int parseAndCheck(int argc, char **argv, Options &o, Device &d) {
  for (int i = 1; i < argc; i += 2) {
    std::string a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : "(no value)";
    size_t len = std::strlen(v), x = ~size_t(0); // decimal digits only: "1e6", "-1", "" refused
    x = len > 0 && len <= 10 && std::strspn(v, "0123456789") == len ? std::strtoull(v, 0, 10) : x;
    if (a == "--help" || a == "-h") {
      std::printf("%s", kUsage);
      return 0;
    }
    size_t *knob = a == "--n"         ? &o.n
                   : a == "--offset"  ? &o.offset
                   : a == "--blocks"  ? &o.blocks
                   : a == "--threads" ? &o.threads
                                      : nullptr;
    bool ok = knob == &o.n        ? x >= 1 && x <= kMaxN && (x <= kExactAnyOrder || isPowerOfTwo(x))
              : knob == &o.offset ? x <= 3
              : knob == &o.blocks ? x >= 1 && x <= 65536
                                  : knob == &o.threads && x <= 1024 && wholeWarps(int(x));
    if (!ok) { // the value, and the knob's line of --help (or "unknown option")
      const char *h = knob ? std::strstr(kUsage, ("\n  " + a).c_str()) + 3 : "unknown option";
      std::fprintf(stderr, "error: %s %s: %.*s\n", argv[i], v, int(std::strcspn(h, "\n")), h);
      return 2;
    }
    *knob = x;
  }
  if (o.offset != 0 && (o.n == 0 || o.n > kExactAnyOrder)) { // above 2^24 the input is whole tiles
    std::fprintf(stderr, "error: --offset %zu needs an --n up to 16777216 (2^24)\n", o.offset);
    return 2;
  }
  size_t maxN = o.n != 0 ? o.n : kDefaultN;     // the largest n of the run
  CUDA_CHECK(cudaGetDeviceProperties(&d.p, 0)); // device 0, the current device of this process
  d.sms = d.p.multiProcessorCount, d.l2MiB = d.p.l2CacheSize / (1024 * 1024);
  d.maxCoResident =
      std::min(coResidentBlocks(cooperativeShuffle, d.sms), coResidentBlocks(cooperativeCg, d.sms));
  d.coopGrid = unsigned(o.blocks != 0 ? o.blocks : size_t(d.maxCoResident));
  d.maxPartials = std::max<size_t>(kTwoPassGrid, d.coopGrid);
  size_t need = 2 * (maxN + 3) * sizeof(float) + (d.maxPartials + 1) * sizeof(float) + 8;
  size_t freeBytes = 0, totalBytes = 0;
  CUDA_CHECK(cudaMemGetInfo(&freeBytes, &totalBytes));
  bool lacks = !d.p.cooperativeLaunch || d.maxCoResident < 1 || d.p.warpSize != kWarp;
  const char *why =
      lacks ? "this device lacks cooperative launch, a co-resident block or 32-lane warps"
      : o.blocks > size_t(d.maxCoResident)
          ? "--blocks: more than can be co-resident, and grid.sync() needs all blocks resident"
      : maxN > kExactAnyOrder && tilesPerBlockMax(maxN, d.coopGrid) * kTileFloats > kExactAnyOrder
          ? "a block would own more than 2^24 floats (its partial inexact): --blocks >= n / 2^24"
      : need > freeBytes ? "not enough free device memory for n"
                         : nullptr;
  if (why == nullptr) {
    return -1;
  }
  std::fprintf(stderr,
               "error: %s (%s: cooperative launch %d, warp %d, %d x %d co-resident "
               "blocks of %d threads; n = %zu needs %zu MiB, %zu free)\n",
               why, d.p.name, d.p.cooperativeLaunch, d.p.warpSize, d.maxCoResident / d.sms, d.sms,
               kBlock, maxN, need >> 20, freeBytes >> 20);
  return lacks ? 1 : 2;
}

// One row at one n: poison, run, check ("before timing"); timeKernel; check what the last timed
// launch left ("after timing"). Appends the row's line to `table`; returns the failed checks.
static int measureRow(const Row &r, const Buffers &b, size_t n, const Device &d, double &copyGBs,
                      double &v8Ms, std::string &table) {
  poisonRow(r, b, n);
  launchRow(r, b, n);
  CUDA_CHECK(cudaDeviceSynchronize());
  int bad = !checkRow(r, b, n, double(n), "before timing");
  Timing t = timeKernel([&] { launchRow(r, b, n); }, [&] { poisonRow(r, b, n); });
  bad += !checkRow(r, b, n, double(n), "after timing");
  double bytes = double(n) * sizeof(float); // the copy: read + written; a reduction: + partials
  double mb = (r.kind == Kind::Copy ? 2 * bytes : bytes + double(r.blocks) * sizeof(float)) / 1e6;
  double gbs = mb / t.ms;                              // MB / us x 1000
  copyGBs = r.kind == Kind::Copy ? gbs : copyGBs;      // this n's copy and v8 rows come first:
  v8Ms = r.kind == Kind::TwoPassShuffle ? t.ms : v8Ms; // the rows after them compare with them
  char vs[16] = "-", line[256];
  if (r.kind != Kind::Copy) {
    std::snprintf(vs, sizeof vs, "%.2fx", v8Ms / t.ms);
  }
  std::snprintf(line, sizeof line,
                "| %-26s | %10zu | %-7s | %7d | %6u | %8.3f | %9.2f | %8.1f | %7.1f | %9.1f | "
                "%11s | %-9s | %-5s |\n",
                rowName(r).c_str(), n,
                2 * n * sizeof(float) <= size_t(d.p.l2CacheSize) ? "L2-warm" : "DRAM", r.threads,
                r.blocks, mb, 1000.0 * t.ms, t.spread, gbs, 100.0 * gbs / copyGBs, vs,
                r.kind == Kind::Copy ? "copy" : "one float", bad == 0 ? "exact" : "FAIL");
  table += line;
  return bad;
}

// After all rows, so below any CHECK FAILED line: how the rows ran, the table, how to read it.
static void printTable(const Options &o, const Device &d, const std::string &table) {
  std::printf(
      "\nreductions: blocks own whole tiles of %zu floats (float4 loads, offset %zu); median "
      "of %d batches of %d calls, the same buffers every call\n",
      kTileFloats, o.offset, kTimingBatches, kLaunchesPerBatch);
  std::printf(o.blocks == 0 ? "cooperative grid: %u blocks of %d threads = %d co-resident a SM "
                              "(cudaOccupancyMaxActiveBlocksPerMultiprocessor) x %d SMs\n\n"
                            : "cooperative grid: %u blocks of %d threads (--blocks; at most %d "
                              "co-resident a SM x %d SMs)\n\n",
              d.coopGrid, kBlock, d.maxCoResident / d.sms, d.sms);
  std::printf(
      "| row                        |          n | input   | threads | blocks |       MB |    "
      "    us | spread %% |    GB/s | %% of copy | vs two-pass | produces  | check |\n"
      "|----------------------------|------------|---------|---------|--------|----------|---"
      "-------|----------|---------|-----------|-------------|-----------|-------|\n%s"
      "\nEvery reduction row leaves one float on the device: the two-pass rows with a second\n"
      "launch (one block adds the %d partials), the cooperative rows with grid.sync() and block 0\n"
      "in the same launch. vs two-pass = v8's us / this row's us at the same n (above 1.00x the\n"
      "row is faster than the two launches of v8).\n"
      "The copy row counts bytes read + written (8 a float); reduction rows count bytes read (4 a\n"
      "float, plus the partials), so a reduction can pass 100 %% of copy: the percentage compares\n"
      "two numbers from this run, not a limit.\n"
      "input = L2-warm: the input and the copy's destination fit in this GPU's %d MiB L2 and\n"
      "every timed call reads the same buffers, so those rows measure L2, not DRAM bandwidth;\n"
      "DRAM: they do not fit, so the calls read DRAM.\n",
      table.c_str(), kTwoPassGrid, d.l2MiB);
}

int main(int argc, char **argv) {
  Options o;
  Device d;
  if (int rc = parseAndCheck(argc, argv, o, d); rc >= 0) {
    return rc;
  }
  std::vector<size_t> sizes(std::begin(kTimedSizes), std::end(kTimedSizes));
  sizes = o.n != 0 ? std::vector<size_t>{o.n} : sizes;
  size_t maxN = sizes.back();
  std::printf("GPU: %s | cc %d.%d | %d SMs | %zu KiB shared/block | %d MiB L2 | warp %d\n",
              d.p.name, d.p.major, d.p.minor, d.sms, d.p.sharedMemPerBlock / 1024, d.l2MiB,
              d.p.warpSize);
  // One allocation each; cudaMalloc returns 256-byte-aligned memory, + offset misaligns both.
  float *inAlloc = nullptr, *outAlloc = nullptr;
  Buffers b{nullptr, nullptr, nullptr, d.maxPartials, nullptr, nullptr};
  CUDA_CHECK(cudaMalloc(&inAlloc, (maxN + 3) * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&outAlloc, (maxN + 3) * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&b.partials, d.maxPartials * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&b.result, sizeof(float)));
  CUDA_CHECK(cudaMalloc(&b.diff, sizeof(unsigned long long)));
  b.in = inAlloc + o.offset, b.out = outAlloc + o.offset;

  // Every n: copy, v8, both cooperative rows; the largest also the cg::reduce rows (or --threads).
  int checks = 0, failures = 0;
  std::string table;
  for (size_t n : sizes) {
    fillKernel<<<1024, 256>>>(inAlloc + o.offset, n, 1.0f);
    CUDA_CHECK(cudaGetLastError());
    std::vector<Row> rows = {{Kind::Copy, kBlock, copyGrid(n)},
                             {Kind::TwoPassShuffle, kBlock, kTwoPassGrid},
                             {Kind::CooperativeShuffle, kBlock, d.coopGrid},
                             {Kind::CooperativeCg, kBlock, d.coopGrid}};
    for (size_t i = 0; n == maxN && i < (o.threads != 0 ? 1 : std::size(kLadder)); ++i) {
      rows.push_back({Kind::TwoPassCg, o.threads != 0 ? int(o.threads) : kLadder[i], kTwoPassGrid});
    }
    double copyGBs = 0.0, v8Ms = 0.0;
    for (const Row &r : rows) {
      failures += measureRow(r, b, n, d, copyGBs, v8Ms, table), checks += 2;
    }
  }
  printTable(o, d, table);

  for (void *q : {(void *)inAlloc, (void *)outAlloc, (void *)b.partials, (void *)b.result,
                  (void *)b.diff}) { // one cleanup path
    CUDA_CHECK(cudaFree(q));
  }
  if (failures != 0) {
    std::printf("\nRESULT: FAIL (%d of %d checks failed)\n", failures, checks);
    return 1;
  }
  std::printf("\nRESULT: PASS (%d checks, all exact)\n", checks);
  return 0;
}
#endif // REDUCTION_HARNESS
