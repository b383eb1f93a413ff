// Day 26: atomics, and where one global atomicAdd stops being cheaper than the tree. One input
// (n floats, all 1.0f, so the right sum is n), one float at the end of every row. Rows, in order:
//   copy                the ceiling: a float4 copy of the same buffer (bytes read + written).
//   atomic per element  every thread does atomicAdd(result, in[i]): n atomics on ONE address.
//   atomic per warp     __shfl_down_sync sums a warp's 32 values, lane 0 atomicAdds it: n/32.
//   atomic per block    warp 0 adds the warp sums (shared memory), thread 0 atomicAdds: n/256.
//   tree (v8)           day 25's v8: one partial a block, then ONE block adds them. No atomics.
// Then: the exhibit (per element at n = 2^25 returns 2^24, never counted); the trapezoidal rule
// (f(x) = x^2 + 1 on [0, 2], 2^20 trapezoids, 32-thread blocks, three ways to finish); the tree's
// determinism (20 sums, one bit pattern).
//
// Checked: every sum row exactly (the one float == n), before it is timed and again on what the
// LAST timed launch left (every timed batch starts from NaN poison); the copy element by element;
// the trapezoid rows within trapReference()'s bounds; the tree's determinism. A row outside its
// exact range (per element above 2^24, per warp above 2^29) is not run, with the reason printed.
// NOT checked: speed (the tables report it; no threshold).
// Build: nvcc -std=c++17 -O3 -arch=sm_75 -o atomics code/day26-atomics/atomics.cu
// Run: ./atomics (--help for the knobs). Exit: 0 all checks passed; 1 a check failed, a CUDA error
// or warps not 32 lanes; 2 bad usage. Edge sizes, 0/1 input, guards: tests/harness/day26-atomics.cu

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <set>
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

// ==== The lesson's constants and the exactness argument they must keep.
// Exactness lemma: a float sum of integer multiples of 2^k is exact at every step, in any order,
// while every running sum stays <= 2^(24+k). Per element: ones, k = 0, so n <= 2^24. Per warp:
// above 2^24 n is a power of two and every warp adds 32 ones, k = 5: to 2^29. Per block: k = 8,
// to 2^32 = kMaxN. Tree: above 2^24 n and the grid are powers of two, every thread adds the same
// count of float4s: per-thread sums stay integers <= 2^24, every partial the same power of two.
// snippet: constants
constexpr int kBlock = 256;                    // threads a block: copy and the four sum rows
constexpr int kWarp = 32;                      // lanes a warp (the host checks the device's)
constexpr unsigned kFullMask = 0xffffffffu;    // all 32 lanes: the mask of every shuffle
constexpr int kWarpsPerBlock = kBlock / kWarp; // warp sums a block reduction adds
constexpr int kTrapBlock = 32;                 // trapezoid kernels: one warp a block
constexpr float kTrapA = 0.0f;                 // the trapezoid rule's interval [a, b]
// end snippet
constexpr float kTrapB = 2.0f;
constexpr size_t kExactAnyOrder = size_t(1) << 24; // a float holds every integer up to 2^24
constexpr size_t kDefaultN = kExactAnyOrder;       // the largest n the per-element row gets right
constexpr size_t kWarpRowMaxN = size_t(1) << 29;   // per-warp row: warp sums of 32 = 2^5
constexpr size_t kMaxN = size_t(1) << 32;          // largest --n (2 x 16 GiB on the device)
constexpr int kTreeGrid = 1024;                    // the tree's pass-1 blocks (fewer at small n)
constexpr int kCopyMaxGrid = 65536;                // the copy: one float4 a thread, capped
constexpr size_t kExhibitN = size_t(1) << 25;      // where the per-element row stalls, shown
constexpr int kSweepFirstLog2 = 10;                // the sweep: n = 2^10, 2^12, ..., 2^26
constexpr int kSweepLastLog2 = 26;
constexpr int kDeterminismRuns = 20;  // sums of the same random input, each row
constexpr uint32_t kSeed = 26;        // std::mt19937 seed of that input
constexpr unsigned kTrapN = 1u << 20; // trapezoids

constexpr bool isPowerOfTwo(size_t x) {
  return x != 0 && (x & (x - 1)) == 0;
}

static_assert(isPowerOfTwo(kBlock) && kBlock % kWarp == 0 && kBlock <= 1024, "block size");
static_assert(kWarpsPerBlock <= kWarp, "warp 0 adds the warp sums in one shuffle tree");
static_assert(kDefaultN <= kExactAnyOrder, "the per-element row is exact at the default n");
static_assert(kWarpRowMaxN == kExactAnyOrder * kWarp, "per-warp row: k = log2(32) = 5");
static_assert(kMaxN <= kExactAnyOrder * kBlock, "per-block row: k = log2(256) = 8");
static_assert(isPowerOfTwo(kTreeGrid) && kTreeGrid <= 4 * kBlock, "tree grid; pass 2 is 1 block");
static_assert(kMaxN / (size_t(kBlock) * kTreeGrid) <= kExactAnyOrder, "tree per-thread sum exact");
// Above 2^24 the tree runs kTreeGrid blocks (a power of two): 2^25 / (4 kBlock) = 2^15 > 1024.
static_assert(2 * kExactAnyOrder / (4 * kBlock) >= size_t(kTreeGrid), "tree grid above 2^24");
static_assert(kExhibitN == 2 * kExactAnyOrder, "the exhibit is the first power of two past 2^24");
static_assert((size_t(1) << kSweepLastLog2) <= kMaxN && kSweepFirstLog2 % 2 == 0, "sweep sizes");
static_assert(kTrapBlock == kWarp, "trapezoid blocks are one warp: full masks name every thread");
static_assert(kTrapN <= kExactAnyOrder && kTrapN % kTrapBlock == 0, "float(i) is exact");

// ==== Kernels, in row order.

// copy (the ceiling): out[i] = in[i] for i < n. Any block size, any grid (grid-stride). in and out
// must be 16-byte aligned (cudaMalloc gives 256): float4 body, scalar tail of n % 4 elements taken
// by the first threads of the grid. Writes out[0, n). Counts 8 bytes an element.
// Needs: nothing
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
// atomic per element: all n atomicAdds land on ONE address, applied one after another in an order
// the hardware picks. Assumes: blockDim.x == kBlock, grid = ceil(n / kBlock); *result 0 before the
// launch. Exact for ones while n <= 2^24: the float add rounds to nearest even, and 2^24 + 1 is a
// tie (research/day26-atomics.md [S1] [S2]).
// Launch: atomicPerElement<<<(n + kBlock - 1) / kBlock, kBlock>>>(in, n, result)
// Needs: kBlock
// ptx: atom
__global__ void atomicPerElement(const float *__restrict__ in, size_t n, float *result) {
  size_t i = size_t(blockIdx.x) * kBlock + threadIdx.x; // 64-bit before the multiply
  if (i < n) {
    atomicAdd(result, in[i]);
  }
}
// end snippet

// snippet: per-warp-per-block
// The sum of one warp's 32 values, in lane 0. Every lane of the warp must call it: kFullMask names
// all 32 lanes, and __shfl_down_sync needs every lane it names (research/day26-atomics.md [S3]).
// Lanes whose source lane would be past 31 keep their own value; only lane 0's result is the sum.
// Needs: kWarp, kFullMask
__device__ inline float warpSum(float v) {
  for (int offset = kWarp / 2; offset > 0; offset /= 2) {
    v += __shfl_down_sync(kFullMask, v, offset);
  }
  return v;
}

// The sum of a block's kBlock values, in thread 0; every thread calls it (it has a barrier), with
// blockDim.x == kBlock. warpSums: kWarpsPerBlock floats of shared memory, added by all of warp 0.
// Needs: kBlock, kWarp, kWarpsPerBlock, warpSum
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

// atomic per warp: each warp adds its 32 values in registers, then lane 0 does one atomicAdd:
// ceil(n / 32) atomics. Assumes: blockDim.x == kBlock, grid = ceil(n / kBlock); no lane returns
// before the shuffles (a lane past n adds 0). *result 0 before the launch; writes only *result.
// Launch: atomicPerWarp<<<(n + kBlock - 1) / kBlock, kBlock>>>(in, n, result)
// Needs: kBlock, kWarp, warpSum, kFullMask
// ptx: shfl atom
__global__ void atomicPerWarp(const float *__restrict__ in, size_t n, float *result) {
  size_t i = size_t(blockIdx.x) * kBlock + threadIdx.x;
  float v = i < n ? in[i] : 0.0f;
  v = warpSum(v);
  if (threadIdx.x % kWarp == 0 && i < n) { // lane 0's i is its warp's first element
    atomicAdd(result, v);
  }
}

// atomic per block: blockSum adds the block's kBlock values, then thread 0 does one atomicAdd:
// n / kBlock atomics. Assumes: blockDim.x == kBlock, grid = ceil(n / kBlock); *result 0 before
// the launch; writes only *result.
// Launch: atomicPerBlock<<<(n + kBlock - 1) / kBlock, kBlock>>>(in, n, result)
// Needs: kBlock, kWarp, kWarpsPerBlock, warpSum, blockSum, kFullMask
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
// end snippet

// tree (v8), one pass: each thread adds float4s in a grid-stride loop (and one element of the
// n % 4 tail), the block adds its threads, thread 0 writes out[blockIdx.x]. Pass 1 runs it over the
// input on treeGrid(n) blocks; pass 2 runs it on ONE block over those partials. No atomics, so the
// order of every addition is fixed: the same input gives the same bits every time. Launch:
// blockDim.x == kBlock, any grid >= 1; `in` 16-byte aligned (cudaMalloc'd). Writes out[0, grid).
// Needs: kBlock, kWarpsPerBlock, blockSum
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

// snippet: trap-helpers
// f(x) = x^2 + 1 with ONE rounding (fmaf, correctly rounded on device and host alike).
// Needs: <cmath>
__host__ __device__ inline float trapF(float x) {
  return fmaf(x, x, 1.0f);
}

// Area of trapezoid i, (f(x_i) + f(x_{i+1})) * h / 2 with x_i = a + i h, in explicit fmaf so host
// and device round alike. With a = 0, h = 2^-19: x_i exact (i <= 2^20), h / 2 a power of two, so
// each term has exactly two roundings: inside f, and the sum of the two f values.
// Needs: kTrapA, trapF, <cmath>
__host__ __device__ inline float trapezoidArea(unsigned int i, float h) {
  float x0 = fmaf(float(i), h, kTrapA);
  float x1 = fmaf(float(i + 1), h, kTrapA);
  return (trapF(x0) + trapF(x1)) * (0.5f * h);
}
// end snippet

// trapezoid, one atomic per thread: thread i adds trapezoid i into *result (n atomics on one
// address). Launch: blockDim.x == kTrapBlock (32), grid = ceil(n / 32), n <= 2^24 (32-bit index,
// float(i) exact). *result must be 0 before the launch; writes only *result.
// Needs: kTrapBlock, trapezoidArea
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
// Needs: kTrapBlock, trapezoidArea, warpSum
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
// trapezoid, shared-memory warp sum then one atomic per block. Since Volta a lane may read another
// lane's slot only after a __syncwarp() both pass (research/day26-atomics.md [S4] [S5]): the first
// orders the stores s[lane] = v before the first reads, the one ending a step its writes before
// the next step's reads, the one between a step's read and write is the pattern for steps whose
// reads and writes overlap. Assumes: blockDim.x == kTrapBlock == 32, grid = ceil(n / 32), *result
// 0 before. The Launch line's n = 256, h = 1 keep every sum exact (terms k + 1/2, below 2^23).
// Launch: trapSharedPerBlock<<<(n + 31) / 32, kTrapBlock>>>(h, n, result); with n = 256, h = 1.0f,
//   want = sum of trapezoidArea(i, h) for i < n
// Needs: kTrapBlock, kTrapA, trapF, trapezoidArea, <cmath>
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
// Needs: kTrapBlock, trapezoidArea
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

// The check's helper (not a row): *count += the number of i < n with a[i] != b[i] (a NaN never
// equals anything, so an element the copy did not write counts). Any block size, any grid
// (grid-stride); *count must be 0 before.
// Needs: nothing
__global__ void countDifferences(const float *a, const float *b, size_t n,
                                 unsigned long long *count) {
  unsigned long long mine = 0;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x) {
    mine += !(a[i] == b[i]);
  }
  if (mine != 0) {
    atomicAdd(count, mine);
  }
}

// Fills p[0, count) with `value`. Any block size, any grid (grid-stride).
// Needs: nothing
__global__ void fillKernel(float *p, size_t count, float value) {
  size_t stride = size_t(gridDim.x) * blockDim.x;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    p[i] = value;
  }
}

// ==== Host side: the rows, their launchers, the exact check.

// The device buffers of a run. The lesson cudaMallocs them; the test harness passes guarded ones.
struct Buffers {
  float *in = nullptr;                 // the input (16-byte aligned)
  float *out = nullptr;                // the copy's destination (16-byte aligned)
  float *partials = nullptr;           // the tree's pass-1 partials, kTreeGrid floats
  float *result = nullptr;             // every sum row's one float (the atomic rows' accumulator)
  unsigned long long *count = nullptr; // the copy check's counter of differences
};

enum class Row { Copy, PerElement, PerWarp, PerBlock, Tree };
constexpr int kRowCount = 5;
constexpr Row kRows[kRowCount] = {Row::Copy, Row::PerElement, Row::PerWarp, Row::PerBlock,
                                  Row::Tree};
const char *const kRowNames[kRowCount] = {"copy", "atomic per element", "atomic per warp",
                                          "atomic per block", "tree (v8)"};
const char *rowName(Row r) {
  return kRowNames[int(r)];
}
bool isAtomicRow(Row r) {
  return r == Row::PerElement || r == Row::PerWarp || r == Row::PerBlock;
}

// Why row r would not be exact at n, or nullptr when it is. A row that is not exact is not run: a
// float accumulator that stalls must never print "exact".
const char *rowSkipReason(Row r, size_t n) {
  return r == Row::PerElement && n > kExactAnyOrder
             ? "a float that adds 1.0f stops growing at 2^24 = 16777216 (see the exhibit)"
         : r == Row::PerWarp && n > kWarpRowMaxN
             ? "warp sums of 32 are exact only while the running sum stays <= 2^29"
             : nullptr;
}

// The tree's pass-1 blocks: at least one float4 a thread, at most kTreeGrid.
unsigned int treeGrid(size_t n) {
  return unsigned(std::min<size_t>((n + 4 * kBlock - 1) / (4 * kBlock), kTreeGrid));
}

// Blocks the row launches: the copy one float4 a thread (capped), the tree its pass 1, the atomic
// rows one element a thread.
unsigned int rowGrid(Row r, size_t n) {
  size_t copyBlocks = std::min<size_t>((n / 4 + kBlock - 1) / kBlock, kCopyMaxGrid);
  return r == Row::Copy   ? unsigned(std::max<size_t>(1, copyBlocks))
         : r == Row::Tree ? treeGrid(n)
                          : unsigned((n + kBlock - 1) / kBlock);
}

// atomicAdds on the one result address per call.
size_t rowAtomics(Row r, size_t n) {
  return r == Row::PerElement ? n
         : r == Row::PerWarp  ? (n + kWarp - 1) / kWarp
         : r == Row::PerBlock ? (n + kBlock - 1) / kBlock
                              : 0;
}

// Bytes a row moves: the copy reads and writes n floats; the tree reads n floats and then its
// partials; the atomic rows read n floats (the atomics themselves are not counted).
double rowBytes(Row r, size_t n) {
  double bytes = double(n) * sizeof(float);
  return r == Row::Copy ? 2 * bytes : r == Row::Tree ? bytes + treeGrid(n) * 4.0 : bytes;
}

// Enqueues one run of row r over in[0, n) on the default stream: for an atomic row the
// cudaMemsetAsync that zeroes the accumulator AND the kernel (so a timed call pays for both).
// Checks each launch. No synchronization.
void launchRow(Row r, const Buffers &b, size_t n) {
  unsigned int blocks = rowGrid(r, n);
  if (isAtomicRow(r)) {
    CUDA_CHECK(cudaMemsetAsync(b.result, 0, sizeof(float), 0));
  }
  switch (r) {
  case Row::Copy:
    copyKernel<<<blocks, kBlock>>>(b.in, b.out, n);
    break;
  case Row::PerElement:
    atomicPerElement<<<blocks, kBlock>>>(b.in, n, b.result);
    break;
  case Row::PerWarp:
    atomicPerWarp<<<blocks, kBlock>>>(b.in, n, b.result);
    break;
  case Row::PerBlock:
    atomicPerBlock<<<blocks, kBlock>>>(b.in, n, b.result);
    break;
  case Row::Tree:
    treePass<<<blocks, kBlock>>>(b.in, n, b.partials);
    CUDA_CHECK(cudaGetLastError());
    treePass<<<1, kBlock>>>(b.partials, blocks, b.result);
    break;
  }
  CUDA_CHECK(cudaGetLastError());
}

// Enqueues NaN poison (0xFF bytes) over what row r writes: the copy's destination, or the
// partials and the result. An atomic row's own memset to 0 comes after it, inside its call.
void poisonRow(Row r, const Buffers &b, size_t n) {
  if (r == Row::Copy) {
    CUDA_CHECK(cudaMemsetAsync(b.out, 0xFF, n * sizeof(float), 0));
  } else {
    CUDA_CHECK(cudaMemsetAsync(b.partials, 0xFF, kTreeGrid * sizeof(float), 0));
    CUDA_CHECK(cudaMemsetAsync(b.result, 0xFF, sizeof(float), 0));
  }
}

// Fills in[0, n) with ones and waits: the input of every ones run.
void fillOnes(const Buffers &b, size_t n) {
  fillKernel<<<1024, kBlock>>>(b.in, n, 1.0f);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
}

struct Check {
  bool ok;
  double got;
  double want;
};

// The exact check of what row r left (call after a synchronization). Sum rows: the one float ==
// want (n for the lesson's ones; the harness passes the count of ones of its random 0/1 input);
// NaN poison left unwritten fails. Copy: every out[i] == in[i], counted on the device (no host
// copy of the buffers, so n = 2^32 needs no 16 GiB host buffer); got = equal elements, want = n.
Check checkRow(Row r, const Buffers &b, size_t n, double want) {
  if (r == Row::Copy) {
    unsigned long long diff = 0;
    CUDA_CHECK(cudaMemset(b.count, 0, sizeof(diff)));
    countDifferences<<<1024, kBlock>>>(b.out, b.in, n, b.count);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(&diff, b.count, sizeof(diff), cudaMemcpyDeviceToHost));
    return {diff == 0, double(n - diff), double(n)};
  }
  float got = 0.0f;
  CUDA_CHECK(cudaMemcpy(&got, b.result, sizeof(float), cudaMemcpyDeviceToHost));
  return {double(got) == want, double(got), want};
}

// Counts one check; a failure prints got, want and the difference, and is counted.
struct Tally {
  int checks = 0;
  int failures = 0;
  bool expect(const Check &c, const char *what, size_t n, const char *when) {
    ++checks;
    if (!c.ok) {
      ++failures;
      std::printf("CHECK FAILED: %s (%s) n=%zu got %.10g want %.10g (off by %.10g)\n", what, when,
                  n, c.got, c.want, c.got - c.want);
    }
    return c.ok;
  }
};

// ==== The trapezoidal rule: launches, reference, bounds.
enum class Trap { PerThread, ShufflePerBlock, SharedPerBlock, LockStepRace };
const char *const kTrapNames[] = {"trap: atomic per thread", "trap: shuffle, atomic per block",
                                  "trap: shared + __syncwarp, atomic per block",
                                  "trap: lock-step shared (race exhibit)"};
// The four kernels share one signature, so Trap indexes this table.
void (*const kTrapKernels[])(float, unsigned int, float *) = {
    trapAtomicPerThread, trapShufflePerBlock, trapSharedPerBlock, trapLockStepRace};

float trapH() {
  return (kTrapB - kTrapA) / float(kTrapN); // 2 / 2^20 = 2^-19, exact
}
unsigned int trapGrid() {
  return (kTrapN + kTrapBlock - 1) / kTrapBlock;
}

// Enqueues one run: zero the accumulator, launch the kernel (both inside a timed call).
void launchTrap(Trap k, float *result) {
  CUDA_CHECK(cudaMemsetAsync(result, 0, sizeof(float), 0));
  kTrapKernels[int(k)]<<<trapGrid(), kTrapBlock>>>(trapH(), kTrapN, result);
  CUDA_CHECK(cudaGetLastError());
}

// gamma_k = k u / (1 - k u), the classic bound on a product of k factors (1 + delta), |delta| <= u.
double gammaK(double k, double u) {
  return k * u / (1.0 - k * u);
}

// What the trapezoid rows are checked against. hostSum: the double sum, on the host, of the SAME
// float terms (trapezoidArea is bit-identical on both sides). Every term is a multiple of 2^-42
// ((f + f), a float in [2, 10], times h / 2 = 2^-20) and the sum stays below 2^3, so every partial
// sum needs at most 45 of a double's 53 bits: hostSum is exact.
// Bound 1, device against hostSum: every term passes through at most d float additions, each
// with relative error <= u = 2^-24, all terms positive, so |result - hostSum| <= gamma_d hostSum
// [Higham 2002, §4.2] in ANY order of that depth (atomics pick the order). d: per thread 2^20 (all
// through the one accumulator: about 1/15 of the sum, a worst case no run nears); per block
// 5 + 2^15 (the warp's log2(32) adds, then 2^15 block sums through the accumulator: about 1/512).
// gamma_{N-1} with u = 2^-53 covers the host's own double sum should the interval change.
// Bound 2, device against the integral: bound 1 + the terms' rounding (two a term, all positive:
// |hostSum - S| <= gamma_2 S) + the rule's error (b - a)^3 / (12 N^2) max|f''|, f'' = 2 (exact for
// x^2 + 1: each interval's trapezoid exceeds the integral by h^3 / 6).
// Sources: research/day26-atomics.md [S6] (summation bounds) and [S7] (the trapezoid rule).
struct TrapReference {
  double hostSum;     // exact double sum of the device's float terms
  double exact;       // the integral: (b^3 - a^3) / 3 + (b - a)
  double termBound;   // gamma_2 * S: the rounding of the terms
  double quadBound;   // (b - a)^3 / (12 N^2) * max|f''|: the rule's error
  double doubleBound; // the host double sum's own worst case (0 here in fact; kept general)
};

TrapReference trapReference() {
  float h = trapH();
  double sum = 0.0;
  for (unsigned int i = 0; i < kTrapN; ++i) {
    sum += double(trapezoidArea(i, h));
  }
  double a = kTrapA, b = kTrapB, n = kTrapN, u = std::ldexp(1.0, -24);
  return {sum, (b * b * b - a * a * a) / 3.0 + (b - a),
          gammaK(2, u) / (1.0 - gammaK(2, u)) * sum, // S <= hostSum / (1 - gamma_2)
          (b - a) * (b - a) * (b - a) / (12.0 * n * n) * 2.0,
          gammaK(n - 1, std::ldexp(1.0, -53)) * sum};
}

double trapHostBound(Trap k, const TrapReference &ref) {
  double depth = k == Trap::PerThread ? double(kTrapN) : std::log2(kTrapBlock) + trapGrid();
  return gammaK(depth, std::ldexp(1.0, -24)) * ref.hostSum + ref.doubleBound;
}
double trapIntegralBound(Trap k, const TrapReference &ref) {
  return trapHostBound(k, ref) + ref.termBound + ref.quadBound;
}

// Checks the float the device left in *result against both bounds (NaN poison fails); want is
// hostSum.
Check checkTrap(Trap k, const float *result, const TrapReference &ref) {
  float got = 0.0f;
  CUDA_CHECK(cudaMemcpy(&got, result, sizeof(float), cudaMemcpyDeviceToHost));
  bool ok = std::fabs(got - ref.hostSum) <= trapHostBound(k, ref) &&
            std::fabs(got - ref.exact) <= trapIntegralBound(k, ref);
  return {ok, double(got), ref.hostSum};
}

// ==== timeKernel: CUDA events around batches of back-to-back launches of ONE configuration.
constexpr int kTimingBatches = 11;    // odd, so the median is one batch
constexpr int kLaunchesPerBatch = 20; // back-to-back launches between one event pair

struct Timing {
  double ms;     // median over batches of (batch ms / launches): ms per launch
  double spread; // (slowest batch - fastest batch) / median, in percent
};

// launch: enqueues one run on the default stream and checks cudaGetLastError(). poison: enqueues
// cudaMemsetAsync(0xFF) of everything the run writes (NaN in a float), on the default stream.
// Warm-up first (lazy loading makes a kernel's first launch pay its module load); then before
// EACH batch poison(), outside the event pair, then the batch. So what the device holds when this
// returns is what the LAST timed launch wrote, and every batch started from poison: a timed
// launch that writes nothing, or adds to what an earlier launch left, fails the check after it.
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

// Every timed row: poison, run once, synchronize, check ("before timing"); time with
// timeKernel(launch, poison); check what the LAST timed launch left ("after timing"). ok: both
// checks passed.
Timing measure(const std::function<void()> &launch, const std::function<void()> &poison,
               const std::function<Check()> &check, const char *what, size_t n, Tally &tally,
               bool &ok) {
  poison();
  launch();
  CUDA_CHECK(cudaDeviceSynchronize());
  ok = tally.expect(check(), what, n, "before timing");
  Timing t = timeKernel(launch, poison);
  CUDA_CHECK(cudaDeviceSynchronize());
  ok = tally.expect(check(), what, n, "after timing") && ok;
  return t;
}

Timing measureRow(Row r, const Buffers &b, size_t n, Tally &tally, bool &ok) {
  return measure([&] { launchRow(r, b, n); }, [&] { poisonRow(r, b, n); },
                 [&] { return checkRow(r, b, n, double(n)); }, rowName(r), n, tally, ok);
}

#ifndef REDUCTION_HARNESS
// ==== The runs: the table (+ exhibit, trapezoid, determinism), the sweep, the race demo.

using Cells = std::vector<std::string>;
static std::string cell(const char *format, double v) { // counts up to 2^32 print exactly: %.0f
  char s[64];
  std::snprintf(s, sizeof(s), format, v);
  return s;
}

// Prints rows[0] (the header), the |---| rule, then the other rows as a Markdown table, each
// column as wide as its widest cell and right-aligned if its first cell under the rule is a number.
static void printTable(std::vector<Cells> rows) {
  rows.insert(rows.begin() + 1, Cells(rows[0].size()));
  std::vector<std::string> lines(rows.size());
  for (size_t c = 0; c < rows[0].size(); ++c) {
    size_t w = 0;
    for (const Cells &r : rows) {
      w = std::max(w, r[c].size());
    }
    bool number = rows.size() > 2 && rows[2][c][0] >= '0' && rows[2][c][0] <= '9';
    for (size_t i = 0; i < rows.size(); ++i) {
      const std::string &s = rows[i][c], pad(w - s.size(), i == 1 ? '-' : ' ');
      lines[i] += i == 1 ? "|-" + pad + "-" : "| " + (number ? pad + s : s + pad) + " ";
    }
  }
  for (const std::string &line : lines) {
    std::printf("%s|\n", line.c_str());
  }
}

static void runTable(const Buffers &b, size_t n, const cudaDeviceProp &prop, Tally &tally) {
  fillOnes(b, n);
  std::vector<Cells> rows{{"row", "produces", "blocks", "atomics", "MB", "us", "spread %", "GB/s",
                           "% of copy", "check"}};
  std::string skipped;
  double copyGBs = 0.0;
  for (Row r : kRows) {
    bool ok = true;
    if (const char *why = rowSkipReason(r, n)) {
      skipped +=
          std::string(rowName(r)) + ": not run at n = " + std::to_string(n) + ": " + why + ".\n";
      continue;
    }
    Timing t = measureRow(r, b, n, tally, ok);
    double mb = rowBytes(r, n) / 1e6, gbs = mb / t.ms;
    copyGBs = r == Row::Copy ? gbs : copyGBs; // the copy always runs, first
    rows.push_back({rowName(r), r == Row::Copy ? "copy" : "one float", cell("%.0f", rowGrid(r, n)),
                    cell("%.0f", double(rowAtomics(r, n))), cell("%.3f", mb),
                    cell("%.2f", 1000 * t.ms), cell("%.1f", t.spread), cell("%.1f", gbs),
                    cell("%.1f", 100 * gbs / copyGBs), ok ? "exact" : "FAIL"});
  }
  std::printf("\nn = %zu floats (%.1f MiB, %s the %d MiB L2), %d threads a block; median of %d "
              "batches of %d calls\n\n",
              n, n * 4.0 / (1 << 20), n * 4.0 <= prop.l2CacheSize ? "fits in" : "larger than",
              prop.l2CacheSize / (1024 * 1024), kBlock, kTimingBatches, kLaunchesPerBatch);
  printTable(rows);
  std::printf(
      "%s\nEach atomic row's timed call is cudaMemsetAsync(result, 0) + the kernel, both inside\n"
      "the timed region (the accumulator must start at 0 every call); the tree's call is its two\n"
      "kernels (it overwrites its result). `atomics` counts atomicAdds on the ONE result address.\n"
      "The copy row counts bytes read + written (8 a float); the sum rows count bytes read (4 a\n"
      "float, plus the tree's partials). A sum only reads, so it can pass 100 %% of copy: the\n"
      "percentage compares two numbers from this run, not a limit.\n",
      skipped.c_str());
}

// The exhibit, never counted: the per-element row over 2^25 ones stalls at 2^24.
static void runExhibit(const Buffers &b) {
  fillOnes(b, kExhibitN);
  launchRow(Row::PerElement, b, kExhibitN);
  CUDA_CHECK(cudaDeviceSynchronize());
  double got = checkRow(Row::PerElement, b, kExhibitN, double(kExhibitN)).got;
  std::printf("\nexhibit (not a check): atomic per element at n = %zu (2^25) returned %.0f, want "
              "%zu (off by %.0f elements).\n%s",
              kExhibitN, got, kExhibitN, double(kExhibitN) - got,
              got == double(kExactAnyOrder)
                  ? "From 16777216 (2^24) on, x + 1.0f rounds back to x: the next float is "
                    "16777218 and the tie\nrounds to even, so every later atomicAdd of 1.0f "
                    "changes nothing.\n"
                  : "Not the 16777216 where one-at-a-time adds of 1.0f stall: some adds were "
                    "combined before\nthey reached the address.\n");
}

static void runTrapezoid(const Buffers &b, Tally &tally) {
  TrapReference ref = trapReference();
  std::printf("\ntrapezoidal rule: f(x) = x^2 + 1 on [%g, %g], N = %u trapezoids (h = 2^-19), %d "
              "threads a block, %u blocks\nexact integral 14/3 = %.15f; host sum of the same float "
              "terms (double, exact) = %.15f\n\n",
              double(kTrapA), double(kTrapB), kTrapN, kTrapBlock, trapGrid(), ref.exact,
              ref.hostSum);
  std::vector<Cells> rows{{"row", "atomics", "us", "spread %", "result", "error vs host",
                           "host bound", "error vs integral", "integral bound", "check"}};
  for (Trap k : {Trap::PerThread, Trap::ShufflePerBlock, Trap::SharedPerBlock}) {
    Check c{};
    bool ok = true;
    Timing t = measure([&] { launchTrap(k, b.result); },
                       [&] { CUDA_CHECK(cudaMemsetAsync(b.result, 0xFF, sizeof(float), 0)); },
                       [&] { return c = checkTrap(k, b.result, ref); }, kTrapNames[int(k)], kTrapN,
                       tally, ok);
    rows.push_back({kTrapNames[int(k)], cell("%.0f", k == Trap::PerThread ? kTrapN : trapGrid()),
                    cell("%.2f", 1000 * t.ms), cell("%.1f", t.spread), cell("%.9f", c.got),
                    cell("%.3g", std::fabs(c.got - ref.hostSum)),
                    cell("%.3g", trapHostBound(k, ref)), cell("%.3g", std::fabs(c.got - ref.exact)),
                    cell("%.3g", trapIntegralBound(k, ref)), ok ? "in bound" : "FAIL"});
  }
  printTable(rows);
  std::printf(
      "\nhost bound = gamma_d x (host sum), gamma_d = d u / (1 - d u), u = 2^-24, d = float\n"
      "additions on a term's longest path: 2^20 when every thread adds into the one\n"
      "accumulator, 5 + 2^15 when each block adds its 32 terms first (any order of the\n"
      "atomics). integral bound = host bound + gamma_2 x (sum) for the rounding of each term\n"
      "+ (b - a)^3 / (12 N^2) x max|f''| = %.3g for the rule itself. Worst cases: the errors\n"
      "measured are far below them. Each timed call includes the cudaMemsetAsync of the result.\n",
      ref.quadBound);
}

// The same fixed-seed random input, summed kDeterminismRuns times by each sum row.
static void runDeterminism(const Buffers &b, size_t nMax, Tally &tally) {
  size_t n = std::min(nMax, kExactAnyOrder);
  std::mt19937 gen(kSeed);
  std::vector<float> host(n);
  double exactSum = 0.0;
  for (float &x : host) {
    x = float(gen() >> 8) * 0x1p-24f; // uniform in [0, 1), 24 random bits: portable
    exactSum += double(x);
  }
  CUDA_CHECK(cudaMemcpy(b.in, host.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  std::printf("\ndeterminism: n = %zu random floats in [0, 1) (std::mt19937, seed %u), each row "
              "summed %d times; host double sum %.3f\n\n",
              n, kSeed, kDeterminismRuns, exactSum);
  std::vector<Cells> rows{{"row", "runs", "distinct bit patterns", "smallest", "largest", "check"}};
  for (Row r : {Row::PerElement, Row::PerWarp, Row::PerBlock, Row::Tree}) {
    std::set<uint32_t> bits; // the distinct bit patterns
    float lo = INFINITY, hi = -INFINITY;
    for (int run = 0; run < kDeterminismRuns; ++run) {
      poisonRow(r, b, n);
      launchRow(r, b, n);
      CUDA_CHECK(cudaDeviceSynchronize());
      float got = float(checkRow(r, b, n, 0.0).got);
      uint32_t u = 0;
      std::memcpy(&u, &got, sizeof(u));
      bits.insert(u);
      lo = std::min(lo, got);
      hi = std::max(hi, got);
    }
    double distinct = double(bits.size());
    bool tree = r == Row::Tree; // a fixed order of additions must give one bit pattern: counted
    bool ok = !tree || tally.expect({distinct == 1, distinct, 1.0},
                                    "determinism: tree (v8) bit patterns", n, "20 runs");
    rows.push_back(
        {rowName(r), cell("%.0f", kDeterminismRuns), cell("%.0f", distinct), cell("%.3f", lo),
         cell("%.3f", hi),
         tree ? (ok ? "one pattern (checked)" : "FAIL")
              : (distinct == 1 ? "one pattern (atomics: allowed)" : "varies (atomics: allowed)")});
  }
  printTable(rows);
  std::printf(
      "\nThe atomic rows add in whatever order the atomics reach the address; float addition is\n"
      "not associative, so the rounding, and the bits, can change from run to run. The tree's\n"
      "order is fixed by its code, so it must give one bit pattern: that is checked.\n");
}

// from[k]: the smallest swept n from which the tree is faster than atomic row k at that n and at
// every larger n where the row ran (one noisy small size cannot make a crossover); 0: none.
static void runSweep(const Buffers &b, const cudaDeviceProp &prop, Tally &tally) {
  std::vector<Cells> rows{{"n", "MB", "input", "copy us", "per element us", "per warp us",
                           "per block us", "tree us", "max spread %", "check"}};
  const int tree = kRowCount - 1;
  size_t from[kRowCount] = {};
  for (int lg = kSweepFirstLog2; lg <= kSweepLastLog2; lg += 2) {
    size_t n = size_t(1) << lg;
    fillOnes(b, n);
    rows.push_back({cell("%.0f", double(n)), cell("%.3f", n * 4.0 / 1e6),
                    n * 4.0 <= prop.l2CacheSize ? "L2-warm" : "DRAM"});
    double us[kRowCount], spread = 0.0; // us per call; < 0: skipped
    bool allOk = true;
    for (int k = 0; k < kRowCount; ++k) {
      bool ok = true;
      us[k] = -1.0;
      if (rowSkipReason(kRows[k], n) == nullptr) {
        Timing t = measureRow(kRows[k], b, n, tally, ok);
        us[k] = 1000 * t.ms;
        spread = std::max(spread, t.spread);
      }
      allOk = allOk && ok;
      rows.back().push_back(us[k] < 0 ? "skipped" : cell("%.2f", us[k]));
    }
    for (int k = 1; k < tree; ++k) {
      from[k] = us[k] < 0 ? from[k] : us[tree] >= us[k] ? 0 : from[k] != 0 ? from[k] : n;
    }
    rows.back().insert(rows.back().end(), {cell("%.1f", spread), allOk ? "exact" : "FAIL"});
  }
  std::printf("\nsweep: us per call (median of %d batches of %d calls); L2 = %d MiB; atomic rows "
              "include their cudaMemsetAsync\n\n",
              kTimingBatches, kLaunchesPerBatch, prop.l2CacheSize / (1024 * 1024));
  printTable(rows);
  std::printf("\n`input`: L2-warm = the input fits in L2, so repeated calls read it from L2; DRAM "
              "= it does not.\n`skipped`: the per-element row is exact only up to 2^24 = 16777216 "
              "(a float that adds\n1.0f stops growing there; see the exhibit of the default "
              "run).\n\n");
  for (int k = 1; k < tree; ++k) {
    std::string at = from[k] == 0
                         ? "none in range (the atomic row is as fast or faster at the "
                           "largest n it ran)"
                         : "the tree is faster from n = " + std::to_string(from[k]) + " (2^" +
                               std::to_string(int(std::log2(double(from[k])))) + ") on";
    std::printf("crossover, %s: %s\n", rowName(kRows[k]), at.c_str());
  }
}

// The race exhibit, run once for compute-sanitizer racecheck (which must report its hazard).
static void runRaceDemo(const Buffers &b, Tally &tally) {
  TrapReference ref = trapReference();
  CUDA_CHECK(cudaMemset(b.result, 0xFF, sizeof(float)));
  launchTrap(Trap::LockStepRace, b.result);
  CUDA_CHECK(cudaDeviceSynchronize());
  Check c = checkTrap(Trap::LockStepRace, b.result, ref);
  tally.expect(c, kTrapNames[int(Trap::LockStepRace)], kTrapN, "race demo");
  std::printf("race demo (lock-step shared-memory warp sum, volatile, no __syncwarp): %u "
              "trapezoids gave %.9f, integral %.9f, error %.3g: %s\nA good sum proves nothing "
              "here: run it under `compute-sanitizer --tool racecheck` to see the hazard.\n",
              kTrapN, c.got, ref.exact, std::fabs(c.got - ref.exact),
              c.ok ? "a good sum" : "a WRONG sum");
}

// ==== Options and main.
static const char *kUsage =
    "usage: atomics [--n N | --sweep | --race-demo] [--help]\n"
    "  --n N        elements, all 1.0f (default 16777216 = 2^24, the largest n at which one\n"
    "               atomicAdd per element is exact): any N from 1 to 2^24, above that a power of\n"
    "               two up to 2^32 where device memory allows. Per element runs up to 2^24, per\n"
    "               warp up to 2^29 (a row outside its range is skipped, the reason printed).\n"
    "  --sweep      n = 2^10, 2^12, ..., 2^26: us per call of every row and the crossovers.\n"
    "  --race-demo  the lock-step shared-memory warp sum (volatile, no __syncwarp), run once,\n"
    "               for compute-sanitizer --tool racecheck.\n"
    "exit codes: 0 all checks passed, 1 a check failed or a CUDA error, 2 bad usage.\n";

static int usageError(const std::string &why) {
  std::fprintf(stderr, "error: %s (see --help)\n", why.c_str());
  return 2;
}

int main(int argc, char **argv) {
  size_t n = kDefaultN;
  bool sweep = false, raceDemo = false;
  int runs = 0; // every pass of the loop is one of --n, --sweep, --race-demo (the rest return)
  for (int i = 1; i < argc; ++i, ++runs) {
    std::string a = argv[i], v = i + 1 < argc ? argv[i + 1] : "";
    if (a == "--help" || a == "-h") {
      std::printf("%s", kUsage);
      return 0;
    } else if (a == "--sweep" || a == "--race-demo") {
      (a == "--sweep" ? sweep : raceDemo) = true;
    } else if (a == "--n" && !v.empty() && v.size() <= 10 &&
               v.find_first_not_of("0123456789") == std::string::npos &&
               (n = std::stoull(v)) >= 1 && n <= kMaxN) { // digits only, 1 ... 2^32
      ++i;
    } else {
      return usageError(a == "--n" ? "--n needs a whole number from 1 to 4294967296 (2^32), "
                                     "digits only"
                                   : "unknown option '" + a + "'");
    }
  }
  if (runs > 1 || (n > kExactAnyOrder && !isPowerOfTwo(n))) {
    return usageError(runs > 1 ? "--n, --sweep and --race-demo are separate runs: choose one"
                               : "--n " + std::to_string(n) +
                                     ": above 16777216 (2^24) a float sum of ones is exact only "
                                     "for a power of two");
  }
  // Floats of input (the exhibit reads 2^25) and of copy destination; refused before allocating.
  size_t inN = sweep ? size_t(1) << kSweepLastLog2 : raceDemo ? 1 : std::max(n, kExhibitN);
  size_t outN = sweep ? inN : raceDemo ? 1 : n;
  size_t freeBytes = 0, totalBytes = 0, need = (inN + outN + kTreeGrid + 3) * sizeof(float);
  CUDA_CHECK(cudaMemGetInfo(&freeBytes, &totalBytes));
  if (need > freeBytes) {
    return usageError("this run needs " + std::to_string(need >> 20) + " MiB of device memory; " +
                      std::to_string(freeBytes >> 20) + " MiB are free");
  }
  cudaDeviceProp prop;
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("GPU: %s | cc %d.%d | %d SMs | %zu KiB shared/block | %d MiB L2 | warp %d\n",
              prop.name, prop.major, prop.minor, prop.multiProcessorCount,
              prop.sharedMemPerBlock / 1024, prop.l2CacheSize / (1024 * 1024), prop.warpSize);
  if (prop.warpSize != kWarp) {
    std::printf("error: the shuffles and one-warp blocks need %d-lane warps; this device has %d\n",
                kWarp, prop.warpSize);
    return 1;
  }
  Buffers b;
  CUDA_CHECK(cudaMalloc(&b.in, inN * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&b.out, outN * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&b.partials, kTreeGrid * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&b.result, sizeof(float)));
  CUDA_CHECK(cudaMalloc(&b.count, sizeof(unsigned long long)));
  Tally tally;
  if (sweep) {
    runSweep(b, prop, tally);
  } else if (raceDemo) {
    runRaceDemo(b, tally);
  } else {
    std::printf("day 26: one float by atomicAdd on one address, against the two-pass tree\n");
    runTable(b, n, prop, tally);
    runExhibit(b);
    runTrapezoid(b, tally);
    runDeterminism(b, n, tally);
  }
  for (void *p :
       {(void *)b.in, (void *)b.out, (void *)b.partials, (void *)b.result, (void *)b.count}) {
    CUDA_CHECK(cudaFree(p));
  }
  if (tally.failures == 0) {
    std::printf("\nRESULT: PASS (%d checks, all exact)\n", tally.checks);
    return 0;
  }
  std::printf("\nRESULT: FAIL (%d of %d checks failed)\n", tally.failures, tally.checks);
  return 1;
}
#endif // REDUCTION_HARNESS
