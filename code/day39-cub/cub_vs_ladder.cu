// Day 39: the library arrives. cub::DeviceReduce::Sum head to head with the ladder, 2^10..2^30.
//
// Every earlier day measured itself against a copy kernel. Today's question is the next one a
// learner asks: how far am I from the library? One program sums n floats of 1.0f (so the right
// answer is n) at every power of two from 2^10 to 2^30, in two timing modes, with these rows:
//   copy              the ceiling: a float4 copy (day 27's), bytes read + written.
//   CUB Sum           cub::DeviceReduce::Sum: temporary storage sized once (at the largest n) and
//                     allocated once, outside every timed region. Two launches above one tile.
//   v8 two passes     day 25/27: float4 grid-stride loads on 1024 blocks of 256, warp-shuffle
//                     block reduce, one partial a block; a second launch of ONE block adds them.
//   atomic per block  day 26: one element a thread, n/256 blocks, block reduce, one atomicAdd a
//                     block into a zeroed float (the zeroing memset is part of each call).
//   last block        day 27: v8's first pass in ONE launch; each block publishes its partial,
//                     fences, takes a ticket; the block with the last ticket adds the partials.
//   cooperative       day 28: whole tiles of 1024 floats a block, grid.sync(), block 0 adds the
//                     partials; a cooperative launch on the grid the device holds at once.
//   best              this day: the last-block finish on tiles of kBestLoads independent float4
//                     loads a thread (all in flight before any add), block size a template
//                     argument, grid from the SM count and occupancy, each block owning WHOLE
//                     tiles (exact above 2^24 on any grid); below a threshold, ONE block (no
//                     atomics, no fence, no second launch).
// Every reduction row leaves one float on the device.
//
// Two timing modes, both with CUDA events and the median of kTimingBatches batches:
//   stream  a batch = back-to-back calls on one stream (launch gaps included, as an application
//           that launches from the host pays them);
//   graph   a batch = ONE replay of a CUDA graph into which the same calls were captured once
//           (the host's launch cost leaves; the GPU's gap between dependent kernels stays).
// Inputs under kL2Multiple x L2 bytes are rotated over several copies of the ones, so that a call
// reads memory the previous calls did not touch; the table prints how many and whether that is
// enough to call the input DRAM-resident ("DRAM") or not ("L2-warm").
//
// Build and run (any card; a Colab T4 is sm_75, an H200 sm_90):
//   nvcc -std=c++17 -O3 -arch=sm_75 -o cub_vs_ladder code/day39-cub/cub_vs_ladder.cu
//   ./cub_vs_ladder              both modes, n = 2^10 .. 2^30 (needs 2 x 4 GiB of device memory)
//   ./cub_vs_ladder --help       the knobs: --mode, --min-n, --max-n, --self-test, best's knobs
//
// What is checked: every row at every size and mode, exactly, before it is timed and again on what
// the last timed call left (a race, or a ticket counter that is not reset, can show only under
// repetition); the one-launch rows' ticket counters are back at 0; the copy element by element on
// the device, with NaN guards after every input and output copy (an out-of-range read adds NaN).
// What is NOT checked: speed. The tables and the summary report it; no threshold decides.
//
// Exit codes: 0 every check passed, 1 a check failed or a CUDA error, 2 bad usage.

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
constexpr int kBlock = 256;                           // threads a block: copy and the ladder rows
constexpr int kWarp = 32;                             // lanes a warp (checked on the device too)
constexpr int kWarpsPerBlock = kBlock / kWarp;        // shared slots of the ladder's block reduce
constexpr int kLadderGrid = 1024;                     // v8 and last block: day 25/27's grid
constexpr int kCoopTileVec4 = 256;                    // cooperative (day 28): float4s a tile
constexpr size_t kCoopTileFloats = 4 * kCoopTileVec4; // floats a tile: 1024 = 2^10
constexpr size_t kExactAnyOrder = size_t(1) << 24;    // a float holds every integer up to 2^24
constexpr size_t kMinN = size_t(1) << 10;             // smallest timed size
constexpr size_t kDefaultMaxN = size_t(1) << 30;      // largest timed size by default (4 GiB)
constexpr size_t kMaxN = size_t(1) << 32;             // largest --max-n (2 x 16 GiB on the device)

// The tuning knobs of `best` (the lead tunes these on the H200; the banner prints them).
constexpr int kBestThreads = 512; // threads a block of the multi-block path (template argument)
constexpr int kBestLoads = 4;     // independent float4 loads a thread a tile, all in flight
// best's grid (--best-blocks-per-sm overrides both): ONE wave, SMs x occupancy, below
// kBestManyWavesFrom; kBestWavesLarge waves from there up. Measured on the H200
// (research/day39-cub.md, "tuning"): at 2^24..2^26 one resident wave of 528 blocks beat 8 waves
// of 4224 by 2-6 % (fewer tickets, no tail of block launches), while at 2^28..2^30 the 8-wave
// grid kept best at or above CUB.
constexpr int kBestWaves = 1;
constexpr int kBestWavesLarge = 8;
constexpr size_t kBestManyWavesFrom = size_t(1) << 27;
constexpr int kFinishLoads = 8;     // the last block's loads of the partials in flight a thread
constexpr int kSmallThreads = 1024; // the single-block path: one block of this many threads ...
constexpr int kSmallLoads = 8;      // ... each with this many float4 loads in flight a tile
// Loads of the input: false = __ldg (ld.global.nc: the read-only path, as CUB's LOAD_LDG);
// true = ld.global.nc.L1::no_allocate (do not keep the streamed lines in L1 at all).
constexpr bool kBestL1NoAllocate = false;

constexpr size_t kBestTile = size_t(kBestThreads) * kBestLoads * 4;    // floats a tile: 8192
constexpr size_t kSmallTile = size_t(kSmallThreads) * kSmallLoads * 4; // floats a round: 32768
// Below this n, best runs ONE block: kSmallTile floats are one round of loads for that block, the
// same one memory latency the multi-block path pays for its loads, without the fence, the ticket
// and the last block's read of the partials (two or three more dependent trips to L2). Above it a
// single block needs a second round of loads and the multi-block path wins. --best-small-max N.
constexpr size_t kDefaultSmallMax = kSmallTile;

// Rotation and timing.
constexpr int kL2Multiple = 4;    // inputs under 4 x L2 bytes are rotated over several copies
constexpr size_t kGuard = 64;     // NaN floats before the first copy and after every copy
constexpr int kTimingBatches = 7; // odd, so the median is one batch
constexpr double kBatchBytes = 8.0 * (size_t(1) << 30); // input bytes a batch aims to read
constexpr int kMinLaunchesPerBatch = 4;       // at n = 2^30 a batch is 4 calls (about 4 ms)
constexpr int kMaxLaunchesPerBatch = 4096;    // at small n a batch is 4096 calls (a few ms)
constexpr unsigned int kSelfTestBestGrid = 5; // --self-test: best's last-block path on 5 blocks

__host__ __device__ constexpr bool isPowerOfTwo(size_t x) {
  return x != 0 && (x & (x - 1)) == 0;
}

// The block reduction (shuffle first, one shared slot a warp): whole warps, at most 32 of them.
static_assert(kBlock % kWarp == 0 && kBlock <= 1024 && isPowerOfTwo(kBlock), "ladder block");
static_assert(kBestThreads % kWarp == 0 && kBestThreads <= 1024, "best: whole warps, <= 1024");
static_assert(kSmallThreads % kWarp == 0 && kSmallThreads <= 1024, "small: whole warps");
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
//  - best: block b owns WHOLE tiles of kBestTile = 2^13 floats, so every block partial is a
//    multiple of 2^13, on ANY grid (the SM count need not be a power of two): exact up to
//    n = 2^(24+13) when n is a multiple of the tile (above 2^24 n is a power of two, so it is).
//    Inside a block every thread adds the same 4 x kBestLoads floats a tile, at most
//    n / kBestTile tiles: each thread sum c <= 2^23 is exact, and the block's tree adds equal
//    values pair by pair (c, 2c, 4c, ...), exact too. A tile cut short by n exists only when n is
//    not a multiple of the tile, that is only below 2^24, where any order is exact.
static_assert(isPowerOfTwo(kBestTile) && isPowerOfTwo(kSmallTile), "tiles: powers of two");
static_assert(kBestTile <= kExactAnyOrder && kSmallTile <= kExactAnyOrder, "tile sums exact");
static_assert(kMaxN / kBestTile * (4 * kBestLoads) <= kExactAnyOrder, "per-thread sum exact");
static_assert(kMaxN <= kExactAnyOrder * kBestTile, "best: block partials multiples of the tile");
static_assert(kMaxN <= kExactAnyOrder * kBlock, "atomic per block: k = log2(256) = 8");
static_assert(kMaxN / (size_t(kBlock) * kLadderGrid) <= kExactAnyOrder, "ladder per-thread sum");
static_assert(isPowerOfTwo(kLadderGrid), "ladder grid: a power of two");
static_assert(isPowerOfTwo(kCoopTileFloats) && kMaxN <= kExactAnyOrder * kCoopTileFloats,
              "cooperative: tile lemma");
static_assert(kCoopTileVec4 == kBlock, "cooperative: one float4 a thread a tile");
static_assert(kMinLaunchesPerBatch >= 1 && kMaxLaunchesPerBatch >= kMinLaunchesPerBatch, "batch");

// ---------------------------------------------------------------------------------------------
// timeKernel and timeGraph: CUDA events around batches of calls of ONE row configuration.
// ---------------------------------------------------------------------------------------------
struct Timing {
  double us;     // median over batches of (batch us / calls): us per call
  double spread; // (slowest batch - fastest batch) / median, in percent
};

static Timing medianAndSpread(std::vector<double> perCall) {
  std::sort(perCall.begin(), perCall.end());
  double median = perCall[perCall.size() / 2];
  return {median, 100.0 * (perCall.back() - perCall.front()) / median};
}

// Stream mode. launch: a callable that enqueues one call of the row (all its launches, each
// followed by cudaGetLastError) on `stream`. Warm-up: the same callable, run and synchronized
// first (lazy loading makes a kernel's first launch pay its module load). Then kTimingBatches
// batches of `calls` back-to-back calls, one event pair a batch. Errors exit 1 via CUDA_CHECK.
template <typename Launch>
Timing timeKernel(Launch launch, int calls, cudaStream_t stream) {
  launch();
  CUDA_CHECK(cudaStreamSynchronize(stream));
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  std::vector<double> perCall;
  for (int b = 0; b < kTimingBatches; ++b) {
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
  return medianAndSpread(perCall);
}

// Graph mode. The same callable is called `calls` times while `stream` is being captured (nothing
// runs; every launch becomes a graph node), the graph is instantiated once, replayed once as the
// warm-up (which also uploads it), then each batch is ONE replay between one event pair. Stream
// capture needs a stream the program created: the legacy default stream cannot be captured
// (cudaStreamBeginCapture's reference; research/day39-cub.md, entry 6).
template <typename Launch>
Timing timeGraph(Launch launch, int calls, cudaStream_t stream) {
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  for (int i = 0; i < calls; ++i) {
    launch();
  }
  CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  CUDA_CHECK(cudaGraphLaunch(exec, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  std::vector<double> perCall;
  for (int b = 0; b < kTimingBatches; ++b) {
    CUDA_CHECK(cudaEventRecord(start, stream));
    CUDA_CHECK(cudaGraphLaunch(exec, stream));
    CUDA_CHECK(cudaEventRecord(stop, stream));
    CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0.0f;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    perCall.push_back(1000.0 * double(ms) / calls);
  }
  CUDA_CHECK(cudaEventDestroy(start));
  CUDA_CHECK(cudaEventDestroy(stop));
  CUDA_CHECK(cudaGraphExecDestroy(exec));
  CUDA_CHECK(cudaGraphDestroy(graph));
  return medianAndSpread(perCall);
}

// ---------------------------------------------------------------------------------------------
// Device helpers shared by the ladder rows (copied from day 27).
// ---------------------------------------------------------------------------------------------

// Floats from `p` to the next 16-byte boundary (0..3), at most n: the scalar head peeled so that
// every float4 load starts on a 16-byte boundary.
__host__ __device__ inline size_t headToAlign16(const float *p, size_t n) {
  size_t past = (reinterpret_cast<uintptr_t>(p) / sizeof(float)) % 4; // floats past a boundary
  size_t head = past == 0 ? 0 : 4 - past;
  return head < n ? head : n;
}

// This thread's share of in[0, n): grid-stride over float4s of the aligned body, plus head element
// t and tail element t for grid thread t (head and tail are 0..3 floats each). Any grid >= 1 block
// of >= 3 threads. 64-bit indices throughout: n reaches 2^32. `in` is read through __ldg (the
// read-only path), so nobody may write it while the kernel runs.
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

// Block sum, shuffle first: each warp adds its 32 values with __shfl_down_sync, lane 0 of each warp
// writes one shared slot, and warp 0 adds the blockDim.x / 32 slots the same way. Every thread of
// the block must call it (it holds a barrier); blockDim.x a multiple of 32, at most 1024; warpSums
// holds blockDim.x / 32 floats. Returns the block's sum in thread 0. The full mask 0xffffffff is
// right: every lane of each warp executes both shuffle loops (warp 0 takes `warp == 0` whole).
// A caller that reuses warpSums must pass a __syncthreads() between two calls.
__device__ float blockReduceSum(float v, float *warpSums) {
  unsigned int lane = threadIdx.x % kWarp;
  unsigned int warp = threadIdx.x / kWarp;
  for (int offset = kWarp / 2; offset > 0; offset >>= 1) {
    v += __shfl_down_sync(0xffffffffu, v, offset);
  }
  if (lane == 0) {
    warpSums[warp] = v;
  }
  __syncthreads(); // every thread reaches it: no branch is open here
  if (warp == 0) {
    v = lane < blockDim.x / kWarp ? warpSums[lane] : 0.0f;
    for (int offset = kWarp / 2; offset > 0; offset >>= 1) {
      v += __shfl_down_sync(0xffffffffu, v, offset);
    }
  }
  return v; // meaningful in thread 0 only
}

// ---------------------------------------------------------------------------------------------
// Kernels, in row order. (CUB's kernels are the library's; see cubSum below.)
// ---------------------------------------------------------------------------------------------

// copy (the ceiling): out[i] = in[i] for i < n. Any block size, any grid (grid-stride). in and out
// share their misalignment, so one scalar head aligns both; float4 body; scalar tail. Counts 8
// bytes an element (read + write).
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

// v8, each pass (day 25/27): in[0, n) -> partials[blockIdx.x]. Launch: blockDim.x == kBlock, any
// grid >= 1. Pass 1 runs it over the input on kLadderGrid blocks; pass 2 on ONE block over the
// partials (cudaMalloc'd, so aligned), which leaves the sum in the result. The kernel boundary
// between the passes is the grid-wide barrier.
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
// ptx: v4-loads shfl atom
__global__ void __launch_bounds__(kBlock)
    reduceLastBlock(const float *__restrict__ in, size_t n, float *partials, unsigned int *ticket,
                    float *result) {
  __shared__ float warpSums[kWarpsPerBlock];
  __shared__ bool isLastBlockDone;
  float v = blockReduceSum(gridStrideSum(in, n), warpSums);
  if (threadIdx.x == 0) { // ONE thread: it wrote the partial, it takes the ticket
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
// ptx: v4-loads shfl
__global__ void __launch_bounds__(kBlock)
    reduceCooperative(const float *__restrict__ x, size_t n, float *partials, float *out) {
  __shared__ float warpSums[kWarpsPerBlock];
  cg::grid_group grid = cg::this_grid();
  Split s = splitInput(x, n);
  float v = blockReduceSum(sumOwnedTiles(s, blockIdx.x, gridDim.x), warpSums);
  if (threadIdx.x == 0) {
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

// One float4 of the input, which nobody writes while the kernel runs. __ldg asks for the
// read-only, non-coherent path (ld.global.nc), as CUB's reduction does (LOAD_LDG); the
// L1::no_allocate variant also tells L1 not to keep the line, since no thread reads it again.
// Neither changes the bytes that come from DRAM; they may change how many loads L1 can track.
// (PTX ISA `ld`, .L1::no_allocate; CUB's LOAD_LDG policy: research/day39-cub.md, entries 4, 11.)
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

// snippet: best-tiles
// best, the loads: this thread's share of in[0, n) when block `block` of `blocks` owns tiles
// block, block + blocks, block + 2 x blocks, ... A tile is kThreads x kLoads float4s (kThreads x
// kLoads x 4 floats); thread t loads float4 t, t + kThreads, ..., t + (kLoads-1) x kThreads of it:
// every load of a warp is one contiguous 512-byte piece, and all kLoads loads are issued before
// the first add (they do not depend on each other), so kLoads x 16 bytes a thread are in flight.
// The tile that the last full one leaves over (n not a multiple of the tile) goes to the block
// that would own the next tile: its loads are guarded, its last n % 4 floats are scalar.
// Whole tiles a block is what keeps the sum exact above 2^24 on any grid (see the lemma above).
// Launch: blockDim.x == kThreads; `in` 16-byte aligned (the host checks); 64-bit indices.
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

// best, small n: ONE block adds everything and writes the result. No partials, no atomics, no
// fence, one launch. Launch: <<<1, kThreads>>>; `in` 16-byte aligned; n <= 2^24 (host-checked).
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

// snippet: best-last-block
// best, the rest of n: each block adds its whole tiles, then finishes like day 27's last block.
// Launch: blockDim.x == kThreads; any grid of 1 .. ceil(n / tile) blocks (more would only add
// empty blocks); *ticket == 0 at launch and left at 0; partials holds gridDim.x floats; `in`
// 16-byte aligned. The grid comes from the device (SMs x occupancy x waves), not a power of two:
// tile ownership, not equal counts, is what keeps the sum exact above 2^24. The finish follows
// cuda-samples' threadFenceReduction, with PyTorch's acquire fence (research/day39-cub.md, 9-10).
// ptx: v4-loads shfl atom
template <int kThreads, int kLoads>
__global__ void __launch_bounds__(kThreads)
    bestLastBlock(const float *__restrict__ in, size_t n, float *partials, unsigned int *ticket,
                  float *result) {
  __shared__ float warpSums[kThreads / kWarp];
  __shared__ bool isLastBlockDone;
  float v = blockReduceSum(tileSum<kThreads, kLoads>(in, n, blockIdx.x, gridDim.x), warpSums);
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = v;
    __threadfence(); // release: this partial is visible device-wide before the ticket is taken
    bool last = atomicAdd(ticket, 1u) == gridDim.x - 1;
    if (last) {
      __threadfence(); // acquire: the reads below see every partial fenced before its ticket
    }
    isLastBlockDone = last;
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
      *ticket = 0u; // every other block has drawn its ticket: reset for the next launch
    }
  }
}
// end snippet

// Fills p[0, count) with `value`. Any grid (grid-stride).
__global__ void fillKernel(float *p, size_t count, float value) {
  size_t stride = size_t(gridDim.x) * blockDim.x;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    p[i] = value;
  }
}

// Fills a ring of copies: element j of p[0, count) is 1.0f if j % slot < n, else NaN (the guard
// after each copy). Any grid (grid-stride).
__global__ void fillRing(float *p, size_t count, size_t slot, size_t n) {
  size_t stride = size_t(gridDim.x) * blockDim.x;
  for (size_t j = size_t(blockIdx.x) * blockDim.x + threadIdx.x; j < count; j += stride) {
    p[j] = j % slot < n ? 1.0f : __int_as_float(0x7fc00000);
  }
}

// The copy's check on the device: over out[0, slot), counts[0] += elements of [0, n) that are not
// 1.0f, counts[1] += elements of the guard [n, slot) that are not NaN (a write past the end).
// Any grid (grid-stride); counts must be zeroed before.
__global__ void checkCopy(const float *out, size_t n, size_t slot, unsigned long long *counts) {
  size_t stride = size_t(gridDim.x) * blockDim.x;
  unsigned long long wrong = 0, strays = 0;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < slot; i += stride) {
    float v = out[i];
    if (i < n) {
      wrong += v != 1.0f;
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
// Host side: the library call, buffers, launchers, checks.
// ---------------------------------------------------------------------------------------------

// snippet: cub-call
// The library row. cub::DeviceReduce::Sum is called twice in its life: once with
// d_temp_storage == nullptr, which only writes the bytes it needs into `tempBytes` (no launch),
// and then for real with that storage. NumItemsT is a template parameter (CUB 2.2+, CUDA 12.3+):
// a 32-bit count gives 32-bit offsets, a 64-bit one 64-bit offsets; we pass `int` while n fits
// (every default size does) and `long long` above, so both CUB's fast path and n up to 2^32 work.
// Nothing is allocated, copied or synchronized here: the call only enqueues CUB's kernels.
// (CUB's DeviceReduce reference and the CUDA 13.0 headers: research/day39-cub.md, entries 1-3.)
static cudaError_t cubSum(void *temp, size_t &tempBytes, const float *in, float *out, size_t n,
                          cudaStream_t stream) {
  if (n <= size_t(INT_MAX)) {
    return cub::DeviceReduce::Sum(temp, tempBytes, in, out, int(n), stream);
  }
  return cub::DeviceReduce::Sum(temp, tempBytes, in, out, (long long)n, stream);
}
// end snippet

// The rows, in table order. Each reduction row owns a result slot; the one-launch rows that take
// tickets own a counter; every row that keeps partials owns them.
enum class Row { Copy, Cub, V8, AtomicPerBlock, LastBlock, Cooperative, Best };
constexpr int kRowCount = 7;
constexpr Row kRows[kRowCount] = {Row::Copy,      Row::Cub,         Row::V8,  Row::AtomicPerBlock,
                                  Row::LastBlock, Row::Cooperative, Row::Best};

static const char *rowName(Row r) {
  switch (r) {
  case Row::Copy:
    return "copy";
  case Row::Cub:
    return "CUB Sum";
  case Row::V8:
    return "v8 two passes";
  case Row::AtomicPerBlock:
    return "atomic per block";
  case Row::LastBlock:
    return "last block";
  case Row::Cooperative:
    return "cooperative";
  case Row::Best:
    return "best";
  }
  return "?";
}
static const char *rowProduces(Row r) {
  return r == Row::Copy ? "copy" : "one float";
}
static int ticketOf(Row r) { // -1: the row takes no tickets
  return r == Row::LastBlock ? 0 : (r == Row::Best ? 1 : -1);
}

// What the device offers, and the grids derived from it before any allocation.
struct Device {
  cudaDeviceProp prop;
  size_t l2Bytes = 0;
  bool cooperativeLaunch = false; // cudaDevAttrCooperativeLaunch
  int coopOccupancy = 0;          // blocks of reduceCooperative an SM holds at once
  unsigned int coopGrid = 0;      // SMs x coopOccupancy: all co-resident (0: refused)
  int bestOccupancy = 0;          // blocks of bestLastBlock an SM holds at once
  int bestBlocksPerSm = 0;        // the grid of best = SMs x this, n < kBestManyWavesFrom
  unsigned int bestGrid = 0;
  int bestBlocksPerSmLarge = 0; // the same from kBestManyWavesFrom up
  unsigned int bestGridLarge = 0;
};

// How best runs: single block for n <= smallMax, else the last-block kernel on at most `grid`
// blocks. The self-test forces each path.
struct BestConfig {
  size_t smallMax;
  unsigned int grid;      // n < kBestManyWavesFrom
  unsigned int gridLarge; // n >= kBestManyWavesFrom
};

// The input copies of one size: `buffers` copies of n ones, `slot` floats apart (n + a NaN guard,
// rounded up to 64 floats = 256 bytes, so every copy starts 256-byte aligned), after kGuard NaNs.
struct Layout {
  size_t n = 0;
  size_t slot = 0;
  int buffers = 1;
};
static size_t slotFloats(size_t n) {
  return (n + kGuard + 63) / 64 * 64;
}

// Device buffers, allocated once for the largest layout a run needs.
struct Buffers {
  float *inAlloc = nullptr;  // kGuard + ring floats: the input copies
  float *outAlloc = nullptr; // the copy's destinations, same layout
  size_t allocFloats = 0;
  float *results = nullptr;                 // one float a row (slot 0, the copy's, unused)
  float *v8Partials = nullptr;              // kLadderGrid
  float *lastPartials = nullptr;            // kLadderGrid
  float *coopPartials = nullptr;            // coopGrid
  float *bestPartials = nullptr;            // max(bestGrid, kSelfTestBestGrid)
  unsigned int *tickets = nullptr;          // 2: last block, best
  unsigned long long *copyCounts = nullptr; // 2: the copy check's counters
  void *cubTemp = nullptr;
  size_t cubTempBytes = 0;
};

static const float *inputCopy(const Buffers &b, const Layout &l, int i) {
  return b.inAlloc + kGuard + size_t(i) * l.slot;
}
static float *outputCopy(const Buffers &b, const Layout &l, int i) {
  return b.outAlloc + kGuard + size_t(i) * l.slot;
}

static void freeBuffers(Buffers &b) {
  // cudaFree(nullptr) is a no-op, so this is safe on every path.
  CUDA_CHECK(cudaFree(b.inAlloc));
  CUDA_CHECK(cudaFree(b.outAlloc));
  CUDA_CHECK(cudaFree(b.results));
  CUDA_CHECK(cudaFree(b.v8Partials));
  CUDA_CHECK(cudaFree(b.lastPartials));
  CUDA_CHECK(cudaFree(b.coopPartials));
  CUDA_CHECK(cudaFree(b.bestPartials));
  CUDA_CHECK(cudaFree(b.tickets));
  CUDA_CHECK(cudaFree(b.copyCounts));
  CUDA_CHECK(cudaFree(b.cubTemp));
  b = Buffers{};
}

// Bytes of everything but CUB's temporary storage (which is tiny; it has its own check).
static size_t bytesNeeded(size_t allocFloats, const Device &d) {
  size_t partials = 2 * size_t(kLadderGrid) + d.coopGrid +
                    std::max({kSelfTestBestGrid, d.bestGrid, d.bestGridLarge});
  return 2 * allocFloats * sizeof(float) + (kRowCount + partials) * sizeof(float) +
         2 * sizeof(unsigned int) + 2 * sizeof(unsigned long long);
}

// Allocates everything but CUB's temporary storage. Returns false (nothing left allocated) if the
// device is out of memory, so the caller can report it as a clear error. Tickets start at 0, once.
static bool allocBuffers(Buffers &b, size_t allocFloats, const Device &d) {
  b.allocFloats = allocFloats;
  if (cudaMalloc(&b.inAlloc, allocFloats * sizeof(float)) != cudaSuccess ||
      cudaMalloc(&b.outAlloc, allocFloats * sizeof(float)) != cudaSuccess ||
      cudaMalloc(&b.results, kRowCount * sizeof(float)) != cudaSuccess ||
      cudaMalloc(&b.v8Partials, kLadderGrid * sizeof(float)) != cudaSuccess ||
      cudaMalloc(&b.lastPartials, kLadderGrid * sizeof(float)) != cudaSuccess ||
      cudaMalloc(&b.coopPartials, std::max(1u, d.coopGrid) * sizeof(float)) != cudaSuccess ||
      cudaMalloc(&b.bestPartials, std::max({kSelfTestBestGrid, d.bestGrid, d.bestGridLarge}) *
                                      sizeof(float)) != cudaSuccess ||
      cudaMalloc(&b.tickets, 2 * sizeof(unsigned int)) != cudaSuccess ||
      cudaMalloc(&b.copyCounts, 2 * sizeof(unsigned long long)) != cudaSuccess) {
    (void)cudaGetLastError(); // clear the allocation error
    freeBuffers(b);
    return false;
  }
  CUDA_CHECK(cudaMemset(b.tickets, 0, 2 * sizeof(unsigned int)));
  CUDA_CHECK(cudaMemset(b.results, 0xFF, kRowCount * sizeof(float))); // NaN until written
  // Those memsets ran on the legacy default stream, which does not order work on the program's
  // non-blocking stream: wait for them here, once.
  CUDA_CHECK(cudaDeviceSynchronize());
  return true;
}

// Writes the copies of layout l: NaN everywhere in the allocation, then n ones in each copy.
static void prepareInput(const Buffers &b, const Layout &l, cudaStream_t stream) {
  fillKernel<<<1024, 256, 0, stream>>>(b.inAlloc, b.allocFloats, std::nanf(""));
  CUDA_CHECK(cudaGetLastError());
  fillRing<<<1024, 256, 0, stream>>>(b.inAlloc + kGuard, size_t(l.buffers) * l.slot, l.slot, l.n);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaStreamSynchronize(stream));
}

static unsigned int copyGrid(size_t n) {
  // One float4 a thread at most, capped: the copy is a ceiling, not a lesson in grids (day 27).
  size_t blocks = (n / 4 + kBlock - 1) / kBlock;
  return unsigned(std::max<size_t>(1, std::min<size_t>(blocks, 65536)));
}
static unsigned int atomicGrid(size_t n) {
  return unsigned((n + kBlock - 1) / kBlock);
}
// best's multi-block grid at n: the configured grid, but never more blocks than tiles.
static unsigned int bestGridFor(size_t n, unsigned int grid) {
  size_t tiles = (n + kBestTile - 1) / kBestTile;
  return unsigned(std::max<size_t>(1, std::min<size_t>(tiles, grid)));
}

// The cooperative launch, returning its error instead of exiting (the graph probe needs that).
// The grid must not pass SMs x occupancy (cudaLaunchCooperativeKernel's reference; entry 7).
static cudaError_t launchCooperative(const float *in, size_t n, float *partials, float *result,
                                     unsigned int grid, cudaStream_t stream) {
  void *args[] = {(void *)&in, (void *)&n, (void *)&partials, (void *)&result};
  return cudaLaunchCooperativeKernel((const void *)reduceCooperative, dim3(grid), dim3(kBlock),
                                     args, 0, stream);
}

// Enqueues one call of row r over in[0, n) (the copy writes out[0, n)) on `stream`. Checks every
// launch. No synchronization, no allocation: safe inside a stream capture.
static void launchRow(Row r, const Buffers &b, const Device &d, const BestConfig &best,
                      const float *in, float *out, size_t n, cudaStream_t stream) {
  float *result = b.results + int(r);
  switch (r) {
  case Row::Copy:
    copyKernel<<<copyGrid(n), kBlock, 0, stream>>>(in, out, n);
    break;
  case Row::Cub: {
    size_t bytes = b.cubTempBytes;
    CUDA_CHECK(cubSum(b.cubTemp, bytes, in, result, n, stream));
    break;
  }
  case Row::V8:
    reduceToPartials<<<kLadderGrid, kBlock, 0, stream>>>(in, b.v8Partials, n);
    CUDA_CHECK(cudaGetLastError());
    reduceToPartials<<<1, kBlock, 0, stream>>>(b.v8Partials, result, kLadderGrid);
    break;
  case Row::AtomicPerBlock:
    CUDA_CHECK(cudaMemsetAsync(result, 0, sizeof(float), stream));
    atomicPerBlock<<<atomicGrid(n), kBlock, 0, stream>>>(in, n, result);
    break;
  case Row::LastBlock:
    reduceLastBlock<<<kLadderGrid, kBlock, 0, stream>>>(in, n, b.lastPartials, b.tickets + 0,
                                                        result);
    break;
  case Row::Cooperative:
    CUDA_CHECK(launchCooperative(in, n, b.coopPartials, result, d.coopGrid, stream));
    break;
  case Row::Best:
    if (n <= best.smallMax) {
      bestSingleBlock<kSmallThreads, kSmallLoads><<<1, kSmallThreads, 0, stream>>>(in, n, result);
    } else {
      bestLastBlock<kBestThreads, kBestLoads>
          <<<bestGridFor(n, n < kBestManyWavesFrom ? best.grid : best.gridLarge), kBestThreads, 0,
             stream>>>(in, n, b.bestPartials, b.tickets + 1, result);
    }
    break;
  }
  CUDA_CHECK(cudaGetLastError());
}

// The outcome of one exact check: `got` as the device left it and `want` = n. `detail` says what
// was wrong when not ok.
struct Check {
  bool ok;
  double got;
  double want;
  std::string detail;
};

// Poisons what row r writes: the copy's destinations (all of them) or the row's result, with NaN,
// so that a call that writes nothing fails its check.
static void poison(Row r, const Buffers &b, cudaStream_t stream) {
  if (r == Row::Copy) {
    CUDA_CHECK(cudaMemsetAsync(b.outAlloc, 0xFF, b.allocFloats * sizeof(float), stream));
  } else {
    CUDA_CHECK(cudaMemsetAsync(b.results + int(r), 0xFF, sizeof(float), stream));
  }
}

// Reads what row r left (the copy: in destination copy `copyIndex`) and checks it exactly: the copy
// has n ones and an untouched guard; a reduction's one float is n; a ticket counter is back at 0.
static Check checkRow(Row r, const Buffers &b, const Layout &l, int copyIndex,
                      cudaStream_t stream) {
  Check c{true, 0.0, double(l.n), ""};
  if (r == Row::Copy) {
    CUDA_CHECK(cudaMemsetAsync(b.copyCounts, 0, 2 * sizeof(unsigned long long), stream));
    checkCopy<<<1024, 256, 0, stream>>>(outputCopy(b, l, copyIndex), l.n, l.slot, b.copyCounts);
    CUDA_CHECK(cudaGetLastError());
    unsigned long long counts[2];
    CUDA_CHECK(
        cudaMemcpyAsync(counts, b.copyCounts, sizeof counts, cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    c.got = double(l.n - counts[0]);
    if (counts[0] != 0 || counts[1] != 0) {
      c.ok = false;
      c.detail = std::to_string(counts[0]) + " elements not copied, " + std::to_string(counts[1]) +
                 " written past the end";
    }
    return c;
  }
  float got = 0.0f;
  CUDA_CHECK(
      cudaMemcpyAsync(&got, b.results + int(r), sizeof(float), cudaMemcpyDeviceToHost, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  c.got = double(got);
  if (!(c.got == c.want)) { // NaN (an unwritten result) fails too
    c.ok = false;
  }
  int t = ticketOf(r);
  if (t >= 0) {
    unsigned int ticket = 0;
    CUDA_CHECK(cudaMemcpyAsync(&ticket, b.tickets + t, sizeof(unsigned int), cudaMemcpyDeviceToHost,
                               stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    if (ticket != 0u) {
      c.ok = false;
      c.detail = "the ticket counter was left at " + std::to_string(ticket) + ", not reset to 0";
      // Reset it here, so that this failure is reported once instead of failing every later run.
      CUDA_CHECK(cudaMemsetAsync(b.tickets + t, 0, sizeof(unsigned int), stream));
    }
  }
  return c;
}

// CUB's temporary storage was sized once, at the largest n. Before CUB runs at another n, ask it
// again (a host-side query, no launch) and stop with an error if that n would need more.
static void checkCubStorage(const Buffers &b, const Layout &l, cudaStream_t stream) {
  size_t needed = 0;
  CUDA_CHECK(cubSum(nullptr, needed, inputCopy(b, l, 0), b.results + int(Row::Cub), l.n, stream));
  if (needed > b.cubTempBytes) {
    std::fprintf(stderr,
                 "error: CUB needs %zu bytes of temporary storage at n = %zu; %zu were allocated\n",
                 needed, l.n, b.cubTempBytes);
    std::exit(1);
  }
}

// Poisons row r's output, runs it once on copy 0, checks it.
static Check runAndCheck(Row r, const Buffers &b, const Device &d, const BestConfig &best,
                         const Layout &l, cudaStream_t stream) {
  if (r == Row::Cub) {
    checkCubStorage(b, l, stream);
  }
  poison(r, b, stream);
  launchRow(r, b, d, best, inputCopy(b, l, 0), outputCopy(b, l, 0), l.n, stream);
  CUDA_CHECK(cudaStreamSynchronize(stream));
  return checkRow(r, b, l, 0, stream);
}

// Prints one failed check: got, want, and the difference in elements.
static void reportFailure(const std::string &what, const char *row, size_t n, const Check &c) {
  std::printf("CHECK FAILED: %s %s n=%zu got %.0f want %.0f (off by %.0f elements)%s%s\n",
              what.c_str(), row, n, c.got, c.want, c.got - c.want, c.detail.empty() ? "" : ": ",
              c.detail.c_str());
}

// Captures one cooperative launch into a graph and instantiates it, reporting failure instead of
// exiting: a driver that cannot put a cooperative launch into a graph gets a "refused" row.
static bool cooperativeCaptures(const Buffers &b, const Device &d, const float *in, size_t n,
                                cudaStream_t stream) {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  bool ok = cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal) == cudaSuccess;
  if (ok) {
    cudaError_t launched = launchCooperative(in, n, b.coopPartials,
                                             b.results + int(Row::Cooperative), d.coopGrid, stream);
    cudaError_t ended = cudaStreamEndCapture(stream, &graph);
    ok = launched == cudaSuccess && ended == cudaSuccess &&
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
// Options.
// ---------------------------------------------------------------------------------------------
enum class Mode { Stream, Graph };

struct Options {
  bool stream = true;
  bool graph = true;
  size_t minN = kMinN;
  size_t maxN = kDefaultMaxN;
  bool haveMinN = false, haveMaxN = false, haveMode = false;
  bool selfTest = false;
  size_t bestSmallMax = kDefaultSmallMax;
  int bestBlocksPerSm = 0; // 0: occupancy x kBestWaves (kBestWavesLarge from 2^27)
  bool help = false;
};

static const char *kUsage =
    "usage: cub_vs_ladder [--mode stream|graph|both] [--min-n N] [--max-n N]\n"
    "                     [--best-blocks-per-sm B] [--best-small-max S] [--self-test] [--help]\n"
    "  --mode M       stream: back-to-back calls on one stream; graph: replays of a CUDA graph\n"
    "                 of the same calls; both (default).\n"
    "  --min-n N      smallest n, a power of two from 1024 (2^10, the default) to --max-n.\n"
    "  --max-n N      largest n, a power of two up to 4294967296 (2^32); default 1073741824\n"
    "                 (2^30), which needs 2 x 4 GiB of device memory (input and copy copies).\n"
    "                 With --self-test: only the edge sizes up to N (any N from 1 to 16777216).\n"
    "  --best-blocks-per-sm B  best's grid = SMs x B blocks at every n (1 to 1024; default: the\n"
    "                 occupancy (one wave) below 2^27, occupancy x 8 from 2^27). Blocks need\n"
    "                 not all be resident: no block waits for another.\n"
    "  --best-small-max S  best runs ONE block for n <= S (0 to 16777216; default 32768, one\n"
    "                 round of loads for a block of 1024 threads x 8 float4s; 0: never).\n"
    "  --self-test    every row over the day-25 edge sizes (1 .. 16777216), plus best forced\n"
    "                 onto each of its paths; no timing, one line per failure.\n"
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
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      o.help = true;
    } else if (a == "--self-test") {
      o.selfTest = true;
    } else if (a == "--mode" || a == "--min-n" || a == "--max-n" || a == "--best-blocks-per-sm" ||
               a == "--best-small-max") {
      const char *v = (i + 1 < argc) ? argv[++i] : nullptr;
      if (v == nullptr) {
        return a + " needs a value (see --help)";
      }
      std::string s = v;
      size_t x = 0;
      if (a == "--mode") {
        if (s != "stream" && s != "graph" && s != "both") {
          return "--mode " + s + ": must be stream, graph or both";
        }
        o.stream = s != "graph";
        o.graph = s != "stream";
        o.haveMode = true;
      } else if (a == "--min-n" || a == "--max-n") {
        if (!parseCount(v, kMaxN, x) || x == 0) {
          return a + " " + s + ": must be a whole number from 1 to 4294967296 (2^32), digits only";
        }
        (a == "--min-n" ? o.minN : o.maxN) = x;
        (a == "--min-n" ? o.haveMinN : o.haveMaxN) = true;
      } else if (a == "--best-blocks-per-sm") {
        if (!parseCount(v, 1024, x) || x == 0) {
          return "--best-blocks-per-sm " + s + ": must be a whole number from 1 to 1024";
        }
        o.bestBlocksPerSm = int(x);
      } else {
        if (!parseCount(v, kExactAnyOrder, x)) {
          return "--best-small-max " + s +
                 ": must be a whole number from 0 to 16777216 (one block's sum of ones is exact "
                 "only up to 2^24)";
        }
        o.bestSmallMax = x;
      }
    } else {
      return "unknown option '" + a + "' (see --help)";
    }
  }
  if (o.selfTest) {
    if (o.haveMode || o.haveMinN) {
      return "--self-test runs no timing and its own sizes: drop --mode and --min-n (--max-n "
             "trims the sizes)";
    }
    if (!o.haveMaxN) {
      o.maxN = kExactAnyOrder;
    } else if (o.maxN > kExactAnyOrder) {
      return "--max-n " + std::to_string(o.maxN) +
             ": with --self-test, a whole number from 1 to 16777216 (the largest edge size)";
    }
    return "";
  }
  // Timed sizes: powers of two, so that above 2^24 every row's sum of ones stays exact.
  if (!isPowerOfTwo(o.minN) || o.minN < kMinN) {
    return "--min-n " + std::to_string(o.minN) +
           ": must be a power of two from 1024 to 4294967296 (above 2^24 a float sum of ones is "
           "exact only for a power of two)";
  }
  if (!isPowerOfTwo(o.maxN) || o.maxN < o.minN) {
    return "--max-n " + std::to_string(o.maxN) + ": must be a power of two from --min-n (" +
           std::to_string(o.minN) + ") to 4294967296";
  }
#if CUB_VERSION < 200200
  if (o.maxN > size_t(INT_MAX)) {
    return "--max-n " + std::to_string(o.maxN) +
           ": this CUB (before 2.2, CUDA 12.3) takes an int count: at most 1073741824";
  }
#endif
  return "";
}

// ---------------------------------------------------------------------------------------------
// The runs: the tables and the self-test.
// ---------------------------------------------------------------------------------------------

static void printBanner(const cudaDeviceProp &p) {
  std::printf("GPU: %s | cc %d.%d | %d SMs | %zu KiB shared/block | %d MiB L2 | warp %d\n", p.name,
              p.major, p.minor, p.multiProcessorCount, p.sharedMemPerBlock / 1024,
              p.l2CacheSize / (1024 * 1024), p.warpSize);
}

static void printConfig(const Device &d, const BestConfig &best, const Buffers &b) {
  int sms = d.prop.multiProcessorCount;
  std::printf("best: %d threads x %d float4 loads a tile (%zu floats), grid %d SMs x %d blocks = "
              "%u below n = %zu, %d SMs x %d = %u from there (occupancy %d a SM); one block of "
              "%d threads x %d float4 loads (%zu floats a round) for n <= %zu; loads %s\n",
              kBestThreads, kBestLoads, kBestTile, sms, d.bestBlocksPerSm, best.grid,
              kBestManyWavesFrom, sms, d.bestBlocksPerSmLarge, best.gridLarge, d.bestOccupancy,
              kSmallThreads, kSmallLoads, kSmallTile, best.smallMax,
              kBestL1NoAllocate ? "ld.global.nc.L1::no_allocate" : "__ldg (ld.global.nc)");
  if (d.coopGrid > 0) {
    std::printf("ladder: %d threads a block; v8 and last block on %d blocks; atomic per block on "
                "n/%d blocks; cooperative on %u blocks (%d SMs x occupancy %d), tiles of %zu "
                "floats\n",
                kBlock, kLadderGrid, kBlock, d.coopGrid, sms, d.coopOccupancy, kCoopTileFloats);
  } else {
    std::printf("ladder: %d threads a block; v8 and last block on %d blocks; atomic per block on "
                "n/%d blocks; cooperative refused: %s\n",
                kBlock, kLadderGrid, kBlock,
                d.cooperativeLaunch ? "no block of it fits on an SM"
                                    : "this device does not support cooperative launches");
  }
  std::printf("CUB %d.%d.%d: cub::DeviceReduce::Sum, %zu bytes of temporary storage (queried at "
              "the largest n, allocated once)\n",
              CUB_MAJOR_VERSION, CUB_MINOR_VERSION, CUB_SUBMINOR_VERSION, b.cubTempBytes);
}

// Calls a batch aims for: kBatchBytes of input, clamped; at least a few ms of work either way.
static int launchesPerBatch(size_t n) {
  double calls = kBatchBytes / (double(n) * sizeof(float));
  return int(std::max<double>(kMinLaunchesPerBatch, std::min<double>(kMaxLaunchesPerBatch, calls)));
}

// Copies of the input at n: one if n floats already pass kL2Multiple x L2, else enough that the
// copies together do.
static Layout layoutFor(size_t n, size_t l2Bytes) {
  Layout l;
  l.n = n;
  l.slot = slotFloats(n);
  double target = double(kL2Multiple) * double(l2Bytes);
  double bytes = double(n) * sizeof(float);
  l.buffers = bytes >= target ? 1 : int(std::ceil(target / bytes));
  return l;
}

// Walks the copies in order; each call reads the next one. `last` is the copy the latest call used.
struct Ring {
  int buffers;
  long long next = 0;
  int last = 0;
  int take() {
    last = int(next % buffers);
    ++next;
    return last;
  }
};

// Why the cooperative row cannot run at n ("" when it can): no cooperative launch on this device,
// no block of it fits on an SM, the driver would not capture it into a graph, or a block would
// own more than 2^24 floats (its partial stops being exact: day 28's host check).
static std::string coopRefusal(size_t n, const Device &d, Mode mode, bool coopInGraph) {
  if (!d.cooperativeLaunch) {
    return "this device does not support cooperative launches";
  }
  if (d.coopGrid == 0) {
    return "no block of it fits on an SM";
  }
  if (mode == Mode::Graph && !coopInGraph) {
    return "this driver would not capture a cooperative launch into a graph";
  }
  size_t tilesMax = (n / kCoopTileFloats + d.coopGrid - 1) / d.coopGrid;
  if (n > kExactAnyOrder && tilesMax * kCoopTileFloats > kExactAnyOrder) {
    return "on " + std::to_string(d.coopGrid) + " blocks a block would own " +
           std::to_string(tilesMax * kCoopTileFloats) +
           " floats, above 2^24, where its partial stops being exact";
  }
  return "";
}

struct Measured {
  size_t n;
  Row row;
  int buffersRead; // distinct copies read between two reads of the same one
  bool dram;       // those copies add up to kL2Multiple x L2 or more
  double mb;       // input bytes (the copy: read + written), 10^6
  Timing t;
  bool ok;
  bool refused;
  std::string why; // why it was refused
};

// Checks row r, times it in `mode`, checks what the last timed call left. Failures are printed and
// counted in `failures`.
static Measured measureRow(Row r, Mode mode, const Buffers &b, const Device &d,
                           const BestConfig &best, const Layout &l, Ring &ring, bool coopInGraph,
                           cudaStream_t stream, int &checks, int &failures) {
  const char *modeName = mode == Mode::Stream ? "stream" : "graph";
  int calls = launchesPerBatch(l.n);
  Measured m{l.n, r, 0, false, 0.0, {0.0, 0.0}, true, false, ""};
  m.buffersRead = mode == Mode::Stream ? l.buffers : std::min(l.buffers, calls);
  m.dram = double(m.buffersRead) * double(l.n) * sizeof(float) >=
           double(kL2Multiple) * double(d.l2Bytes);
  m.mb = double(l.n) * sizeof(float) * (r == Row::Copy ? 2 : 1) / 1e6;
  if (r == Row::Cooperative) {
    m.why = coopRefusal(l.n, d, mode, coopInGraph);
    if (!m.why.empty()) {
      m.refused = true;
      return m;
    }
  }
  Check before = runAndCheck(r, b, d, best, l, stream);
  ++checks;
  if (!before.ok) {
    reportFailure(std::string("before timing (") + modeName + ")", rowName(r), l.n, before);
    ++failures;
    m.ok = false;
  }
  poison(r, b, stream);
  auto call = [&] {
    int i = ring.take();
    launchRow(r, b, d, best, inputCopy(b, l, i), outputCopy(b, l, i), l.n, stream);
  };
  m.t = mode == Mode::Stream ? timeKernel(call, calls, stream) : timeGraph(call, calls, stream);
  CUDA_CHECK(cudaStreamSynchronize(stream));
  Check after = checkRow(r, b, l, ring.last, stream);
  ++checks;
  if (!after.ok) {
    reportFailure(std::string("after timing (") + modeName + ")", rowName(r), l.n, after);
    ++failures;
    m.ok = false;
  }
  return m;
}

static void printTableHeader() {
  std::printf("|          n | row              | buffers | input   |       MB |        us | "
              "spread %% |    GB/s | %% of copy | vs CUB | produces  | check   |\n");
  std::printf("|------------|------------------|---------|---------|----------|-----------|"
              "----------|---------|-----------|--------|-----------|---------|\n");
}

// One table row. GB/s = MB / us x 1000. % of copy (this row's GB/s / the copy's at the same n)
// only where n floats pass kL2Multiple x L2 (below, both are latency, not bandwidth). vs CUB =
// CUB's us / this row's us at the same n: above 1.00 the row is faster than the library.
static void printRow(const Measured &m, const Measured &copy, const Measured &cub, bool large) {
  if (m.refused) {
    std::printf("| %10zu | %-16s | %7d | %-7s | %8.3f | %9s | %8s | %7s | %9s | %6s | %-9s | %-7s "
                "|\n",
                m.n, rowName(m.row), m.buffersRead, m.dram ? "DRAM" : "L2-warm", m.mb, "-", "-",
                "-", "-", "-", rowProduces(m.row), "refused");
    return;
  }
  double gbs = 1000.0 * m.mb / m.t.us;
  char pct[16], vs[16];
  std::snprintf(pct, sizeof pct, "-");
  std::snprintf(vs, sizeof vs, "-");
  if (large && m.row != Row::Copy) {
    std::snprintf(pct, sizeof pct, "%.1f", 100.0 * gbs / (1000.0 * copy.mb / copy.t.us));
  } else if (large) {
    std::snprintf(pct, sizeof pct, "%.1f", 100.0);
  }
  if (m.row != Row::Copy) {
    std::snprintf(vs, sizeof vs, "%.2f", cub.t.us / m.t.us);
  }
  std::printf("| %10zu | %-16s | %7d | %-7s | %8.3f | %9.2f | %8.1f | %7.1f | %9s | %6s | %-9s | "
              "%-7s |\n",
              m.n, rowName(m.row), m.buffersRead, m.dram ? "DRAM" : "L2-warm", m.mb, m.t.us,
              m.t.spread, gbs, pct, vs, rowProduces(m.row), m.ok ? "exact" : "FAIL");
}

// Prints one mode's table and its summary line. Returns false if the table's row count is not
// sizes x rows (a real branch: Release builds delete assert()).
static bool printMode(Mode mode, const std::vector<Measured> &out, size_t sizes, const Device &d,
                      int calls0, int callsLast) {
  if (out.size() != sizes * kRowCount) {
    std::printf("internal error: %zu rows measured, the table has %zu\n", out.size(),
                sizes * kRowCount);
    return false;
  }
  double large = double(kL2Multiple) * double(d.l2Bytes);
  if (mode == Mode::Stream) {
    std::printf("\nstream: each batch is back-to-back calls on one stream between two events "
                "(%d calls at the smallest n .. %d at the largest); median of %d batches\n\n",
                calls0, callsLast, kTimingBatches);
  } else {
    std::printf("\ngraph: the same calls captured once into a CUDA graph (%d calls at the smallest "
                "n .. %d at the largest); each batch is one replay between two events; median of "
                "%d batches\n\n",
                calls0, callsLast, kTimingBatches);
  }
  printTableHeader();
  for (size_t i = 0; i < out.size(); ++i) {
    const Measured &copy = out[i - i % kRowCount];
    const Measured &cub = out[i - i % kRowCount + 1];
    printRow(out[i], copy, cub, double(out[i].n) * sizeof(float) >= large);
  }
  for (const Measured &m : out) {
    if (m.refused) {
      std::printf("\nrefused: %s at n = %zu: %s", rowName(m.row), m.n, m.why.c_str());
    }
  }
  // The summary: sizes where best is at or above CUB, to the table's two decimals.
  int atOrAbove = 0;
  double smallest = 1e30;
  size_t smallestN = 0;
  std::string below;
  for (size_t s = 0; s < sizes; ++s) {
    const Measured &cub = out[s * kRowCount + 1];
    const Measured &best = out[s * kRowCount + kRowCount - 1];
    double ratio = std::round(100.0 * cub.t.us / best.t.us) / 100.0;
    if (ratio >= 1.0) {
      ++atOrAbove;
    } else {
      char one[48];
      std::snprintf(one, sizeof one, "%s%zu (%.2f)", below.empty() ? "" : ", ", best.n, ratio);
      below += one;
    }
    if (ratio < smallest) {
      smallest = ratio;
      smallestN = best.n;
    }
  }
  const Measured &lastCub = out[(sizes - 1) * kRowCount + 1];
  const Measured &lastBest = out[(sizes - 1) * kRowCount + kRowCount - 1];
  std::printf("\nsummary (%s): best >= CUB (vs CUB >= 1.00) at %d of %zu sizes; below at: %s; "
              "smallest ratio %.2f at n = %zu; at n = %zu best reads %.1f GB/s, CUB %.1f GB/s\n",
              mode == Mode::Stream ? "stream" : "graph", atOrAbove, sizes,
              below.empty() ? "none" : below.c_str(), smallest, smallestN, lastBest.n,
              1000.0 * lastBest.mb / lastBest.t.us, 1000.0 * lastCub.mb / lastCub.t.us);
  return true;
}

static int runTables(const Options &o, const Buffers &b, const Device &d, const BestConfig &best,
                     bool coopInGraph, cudaStream_t stream, int &checks, int &failures) {
  std::vector<size_t> sizes;
  for (size_t n = o.minN; n <= o.maxN; n *= 2) {
    sizes.push_back(n);
  }
  std::vector<Measured> streamOut, graphOut;
  for (size_t n : sizes) {
    Layout l = layoutFor(n, d.l2Bytes);
    prepareInput(b, l, stream);
    Ring ring{l.buffers};
    for (Row r : kRows) {
      if (o.stream) {
        streamOut.push_back(measureRow(r, Mode::Stream, b, d, best, l, ring, coopInGraph, stream,
                                       checks, failures));
      }
      if (o.graph) {
        graphOut.push_back(
            measureRow(r, Mode::Graph, b, d, best, l, ring, coopInGraph, stream, checks, failures));
      }
    }
  }
  int calls0 = launchesPerBatch(sizes.front()), callsLast = launchesPerBatch(sizes.back());
  bool ok = true;
  if (o.stream) {
    ok = printMode(Mode::Stream, streamOut, sizes.size(), d, calls0, callsLast) && ok;
  }
  if (o.graph) {
    ok = printMode(Mode::Graph, graphOut, sizes.size(), d, calls0, callsLast) && ok;
  }
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
      kL2Multiple, kL2Multiple * d.prop.l2CacheSize / (1024 * 1024), kL2Multiple);
  return ok ? 0 : 1;
}

static int runSelfTest(const Options &o, const Buffers &b, const Device &d, const BestConfig &best,
                       cudaStream_t stream, int &checks, int &failures) {
  const size_t sizes[] = {1,    2,    3,     4,     5,     7,       31,       32,      33,   255,
                          256,  257,  511,   512,   513,   1023,    1024,     1025,    1027, 4095,
                          4096, 4097, 65535, 65536, 65537, 1048577, 16776605, 16777216};
  // Every row as timed, then best forced onto each path: one block for every n; the last-block
  // kernel for every n on a 5-block grid (so blocks own several tiles, and the partial tile goes
  // to a block in the middle of the grid).
  struct Variant {
    const char *name;
    Row row;
    BestConfig best;
  };
  const Variant variants[] = {
      {"copy", Row::Copy, best},
      {"CUB Sum", Row::Cub, best},
      {"v8 two passes", Row::V8, best},
      {"atomic per block", Row::AtomicPerBlock, best},
      {"last block", Row::LastBlock, best},
      {"cooperative", Row::Cooperative, best},
      {"best", Row::Best, best},
      {"best: one block", Row::Best, {kExactAnyOrder, best.grid, best.gridLarge}},
      {"best: last block, 5 blocks", Row::Best, {0, kSelfTestBestGrid, kSelfTestBestGrid}},
  };
  constexpr int kVariants = sizeof(variants) / sizeof(variants[0]);
  int tested[kVariants] = {}, runs[kVariants] = {}, failed[kVariants] = {};
  for (size_t n : sizes) {
    if (n > o.maxN) {
      continue;
    }
    Layout l = layoutFor(n, 0); // one copy: no timing, so no rotation
    prepareInput(b, l, stream);
    for (int v = 0; v < kVariants; ++v) {
      if (variants[v].row == Row::Cooperative && !coopRefusal(n, d, Mode::Stream, true).empty()) {
        continue; // refused: said in the table below
      }
      ++tested[v];
      int reps = ticketOf(variants[v].row) >= 0 ? 2 : 1;
      for (int k = 0; k < reps; ++k) {
        Check c = runAndCheck(variants[v].row, b, d, variants[v].best, l, stream);
        ++runs[v];
        if (!c.ok) {
          ++failed[v];
          reportFailure(std::string("self-test run ") + std::to_string(k + 1), variants[v].name, n,
                        c);
        }
      }
    }
  }
  std::printf("\nself-test: every row at each edge size up to %zu, no timing; the rows that keep a "
              "ticket counter run twice a size (the second run needs the counter the first one "
              "reset)\n\n",
              o.maxN);
  std::printf("| row                        | sizes | checks | failed  |\n");
  std::printf("|----------------------------|-------|--------|---------|\n");
  for (int v = 0; v < kVariants; ++v) {
    if (variants[v].row == Row::Cooperative && tested[v] == 0) {
      std::printf("| %-26s | %5s | %6s | %-7s |\n", variants[v].name, "-", "-", "refused");
      continue;
    }
    checks += runs[v];
    failures += failed[v];
    std::printf("| %-26s | %5d | %6d | %7d |\n", variants[v].name, tested[v], runs[v], failed[v]);
  }
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
  Device d;
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaGetDeviceProperties(&d.prop, device));
  d.l2Bytes = size_t(d.prop.l2CacheSize);
  int sms = d.prop.multiProcessorCount;
  int coopAttr = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&coopAttr, cudaDevAttrCooperativeLaunch, device));
  d.cooperativeLaunch = coopAttr != 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&d.coopOccupancy, reduceCooperative,
                                                           kBlock, 0));
  if (d.cooperativeLaunch && d.coopOccupancy > 0) {
    d.coopGrid = unsigned(sms) * unsigned(d.coopOccupancy);
  }
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &d.bestOccupancy, bestLastBlock<kBestThreads, kBestLoads>, kBestThreads, 0));
  d.bestBlocksPerSm =
      o.bestBlocksPerSm > 0 ? o.bestBlocksPerSm : std::max(1, d.bestOccupancy) * kBestWaves;
  d.bestBlocksPerSmLarge =
      o.bestBlocksPerSm > 0 ? o.bestBlocksPerSm : std::max(1, d.bestOccupancy) * kBestWavesLarge;
  d.bestGrid = unsigned(sms) * unsigned(d.bestBlocksPerSm);
  d.bestGridLarge = unsigned(sms) * unsigned(d.bestBlocksPerSmLarge);
  BestConfig best{o.bestSmallMax, d.bestGrid, d.bestGridLarge};

  // The largest layout this run needs, refused (exit 2) before any allocation if it does not fit.
  size_t allocFloats = 0;
  if (o.selfTest) {
    allocFloats = kGuard + slotFloats(o.maxN);
  } else {
    for (size_t n = o.minN; n <= o.maxN; n *= 2) {
      Layout l = layoutFor(n, d.l2Bytes);
      allocFloats = std::max(allocFloats, kGuard + size_t(l.buffers) * l.slot);
    }
  }
  size_t freeBytes = 0, totalBytes = 0;
  CUDA_CHECK(cudaMemGetInfo(&freeBytes, &totalBytes));
  size_t need = bytesNeeded(allocFloats, d) + (size_t(64) << 20); // + 64 MiB for CUB and slack
  if (need > freeBytes) {
    std::fprintf(stderr,
                 "error: --max-n %zu needs %.2f GiB of device memory (input and copy destination "
                 "copies); %.2f GiB are free on %s: pass a smaller --max-n\n",
                 o.maxN, need / double(1u << 30), freeBytes / double(1u << 30), d.prop.name);
    return 2;
  }
  printBanner(d.prop);
  if (d.prop.warpSize != kWarp) {
    std::printf("error: this program's warp-shuffle reductions assume %d lanes a warp; the device "
                "has %d\n",
                kWarp, d.prop.warpSize);
    return 1;
  }

  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  Buffers b;
  if (!allocBuffers(b, allocFloats, d)) {
    std::fprintf(stderr, "error: cudaMalloc of %.2f GiB failed on %s\n", need / double(1u << 30),
                 d.prop.name);
    CUDA_CHECK(cudaStreamDestroy(stream));
    return 1;
  }
  // best assumes 16-byte-aligned input: every copy starts a multiple of 64 floats past a
  // cudaMalloc'd (256-byte-aligned) address. A real branch, not an assert.
  if (reinterpret_cast<uintptr_t>(b.inAlloc + kGuard) % 16 != 0 || slotFloats(1) % 4 != 0) {
    std::printf("internal error: the input copies are not 16-byte aligned\n");
    freeBuffers(b);
    CUDA_CHECK(cudaStreamDestroy(stream));
    return 1;
  }
  // CUB's temporary storage: queried once at the largest n (its size is set by CUB's grid, which
  // stops growing with n), allocated once, outside every timed region.
  CUDA_CHECK(cubSum(nullptr, b.cubTempBytes, b.inAlloc + kGuard, b.results + int(Row::Cub), o.maxN,
                    stream));
  CUDA_CHECK(cudaMalloc(&b.cubTemp, std::max<size_t>(1, b.cubTempBytes)));
  printConfig(d, best, b);

  int checks = 0, failures = 0, status = 0;
  if (o.selfTest) {
    status = runSelfTest(o, b, d, best, stream, checks, failures);
  } else {
    bool coopInGraph = false;
    if (o.graph && d.cooperativeLaunch && d.coopGrid > 0) {
      Layout l = layoutFor(o.minN, d.l2Bytes);
      prepareInput(b, l, stream);
      coopInGraph = cooperativeCaptures(b, d, inputCopy(b, l, 0), l.n, stream);
      if (!coopInGraph) {
        std::printf("cooperative: this driver refused to capture a cooperative launch into a "
                    "graph; its graph rows say \"refused\"\n");
      }
    }
    std::printf("rotation: inputs under %d x L2 = %d MiB are copied enough times that the copies "
                "add up to %d MiB; calls cycle through them\n",
                kL2Multiple, kL2Multiple * d.prop.l2CacheSize / (1024 * 1024),
                kL2Multiple * d.prop.l2CacheSize / (1024 * 1024));
    status = runTables(o, b, d, best, coopInGraph, stream, checks, failures);
  }
  freeBuffers(b);
  CUDA_CHECK(cudaStreamDestroy(stream));

  if (failures == 0 && status == 0) {
    std::printf("\nRESULT: PASS (%d checks, all exact)\n", checks);
    return 0;
  }
  std::printf("\nRESULT: FAIL (%d of %d checks failed)\n", failures, checks);
  return 1;
}
