// Day 25: the copy ceiling and the v4–v8 reduction ladder (the README explains the table).
// n floats, all 1.0f (the right sum is n); one table, each row one change from the row above:
//   copy  the ceiling: a float4 copy of the same buffer; its GB/s counts bytes read + written.
//   v4    day 24's last rung: two loads a thread during the load, its own grid of n/512 blocks.
//   v4c   cascade: 1024 blocks walk the input grid-stride, adding in a register before the tree.
//   v5    the shared tree stops at 64 live values; warp 0 finishes with __shfl_down_sync.
//   v6    v5 with the block size a template argument: the tree's bounds are compile-time constants.
//   v7    v6 with float4 (16-byte) loads: a scalar head up to 16-byte alignment, a scalar tail.
//   v8    v7 run twice: pass 1 leaves one partial a block, pass 2 (one block) adds them.
// v4..v7 leave partials (one float a block) still to be added; only v8 leaves ONE float, the sum.
// Checked, exactly: every row's first run and what its LAST TIMED launch left (outputs NaN-poisoned
// before each batch). NOT checked: speed. Exact for any n <= 2^24; above, n and grid powers of two.
// Edge matrix, random 0/1 input, guard bands: tests/harness/day25-reduction-2.cu.
// Exit: 0 every check passed; 1 a check failed, a CUDA error, or warp size != 32; 2 bad usage.
// Build (a Colab T4 is sm_75, an H200 sm_90) and run (knobs and experiments: --help):
//   nvcc -std=c++17 -O3 -arch=sm_75 -o reduction_2 code/day25-reduction-2/reduction_2.cu
//   ./reduction_2

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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

constexpr int kBlock = 256; // threads a block, every reduction row
constexpr int kWarp = 32;   // lanes a warp (checked on the device too)
// snippet: full-mask
constexpr unsigned kFullMask = 0xffffffffu; // all 32 lanes: the mask of every shuffle
// end snippet
constexpr size_t kDefaultN = size_t(1) << 26;      // 2^26 floats = 256 MiB
constexpr int kDefaultGrid = 1024;                 // blocks of the grid-stride rows v4c..v8
constexpr size_t kExactAnyOrder = size_t(1) << 24; // a float holds every integer up to 2^24
constexpr size_t kMaxN = size_t(1) << 32;          // largest --n (needs 2 x 16 GiB on the device)
constexpr int kMaxGrid = 65536;                    // largest --blocks

// The exactness argument. v5..v8 end in one warp after a tree down to 64: a power-of-two block.
static_assert((kBlock & (kBlock - 1)) == 0 && kBlock >= 2 * kWarp && kBlock <= 1024, "block size");
// Above 2^24 a sum of ones is exact only if every partial is 0 or one power of two: n and the grid
// powers of two (no offset) give every thread the same power-of-two count, or none.
static_assert(kDefaultN != 0 && (kDefaultN & (kDefaultN - 1)) == 0 && kDefaultGrid != 0 &&
                  (kDefaultGrid & (kDefaultGrid - 1)) == 0,
              "default n, grid: powers of 2");
// At the default n, v4's grid covers n exactly; every grid-stride thread adds as many float4s.
static_assert(kDefaultN % (2 * kBlock) == 0, "v4's grid covers the default n exactly");
static_assert(kDefaultN % (size_t(4) * kBlock * kDefaultGrid) == 0, "equal float4 count a thread");
static_assert(kDefaultN / (size_t(kBlock) * kDefaultGrid) <= kExactAnyOrder,
              "per-thread sum exact");

// ==== Kernels, in row order. =====================================================================

// snippet: helpers
// True for 1, 2, 4, 8, ...: block sizes, and the n and grids that keep large sums exact.
// Needs: nothing
__host__ __device__ constexpr bool isPowerOfTwo(size_t x) {
  return x != 0 && (x & (x - 1)) == 0;
}

// Floats from `p` to the next 16-byte boundary (0..3), at most n: the head v7 and copy peel.
// Needs: <cstdint> (uintptr_t)
__host__ __device__ inline size_t headToAlign16(const float *p, size_t n) {
  size_t past = (reinterpret_cast<uintptr_t>(p) / sizeof(float)) % 4; // floats past a boundary
  size_t head = past == 0 ? 0 : 4 - past;
  return head < n ? head : n;
}
// end snippet

// copy (the ceiling): out[i] = in[i] for i < n. Any block size, any grid (grid-stride). in and out
// share their misalignment (both start `offset` floats past a 256-byte-aligned allocation), so one
// scalar head aligns both; float4 body; scalar tail. Counts 8 bytes an element (read + write).
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

// v4: two loads a thread, then a shared-memory tree with sequential addressing (day 24's last
// rung). Launch: blockDim.x = a power of two, dynamic shared memory blockDim.x floats; grid =
// ceil(n / (2 * blockDim.x)) blocks so every element has exactly one reader. Writes
// partials[blockIdx.x].
// Needs: nothing
__global__ void reduceV4(const float *__restrict__ in, float *__restrict__ partials, size_t n) {
  extern __shared__ float sdata[];
  unsigned int tid = threadIdx.x;
  // Block b owns elements [2*b*blockDim, 2*(b+1)*blockDim): thread t reads i and i + blockDim.
  // 64-bit before the multiply, defensively: at n = 2^32 the largest index still fits 32 unsigned
  // bits, but a larger n or block would not, and the widening costs nothing here.
  size_t i = size_t(blockIdx.x) * (2 * blockDim.x) + tid;
  float v = 0.0f;
  if (i < n) {
    v = in[i];
  }
  if (i + blockDim.x < n) {
    v += in[i + blockDim.x];
  }
  sdata[tid] = v;
  __syncthreads();
  for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) {
      sdata[tid] += sdata[tid + s];
    }
    __syncthreads(); // every thread reaches it: the branch above closes first
  }
  if (tid == 0) {
    partials[blockIdx.x] = sdata[0];
  }
}

// v4c: the cascade. A fixed grid walks the whole input with a grid-stride loop; each thread adds
// many elements in a register (cheap) before one shared-memory tree a block (costly barriers).
// Launch: blockDim.x a power of two, dynamic shared memory blockDim.x floats, any grid >= 1.
// Writes partials[blockIdx.x].
// Needs: nothing
__global__ void reduceV4c(const float *__restrict__ in, float *__restrict__ partials, size_t n) {
  extern __shared__ float sdata[];
  unsigned int tid = threadIdx.x;
  size_t stride = size_t(gridDim.x) * blockDim.x;
  float v = 0.0f;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + tid; i < n; i += stride) {
    v += in[i];
  }
  sdata[tid] = v;
  __syncthreads();
  for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) {
      sdata[tid] += sdata[tid + s];
    }
    __syncthreads();
  }
  if (tid == 0) {
    partials[blockIdx.x] = sdata[0];
  }
}

// snippet: v5
// v5: v4c whose shared tree stops at 64 live values; warp 0 then adds the last 64 with shuffles.
// Assumes: blockDim.x a power of two >= 64; dynamic shared memory blockDim.x floats (sdata is
// `extern`: left out, the first store is out of bounds); any grid >= 1. kFullMask names all 32
// lanes: right only because the whole of warp 0 (tid < 32) takes the branch.
// Launch: reduceV5<<<1024, 256, 256 * sizeof(float)>>>(in, partials, n)
// Needs: kFullMask
// ptx: shfl
__global__ void reduceV5(const float *__restrict__ in, float *__restrict__ partials, size_t n) {
  extern __shared__ float sdata[];
  unsigned int tid = threadIdx.x;
  size_t stride = size_t(gridDim.x) * blockDim.x;
  float v = 0.0f;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + tid; i < n; i += stride) {
    v += in[i];
  }
  sdata[tid] = v;
  __syncthreads();
  for (unsigned int s = blockDim.x / 2; s > 32; s >>= 1) {
    if (tid < s) {
      sdata[tid] += sdata[tid + s];
    }
    __syncthreads();
  }
  if (tid < 32) {
    v = sdata[tid] + sdata[tid + 32];
    for (int offset = 16; offset > 0; offset >>= 1) {
      v += __shfl_down_sync(kFullMask, v, offset);
    }
    if (tid == 0) {
      partials[blockIdx.x] = v;
    }
  }
}
// end snippet

// snippet: v6-block-reduce
// The block reduction of v6..v8: every thread passes its value; thread 0 gets the block's sum.
// kThreads = blockDim.x, a power of two from 64 to 1024 known at compile time, so the steps a
// block size does not need are not compiled. sdata: kThreads floats. Every thread must call it.
// Needs: isPowerOfTwo, kFullMask
template <int kThreads>
__device__ float blockReduceSum(float v, float *sdata) {
  static_assert(isPowerOfTwo(kThreads) && kThreads >= 64 && kThreads <= 1024, "block size");
  unsigned int tid = threadIdx.x;
  sdata[tid] = v;
  __syncthreads();
  if (kThreads >= 1024) {
    if (tid < 512) {
      sdata[tid] += sdata[tid + 512];
    }
    __syncthreads();
  }
  if (kThreads >= 512) {
    if (tid < 256) {
      sdata[tid] += sdata[tid + 256];
    }
    __syncthreads();
  }
  if (kThreads >= 256) {
    if (tid < 128) {
      sdata[tid] += sdata[tid + 128];
    }
    __syncthreads();
  }
  if (kThreads >= 128) {
    if (tid < 64) {
      sdata[tid] += sdata[tid + 64];
    }
    __syncthreads();
  }
  if (tid < 32) { // all of warp 0: the full mask below names only lanes that are present
    v = sdata[tid] + sdata[tid + 32];
    for (int offset = 16; offset > 0; offset >>= 1) {
      v += __shfl_down_sync(kFullMask, v, offset);
    }
  }
  return v; // meaningful in thread 0 only
}
// end snippet

// v6: v5 with the block size a template argument (the tree above, unrolled by the compiler).
// Launch: blockDim.x == kThreads exactly (the launcher passes the same constant to both), any
// grid >= 1. Writes partials[blockIdx.x].
// Needs: blockReduceSum, isPowerOfTwo
// ptx: shfl
template <int kThreads>
__global__ void reduceV6(const float *__restrict__ in, float *__restrict__ partials, size_t n) {
  __shared__ float sdata[kThreads];
  size_t stride = size_t(gridDim.x) * kThreads;
  float v = 0.0f;
  for (size_t i = size_t(blockIdx.x) * kThreads + threadIdx.x; i < n; i += stride) {
    v += in[i];
  }
  v = blockReduceSum<kThreads>(v, sdata);
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = v;
  }
}

// snippet: v7
// v7: v6 with 16-byte loads, which must start on a 16-byte boundary where `in` may not: a scalar
// head of 0..3 floats up to the boundary, float4s over the aligned body, a scalar tail of the
// 0..3 floats no float4 covers. Assumes: blockDim.x == kThreads, no dynamic shared memory, any
// grid >= 1 (thread t of the grid takes head and tail element t: one block has the 3 needed).
// Launch: reduceV7<256><<<1024, 256>>>(in, partials, n)
// Needs: headToAlign16, blockReduceSum, isPowerOfTwo, <cstdint>, kFullMask
// ptx: v4-loads shfl
template <int kThreads>
__global__ void reduceV7(const float *__restrict__ in, float *__restrict__ partials, size_t n) {
  __shared__ float sdata[kThreads];
  size_t tid = size_t(blockIdx.x) * kThreads + threadIdx.x;
  size_t stride = size_t(gridDim.x) * kThreads;
  size_t head = headToAlign16(in, n);
  size_t nv = (n - head) / 4;  // whole float4s in the aligned body
  size_t tail = head + nv * 4; // first element no float4 covers
  const float4 *vin = reinterpret_cast<const float4 *>(in + head);
  float v = 0.0f;
  if (tid < head) {
    v += in[tid];
  }
  for (size_t i = tid; i < nv; i += stride) {
    float4 f = vin[i];
    v += (f.x + f.y) + (f.z + f.w);
  }
  if (tid < n - tail) {
    v += in[tail + tid];
  }
  v = blockReduceSum<kThreads>(v, sdata);
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = v;
  }
}
// end snippet

// v8 is not a new kernel: pass 1 is reduceV7 over the input on `grid` blocks, pass 2 is reduceV7 on
// ONE block over the `grid` partials (cudaMalloc'd, so 256-byte aligned: no head). See launchRow.

// race exhibit: the legacy warp-synchronous tail, kept ONLY for --race-demo.
// Before Volta the 32 lanes of a warp ran in lock-step, and this `volatile` tail without any
// barrier was the textbook way to finish a block reduction. Since Volta (independent thread
// scheduling) the lanes need not run together: lane t may read s[t + 16] before lane t + 16 has
// written it. It usually returns the right sum anyway, which is why it survived; compute-sanitizer
// racecheck reports it. Launch: blockDim.x == kBlock, any grid >= 1. Writes partials[blockIdx.x].
// Needs: kBlock
__global__ void reduceRaceDemo(const float *__restrict__ in, float *__restrict__ partials,
                               size_t n) {
  __shared__ float sdata[kBlock];
  unsigned int tid = threadIdx.x;
  size_t stride = size_t(gridDim.x) * kBlock;
  float v = 0.0f;
  for (size_t i = size_t(blockIdx.x) * kBlock + tid; i < n; i += stride) {
    v += in[i];
  }
  sdata[tid] = v;
  __syncthreads();
  for (unsigned int s = kBlock / 2; s > 32; s >>= 1) {
    if (tid < s) {
      sdata[tid] += sdata[tid + s];
    }
    __syncthreads();
  }
  if (tid < 32) {
    volatile float *s = sdata; // WRONG since Volta: no __syncwarp between these steps
    s[tid] += s[tid + 32];
    s[tid] += s[tid + 16];
    s[tid] += s[tid + 8];
    s[tid] += s[tid + 4];
    s[tid] += s[tid + 2];
    s[tid] += s[tid + 1];
  }
  if (tid == 0) {
    partials[blockIdx.x] = sdata[0];
  }
}
// end race exhibit

// --in-flight: one-pass sums that differ only in how many bytes each thread keeps on their way
// from memory at once: kLoads independent loads of sizeof(T) bytes (T = float: 4, float4: 16), all
// issued before the first add (kLoads accumulators, so no load waits for another). Little's law
// says a memory system with latency L delivers at most (bytes in flight) / L; v4c..v6 keep ONE
// 4-byte load a thread in flight, v7 one 16-byte load. Launch: blockDim.x == kBlock, any grid;
// `in` holds `count` elements of T (16-byte aligned for float4). Writes partials[blockIdx.x].
// Needs: kBlock, blockReduceSum, isPowerOfTwo
__device__ inline float total(float v) {
  return v;
}
__device__ inline float total(float4 v) {
  return (v.x + v.y) + (v.z + v.w);
}
template <typename T, int kLoads>
__global__ void inFlight(const T *__restrict__ in, size_t count, float *__restrict__ partials) {
  __shared__ float sdata[kBlock];
  size_t stride = size_t(gridDim.x) * kBlock;
  size_t i = size_t(blockIdx.x) * kBlock + threadIdx.x;
  float acc[kLoads] = {};
  for (; i + (kLoads - 1) * stride < count; i += kLoads * stride) {
    T v[kLoads];
#pragma unroll
    for (int u = 0; u < kLoads; ++u) {
      v[u] = in[i + u * stride]; // kLoads loads in flight ...
    }
#pragma unroll
    for (int u = 0; u < kLoads; ++u) {
      acc[u] += total(v[u]); // ... before the first add
    }
  }
  for (; i < count; i += stride) { // fewer than kLoads trips left
    acc[0] += total(in[i]);
  }
  float sum = 0.0f;
#pragma unroll
  for (int u = 0; u < kLoads; ++u) {
    sum += acc[u];
  }
  sum = blockReduceSum<kBlock>(sum, sdata);
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = sum;
  }
}

// Fills p[0, count) with `value` (the lesson's input: NaN around it, ones inside). Any block size,
// any grid (grid-stride).
// Needs: nothing
__global__ void fillKernel(float *p, size_t count, float value) {
  size_t stride = size_t(gridDim.x) * blockDim.x;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    p[i] = value;
  }
}

// The copy row's check, on the device: adds to *mismatches the count of i < n with out[i] != in[i]
// (a NaN left by the poison never equals anything). Any block size, any grid (grid-stride); one
// atomicAdd a thread that found any, so a right copy costs no atomics at all.
// Needs: nothing
// ptx: atom
__global__ void countMismatches(const float *__restrict__ in, const float *__restrict__ out,
                                size_t n, unsigned long long *mismatches) {
  size_t stride = size_t(gridDim.x) * blockDim.x;
  unsigned long long bad = 0;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    bad += out[i] != in[i];
  }
  if (bad != 0) {
    atomicAdd(mismatches, bad);
  }
}

// ==== Host side: the rows, their launchers, and the exact check. =================================

enum class Row { Copy, V4, V4c, V5, V6, V7, V8 };
constexpr Row kRows[] = {Row::Copy, Row::V4, Row::V4c, Row::V5, Row::V6, Row::V7, Row::V8};
const char *rowName(Row r) {
  const char *names[] = {"copy", "v4", "v4c", "v5", "v6", "v7", "v8"};
  return names[int(r)];
}

// Where one run of a row reads and writes (main() fills it; tests/harness from guard-banded
// buffers). `in` and `copyOut` (n floats each) start `offset` = 0..3 floats past 16-byte alignment;
// `partials` has room for every row's grid; `result` is v8's one float; `mismatches` the copy
// check's one counter; `grid` the blocks of the grid-stride rows v4c..v8.
struct RowArgs {
  const float *in;
  float *copyOut, *partials, *result;
  unsigned long long *mismatches;
  size_t n;
  int offset, grid;
};

// Blocks the row launches (pass 1 for v8): v4 its own ceil(n / 512); the copy one float4 a thread
// at most, capped (a ceiling, not a lesson in grids); v4c..v8 `grid`.
unsigned int rowGrid(Row r, size_t n, int grid) {
  if (r == Row::V4) {
    return unsigned((n + 2 * kBlock - 1) / (2 * kBlock));
  }
  size_t copyBlocks = std::min<size_t>((n / 4 + kBlock - 1) / kBlock, 65536);
  return r == Row::Copy ? unsigned(std::max<size_t>(1, copyBlocks)) : unsigned(grid);
}

// Enqueues one run of row r on the default stream and checks the launch; no synchronization.
// Every row runs kBlock threads a block (the static_asserts on kBlock hold what v5..v8 need).
void launchRow(Row r, const RowArgs &a) {
  unsigned int blocks = rowGrid(r, a.n, a.grid);
  size_t shared = kBlock * sizeof(float);
  switch (r) {
  case Row::Copy:
    copyKernel<<<blocks, kBlock>>>(a.in, a.copyOut, a.n);
    break;
  case Row::V4:
    reduceV4<<<blocks, kBlock, shared>>>(a.in, a.partials, a.n);
    break;
  case Row::V4c:
    reduceV4c<<<blocks, kBlock, shared>>>(a.in, a.partials, a.n);
    break;
  case Row::V5:
    reduceV5<<<blocks, kBlock, shared>>>(a.in, a.partials, a.n);
    break;
  case Row::V6:
    reduceV6<kBlock><<<blocks, kBlock>>>(a.in, a.partials, a.n);
    break;
  case Row::V7:
    reduceV7<kBlock><<<blocks, kBlock>>>(a.in, a.partials, a.n);
    break;
  case Row::V8:
    reduceV7<kBlock><<<blocks, kBlock>>>(a.in, a.partials, a.n);
    CUDA_CHECK(cudaGetLastError());
    reduceV7<kBlock><<<1, kBlock>>>(a.partials, a.result, blocks);
    break;
  }
  CUDA_CHECK(cudaGetLastError());
}

// Enqueues NaN (0xFF bytes) over everything row r writes: an output a run does not write stays NaN
// and fails the check.
void poisonRow(Row r, const RowArgs &a) {
  if (r == Row::Copy) {
    CUDA_CHECK(cudaMemsetAsync(a.copyOut, 0xFF, a.n * sizeof(float)));
    return;
  }
  CUDA_CHECK(cudaMemsetAsync(a.partials, 0xFF, rowGrid(r, a.n, a.grid) * sizeof(float)));
  if (r == Row::V8) {
    CUDA_CHECK(cudaMemsetAsync(a.result, 0xFF, sizeof(float)));
  }
}

// Adds `count` floats read from the device. Each must be a whole number >= 0 (a count of ones);
// returns false with the index of the first that is not (NaN: unwritten, or a NaN read past the
// input). The sum is a double: whole numbers below 2^53 add exactly. Reads in 64 MiB chunks.
bool sumWholeCounts(const float *dev, size_t count, double &sum, size_t &bad) {
  const size_t chunk = size_t(1) << 24;
  std::vector<float> host(std::min(count, chunk));
  sum = 0.0;
  for (size_t base = 0; base < count; base += chunk) {
    size_t c = std::min(chunk, count - base);
    CUDA_CHECK(cudaMemcpy(host.data(), dev + base, c * sizeof(float), cudaMemcpyDeviceToHost));
    for (size_t k = 0; k < c; ++k) {
      if (!(host[k] >= 0.0f) || host[k] != std::floor(host[k])) {
        bad = base + k;
        sum = host[k];
        return false;
      }
      sum += host[k];
    }
  }
  return true;
}

// The exact check of what row r left on the device (call it after the run has finished).
// Partial rows: every partial a whole number >= 0, and their sum == want; v8: its one float ==
// want; copy: destination == source, counted on the device (n = 2^32 needs no 16 GiB host buffer;
// `want` unused). The lesson passes want = n (all ones); the test program also the count of ones
// of a random 0/1 input. On a mismatch prints one `CHECK FAILED:` line and returns false.
bool checkRow(Row r, const RowArgs &a, double want, const char *when) {
  double got = 0.0;
  size_t bad = 0;
  bool ok = true;
  if (r == Row::Copy) {
    CUDA_CHECK(cudaMemset(a.mismatches, 0, sizeof(unsigned long long)));
    countMismatches<<<1024, 256>>>(a.in, a.copyOut, a.n, a.mismatches);
    CUDA_CHECK(cudaGetLastError());
    unsigned long long mismatches = 0;
    CUDA_CHECK(cudaMemcpy(&mismatches, a.mismatches, sizeof mismatches, cudaMemcpyDeviceToHost));
    want = double(a.n);
    got = double(a.n - mismatches); // elements copied right
    ok = mismatches == 0;
  } else {
    size_t count = r == Row::V8 ? 1 : rowGrid(r, a.n, a.grid);
    ok = sumWholeCounts(r == Row::V8 ? a.result : a.partials, count, got, bad) && got == want;
  }
  if (!ok) {
    std::printf("CHECK FAILED: %s n=%zu offset=%d blocks=%u (%s) got %.0f want %.0f (off by %.0f)",
                rowName(r), a.n, a.offset, rowGrid(r, a.n, a.grid), when, got, want, got - want);
    if (r != Row::Copy && !(got >= 0.0 && got == std::floor(got))) {
      std::printf(": float %zu of the output is not a whole count (unwritten, or a NaN read)", bad);
    }
    std::printf("\n");
  }
  return ok;
}

// ==== timeKernel: CUDA events around batches of back-to-back launches of one row =================
constexpr int kTimingBatches = 11;    // odd, so the median is one batch
constexpr int kLaunchesPerBatch = 20; // back-to-back runs of a row (v8 = 2 kernels) an event pair

struct Timing {
  double ms;     // median over batches of (batch ms / runs): ms per run, v8's two passes together
  double spread; // (slowest batch - fastest batch) / median, in percent
};

// launch() enqueues one run of the row and checks cudaGetLastError(); poison() enqueues
// cudaMemsetAsync(0xFF) of the row's outputs (0xFF bytes are a NaN float). One synchronized
// warm-up launch (the first launch pays the lazy module load), then kTimingBatches batches, each:
// poison() outside the event pair, then kLaunchesPerBatch launches between one event pair. So on
// return the outputs hold what the LAST timed launch wrote: the caller checks that.
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

struct Tally { // checks made and failed
  int checks = 0, failures = 0;
  bool count(bool ok) {
    ++checks;
    failures += ok ? 0 : 1;
    return ok;
  }
};

// Poison, run once, check ("before timing"), time, check the LAST timed launch ("after timing").
template <typename Launch, typename Poison, typename Check>
Timing measure(Launch launch, Poison poison, Check check, Tally &tally, bool &ok) {
  poison();
  launch();
  CUDA_CHECK(cudaDeviceSynchronize());
  ok = tally.count(check("before timing"));
  Timing t = timeKernel(launch, poison);
  ok = tally.count(check("after timing")) && ok;
  return t;
}

#ifndef REDUCTION_HARNESS // the test program in tests/harness brings its own main()
// ==== The runs: the table (default), the sweep (the exercise), the race demo, in flight ==========
struct Measured {
  Row row;
  unsigned int blocks;
  double mb; // bytes moved / 1e6: the copy reads + writes n floats, v8 also reads its partials
  Timing t;
  bool ok;
};

Measured measureRow(Row r, const RowArgs &a, Tally &tally) {
  unsigned int blocks = rowGrid(r, a.n, a.grid);
  double mb = (a.n * (r == Row::Copy ? 8.0 : 4.0) + (r == Row::V8 ? blocks * 4.0 : 0.0)) / 1e6;
  Measured m{r, blocks, mb, {0.0, 0.0}, true};
  m.t = measure([&] { launchRow(r, a); }, [&] { poisonRow(r, a); },
                [&](const char *when) { return checkRow(r, a, double(a.n), when); }, tally, m.ok);
  return m;
}

// The table (every row) or the sweep (the exercise: the copy, then v8 over a range of grids).
void runRows(RowArgs a, Tally &tally, bool sweep) {
  std::vector<Measured> rows;
  if (sweep) {
    rows.push_back(measureRow(Row::Copy, a, tally));
    for (int g : {64, 256, 1024, 4096, 16384}) {
      a.grid = g;
      rows.push_back(measureRow(Row::V8, a, tally));
    }
    std::printf(
        "\nsweep: v8 (two passes, one float) over the grid, n = %zu floats, offset %d; median "
        "of %d batches of %d launches\n\n",
        a.n, a.offset, kTimingBatches, kLaunchesPerBatch);
  } else {
    for (Row r : kRows) {
      rows.push_back(measureRow(r, a, tally));
    }
    std::printf("\nn = %zu floats (%.1f MiB), offset %d, %d threads a block, grid-stride rows on "
                "%d blocks; median of %d batches of %d launches\n\n",
                a.n, a.n * 4.0 / (1 << 20), a.offset, kBlock, a.grid, kTimingBatches,
                kLaunchesPerBatch);
  }
  std::printf(
      "| row  | produces  | blocks |       MB |       ms | spread %% |    GB/s | %% of copy "
      "| check |\n|------|-----------|--------|----------|----------|----------|---------|"
      "-----------|-------|\n");
  double copyGBs = rows[0].mb / rows[0].t.ms; // rows[0] is the copy
  for (const Measured &m : rows) {
    double gbs = m.mb / m.t.ms;
    std::printf(
        "| %-4s | %-9s | %6u | %8.3f | %8.5f | %8.1f | %7.1f | %9.1f | %-5s |\n", rowName(m.row),
        m.row == Row::Copy ? "copy" : (m.row == Row::V8 ? "one float" : "partials"), m.blocks, m.mb,
        m.t.ms, m.t.spread, gbs, 100.0 * gbs / copyGBs, m.ok ? "exact" : "FAIL");
  }
  std::printf(
      sweep ? "\nEvery row is printed whether its check passed or not; a FAIL row is not a speed.\n"
            : "\nOnly v8 leaves one number on the device. v4..v7 stop at partials (one float a "
              "block):\na second pass or the host must still add them, so compare them with each "
              "other, not with v8.\nThe copy row counts bytes read + written (8 a float); "
              "reduction rows count bytes read (4 a\nfloat, plus v8's partials). A reduction only "
              "reads, so it can pass 100 %% of copy: the\npercentage compares two numbers from "
              "this run, not a limit.\n");
}

void runRaceDemo(const RowArgs &a, Tally &tally) {
  CUDA_CHECK(cudaMemset(a.partials, 0xFF, a.grid * sizeof(float)));
  reduceRaceDemo<<<a.grid, kBlock>>>(a.in, a.partials, a.n);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  double sum = 0.0;
  size_t bad = 0;
  bool ok = tally.count(sumWholeCounts(a.partials, a.grid, sum, bad) && sum == double(a.n));
  std::printf("race demo (legacy volatile warp-synchronous tail), n = %zu on %d blocks: sum of "
              "partials %.0f, want %zu: %s\nA right sum proves nothing here: run it under "
              "`compute-sanitizer --tool racecheck` to see the hazard.\n",
              a.n, a.grid, sum, a.n, ok ? "right sum" : "WRONG sum");
}

// One point of --in-flight: kLoads loads of a T in flight a thread, on `waves` waves (a wave: the
// blocks the GPU holds at once), checked like a row; a point below 60 % of copy feeds Little's law.
template <typename T, int kLoads>
void inFlightPoint(const RowArgs &a, const cudaDeviceProp &p, double copyGBs, double waves,
                   Tally &tally, std::vector<double> &fit) {
  int perSm = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, inFlight<T, kLoads>, kBlock, 0));
  int wave = perSm * p.multiProcessorCount;
  int grid = std::max(1, int(wave * waves));
  size_t count = a.n / (sizeof(T) / sizeof(float));
  const T *in = reinterpret_cast<const T *>(a.in);
  bool ok = true;
  Timing t = measure(
      [&] {
        inFlight<T, kLoads><<<grid, kBlock>>>(in, count, a.partials);
        CUDA_CHECK(cudaGetLastError());
      },
      [&] { CUDA_CHECK(cudaMemsetAsync(a.partials, 0xFF, grid * sizeof(float))); },
      [&](const char *when) {
        double got = 0.0;
        size_t bad = 0;
        bool exact = sumWholeCounts(a.partials, grid, got, bad) && got == double(a.n);
        if (!exact) {
          std::printf("CHECK FAILED: in-flight %zu B x %d, %d blocks (%s) got %.0f want %zu\n",
                      sizeof(T), kLoads, grid, when, got, a.n);
        }
        return exact;
      },
      tally, ok);
  double inFlightBytes = double(std::min(grid, wave)) * kBlock * kLoads * sizeof(T);
  double gbs = a.n * sizeof(float) / 1e6 / t.ms;
  std::printf("| %5zu | %5d | %6d | %5.3f | %9.0f | %7.1f | %8.1f | %9.1f | %-5s |\n", sizeof(T),
              kLoads, grid, double(grid) / wave, inFlightBytes / 1024, gbs, t.spread,
              100.0 * gbs / copyGBs, ok ? "exact" : "FAIL");
  if (gbs < 0.6 * copyGBs) { // the rising part: far from the ceiling, latency-bound
    fit.push_back(inFlightBytes / (gbs * 1e9)); // Little's law: latency = in flight / bandwidth
  }
}

void runInFlight(const RowArgs &a, const cudaDeviceProp &p, Tally &tally) {
  Measured copy = measureRow(Row::Copy, a, tally);
  double copyGBs = copy.mb / copy.t.ms;
  std::printf("\nin flight: one-pass sums of n = %zu floats, %d threads a block; copy row %.1f "
              "GB/s (%s); median of %d batches of %d launches\n\n| bytes | loads | blocks | waves "
              "| KiB in flight |    GB/s | spread %% | %% of copy | check |\n|-------|-------|"
              "--------|-------|---------------|---------|----------|-----------|-------|\n",
              a.n, kBlock, copyGBs, copy.ok ? "exact" : "FAIL", kTimingBatches, kLaunchesPerBatch);
  std::vector<double> fit; // latency estimates (seconds) from the points below 60 % of copy
  for (double w : {0.125, 0.25, 0.5, 1.0, 4.0}) {
    inFlightPoint<float, 1>(a, p, copyGBs, w, tally, fit);
    inFlightPoint<float, 2>(a, p, copyGBs, w, tally, fit);
    inFlightPoint<float, 4>(a, p, copyGBs, w, tally, fit);
    inFlightPoint<float, 8>(a, p, copyGBs, w, tally, fit);
    inFlightPoint<float4, 1>(a, p, copyGBs, w, tally, fit);
    inFlightPoint<float4, 2>(a, p, copyGBs, w, tally, fit);
    inFlightPoint<float4, 4>(a, p, copyGBs, w, tally, fit);
    inFlightPoint<float4, 8>(a, p, copyGBs, w, tally, fit);
  }
  if (fit.empty()) {
    std::printf("\nLittle's law: no point below 60 %% of copy, nothing to fit\n");
    return;
  }
  std::sort(fit.begin(), fit.end());
  double latency = fit[fit.size() / 2];
  int resident = p.maxThreadsPerMultiProcessor * p.multiProcessorCount;
  std::printf(
      "\nLittle's law over the %zu points below 60 %% of copy: latency %.2f us (median of "
      "in flight / bandwidth).\n90 %% of the copy row (%.0f GB/s) needs %.0f KiB in flight. "
      "This GPU holds %d threads: one float a thread is %.0f KiB, one float4 %.0f KiB.\n",
      fit.size(), latency * 1e6, 0.9 * copyGBs, 0.9 * copyGBs * 1e9 * latency / 1024, resident,
      resident * 4.0 / 1024, resident * 16.0 / 1024);
}

// ==== Options and main. ==========================================================================
static const char *kUsage =
    "usage: reduction_2 [--n N] [--blocks B] [--offset K] [--sweep | --race-demo | --in-flight]\n"
    "  --n N       floats, all 1.0f (default 2^26): 1..2^24, or a power of two up to 2^32\n"
    "  --blocks B  grid of v4c..v8, a power of two from 1 to 65536 (default 1024)\n"
    "  --offset K  the input starts K = 0..3 floats past alignment (0 when N > 2^24)\n"
    "  --sweep, --race-demo, --in-flight: v8 over 64..16384 blocks; the volatile tail for\n"
    "  racecheck; float/float4 loads 1..8 in flight a thread, 1/8..4 waves, Little's law\n"
    "exit codes: 0 all checks passed, 1 a check failed or a CUDA error, 2 bad usage.\n";

enum class Mode { Ladder, Sweep, RaceDemo, InFlight };
struct Options {
  size_t n = kDefaultN, grid = 0, offset = 0; // grid 0: --blocks not given
  Mode mode = Mode::Ladder;
  bool help = false;
};

// Fills `o`; returns "" or the one-line reason to refuse (exit 2). A value: decimal digits only.
std::string parseOptions(int argc, char **argv, Options &o) {
  const char *modes[] = {"--sweep", "--race-demo", "--in-flight"}; // Mode 1, 2, 3
  struct {
    const char *flag;
    size_t *value, min, max;
    const char *rule;
  } knobs[] = {
      {"--n", &o.n, 1, kMaxN, "a whole number from 1 to 4294967296 (2^32), digits only"},
      {"--blocks", &o.grid, 1, kMaxGrid,
       "a power of two from 1 to 65536 (a power-of-two grid keeps every thread's count equal, "
       "which the exact sum above 2^24 needs)"},
      {"--offset", &o.offset, 0, 3, "0, 1, 2 or 3 (floats past alignment)"}};
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    int mode = 0, knob = -1;
    for (int j = 0; j < 3; ++j) {
      mode = a == modes[j] ? j + 1 : mode;
      knob = a == knobs[j].flag ? j : knob;
    }
    if (a == "--help" || a == "-h") {
      o.help = true;
    } else if (mode != 0 && o.mode != Mode::Ladder) {
      return "--sweep, --race-demo and --in-flight are separate runs: choose one";
    } else if (mode != 0) {
      o.mode = Mode(mode);
    } else if (knob >= 0) {
      const char *v = ++i < argc ? argv[i] : "";
      size_t x = std::strtoull(v, nullptr, 10); // digits only: overflow gives ULLONG_MAX > max
      if (*v == '\0' || std::strspn(v, "0123456789") != std::strlen(v) || x < knobs[knob].min ||
          x > knobs[knob].max || (knob == 1 && !isPowerOfTwo(x))) {
        return a + " " + (*v ? v : "(no value)") + ": must be " + knobs[knob].rule;
      }
      *knobs[knob].value = x;
    } else {
      return "unknown option '" + a + "' (see --help)";
    }
  }
  if ((o.mode == Mode::Sweep || o.mode == Mode::InFlight) && o.grid != 0) {
    return "--sweep and --in-flight choose their own grids: --blocks does not apply";
  }
  o.grid = o.grid != 0 ? o.grid : kDefaultGrid;
  if (o.mode == Mode::InFlight && (o.offset != 0 || o.n % 4 != 0)) {
    return "--in-flight loads float4 from the start: it needs --offset 0 and n a multiple of 4";
  }
  if (o.n > kExactAnyOrder && (!isPowerOfTwo(o.n) || o.offset != 0)) {
    return "--n " + std::to_string(o.n) + " --offset " + std::to_string(o.offset) +
           ": above 16777216 (2^24) a float sum of ones is exact only for n a power of two and "
           "offset 0 (every thread's count equal)";
  }
  return "";
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
  cudaDeviceProp p;
  CUDA_CHECK(cudaGetDeviceProperties(&p, 0)); // no device, or a driver too old: exit 1
  // Input and copy destination: n floats + 3 for the offset each; partials; result; one counter.
  size_t maxPartials = std::max<size_t>(rowGrid(Row::V4, o.n, 0), kMaxGrid);
  size_t inBytes = (o.n + 3) * sizeof(float), freeBytes = 0, totalBytes = 0;
  size_t need = 2 * inBytes + (maxPartials + 1) * sizeof(float) + sizeof(unsigned long long);
  CUDA_CHECK(cudaMemGetInfo(&freeBytes, &totalBytes));
  if (need > freeBytes) {
    std::fprintf(stderr,
                 "error: --n %zu needs %.2f GiB of device memory; %.2f GiB are free on %s\n", o.n,
                 need / double(1u << 30), freeBytes / double(1u << 30), p.name);
    return 2;
  }
  std::printf("GPU: %s | cc %d.%d | %d SMs | %zu KiB shared/block | %d MiB L2 | warp %d\n", p.name,
              p.major, p.minor, p.multiProcessorCount, p.sharedMemPerBlock / 1024,
              p.l2CacheSize / (1024 * 1024), p.warpSize);
  if (p.warpSize != kWarp) {
    std::printf("error: the shuffle tails of v5..v8 assume %d lanes a warp; this device has %d\n",
                kWarp, p.warpSize);
    return 1;
  }

  float *inAlloc = nullptr, *outAlloc = nullptr, *partials = nullptr, *result = nullptr;
  unsigned long long *mismatches = nullptr;
  CUDA_CHECK(cudaMalloc(&inAlloc, inBytes));
  CUDA_CHECK(cudaMalloc(&outAlloc, inBytes));
  CUDA_CHECK(cudaMalloc(&partials, maxPartials * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&result, sizeof(float)));
  CUDA_CHECK(cudaMalloc(&mismatches, sizeof(unsigned long long)));
  // The input starts `offset` floats past cudaMalloc's 256-byte alignment: NaN around, ones inside.
  RowArgs a{inAlloc + o.offset, outAlloc + o.offset, partials, result, mismatches, o.n,
            int(o.offset),      int(o.grid)};
  fillKernel<<<1024, 256>>>(inAlloc, o.n + 3, std::nanf(""));
  CUDA_CHECK(cudaGetLastError());
  fillKernel<<<1024, 256>>>(inAlloc + o.offset, o.n, 1.0f);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());

  Tally tally;
  if (o.mode == Mode::RaceDemo) {
    runRaceDemo(a, tally);
  } else if (o.mode == Mode::InFlight) {
    runInFlight(a, p, tally);
  } else {
    runRows(a, tally, o.mode == Mode::Sweep);
  }
  for (void *ptr :
       {(void *)inAlloc, (void *)outAlloc, (void *)partials, (void *)result, (void *)mismatches}) {
    CUDA_CHECK(cudaFree(ptr));
  }
  if (tally.failures == 0) {
    std::printf("\nRESULT: PASS (%d checks, all exact)\n", tally.checks);
    return 0;
  }
  std::printf("\nRESULT: FAIL (%d of %d checks failed)\n", tally.failures, tally.checks);
  return 1;
}

#endif // REDUCTION_HARNESS
