// Day 26: atomics, and where one global atomicAdd stops being cheaper than the tree.
//
// One input (n floats, all 1.0f, so the right sum is n), one float at the end of every row. Rows,
// in order, with the one change between neighbours:
//   copy                the ceiling: a float4 copy of the same buffer (bytes read + written).
//   atomic per element  every thread does atomicAdd(result, in[i]): n atomics on ONE address.
//   atomic per warp     each warp first adds its 32 values with __shfl_down_sync; lane 0 does the
//                       one atomicAdd: n/32 atomics on the address.
//   atomic per block    the warps' sums meet in shared memory and warp 0 adds them; thread 0 does
//                       the one atomicAdd: n/256 atomics on the address.
//   tree (v8)           day 25's v8: float4 grid-stride loads, warp shuffles, one partial a
//                       block, then a second pass of ONE block adds the partials. No atomics.
// Every atomic row zeroes its accumulator with cudaMemsetAsync inside each timed call.
//
// Then, in the default run:
//   the exhibit: the per-element row at n = 2^25 returns 2^24 (a float that holds 2^24 cannot
//     grow by 1.0f). One labelled line, never counted as a pass or a failure.
//   the trapezoidal rule: f(x) = x^2 + 1 on [0, 2], 2^20 trapezoids, blocks of 32 threads, three
//     kernels: one atomic per thread; a warp-shuffle sum then one atomic per block; a shared-memory
//     warp sum with __syncwarp() between the read and the write of each step, then one atomic a
//     block. Checked against the exact double sum of the same float trapezoids and against the
//     exact integral 14/3, within error bounds derived above trapReference().
//   determinism: 20 sums of the same fixed-seed random input by each sum row; the number of
//     distinct bit patterns each produced. The tree must give exactly one (a counted check).
// --sweep: n = 2^10, 2^12, ..., 2^26, us per call of every row and, for each atomic row, the n
// from which the tree is faster (the crossover). --race-demo: the lock-step shared-memory warp sum
// without __syncwarp, run once for compute-sanitizer racecheck.
//
// Build and run (any card; a Colab T4 is sm_75, an H200 sm_90):
//   nvcc -std=c++17 -O3 -arch=sm_75 -o atomics code/day26-atomics/atomics.cu
//   ./atomics              (--help lists the knobs: --n, --sweep, --self-test, --max-n,
//                           --race-demo)
//
// What is checked: every sum row exactly, before it is timed and again on what the timed launches
// left; the copy element by element, guards included; the trapezoid rows within stated bounds; the
// tree's determinism. Out-of-range reads are caught by NaN guards around the input, unwritten
// outputs by NaN poison. What is NOT checked: speed. The table reports it; no threshold decides.
//
// Exit codes: 0 every check passed, 1 a check failed or a CUDA error, 2 bad usage.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <cuda_runtime.h>

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
constexpr int kBlock = 256;                        // threads a block: copy and the four sum rows
constexpr int kWarp = 32;                          // lanes a warp (checked on the device too)
constexpr int kWarpsPerBlock = kBlock / kWarp;     // warp sums a block reduction adds
constexpr size_t kExactAnyOrder = size_t(1) << 24; // a float holds every integer up to 2^24
constexpr size_t kDefaultN = kExactAnyOrder;       // the largest n the per-element row gets right
constexpr size_t kWarpRowMaxN = size_t(1) << 29;   // per-warp row: warp sums of 32 = 2^5
constexpr size_t kMaxN = size_t(1) << 32;          // largest --n (2 x 16 GiB on the device)
constexpr int kTreeGrid = 1024;                    // the tree's pass-1 blocks (fewer at small n)
constexpr int kCopyMaxGrid = 65536;                // the copy: one float4 a thread, capped
constexpr int kPad = 4;                            // NaN guard floats before and after the input
constexpr size_t kExhibitN = size_t(1) << 25;      // where the per-element row stalls, shown
constexpr int kSweepFirstLog2 = 10;                // the sweep: n = 2^10, 2^12, ..., 2^26
constexpr int kSweepLastLog2 = 26;
constexpr int kDeterminismRuns = 20;  // sums of the same random input, each row
constexpr uint32_t kSeed = 26;        // std::mt19937 seed of that input
constexpr int kTrapBlock = 32;        // trapezoid kernels: one warp a block
constexpr unsigned kTrapN = 1u << 20; // trapezoids
constexpr float kTrapA = 0.0f;        // the interval [a, b]
constexpr float kTrapB = 2.0f;

__host__ __device__ constexpr bool isPowerOfTwo(size_t x) {
  return x != 0 && (x & (x - 1)) == 0;
}

// Exactness lemma (used throughout): a float sum of values that are all integer multiples of 2^k
// is exact at every step, in any order, while every running sum stays <= 2^(24+k).
//  - per element: k = 0 (ones), so exact while n <= 2^24. Above, x + 1.0f == x once x = 2^24.
//  - per warp: above 2^24 n is a power of two, every warp adds 32 ones, so k = 5: exact to 2^29.
//  - per block: block sums of 256 (k = 8): exact to 2^32 = kMaxN.
//  - tree: above 2^24 n and the grid are powers of two, so every thread adds the same count of
//    float4s; per-thread sums stay integers <= 2^24, and every partial is the same power of two.
static_assert(isPowerOfTwo(kBlock) && kBlock % kWarp == 0 && kBlock <= 1024, "block size");
static_assert(kWarpsPerBlock <= kWarp, "warp 0 adds the warp sums in one shuffle tree");
static_assert(kDefaultN <= kExactAnyOrder, "the per-element row is exact at the default n");
static_assert(kWarpRowMaxN == kExactAnyOrder * kWarp, "per-warp row: k = log2(32) = 5");
static_assert(kMaxN <= kExactAnyOrder * kBlock, "per-block row: k = log2(256) = 8");
static_assert(isPowerOfTwo(kTreeGrid) && kTreeGrid <= 4 * kBlock, "tree grid; pass 2 is 1 block");
static_assert(kMaxN / (size_t(kBlock) * kTreeGrid) <= kExactAnyOrder, "tree per-thread sum exact");
// Above 2^24 the tree always runs kTreeGrid blocks (so its grid is a power of two): treeGrid(n)
// takes min(kTreeGrid, n / (4 kBlock)), and 2^25 / 1024 = 2^15 > kTreeGrid.
static_assert(2 * kExactAnyOrder / (4 * kBlock) >= size_t(kTreeGrid), "tree grid above 2^24");
static_assert(kExhibitN == 2 * kExactAnyOrder, "the exhibit is the first power of two past 2^24");
static_assert((size_t(1) << kSweepLastLog2) <= kMaxN && kSweepFirstLog2 % 2 == 0, "sweep sizes");
static_assert(kTrapBlock == kWarp, "trapezoid blocks are one warp: full masks name every thread");
static_assert(kTrapN <= kExactAnyOrder && kTrapN % kTrapBlock == 0, "float(i) is exact");

// ---------------------------------------------------------------------------------------------
// timeKernel: CUDA events around batches of back-to-back launches of ONE configuration.
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
// Kernels, in row order.
// ---------------------------------------------------------------------------------------------

// copy (the ceiling): out[i] = in[i] for i < n. Any block size, any grid (grid-stride). in and out
// must be 16-byte aligned (cudaMalloc gives 256; the host checks): float4 body, scalar tail of
// n % 4 elements taken by the first threads of the grid. Counts 8 bytes an element.
// ptx: v4-loads
__global__ void copyKernel(const float *__restrict__ in, float *__restrict__ out, size_t n) {
  size_t tid = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  size_t stride = size_t(gridDim.x) * blockDim.x;
  size_t nv = n / 4;
  const float4 *vin = reinterpret_cast<const float4 *>(in);
  float4 *vout = reinterpret_cast<float4 *>(out);
  for (size_t v = tid; v < nv; v += stride) {
    vout[v] = vin[v];
  }
  size_t tail = nv * 4;
  if (tid < n - tail) {
    out[tail + tid] = in[tail + tid];
  }
}

// snippet: atomic-per-element
// atomic per element: every thread adds its element straight into *result, so all n atomicAdds
// land on ONE address and the memory system applies them one after another. The order is
// whatever the hardware picks, so with non-integer inputs the rounding (and the answer) can differ
// from run to run. Launch: blockDim.x == kBlock, grid = ceil(n / kBlock) (one element a thread).
// *result must be 0 before the launch. Exact for ones only while n <= 2^24: the float add of an
// atomic rounds to nearest even (PTX ISA, atom/red), and 2^24 + 1 is a tie that rounds back down.
// Sources: research/day26-atomics.md [S1] [S2].
// ptx: atom
__global__ void atomicPerElement(const float *__restrict__ in, size_t n, float *result) {
  size_t i = size_t(blockIdx.x) * kBlock + threadIdx.x; // 64-bit before the multiply
  if (i < n) {
    atomicAdd(result, in[i]);
  }
}
// end snippet

// snippet: atomic-per-warp
// The sum of one warp's 32 values, in lane 0. Every lane of the warp must call it: the mask
// 0xffffffff names all 32 lanes, and __shfl_down_sync needs every lane it names to execute it
// (a lane that returned early would make the result undefined). Lanes whose source lane would be
// past 31 get their own value back; only lane 0's result is the whole sum. Source: the CUDA C++
// Programming Guide, warp shuffle functions (research/day26-atomics.md [S3]).
__device__ inline float warpSum(float v) {
  for (int offset = kWarp / 2; offset > 0; offset /= 2) {
    v += __shfl_down_sync(0xffffffffu, v, offset);
  }
  return v;
}

// atomic per warp: each warp adds its 32 values in registers first, then lane 0 does the warp's
// one atomicAdd: 32 times fewer atomics on the address than the per-element row. Launch:
// blockDim.x == kBlock (whole warps), grid = ceil(n / kBlock); no thread returns before the
// shuffles (a lane past n adds 0). *result must be 0 before the launch. Warps wholly past n skip
// their atomic, so the row does ceil(n / 32) of them.
// ptx: shfl atom
__global__ void atomicPerWarp(const float *__restrict__ in, size_t n, float *result) {
  size_t i = size_t(blockIdx.x) * kBlock + threadIdx.x;
  float v = i < n ? in[i] : 0.0f;
  v = warpSum(v);
  if (threadIdx.x % kWarp == 0 && i < n) { // lane 0's i is its warp's first element
    atomicAdd(result, v);
  }
}
// end snippet

// The sum of a block's kBlock values, in thread 0. Every thread must call it (it has a barrier).
// warpSums: kWarpsPerBlock floats of shared memory. Warp 0 (all 32 lanes) adds the warp sums.
__device__ inline float blockSum(float v, float *warpSums) {
  unsigned int lane = threadIdx.x % kWarp;
  unsigned int warp = threadIdx.x / kWarp;
  v = warpSum(v);
  if (lane == 0) {
    warpSums[warp] = v;
  }
  __syncthreads(); // every thread reaches it: the branch above closes first
  v = 0.0f;
  if (warp == 0) { // the whole warp: the full mask inside warpSum names lanes that are present
    v = lane < kWarpsPerBlock ? warpSums[lane] : 0.0f;
    v = warpSum(v);
  }
  return v; // meaningful in thread 0 only
}

// atomic per block: the block adds its kBlock values (warp shuffles, then warp 0 over the warp
// sums in shared memory), then thread 0 does the block's one atomicAdd: n / kBlock atomics.
// Launch: blockDim.x == kBlock, grid = ceil(n / kBlock). *result must be 0 before the launch.
// ptx: shfl atom
__global__ void atomicPerBlock(const float *__restrict__ in, size_t n, float *result) {
  __shared__ float warpSums[kWarpsPerBlock];
  size_t i = size_t(blockIdx.x) * kBlock + threadIdx.x;
  float v = i < n ? in[i] : 0.0f;
  v = blockSum(v, warpSums);
  if (threadIdx.x == 0) {
    atomicAdd(result, v);
  }
}

// tree (v8), one pass: each thread adds float4s in a grid-stride loop (and one element of the
// n % 4 tail), the block adds its threads, thread 0 writes out[blockIdx.x]. Pass 1 runs it over the
// input on treeGrid(n) blocks; pass 2 runs it on ONE block over those partials. No atomics, so the
// order of every addition is fixed: the same input gives the same bits every time. Launch:
// blockDim.x == kBlock, any grid >= 1; `in` 16-byte aligned (cudaMalloc'd; the host checks).
// ptx: v4-loads shfl
__global__ void treePass(const float *__restrict__ in, size_t n, float *__restrict__ out) {
  __shared__ float warpSums[kWarpsPerBlock];
  size_t tid = size_t(blockIdx.x) * kBlock + threadIdx.x;
  size_t stride = size_t(gridDim.x) * kBlock;
  size_t nv = n / 4;
  const float4 *vin = reinterpret_cast<const float4 *>(in);
  float v = 0.0f;
  for (size_t k = tid; k < nv; k += stride) {
    float4 f = vin[k];
    v += (f.x + f.y) + (f.z + f.w);
  }
  size_t tail = nv * 4;
  if (tid < n - tail) {
    v += in[tail + tid];
  }
  v = blockSum(v, warpSums);
  if (threadIdx.x == 0) {
    out[blockIdx.x] = v;
  }
}

// The trapezoidal rule. f(x) = x^2 + 1 with ONE rounding (fmaf is fused and correctly rounded on
// the device and in the host's C library), so the host can compute the very same float terms.
__host__ __device__ inline float trapF(float x) {
  return fmaf(x, x, 1.0f);
}

// Area of trapezoid i, [x_i, x_{i+1}] with x_i = a + i h: (f(x_i) + f(x_{i+1})) * h / 2. Written
// with explicit fmaf so no compiler contracts it differently on host and device. With a = 0 and
// h = 2^-19, x_i = i h is exact (i <= 2^20) and h / 2 is a power of two, so each term has exactly
// two roundings: inside f, and the sum of the two f values.
__host__ __device__ inline float trapezoidArea(unsigned int i, float h) {
  float x0 = fmaf(float(i), h, kTrapA);
  float x1 = fmaf(float(i + 1), h, kTrapA);
  return (trapF(x0) + trapF(x1)) * (0.5f * h);
}

// trapezoid, one atomic per thread: thread i adds trapezoid i into *result (n atomics on one
// address). Launch: blockDim.x == kTrapBlock (32), grid = ceil(n / 32), n <= 2^24 (32-bit index,
// float(i) exact). *result must be 0 before the launch.
// ptx: atom
__global__ void trapAtomicPerThread(float h, unsigned int n, float *result) {
  unsigned int i = blockIdx.x * kTrapBlock + threadIdx.x;
  if (i < n) {
    atomicAdd(result, trapezoidArea(i, h));
  }
}

// trapezoid, warp shuffle then one atomic per block: the block is one warp, so warpSum adds its 32
// trapezoids in registers and lane 0 does the one atomicAdd. Launch: blockDim.x == kTrapBlock
// (32, all lanes present for the full mask), grid = ceil(n / 32). *result must be 0 before.
// ptx: shfl atom
__global__ void trapShufflePerBlock(float h, unsigned int n, float *result) {
  unsigned int i = blockIdx.x * kTrapBlock + threadIdx.x;
  float v = i < n ? trapezoidArea(i, h) : 0.0f;
  v = warpSum(v);
  if (threadIdx.x == 0) {
    atomicAdd(result, v);
  }
}

// snippet: trap-shared-syncwarp
// trapezoid, shared-memory warp sum then one atomic per block. Since Volta the lanes of a warp
// need not run in lock-step, so each step of the shared-memory tree is split in two by __syncwarp:
// every lane that adds READS its partner's slot; __syncwarp; it WRITES its own slot; __syncwarp.
// Without the first barrier a lane could overwrite a slot its neighbour has not read yet; without
// the second, a lane could read a slot before its owner wrote this step's value. __syncwarp()
// also orders the shared-memory accesses among the lanes it names. Every lane reaches every
// __syncwarp (the branches close first). Launch: blockDim.x == kTrapBlock == 32, grid =
// ceil(n / 32). *result must be 0 before the launch. Sources: the Programming Guide on __syncwarp
// and NVIDIA's "Using CUDA Warp-Level Primitives" (research/day26-atomics.md [S4] [S5]).
// ptx: atom
__global__ void trapSharedPerBlock(float h, unsigned int n, float *result) {
  __shared__ float s[kTrapBlock];
  unsigned int lane = threadIdx.x;
  unsigned int i = blockIdx.x * kTrapBlock + lane;
  float v = i < n ? trapezoidArea(i, h) : 0.0f;
  s[lane] = v;
  __syncwarp();
  for (unsigned int offset = kTrapBlock / 2; offset > 0; offset /= 2) {
    if (lane < offset) {
      v += s[lane + offset]; // read: written by lane + offset in the step before
    }
    __syncwarp();
    if (lane < offset) {
      s[lane] = v; // write: read by lane - offset / 2 in the next step
    }
    __syncwarp();
  }
  if (lane == 0) {
    atomicAdd(result, v);
  }
}
// end snippet

// race exhibit: the lock-step shared-memory warp sum, kept ONLY for --race-demo.
// Before Volta the 32 lanes of a warp ran in lock-step, and this `volatile` sum without any
// barrier was the textbook way to add a warp's values through shared memory. Since Volta
// (independent thread scheduling) lane t may read s[t + 16] before lane t + 16 has written it, or
// read s[t + 8] after lane t + 8 has already overwritten it with a later step's sum. It usually
// returns a good sum anyway, which is why it survived; compute-sanitizer racecheck reports the
// hazards. Launch: as trapSharedPerBlock.
// Source: research/day26-atomics.md [S5].
__global__ void trapLockStepRace(float h, unsigned int n, float *result) {
  __shared__ float s[kTrapBlock];
  volatile float *vs = s; // WRONG since Volta: no __syncwarp between these steps
  unsigned int lane = threadIdx.x;
  unsigned int i = blockIdx.x * kTrapBlock + lane;
  vs[lane] = i < n ? trapezoidArea(i, h) : 0.0f;
  if (lane < 16) {
    vs[lane] += vs[lane + 16];
    vs[lane] += vs[lane + 8];
    vs[lane] += vs[lane + 4];
    vs[lane] += vs[lane + 2];
    vs[lane] += vs[lane + 1];
  }
  if (lane == 0) {
    atomicAdd(result, vs[0]);
  }
}
// end race exhibit

// Fills p[0, count) with `value`. Any grid (grid-stride).
__global__ void fillKernel(float *p, size_t count, float value) {
  size_t stride = size_t(gridDim.x) * blockDim.x;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    p[i] = value;
  }
}

// ---------------------------------------------------------------------------------------------
// Host side: buffers, rows, launchers, checks.
// ---------------------------------------------------------------------------------------------

// Device buffers, allocated once for the largest sizes a run needs.
struct Buffers {
  float *inAlloc = nullptr;  // kPad + maxIn + kPad floats: NaN guards around the input
  float *outAlloc = nullptr; // the copy's destination, kPad + maxOut + kPad floats
  float *partials = nullptr; // the tree's pass-1 partials, kTreeGrid floats
  float *result = nullptr;   // every row's one float (the atomic rows' accumulator)
  size_t maxIn = 0;
  size_t maxOut = 0;
};

// The input starts kPad floats (16 bytes) into a 256-byte-aligned allocation: float4-aligned.
static float *inputStart(const Buffers &b) {
  return b.inAlloc + kPad;
}
static float *outputStart(const Buffers &b) {
  return b.outAlloc + kPad;
}
static size_t allocFloats(size_t n) {
  return size_t(kPad) + n + kPad;
}
static size_t bytesNeeded(size_t maxIn, size_t maxOut) {
  return (allocFloats(maxIn) + allocFloats(maxOut) + kTreeGrid + 1) * sizeof(float);
}

static void freeBuffers(Buffers &b) {
  // cudaFree(nullptr) is a no-op, so this is safe on every path.
  CUDA_CHECK(cudaFree(b.inAlloc));
  CUDA_CHECK(cudaFree(b.outAlloc));
  CUDA_CHECK(cudaFree(b.partials));
  CUDA_CHECK(cudaFree(b.result));
  b = Buffers{};
}

// Returns false (nothing left allocated) if the device is out of memory, so the caller can say so.
static bool allocBuffers(Buffers &b, size_t maxIn, size_t maxOut) {
  b.maxIn = maxIn;
  b.maxOut = maxOut;
  if (cudaMalloc(&b.inAlloc, allocFloats(maxIn) * sizeof(float)) != cudaSuccess ||
      cudaMalloc(&b.outAlloc, allocFloats(maxOut) * sizeof(float)) != cudaSuccess ||
      cudaMalloc(&b.partials, kTreeGrid * sizeof(float)) != cudaSuccess ||
      cudaMalloc(&b.result, sizeof(float)) != cudaSuccess) {
    (void)cudaGetLastError(); // clear the allocation error
    freeBuffers(b);
    return false;
  }
  return true;
}

// Input of n ones, NaN everywhere else in the allocation: a kernel that reads one element too far
// (or before the start) adds NaN and fails its check.
static void prepareInput(const Buffers &b, size_t n) {
  fillKernel<<<1024, 256>>>(b.inAlloc, allocFloats(b.maxIn), std::nanf(""));
  CUDA_CHECK(cudaGetLastError());
  fillKernel<<<1024, 256>>>(inputStart(b), n, 1.0f);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
}

// The rows of the sum table.
enum class Row { Copy, PerElement, PerWarp, PerBlock, Tree };
constexpr int kRowCount = 5;
const Row kRows[kRowCount] = {Row::Copy, Row::PerElement, Row::PerWarp, Row::PerBlock, Row::Tree};
const Row kSumRows[4] = {Row::PerElement, Row::PerWarp, Row::PerBlock, Row::Tree};

static const char *rowName(Row r) {
  switch (r) {
  case Row::Copy:
    return "copy";
  case Row::PerElement:
    return "atomic per element";
  case Row::PerWarp:
    return "atomic per warp";
  case Row::PerBlock:
    return "atomic per block";
  case Row::Tree:
    return "tree (v8)";
  }
  return "?";
}
static const char *rowProduces(Row r) {
  return r == Row::Copy ? "copy" : "one float";
}
static bool isAtomicRow(Row r) {
  return r == Row::PerElement || r == Row::PerWarp || r == Row::PerBlock;
}

// The --n domain: any n up to 2^24, a power of two above (see the exactness lemma).
static bool inDomain(size_t n) {
  return n >= 1 && n <= kMaxN && (n <= kExactAnyOrder || isPowerOfTwo(n));
}

// Whether row r is exact at n (n in the domain); if not, why, for the line printed instead.
static const char *rowSkipReason(Row r, size_t n) {
  if (r == Row::PerElement && n > kExactAnyOrder) {
    return "a float that adds 1.0f stops growing at 2^24 = 16777216 (see the exhibit)";
  }
  if (r == Row::PerWarp && n > kWarpRowMaxN) {
    return "warp sums of 32 are exact only while the running sum stays <= 2^29";
  }
  return nullptr;
}
static bool rowRuns(Row r, size_t n) {
  return rowSkipReason(r, n) == nullptr;
}

static unsigned int treeGrid(size_t n) {
  size_t blocks = (n + 4 * kBlock - 1) / (4 * kBlock); // one float4 a thread at least
  return unsigned(std::min<size_t>(blocks, kTreeGrid));
}

// Blocks the row launches (pass 1 for the tree).
static unsigned int rowGrid(Row r, size_t n) {
  if (r == Row::Copy) {
    size_t blocks = (n / 4 + kBlock - 1) / kBlock;
    return unsigned(std::max<size_t>(1, std::min<size_t>(blocks, kCopyMaxGrid)));
  }
  if (r == Row::Tree) {
    return treeGrid(n);
  }
  return unsigned((n + kBlock - 1) / kBlock);
}

// atomicAdds on the one result address per call.
static size_t rowAtomics(Row r, size_t n) {
  switch (r) {
  case Row::PerElement:
    return n;
  case Row::PerWarp:
    return (n + kWarp - 1) / kWarp;
  case Row::PerBlock:
    return (n + kBlock - 1) / kBlock;
  default:
    return 0;
  }
}

// Bytes a row moves: the copy reads and writes n floats; the tree reads n floats and then its
// partials; the atomic rows read n floats (the atomics themselves are not counted).
static double rowBytes(Row r, size_t n) {
  double bytes = double(n) * sizeof(float);
  if (r == Row::Copy) {
    return 2 * bytes;
  }
  if (r == Row::Tree) {
    return bytes + double(treeGrid(n)) * sizeof(float);
  }
  return bytes;
}

// Enqueues one run of row r over the first n input elements, on the default stream: for an
// atomic row the cudaMemsetAsync that zeroes the accumulator AND the kernel (so a timed call pays
// for both). Checks the launch. No synchronization.
static void launchRow(Row r, const Buffers &b, size_t n) {
  const float *in = inputStart(b);
  unsigned int blocks = rowGrid(r, n);
  if (isAtomicRow(r)) {
    CUDA_CHECK(cudaMemsetAsync(b.result, 0, sizeof(float), 0));
  }
  switch (r) {
  case Row::Copy:
    copyKernel<<<blocks, kBlock>>>(in, outputStart(b), n);
    break;
  case Row::PerElement:
    atomicPerElement<<<blocks, kBlock>>>(in, n, b.result);
    break;
  case Row::PerWarp:
    atomicPerWarp<<<blocks, kBlock>>>(in, n, b.result);
    break;
  case Row::PerBlock:
    atomicPerBlock<<<blocks, kBlock>>>(in, n, b.result);
    break;
  case Row::Tree:
    treePass<<<blocks, kBlock>>>(in, n, b.partials);
    CUDA_CHECK(cudaGetLastError());
    treePass<<<1, kBlock>>>(b.partials, blocks, b.result);
    break;
  }
  CUDA_CHECK(cudaGetLastError());
}

// NaN poison in what row r writes, so an output the row failed to write cannot pass.
static void poisonOutputs(Row r, const Buffers &b) {
  if (r == Row::Copy) {
    CUDA_CHECK(cudaMemset(b.outAlloc, 0xFF, allocFloats(b.maxOut) * sizeof(float)));
  } else {
    CUDA_CHECK(cudaMemset(b.partials, 0xFF, kTreeGrid * sizeof(float)));
    CUDA_CHECK(cudaMemset(b.result, 0xFF, sizeof(float)));
  }
}

// The outcome of one exact check: `got` as the device left it, `want` = n.
struct Check {
  bool ok;
  double got;
  double want;
  std::string detail;
};

static float readResult(const Buffers &b) {
  float host = 0.0f;
  CUDA_CHECK(cudaMemcpy(&host, b.result, sizeof(float), cudaMemcpyDeviceToHost));
  return host;
}

// Checks what row r left on the device (after a synchronization): copy — every destination element
// is 1.0f and the guards around it are still NaN (read in chunks, so n = 2^32 needs no 16 GiB host
// buffer); sum rows — the one float equals n exactly.
static Check checkRow(Row r, const Buffers &b, size_t n) {
  Check c{true, 0.0, double(n), ""};
  if (r != Row::Copy) {
    c.got = double(readResult(b));
    c.ok = c.got == c.want; // NaN (unwritten) fails too
    return c;
  }
  const size_t chunk = size_t(1) << 24;
  std::vector<float> host(std::min(chunk, allocFloats(n)));
  size_t ones = 0, strays = 0;
  for (size_t first = 0; first < allocFloats(n); first += chunk) {
    size_t count = std::min(chunk, allocFloats(n) - first);
    CUDA_CHECK(
        cudaMemcpy(host.data(), b.outAlloc + first, count * sizeof(float), cudaMemcpyDeviceToHost));
    for (size_t k = 0; k < count; ++k) {
      size_t i = first + k;
      bool inside = i >= size_t(kPad) && i < size_t(kPad) + n;
      if (inside && host[k] == 1.0f) {
        ++ones;
      } else if (!inside && !std::isnan(host[k])) {
        ++strays;
      }
    }
  }
  c.got = double(ones);
  if (ones != n || strays != 0) {
    c.ok = false;
    c.detail = "copied " + std::to_string(ones) + " ones, wrote " + std::to_string(strays) +
               " guard elements";
  }
  return c;
}

// Runs row r once on poisoned outputs and checks it.
static Check runAndCheck(Row r, const Buffers &b, size_t n) {
  poisonOutputs(r, b);
  launchRow(r, b, n);
  CUDA_CHECK(cudaDeviceSynchronize());
  return checkRow(r, b, n);
}

// Prints one failed check: got, want, and the difference in elements.
static void reportFailure(const char *when, Row r, size_t n, const Check &c) {
  std::printf("CHECK FAILED: %s %s n=%zu got %.0f want %.0f (off by %.0f elements)%s%s\n", when,
              rowName(r), n, c.got, c.want, c.got - c.want, c.detail.empty() ? "" : ": ",
              c.detail.c_str());
}

// One measured row: checked, timed, checked again on what the timed launches left.
struct Measured {
  Row row;
  unsigned int blocks;
  size_t atomics;
  double mb;
  Timing t;
  bool ok;
};

static Measured measureRow(Row r, const Buffers &b, size_t n, int &checks, int &failures) {
  Measured m{r, rowGrid(r, n), rowAtomics(r, n), rowBytes(r, n) / 1e6, {0.0, 0.0}, true};
  Check before = runAndCheck(r, b, n);
  ++checks;
  if (!before.ok) {
    reportFailure("before timing", r, n, before);
    ++failures;
    m.ok = false;
  }
  poisonOutputs(r, b); // what is checked below must come from the timed launches
  m.t = timeKernel([&] { launchRow(r, b, n); });
  CUDA_CHECK(cudaDeviceSynchronize());
  Check after = checkRow(r, b, n);
  ++checks;
  if (!after.ok) {
    reportFailure("after timing", r, n, after);
    ++failures;
    m.ok = false;
  }
  return m;
}

// ---------------------------------------------------------------------------------------------
// The trapezoidal rule: reference, bounds, launches.
// ---------------------------------------------------------------------------------------------

enum class Trap { PerThread, ShufflePerBlock, SharedPerBlock, LockStepRace };

static const char *trapName(Trap k) {
  switch (k) {
  case Trap::PerThread:
    return "trap: atomic per thread";
  case Trap::ShufflePerBlock:
    return "trap: shuffle, atomic per block";
  case Trap::SharedPerBlock:
    return "trap: shared + __syncwarp, atomic per block";
  case Trap::LockStepRace:
    return "trap: lock-step shared (race exhibit)";
  }
  return "?";
}

static float trapH() {
  return (kTrapB - kTrapA) / float(kTrapN); // 2 / 2^20 = 2^-19, exact
}
static unsigned int trapGrid() {
  return (kTrapN + kTrapBlock - 1) / kTrapBlock;
}
static size_t trapAtomics(Trap k) {
  return k == Trap::PerThread ? kTrapN : trapGrid();
}

// Float additions on the longest path from one trapezoid to the result: the per-thread kernel
// chains all N terms through the one accumulator (N additions, counting the first one into 0.0,
// which is exact, to keep it simple); the per-block kernels add log2(32) = 5 times inside the
// warp, then chain the 2^15 block sums through the accumulator (2^15 more).
static double trapDepth(Trap k) {
  if (k == Trap::PerThread) {
    return double(kTrapN);
  }
  return std::log2(double(kTrapBlock)) + double(trapGrid());
}

// gamma_k = k u / (1 - k u), the classic bound on a product of k factors (1 + delta), |delta| <= u.
static double gammaK(double k, double u) {
  return k * u / (1.0 - k * u);
}

// The references the trapezoid rows are checked against, and the error bounds.
//
// hostSum: the double sum, on the host, of the SAME float terms the device computes
// (trapezoidArea is bit-identical on both). Each term is (f + f) * h / 2 with f + f a float in
// [2, 10] (a multiple of 2^-22) and h / 2 = 2^-20, so every term is a multiple of 2^-42; the sum
// stays below 2^3, so every partial sum needs at most 45 of a double's 53 bits: hostSum is exact.
//
// Bound 1, device against hostSum (the summation): every term passes through at most d float
// additions (trapDepth), each with relative error <= u = 2^-24 (round to nearest), and all terms
// are positive, so |result - hostSum| <= gamma_d * sum |t_i| = gamma_d * hostSum [Higham 2002,
// §4.2]. The atomic order is arbitrary, but the bound holds for ANY order with that depth. (A
// term for the host's own double sum, gamma_{N-1} with u = 2^-53, is added so a changed interval
// stays covered.) Per thread d = 2^20: about 1/15 of the sum, a worst case no real run nears.
// Per block d = 2^15 + 5: about 1/512 of the sum.
//
// Bound 2, device against the exact integral: bound 1, plus the float rounding of the terms (two
// roundings a term, all positive: |hostSum - S| <= gamma_2 S, S the exact trapezoid sum), plus the
// trapezoid rule's own error (b - a)^3 / (12 N^2) max|f''| with f'' = 2. For f = x^2 + 1 that
// error is exact, not just a bound: on one interval the trapezoid exceeds the integral by h^3 / 6.
// Sources: research/day26-atomics.md [S6] (summation bounds) and [S7] (the trapezoid rule).
struct TrapReference {
  double hostSum;     // exact double sum of the device's float terms
  double exact;       // the integral: (b^3 - a^3) / 3 + (b - a)
  double termBound;   // gamma_2 * S: the rounding of the terms
  double quadBound;   // (b - a)^3 / (12 N^2) * max|f''|: the rule's error
  double doubleBound; // the host double sum's own worst case (0 here in fact; kept general)
};

static TrapReference trapReference() {
  TrapReference ref{};
  float h = trapH();
  double sum = 0.0;
  for (unsigned int i = 0; i < kTrapN; ++i) {
    sum += double(trapezoidArea(i, h));
  }
  double a = kTrapA, b = kTrapB, n = kTrapN;
  double u = std::ldexp(1.0, -24);
  ref.hostSum = sum;
  ref.exact = (b * b * b - a * a * a) / 3.0 + (b - a);
  ref.termBound = gammaK(2, u) / (1.0 - gammaK(2, u)) * sum; // S <= hostSum / (1 - gamma_2)
  ref.quadBound = (b - a) * (b - a) * (b - a) / (12.0 * n * n) * 2.0;
  ref.doubleBound = gammaK(n - 1, std::ldexp(1.0, -53)) * sum;
  return ref;
}

static double trapHostBound(Trap k, const TrapReference &ref) {
  return gammaK(trapDepth(k), std::ldexp(1.0, -24)) * ref.hostSum + ref.doubleBound;
}
static double trapIntegralBound(Trap k, const TrapReference &ref) {
  return trapHostBound(k, ref) + ref.termBound + ref.quadBound;
}

// Enqueues one run: zero the accumulator, launch the kernel (both inside a timed call).
static void launchTrap(Trap k, const Buffers &b) {
  float h = trapH();
  CUDA_CHECK(cudaMemsetAsync(b.result, 0, sizeof(float), 0));
  switch (k) {
  case Trap::PerThread:
    trapAtomicPerThread<<<trapGrid(), kTrapBlock>>>(h, kTrapN, b.result);
    break;
  case Trap::ShufflePerBlock:
    trapShufflePerBlock<<<trapGrid(), kTrapBlock>>>(h, kTrapN, b.result);
    break;
  case Trap::SharedPerBlock:
    trapSharedPerBlock<<<trapGrid(), kTrapBlock>>>(h, kTrapN, b.result);
    break;
  case Trap::LockStepRace:
    trapLockStepRace<<<trapGrid(), kTrapBlock>>>(h, kTrapN, b.result);
    break;
  }
  CUDA_CHECK(cudaGetLastError());
}

struct TrapCheck {
  bool ok;
  double got;
  double errHost;
  double errExact;
};

// Checks the float the device left: within both bounds (NaN fails).
static TrapCheck checkTrap(Trap k, const Buffers &b, const TrapReference &ref) {
  TrapCheck c{};
  c.got = double(readResult(b));
  c.errHost = std::fabs(c.got - ref.hostSum);
  c.errExact = std::fabs(c.got - ref.exact);
  c.ok = c.errHost <= trapHostBound(k, ref) && c.errExact <= trapIntegralBound(k, ref);
  return c;
}

static TrapCheck runAndCheckTrap(Trap k, const Buffers &b, const TrapReference &ref) {
  CUDA_CHECK(cudaMemset(b.result, 0xFF, sizeof(float)));
  launchTrap(k, b);
  CUDA_CHECK(cudaDeviceSynchronize());
  return checkTrap(k, b, ref);
}

static void reportTrapFailure(const char *when, Trap k, const TrapReference &ref,
                              const TrapCheck &c) {
  std::printf("CHECK FAILED: %s %s got %.9g want %.9g (host sum of the same terms) and %.9g "
              "(integral); errors %.3g and %.3g, bounds %.3g and %.3g\n",
              when, trapName(k), c.got, ref.hostSum, ref.exact, c.errHost, c.errExact,
              trapHostBound(k, ref), trapIntegralBound(k, ref));
}

// ---------------------------------------------------------------------------------------------
// Options.
// ---------------------------------------------------------------------------------------------
struct Options {
  size_t n = kDefaultN;
  bool haveN = false;
  bool sweep = false;
  bool selfTest = false;
  bool raceDemo = false;
  size_t selfTestMaxN = kExactAnyOrder; // --max-n: trims the self-test sizes (sanitizer runs)
  bool help = false;
};

static const char *kUsage =
    "usage: atomics [--n N | --sweep | --self-test [--max-n N] | --race-demo] [--help]\n"
    "  --n N        elements, all 1.0f (default 16777216 = 2^24, the largest n at which one\n"
    "               atomicAdd per element is exact). Exact domain: any N from 1 to 16777216;\n"
    "               above that a power of two up to 4294967296 (2^32), where device memory\n"
    "               allows. Rows at N: atomic per element up to 2^24; atomic per warp up to 2^29;\n"
    "               atomic per block and the tree up to 2^32. A row outside its exact range is\n"
    "               skipped with the reason printed. The exhibit always runs at 2^25, the\n"
    "               determinism check at min(N, 2^24) random floats.\n"
    "  --sweep      n = 2^10, 2^12, ..., 2^26: us per call of every row, and for each atomic row\n"
    "               the n from which the tree is faster (the crossover); sizes whose input fits\n"
    "               in L2 are marked. Every row checked exactly; exit 1 if any check failed.\n"
    "  --self-test  every row over 28 edge sizes of n (1 ... 16777216) and the trapezoid kernels,\n"
    "               no timing; one line per failure; exit 1 on any.\n"
    "  --max-n N    with --self-test: only the sizes up to N (for compute-sanitizer runs).\n"
    "  --race-demo  runs the lock-step shared-memory warp sum (volatile, no __syncwarp) of the\n"
    "               trapezoid rule once, for compute-sanitizer racecheck: it usually returns a\n"
    "               good sum and is still a data race since Volta.\n"
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
  bool haveMaxN = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      o.help = true;
    } else if (a == "--sweep") {
      o.sweep = true;
    } else if (a == "--self-test") {
      o.selfTest = true;
    } else if (a == "--race-demo") {
      o.raceDemo = true;
    } else if (a == "--n" || a == "--max-n") {
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
  if (int(o.sweep) + int(o.selfTest) + int(o.raceDemo) > 1) {
    return "--sweep, --self-test and --race-demo are separate runs: choose one";
  }
  if (o.haveN && (o.sweep || o.selfTest || o.raceDemo)) {
    return "--n sets the default run's size; --sweep, --self-test and --race-demo use their own";
  }
  if (haveMaxN && !o.selfTest) {
    return "--max-n only trims --self-test";
  }
  if (!inDomain(o.n)) {
    return "--n " + std::to_string(o.n) +
           ": above 16777216 (2^24) a float sum of ones is exact only for a power of two";
  }
  return "";
}

// ---------------------------------------------------------------------------------------------
// The runs: the default table (+ exhibit, trapezoid, determinism), the sweep, the self-test, the
// race demo.
// ---------------------------------------------------------------------------------------------

static void printBanner(const cudaDeviceProp &p) {
  std::printf("GPU: %s | cc %d.%d | %d SMs | %zu KiB shared/block | %d MiB L2 | warp %d\n", p.name,
              p.major, p.minor, p.multiProcessorCount, p.sharedMemPerBlock / 1024,
              p.l2CacheSize / (1024 * 1024), p.warpSize);
}

static bool fitsInL2(size_t n, const cudaDeviceProp &p) {
  return double(n) * sizeof(float) <= double(p.l2CacheSize);
}

static int runTable(const Options &o, const Buffers &b, const cudaDeviceProp &prop, int &checks,
                    int &failures) {
  prepareInput(b, o.n);
  std::vector<Measured> out;
  int expected = 0;
  for (Row r : kRows) {
    if (rowRuns(r, o.n)) {
      ++expected;
      out.push_back(measureRow(r, b, o.n, checks, failures));
    }
  }
  if (int(out.size()) != expected || out.empty() || out[0].row != Row::Copy) {
    // a real branch: Release builds delete assert()
    std::printf("internal error: %zu rows measured, the table has %d\n", out.size(), expected);
    return 1;
  }
  std::printf("\nn = %zu floats (%.1f MiB, %s the %d MiB L2), %d threads a block; median of %d "
              "batches of %d calls\n\n",
              o.n, o.n * 4.0 / (1 << 20), fitsInL2(o.n, prop) ? "fits in" : "larger than",
              prop.l2CacheSize / (1024 * 1024), kBlock, kTimingBatches, kLaunchesPerBatch);
  std::printf("| row                | produces  |  blocks |    atomics |       MB |        us | "
              "spread %% |    GB/s | %% of copy | check |\n");
  std::printf("|--------------------|-----------|---------|------------|----------|-----------|"
              "----------|---------|-----------|-------|\n");
  double copyGBs = out[0].mb / out[0].t.ms;
  for (const Measured &m : out) {
    double gbs = m.mb / m.t.ms;
    std::printf("| %-18s | %-9s | %7u | %10zu | %8.3f | %9.2f | %8.1f | %7.1f | %9.1f | %-5s |\n",
                rowName(m.row), rowProduces(m.row), m.blocks, m.atomics, m.mb, 1000.0 * m.t.ms,
                m.t.spread, gbs, 100.0 * gbs / copyGBs, m.ok ? "exact" : "FAIL");
  }
  for (Row r : kRows) {
    if (!rowRuns(r, o.n)) {
      std::printf("%s: not run at n = %zu: %s.\n", rowName(r), o.n, rowSkipReason(r, o.n));
    }
  }
  std::printf(
      "\nEach atomic row's timed call is cudaMemsetAsync(result, 0) + the kernel, both inside the\n"
      "timed region (the accumulator must start at 0 every call); the tree's call is its two\n"
      "kernels (it overwrites its result). `atomics` counts atomicAdds on the ONE result address.\n"
      "The copy row counts bytes read + written (8 a float); the sum rows count bytes read (4 a\n"
      "float, plus the tree's partials). A sum only reads, so it can pass 100 %% of copy: the\n"
      "percentage compares two numbers from this run, not a limit.\n");
  return 0;
}

// The lesson's exhibit: never counted. The per-element row at 2^25 stalls at 2^24.
static void runExhibit(const Buffers &b) {
  prepareInput(b, kExhibitN);
  CUDA_CHECK(cudaMemset(b.result, 0xFF, sizeof(float)));
  launchRow(Row::PerElement, b, kExhibitN);
  CUDA_CHECK(cudaDeviceSynchronize());
  float got = readResult(b);
  std::printf("\nexhibit (not a check): atomic per element at n = %zu (2^25) returned %.0f, want "
              "%zu (off by %.0f elements).\n",
              kExhibitN, double(got), kExhibitN, double(kExhibitN) - double(got));
  if (double(got) == double(kExactAnyOrder)) {
    std::printf("From 16777216 (2^24) on, x + 1.0f rounds back to x: the next float is 16777218 "
                "and the tie\nrounds to even, so every later atomicAdd of 1.0f changes "
                "nothing.\n");
  } else {
    std::printf(
        "Not the 16777216 where one-at-a-time adds of 1.0f stall: some adds were combined "
        "before\nthey reached the address, so not every add was 1.0f into a float at 2^24.\n");
  }
}

static int runTrapezoid(const Buffers &b, int &checks, int &failures) {
  TrapReference ref = trapReference();
  const Trap kinds[] = {Trap::PerThread, Trap::ShufflePerBlock, Trap::SharedPerBlock};
  struct TrapRow {
    Trap k;
    Timing t;
    TrapCheck c;
    bool ok;
  };
  std::vector<TrapRow> rows;
  for (Trap k : kinds) {
    TrapRow row{k, {0.0, 0.0}, {}, true};
    TrapCheck before = runAndCheckTrap(k, b, ref);
    ++checks;
    if (!before.ok) {
      reportTrapFailure("before timing", k, ref, before);
      ++failures;
      row.ok = false;
    }
    CUDA_CHECK(cudaMemset(b.result, 0xFF, sizeof(float)));
    row.t = timeKernel([&] { launchTrap(k, b); });
    CUDA_CHECK(cudaDeviceSynchronize());
    row.c = checkTrap(k, b, ref);
    ++checks;
    if (!row.c.ok) {
      reportTrapFailure("after timing", k, ref, row.c);
      ++failures;
      row.ok = false;
    }
    rows.push_back(row);
  }
  std::printf("\ntrapezoidal rule: f(x) = x^2 + 1 on [%g, %g], N = %u trapezoids (h = 2^-19), %d "
              "threads a block, %u blocks\n",
              double(kTrapA), double(kTrapB), kTrapN, kTrapBlock, trapGrid());
  std::printf("exact integral 14/3 = %.15f; host sum of the same float terms (double, exact) = "
              "%.15f\n\n",
              ref.exact, ref.hostSum);
  std::printf(
      "| row                                         |    atomics |        us | spread %% | "
      "result      | error vs host | host bound | error vs integral | integral bound | "
      "check    |\n");
  std::printf("|---------------------------------------------|------------|-----------|----------|"
              "-------------|---------------|------------|-------------------|----------------|"
              "----------|\n");
  for (const TrapRow &r : rows) {
    std::printf("| %-43s | %10zu | %9.2f | %8.1f | %.9f | %13.3g | %10.3g | %17.3g | %14.3g | "
                "%-8s |\n",
                trapName(r.k), trapAtomics(r.k), 1000.0 * r.t.ms, r.t.spread, r.c.got, r.c.errHost,
                trapHostBound(r.k, ref), r.c.errExact, trapIntegralBound(r.k, ref),
                r.ok ? "in bound" : "FAIL");
  }
  std::printf(
      "\nhost bound = gamma_d x (host sum), gamma_d = d u / (1 - d u), u = 2^-24, d = float\n"
      "additions on a term's longest path: 2^20 when every thread adds into the one\n"
      "accumulator, 5 + 2^15 when each block adds its 32 terms first (any order of the\n"
      "atomics). integral bound = host bound + gamma_2 x (sum) for the rounding of each term\n"
      "+ (b - a)^3 / (12 N^2) x max|f''| = %.3g for the rule itself. Worst cases: the errors\n"
      "measured are far below them. Each timed call includes the cudaMemsetAsync of the result.\n",
      ref.quadBound);
  return 0;
}

// The same fixed-seed random input, summed kDeterminismRuns times by each sum row.
static int runDeterminism(const Options &o, const Buffers &b, int &checks, int &failures) {
  size_t n = std::min(o.n, kExactAnyOrder);
  std::mt19937 gen(kSeed);
  std::vector<float> host(n);
  double exactSum = 0.0;
  for (size_t i = 0; i < n; ++i) {
    host[i] = float(gen() >> 8) * 0x1p-24f; // uniform in [0, 1), 24 random bits: portable
    exactSum += double(host[i]);
  }
  prepareInput(b, 0); // every element NaN: guards on both sides of what is uploaded
  CUDA_CHECK(cudaMemcpy(inputStart(b), host.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  std::printf("\ndeterminism: n = %zu random floats in [0, 1) (std::mt19937, seed %u), each row "
              "summed %d times; host double sum %.3f\n\n",
              n, kSeed, kDeterminismRuns, exactSum);
  std::printf("| row                | runs | distinct bit patterns | smallest        | largest   "
              "      | check                           |\n");
  std::printf("|--------------------|------|-----------------------|-----------------|-----------"
              "------|---------------------------------|\n");
  for (Row r : kSumRows) {
    std::vector<uint32_t> bits;
    float lo = INFINITY, hi = -INFINITY;
    for (int run = 0; run < kDeterminismRuns; ++run) {
      poisonOutputs(r, b);
      launchRow(r, b, n);
      CUDA_CHECK(cudaDeviceSynchronize());
      float got = readResult(b);
      uint32_t u = 0;
      std::memcpy(&u, &got, sizeof(u));
      bits.push_back(u);
      lo = std::min(lo, got);
      hi = std::max(hi, got);
    }
    std::sort(bits.begin(), bits.end());
    size_t distinct = size_t(std::unique(bits.begin(), bits.end()) - bits.begin());
    const char *verdict = "";
    if (r == Row::Tree) {
      ++checks;
      bool ok = distinct == 1;
      if (!ok) {
        ++failures;
        std::printf("CHECK FAILED: determinism %s gave %zu distinct bit patterns in %d runs, want "
                    "1\n",
                    rowName(r), distinct, kDeterminismRuns);
      }
      verdict = ok ? "one pattern (checked)" : "FAIL";
    } else {
      verdict = distinct == 1 ? "one pattern (atomics: allowed)" : "varies (atomics: allowed)";
    }
    std::printf("| %-18s | %4d | %21zu | %15.3f | %15.3f | %-31s |\n", rowName(r), kDeterminismRuns,
                distinct, double(lo), double(hi), verdict);
  }
  std::printf(
      "\nThe atomic rows add in whatever order the atomics reach the address; float addition is\n"
      "not associative, so the rounding, and the bits, can change from run to run. The tree's\n"
      "order is fixed by its code, so it must give one bit pattern: that is checked.\n");
  return 0;
}

static int runSweep(const Buffers &b, const cudaDeviceProp &prop, int &checks, int &failures) {
  struct SweepLine {
    size_t n;
    double us[kRowCount]; // < 0: not run
    double maxSpread;
    bool ok;
  };
  std::vector<SweepLine> lines;
  for (int lg = kSweepFirstLog2; lg <= kSweepLastLog2; lg += 2) {
    size_t n = size_t(1) << lg;
    prepareInput(b, n);
    SweepLine line{n, {}, 0.0, true};
    for (int k = 0; k < kRowCount; ++k) {
      line.us[k] = -1.0;
      if (!rowRuns(kRows[k], n)) {
        continue;
      }
      Measured m = measureRow(kRows[k], b, n, checks, failures);
      line.us[k] = 1000.0 * m.t.ms;
      line.maxSpread = std::max(line.maxSpread, m.t.spread);
      line.ok = line.ok && m.ok;
    }
    lines.push_back(line);
  }
  std::printf("\nsweep: us per call (median of %d batches of %d calls); L2 = %d MiB; atomic rows "
              "include their cudaMemsetAsync\n\n",
              kTimingBatches, kLaunchesPerBatch, prop.l2CacheSize / (1024 * 1024));
  std::printf("|         n |       MB | in L2 |   copy us | per element us | per warp us | per "
              "block us |   tree us | max spread %% | check |\n");
  std::printf("|-----------|----------|-------|-----------|----------------|-------------|-------"
              "-------|-----------|--------------|-------|\n");
  for (const SweepLine &l : lines) {
    char cell[kRowCount][32];
    for (int k = 0; k < kRowCount; ++k) {
      if (l.us[k] < 0) {
        std::snprintf(cell[k], sizeof(cell[k]), "skipped");
      } else {
        std::snprintf(cell[k], sizeof(cell[k]), "%.2f", l.us[k]);
      }
    }
    std::printf("| %9zu | %8.3f | %-5s | %9s | %14s | %11s | %12s | %9s | %12.1f | %-5s |\n", l.n,
                l.n * 4.0 / 1e6, fitsInL2(l.n, prop) ? "yes" : "no", cell[0], cell[1], cell[2],
                cell[3], cell[4], l.maxSpread, l.ok ? "exact" : "FAIL");
  }
  std::printf("\n`in L2`: the input fits in the L2 cache, so repeated calls read it from L2, not "
              "DRAM.\n`skipped`: the per-element row is exact only up to 2^24 = 16777216 (a float "
              "that adds\n1.0f stops growing there; see the exhibit of the default run).\n\n");
  // The crossover: the smallest swept n from which the tree is faster than the atomic row at that
  // n and at every larger n where the row ran (one noisy small size cannot make a crossover).
  const int treeCol = kRowCount - 1;
  for (int k = 1; k < treeCol; ++k) {
    size_t from = 0;
    for (size_t j = lines.size(); j-- > 0;) {
      if (lines[j].us[k] < 0) {
        continue; // the row did not run at this n
      }
      if (lines[j].us[treeCol] < lines[j].us[k]) {
        from = lines[j].n;
      } else {
        break;
      }
    }
    if (from == 0) {
      std::printf("crossover, %s: none in range (the atomic row is as fast or faster at the "
                  "largest n it ran)\n",
                  rowName(kRows[k]));
    } else {
      std::printf("crossover, %s: the tree is faster from n = %zu (2^%d) on\n", rowName(kRows[k]),
                  from, int(std::log2(double(from))));
    }
  }
  return 0;
}

static int runSelfTest(const Options &o, const Buffers &b, int &checks, int &failures) {
  const size_t sizes[] = {1,    2,    3,     4,     5,     7,       31,       32,      33,   255,
                          256,  257,  511,   512,   513,   1023,    1024,     1025,    1027, 4095,
                          4096, 4097, 65535, 65536, 65537, 1048577, 16776605, 16777216};
  int tested = 0, sizesTested = 0;
  for (size_t n : sizes) {
    if (n > o.selfTestMaxN) {
      continue;
    }
    ++sizesTested;
    prepareInput(b, n);
    for (Row r : kRows) {
      if (!rowRuns(r, n)) {
        continue; // never at these sizes (all <= 2^24); kept for a changed list
      }
      Check c = runAndCheck(r, b, n);
      ++checks;
      ++tested;
      if (!c.ok) {
        ++failures;
        reportFailure("self-test", r, n, c);
      }
    }
  }
  TrapReference ref = trapReference();
  const Trap kinds[] = {Trap::PerThread, Trap::ShufflePerBlock, Trap::SharedPerBlock};
  for (Trap k : kinds) {
    TrapCheck c = runAndCheckTrap(k, b, ref);
    ++checks;
    ++tested;
    if (!c.ok) {
      ++failures;
      reportTrapFailure("self-test", k, ref, c);
    }
  }
  std::printf("self-test: %d runs (%d sizes n <= %zu x %d rows, and 3 trapezoid kernels): %d "
              "failed\n",
              tested, sizesTested, o.selfTestMaxN, kRowCount, failures);
  return 0;
}

static int runRaceDemo(const Buffers &b, int &checks, int &failures) {
  TrapReference ref = trapReference();
  TrapCheck c = runAndCheckTrap(Trap::LockStepRace, b, ref);
  ++checks;
  if (!c.ok) {
    ++failures;
    reportTrapFailure("race demo", Trap::LockStepRace, ref, c);
  }
  std::printf("race demo (lock-step shared-memory warp sum, volatile, no __syncwarp): %u "
              "trapezoids gave %.9f, integral %.9f, error %.3g (bound %.3g): %s\n",
              kTrapN, c.got, ref.exact, c.errExact, trapIntegralBound(Trap::LockStepRace, ref),
              c.ok ? "a good sum" : "a WRONG sum");
  std::printf("A good sum proves nothing here: run it under `compute-sanitizer --tool racecheck` "
              "to see the hazard.\n");
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

  // Sizes this run needs, refused (exit 2) before any allocation if the device cannot hold them.
  size_t maxIn = 1, maxOut = 1; // the race demo reads no input
  if (o.selfTest) {
    maxIn = maxOut = std::min(o.selfTestMaxN, kExactAnyOrder);
  } else if (o.sweep) {
    maxIn = maxOut = size_t(1) << kSweepLastLog2;
  } else if (!o.raceDemo) {
    maxIn = std::max(o.n, kExhibitN); // the exhibit reads 2^25 ones
    maxOut = o.n;
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
  size_t freeBytes = 0, totalBytes = 0;
  CUDA_CHECK(cudaMemGetInfo(&freeBytes, &totalBytes));
  size_t need = bytesNeeded(maxIn, maxOut);
  if (need > freeBytes) {
    std::fprintf(stderr,
                 "error: this run needs %.2f GiB of device memory (input and copy destination, "
                 "n = %zu); %.2f GiB are free on %s\n",
                 need / double(1u << 30), std::max(maxIn, maxOut), freeBytes / double(1u << 30),
                 prop.name);
    return 2;
  }
  printBanner(prop);
  if (prop.warpSize != kWarp) {
    std::printf("error: this program's warp shuffles and one-warp blocks assume %d lanes a warp; "
                "the device has %d\n",
                kWarp, prop.warpSize);
    return 1;
  }

  Buffers b;
  if (!allocBuffers(b, maxIn, maxOut)) {
    std::fprintf(stderr, "error: cudaMalloc of %.2f GiB failed on %s\n", need / double(1u << 30),
                 prop.name);
    return 1;
  }
  // The float4 loads need 16-byte alignment: cudaMalloc gives 256 bytes, kPad floats keep 16.
  if (reinterpret_cast<uintptr_t>(inputStart(b)) % 16 != 0 ||
      reinterpret_cast<uintptr_t>(outputStart(b)) % 16 != 0 ||
      reinterpret_cast<uintptr_t>(b.partials) % 16 != 0) {
    std::printf("internal error: a buffer is not 16-byte aligned\n");
    freeBuffers(b);
    return 1;
  }

  int checks = 0, failures = 0, status = 0;
  if (o.selfTest) {
    status = runSelfTest(o, b, checks, failures);
  } else if (o.sweep) {
    status = runSweep(b, prop, checks, failures);
  } else if (o.raceDemo) {
    status = runRaceDemo(b, checks, failures);
  } else {
    std::printf("day 26: one float by atomicAdd on one address, against the two-pass tree\n");
    status = runTable(o, b, prop, checks, failures);
    if (status == 0) {
      runExhibit(b);
      status = runTrapezoid(b, checks, failures);
    }
    if (status == 0) {
      status = runDeterminism(o, b, checks, failures);
    }
  }
  freeBuffers(b);

  if (failures == 0 && status == 0) {
    std::printf("\nRESULT: PASS (%d checks, all exact)\n", checks);
    return 0;
  }
  std::printf("\nRESULT: FAIL (%d of %d checks failed)\n", failures, checks);
  return 1;
}
