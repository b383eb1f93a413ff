// Day 25: the copy ceiling and the v4–v8 reduction ladder.
//
// One program, one input (n floats, all 1.0f, so the right sum is n), one table. Rows, in
// order, with the one change between neighbours:
//   copy  the ceiling: a float4 copy of the same buffer; its GB/s counts bytes read + written.
//   v4    day 24's last rung: two loads a thread during the load, its own grid of n/512 blocks.
//   v4c   cascade: a fixed grid of 1024 blocks walks the input with a grid-stride loop, each
//         thread adding many elements in a register before the shared-memory tree.
//   v5    the shared tree stops at 64 live values; warp 0 finishes with __shfl_down_sync.
//   v6    v5 with the block size a template argument: the tree's bounds are compile-time
//         constants.
//   v7    v6 with float4 (16-byte) loads: a scalar head up to 16-byte alignment, a scalar tail.
//   v8    v7 run twice: pass 1 leaves one partial a block, pass 2 (one block) adds them.
// Rows v4..v7 leave partials (one float a block) that someone must still add; only v8 leaves
// the finished sum, ONE float, on the device.
//
// Build and run (any card; a Colab T4 is sm_75, an H200 sm_90):
//   nvcc -std=c++17 -O3 -arch=sm_75 -o reduction_2 code/day25-reduction-2/reduction_2.cu
//   ./reduction_2
// --help lists the knobs: --n, --blocks, --offset, --sweep, --self-test (--max-n), --race-demo.
//
// What is checked: every row's result, exactly, before it is timed and again after (a race can
// show only under repetition); partial rows by adding their partials on the host in 64-bit
// integers. Reads out of range are caught by NaN guards around the input, unwritten outputs by
// NaN poison. What is NOT checked: speed. The table reports it; no threshold decides pass or fail.
//
// Exit codes: 0 every check passed, 1 a check failed or a CUDA error, 2 bad usage.

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

// ---------------------------------------------------------------------------------------------
// The lesson's constants and the exactness argument they must keep.
// ---------------------------------------------------------------------------------------------
constexpr int kBlock = 256;                        // threads a block, every reduction row
constexpr int kWarp = 32;                          // lanes a warp (checked on the device too)
constexpr size_t kDefaultN = size_t(1) << 26;      // 2^26 floats = 256 MiB
constexpr int kDefaultGrid = 1024;                 // blocks of the grid-stride rows v4c..v8
constexpr size_t kExactAnyOrder = size_t(1) << 24; // a float holds every integer up to 2^24
constexpr size_t kMaxN = size_t(1) << 32;          // largest --n (needs 2 x 16 GiB on the device)
constexpr int kMaxGrid = 65536;                    // largest --blocks
constexpr int kPad = 4;                            // NaN guard floats before and after the input

__host__ __device__ constexpr bool isPowerOfTwo(size_t x) {
  return x != 0 && (x & (x - 1)) == 0;
}

// v5..v8 stop the shared tree at 64 live values and finish in one warp: the block must be a power
// of two with at least two warps, and a whole number of warps.
static_assert(isPowerOfTwo(kBlock) && kBlock >= 2 * kWarp && kBlock <= 1024, "block size");
// Above 2^24 a float sum of ones is exact only if every partial is a multiple of a large enough
// power of two. With n and the grid powers of two and no offset, every thread adds either the same
// power-of-two count or nothing (more threads than float4s), so every partial is 0 or one power
// of two, and every running sum is a multiple of it: representable all the way to n.
static_assert(isPowerOfTwo(kDefaultN) && isPowerOfTwo(kDefaultGrid),
              "default n, grid: powers of 2");
// v4 reads two elements a thread, so its grid of n / (2 * kBlock) blocks covers n with no
// remainder.
static_assert(kDefaultN % (2 * kBlock) == 0, "v4's grid covers the default n exactly");
// Each thread of the grid-stride rows adds the same count of float4s at the default size.
static_assert(kDefaultN % (size_t(4) * kBlock * kDefaultGrid) == 0, "equal float4 count a thread");
// And that count stays inside a float's exact range, so every per-thread sum is exact.
static_assert(kDefaultN / (size_t(kBlock) * kDefaultGrid) <= kExactAnyOrder,
              "per-thread sum exact");

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
// Kernels, in row order.
// ---------------------------------------------------------------------------------------------

// Floats from `p` to the next 16-byte boundary (0..3), at most n: the scalar head that v7/v8 and
// the copy peel so that every float4 they load starts on a 16-byte boundary.
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

// snippet: v4
// v4: two loads a thread, then a shared-memory tree with sequential addressing (day 24's last
// rung). Launch: blockDim.x = a power of two, dynamic shared memory blockDim.x floats; grid =
// ceil(n / (2 * blockDim.x)) blocks so every element has exactly one reader. Writes
// partials[blockIdx.x].
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
// end snippet

// snippet: v4c
// v4c: the cascade. A fixed grid walks the whole input with a grid-stride loop; each thread adds
// many elements in a register (cheap) before one shared-memory tree a block (costly barriers).
// Launch: blockDim.x a power of two, dynamic shared memory blockDim.x floats, any grid >= 1.
// Writes partials[blockIdx.x].
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
// end snippet

// snippet: v5
// v5: v4c whose shared tree stops at 64 live values; warp 0 then adds the last 64 with shuffles.
// Launch: blockDim.x a power of two >= 64 (two whole warps at least), dynamic shared memory
// blockDim.x floats, any grid >= 1. Writes partials[blockIdx.x].
// The mask 0xffffffff names all 32 lanes: correct only because the whole of warp 0 (tid < 32) takes
// the branch. Since Volta the lanes of a warp need not run in lock-step; the shuffle (not a
// volatile shared tail) is what makes each lane's read see its partner's value.
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
      v += __shfl_down_sync(0xffffffffu, v, offset);
    }
    if (tid == 0) {
      partials[blockIdx.x] = v;
    }
  }
}
// end snippet

// snippet: v6-block-reduce
// The block reduction of v6..v8: every thread passes its value; thread 0 gets the block's sum.
// kThreads = blockDim.x, a compile-time power of two from 64 to 1024, so the compiler decides
// each `if (kThreads >= ...)`: the steps a block size does not need are not even compiled.
// sdata holds kThreads floats. Every thread must call it (it contains barriers).
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
      v += __shfl_down_sync(0xffffffffu, v, offset);
    }
  }
  return v; // meaningful in thread 0 only
}
// end snippet

// v6: v5 with the block size a template argument (the tree above, unrolled by the compiler).
// Launch: blockDim.x == kThreads exactly, any grid >= 1. Writes partials[blockIdx.x].
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
// v7: v6 with 16-byte loads. A float4 load must start on a 16-byte boundary; `in` may not (a
// learner's pointer into the middle of an array, or --offset). So: a scalar head of 0..3 floats up
// to the boundary, float4s over the aligned body, a scalar tail of 0..3 floats that no float4
// covers. Dropping the tail is the classic bug (n not a multiple of 4); loading float4 from the
// unaligned start is the other (a misaligned-address fault, or silently wrong on some paths).
// Launch: blockDim.x == kThreads, any grid >= 1 (thread t of the grid takes head element t and tail
// element t, so the grid needs at least 3 threads: one block always has them). Writes
// partials[blockIdx.x].
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
// ONE block over the `grid` partials (cudaMalloc'd, so 256-byte aligned: no head). See launchV8.

// race exhibit: the legacy warp-synchronous tail, kept ONLY for --race-demo.
// Before Volta the 32 lanes of a warp ran in lock-step, and this `volatile` tail without any
// barrier was the textbook way to finish a block reduction. Since Volta (independent thread
// scheduling) the lanes need not run together: lane t may read s[t + 16] before lane t + 16 has
// written it. It usually returns the right sum anyway, which is why it survived; compute-sanitizer
// racecheck reports it. Launch: blockDim.x == kBlock, any grid >= 1. Writes partials[blockIdx.x].
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

// Fills p[0, count) with `value`. Any grid (grid-stride).
__global__ void fillKernel(float *p, size_t count, float value) {
  size_t stride = size_t(gridDim.x) * blockDim.x;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    p[i] = value;
  }
}

// ---------------------------------------------------------------------------------------------
// Host side: buffers, launchers, checks.
// ---------------------------------------------------------------------------------------------

// Device buffers, allocated once for the largest size a run needs.
struct Buffers {
  float *inAlloc = nullptr;  // kPad + 3 + maxN + kPad floats: NaN guards around the input
  float *outAlloc = nullptr; // the copy's destination, same layout
  float *partials = nullptr; // one float a block: max(v4's grid, largest grid-stride grid)
  float *result = nullptr;   // v8's one float
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

static unsigned int v4Grid(size_t n) {
  return unsigned((n + 2 * kBlock - 1) / (2 * kBlock));
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
    (void)cudaGetLastError(); // clear the sticky-free allocation error
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

// One row of the ladder: its name, what it leaves, how many blocks, and how to run it once.
enum class Row { Copy, V4, V4c, V5, V6, V7, V8 };
constexpr int kRowCount = 7;
static const char *rowName(Row r) {
  switch (r) {
  case Row::Copy:
    return "copy";
  case Row::V4:
    return "v4";
  case Row::V4c:
    return "v4c";
  case Row::V5:
    return "v5";
  case Row::V6:
    return "v6";
  case Row::V7:
    return "v7";
  case Row::V8:
    return "v8";
  }
  return "?";
}
static const char *rowProduces(Row r) {
  return r == Row::Copy ? "copy" : (r == Row::V8 ? "one float" : "partials");
}

// Blocks the row launches (pass 1 for v8).
static unsigned int rowGrid(Row r, size_t n, int grid) {
  if (r == Row::V4) {
    return v4Grid(n);
  }
  if (r == Row::Copy) {
    // One float4 a thread at most, capped: the copy is a ceiling, not a lesson in grids.
    size_t blocks = (n / 4 + kBlock - 1) / kBlock;
    return unsigned(std::max<size_t>(1, std::min<size_t>(blocks, 65536)));
  }
  return unsigned(grid);
}

// Bytes a row moves: the copy reads and writes n floats; v8 reads n floats and then its partials;
// every other reduction row reads n floats once.
static double rowBytes(Row r, size_t n, int grid) {
  double b = double(n) * sizeof(float);
  if (r == Row::Copy) {
    return 2 * b;
  }
  if (r == Row::V8) {
    return b + double(grid) * sizeof(float);
  }
  return b;
}

// Enqueues one run of row r over n elements starting `offset` floats in, on `grid` blocks (the
// grid-stride rows). Checks the launch. No synchronization.
static void launchRow(Row r, const Buffers &b, size_t n, int offset, int grid) {
  const float *in = inputStart(b, offset);
  unsigned int blocks = rowGrid(r, n, grid);
  size_t shared = kBlock * sizeof(float);
  switch (r) {
  case Row::Copy:
    copyKernel<<<blocks, kBlock>>>(in, outputStart(b, offset), n);
    break;
  case Row::V4:
    reduceV4<<<blocks, kBlock, shared>>>(in, b.partials, n);
    break;
  case Row::V4c:
    reduceV4c<<<blocks, kBlock, shared>>>(in, b.partials, n);
    break;
  case Row::V5:
    reduceV5<<<blocks, kBlock, shared>>>(in, b.partials, n);
    break;
  case Row::V6:
    reduceV6<kBlock><<<blocks, kBlock>>>(in, b.partials, n);
    break;
  case Row::V7:
    reduceV7<kBlock><<<blocks, kBlock>>>(in, b.partials, n);
    break;
  case Row::V8:
    reduceV7<kBlock><<<blocks, kBlock>>>(in, b.partials, n);
    CUDA_CHECK(cudaGetLastError());
    reduceV7<kBlock><<<1, kBlock>>>(b.partials, b.result, blocks);
    break;
  }
  CUDA_CHECK(cudaGetLastError());
}

// The outcome of one exact check: `got` as the device left it (summed on the host for partial rows)
// and `want` = n. `detail` says what was wrong when not ok.
struct Check {
  bool ok;
  double got;
  double want;
  std::string detail;
};

// Runs row r once (output poisoned with NaN first, so an unwritten output fails) and checks it
// exactly: copy — every output element is 1.0f; partial rows — every partial is a whole number and
// their sum (64-bit integer, on the host) is n; v8 — the one float is n.
static Check runAndCheck(Row r, const Buffers &b, size_t n, int offset, int grid) {
  unsigned int blocks = rowGrid(r, n, grid);
  if (r == Row::Copy) {
    CUDA_CHECK(cudaMemset(b.outAlloc, 0xFF, allocFloats(b.maxN) * sizeof(float)));
  } else {
    CUDA_CHECK(cudaMemset(b.partials, 0xFF, b.maxPartials * sizeof(float)));
    CUDA_CHECK(cudaMemset(b.result, 0xFF, sizeof(float)));
  }
  launchRow(r, b, n, offset, grid);
  CUDA_CHECK(cudaDeviceSynchronize());

  Check c{true, 0.0, double(n), ""};
  if (r == Row::Copy) {
    // Count the ones in the destination, and check the guards around it were not written. Read
    // in chunks, so n = 2^32 needs 64 MiB of host memory, not 16 GiB.
    const size_t total = allocFloats(b.maxN), chunk = size_t(1) << 24;
    std::vector<float> host(std::min(total, chunk));
    size_t first = size_t(kPad) + offset;
    size_t ones = 0, strays = 0;
    for (size_t base = 0; base < total; base += chunk) {
      size_t count = std::min(chunk, total - base);
      CUDA_CHECK(cudaMemcpy(host.data(), b.outAlloc + base, count * sizeof(float),
                            cudaMemcpyDeviceToHost));
      for (size_t k = 0; k < count; ++k) {
        size_t i = base + k;
        bool inside = i >= first && i < first + n;
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
                 " elements outside the destination";
    }
    return c;
  }
  std::vector<float> host(r == Row::V8 ? 1 : blocks);
  CUDA_CHECK(cudaMemcpy(host.data(), r == Row::V8 ? b.result : b.partials,
                        host.size() * sizeof(float), cudaMemcpyDeviceToHost));
  uint64_t sum = 0;
  for (size_t i = 0; i < host.size(); ++i) {
    float p = host[i];
    if (!(p >= 0.0f) || p != std::floor(p)) { // NaN fails the first test
      c.ok = false;
      c.got = double(p);
      c.detail = "partial " + std::to_string(i) + " is " + std::to_string(p) +
                 " (not a whole count: unwritten, or a NaN guard was read)";
      return c;
    }
    sum += uint64_t(p);
  }
  c.got = double(sum);
  if (sum != uint64_t(n)) {
    c.ok = false;
  }
  return c;
}

// Prints one failed check: got, want, and the difference in elements.
static void reportFailure(const char *what, Row r, size_t n, int offset, int grid, const Check &c) {
  std::printf("CHECK FAILED: %s %s n=%zu offset=%d blocks=%u got %.0f want %.0f (off by %.0f "
              "elements)%s%s\n",
              what, rowName(r), n, offset, rowGrid(r, n, grid), c.got, c.want, c.got - c.want,
              c.detail.empty() ? "" : ": ", c.detail.c_str());
}

// ---------------------------------------------------------------------------------------------
// Options.
// ---------------------------------------------------------------------------------------------
struct Options {
  size_t n = kDefaultN;
  int grid = kDefaultGrid;
  int offset = 0;
  bool sweep = false;
  bool selfTest = false;
  bool raceDemo = false;
  size_t selfTestMaxN = size_t(1) << 24; // --max-n: trims the self-test matrix (sanitizer runs)
  bool help = false;
};

static const char *kUsage =
    "usage: reduction_2 [--n N] [--blocks B] [--offset K] [--sweep | --self-test [--max-n N] |\n"
    "                    --race-demo] [--help]\n"
    "  --n N        elements, all 1.0f (default 67108864 = 2^26). Exact domain: any N from 1 to\n"
    "               16777216 (2^24); above that a power of two up to 4294967296 (2^32), with\n"
    "               --offset 0, where device memory allows (2 x 4 N bytes).\n"
    "  --blocks B   grid of the grid-stride rows v4c..v8: a power of two from 1 to 65536 (default\n"
    "               1024). v4 always uses its own grid, ceil(N / 512).\n"
    "  --offset K   the input starts K floats (K = 0..3) past a 256-byte-aligned address.\n"
    "  --sweep      the exercise: v8 over 64, 256, 1024, 4096 and 16384 blocks, each checked and\n"
    "               scored as % of the copy row; exit 1 if any check failed.\n"
    "  --self-test  every row over an edge matrix of n x offsets {0,1,2,3} x blocks {1,2,64,1024,\n"
    "               16384}, no timing; one line per failure; exit 1 on any.\n"
    "  --max-n N    with --self-test: only the sizes up to N (for compute-sanitizer runs).\n"
    "  --race-demo  runs the legacy volatile warp-synchronous tail once, for compute-sanitizer\n"
    "               racecheck: it returns the right sum and is still a data race since Volta.\n"
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
  bool haveMaxN = false, haveN = false, haveGrid = false, haveOffset = false;
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
    } else if (a == "--n" || a == "--blocks" || a == "--offset" || a == "--max-n") {
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
        haveN = true;
      } else if (a == "--max-n") {
        if (!parseCount(v, kExactAnyOrder, x) || x == 0) {
          return "--max-n " + std::string(v) + ": must be a whole number from 1 to 16777216";
        }
        o.selfTestMaxN = x;
        haveMaxN = true;
      } else if (a == "--blocks") {
        if (!parseCount(v, kMaxGrid, x) || !isPowerOfTwo(x)) {
          return "--blocks " + std::string(v) +
                 ": must be a power of two from 1 to 65536 (a power-of-two grid keeps every "
                 "thread's count equal, which the exact sum above 2^24 needs)";
        }
        o.grid = int(x);
        haveGrid = true;
      } else {
        if (!parseCount(v, 3, x)) {
          return "--offset " + std::string(v) + ": must be 0, 1, 2 or 3 (floats past alignment)";
        }
        o.offset = int(x);
        haveOffset = true;
      }
    } else {
      return "unknown option '" + a + "' (see --help)";
    }
  }
  if (int(o.sweep) + int(o.selfTest) + int(o.raceDemo) > 1) {
    return "--sweep, --self-test and --race-demo are separate runs: choose one";
  }
  if (o.selfTest && (haveN || haveGrid || haveOffset)) {
    return "--self-test runs its own matrix of n, offsets and blocks: --n, --blocks and --offset "
           "do not apply (--max-n trims it)";
  }
  if (o.sweep && haveGrid) {
    return "--sweep runs v8 on its own grids (64 .. 16384 blocks): --blocks does not apply";
  }
  if (haveMaxN && !o.selfTest) {
    return "--max-n only trims --self-test";
  }
  if (o.n > kExactAnyOrder && !isPowerOfTwo(o.n)) {
    return "--n " + std::to_string(o.n) +
           ": above 16777216 (2^24) a float sum of ones is exact only for a power of two";
  }
  if (o.n > kExactAnyOrder && o.offset != 0) {
    return "--offset " + std::to_string(o.offset) +
           ": above n = 2^24 only offset 0 keeps every thread's count equal (exact sum)";
  }
  return "";
}

// ---------------------------------------------------------------------------------------------
// The runs: the table, the sweep, the self-test, the race demo.
// ---------------------------------------------------------------------------------------------

struct Measured {
  Row row;
  unsigned int blocks;
  double mb;
  Timing t;
  bool ok;
};

static void printBanner(const cudaDeviceProp &p) {
  std::printf("GPU: %s | cc %d.%d | %d SMs | %zu KiB shared/block | %d MiB L2 | warp %d\n", p.name,
              p.major, p.minor, p.multiProcessorCount, p.sharedMemPerBlock / 1024,
              p.l2CacheSize / (1024 * 1024), p.warpSize);
}

static void printTableHeader() {
  std::printf(
      "| row  | produces  | blocks |       MB |       ms | spread %% |    GB/s | %% of copy "
      "| check |\n");
  std::printf("|------|-----------|--------|----------|----------|----------|---------|-----------"
              "|-------|\n");
}

static void printRow(const char *name, const char *produces, const Measured &m, double copyGBs) {
  double gbs = m.mb / m.t.ms;
  std::printf("| %-4s | %-9s | %6u | %8.3f | %8.5f | %8.1f | %7.1f | %9.1f | %-5s |\n", name,
              produces, m.blocks, m.mb, m.t.ms, m.t.spread, gbs, 100.0 * gbs / copyGBs,
              m.ok ? "exact" : "FAIL");
}

// Checks row r, times it, checks it again. Failures are printed and counted in `failures`.
static Measured measureRow(Row r, const Buffers &b, size_t n, int offset, int grid, int &checks,
                           int &failures) {
  Measured m{r, rowGrid(r, n, grid), rowBytes(r, n, grid) / 1e6, {0.0, 0.0}, true};
  Check before = runAndCheck(r, b, n, offset, grid);
  ++checks;
  if (!before.ok) {
    reportFailure("before timing", r, n, offset, grid, before);
    ++failures;
    m.ok = false;
  }
  m.t = timeKernel([&] { launchRow(r, b, n, offset, grid); });
  Check after = runAndCheck(r, b, n, offset, grid);
  ++checks;
  if (!after.ok) {
    reportFailure("after timing", r, n, offset, grid, after);
    ++failures;
    m.ok = false;
  }
  return m;
}

static int runLadder(const Options &o, const Buffers &b, int &checks, int &failures) {
  const Row rows[] = {Row::Copy, Row::V4, Row::V4c, Row::V5, Row::V6, Row::V7, Row::V8};
  std::vector<Measured> out;
  for (Row r : rows) {
    out.push_back(measureRow(r, b, o.n, o.offset, o.grid, checks, failures));
  }
  if (int(out.size()) != kRowCount) { // a real branch: Release builds delete assert()
    std::printf("internal error: %zu rows measured, the table has %d\n", out.size(), kRowCount);
    return 1;
  }
  std::printf("\nn = %zu floats (%.1f MiB), offset %d, %d threads a block, grid-stride rows on %d "
              "blocks; median of %d batches of %d launches\n\n",
              o.n, o.n * 4.0 / (1 << 20), o.offset, kBlock, o.grid, kTimingBatches,
              kLaunchesPerBatch);
  printTableHeader();
  double copyGBs = out[0].mb / out[0].t.ms;
  for (const Measured &m : out) {
    printRow(rowName(m.row), rowProduces(m.row), m, copyGBs);
  }
  std::printf(
      "\nOnly v8 leaves one number on the device. v4..v7 stop at partials (one float a block):\n"
      "a second pass or the host must still add them, so compare them with each other, not with "
      "v8.\n"
      "The copy row counts bytes read + written (8 a float); reduction rows count bytes read (4 a\n"
      "float, plus v8's partials). A reduction only reads, so it can pass 100 %% of copy: the\n"
      "percentage compares two numbers from this run, not a limit.\n");
  return 0;
}

static int runSweep(const Options &o, const Buffers &b, int &checks, int &failures) {
  const int grids[] = {64, 256, 1024, 4096, 16384};
  Measured copy = measureRow(Row::Copy, b, o.n, o.offset, o.grid, checks, failures);
  std::vector<Measured> out;
  for (int g : grids) {
    out.push_back(measureRow(Row::V8, b, o.n, o.offset, g, checks, failures));
  }
  std::printf(
      "\nsweep: v8 (two passes, one float) over the grid, n = %zu floats, offset %d; median "
      "of %d batches of %d launches\n\n",
      o.n, o.offset, kTimingBatches, kLaunchesPerBatch);
  printTableHeader();
  double copyGBs = copy.mb / copy.t.ms;
  printRow("copy", "copy", copy, copyGBs);
  for (const Measured &m : out) {
    printRow("v8", "one float", m, copyGBs);
  }
  std::printf(
      "\nEvery row is printed whether its check passed or not; a FAIL row is not a speed.\n");
  return 0;
}

static int runSelfTest(const Options &o, const Buffers &b, int &checks, int &failures) {
  const size_t sizes[] = {1,    2,    3,     4,     5,     7,       31,       32,      33,   255,
                          256,  257,  511,   512,   513,   1023,    1024,     1025,    1027, 4095,
                          4096, 4097, 65535, 65536, 65537, 1048577, 16776605, 16777216};
  const int grids[] = {1, 2, 64, 1024, 16384};
  const Row rows[] = {Row::Copy, Row::V4, Row::V4c, Row::V5, Row::V6, Row::V7, Row::V8};
  int tested = 0;
  for (size_t n : sizes) {
    if (n > o.selfTestMaxN) {
      continue;
    }
    for (int offset = 0; offset < 4; ++offset) {
      prepareInput(b, n, offset);
      for (int g : grids) {
        for (Row r : rows) {
          if ((r == Row::Copy || r == Row::V4) && g != grids[0]) {
            continue; // these two ignore --blocks: test them once per (n, offset)
          }
          Check c = runAndCheck(r, b, n, offset, g);
          ++checks;
          ++tested;
          if (!c.ok) {
            ++failures;
            reportFailure("self-test", r, n, offset, g, c);
          }
        }
      }
    }
  }
  std::printf("self-test: %d row runs over n <= %zu, offsets 0..3, blocks {1, 2, 64, 1024, 16384}: "
              "%d failed\n",
              tested, o.selfTestMaxN, failures);
  return 0;
}

static int runRaceDemo(const Options &o, const Buffers &b, int &checks, int &failures) {
  CUDA_CHECK(cudaMemset(b.partials, 0xFF, b.maxPartials * sizeof(float)));
  reduceRaceDemo<<<o.grid, kBlock>>>(inputStart(b, o.offset), b.partials, o.n);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<float> host(o.grid);
  CUDA_CHECK(
      cudaMemcpy(host.data(), b.partials, host.size() * sizeof(float), cudaMemcpyDeviceToHost));
  double sum = 0.0;
  for (float p : host) {
    sum += p;
  }
  ++checks;
  bool ok = sum == double(o.n);
  if (!ok) {
    ++failures;
  }
  std::printf("race demo (legacy volatile warp-synchronous tail), n = %zu on %d blocks: sum of "
              "partials %.0f, want %zu: %s\n",
              o.n, o.grid, sum, o.n, ok ? "right sum" : "WRONG sum");
  std::printf("A right sum proves nothing here: run it under `compute-sanitizer --tool racecheck` "
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
  size_t maxN = o.selfTest ? std::min(o.selfTestMaxN, kExactAnyOrder) : o.n;
  size_t maxPartials = std::max<size_t>(v4Grid(maxN), kMaxGrid);

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
    std::printf("error: this program's warp-shuffle tails assume %d lanes a warp; the device has "
                "%d\n",
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
    status = runSelfTest(o, b, checks, failures);
  } else {
    prepareInput(b, o.n, o.offset);
    if (o.sweep) {
      status = runSweep(o, b, checks, failures);
    } else if (o.raceDemo) {
      status = runRaceDemo(o, b, checks, failures);
    } else {
      status = runLadder(o, b, checks, failures);
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
