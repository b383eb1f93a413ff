// Day 27: finishing a multi-block reduction in ONE launch — the last block, fences, tickets.
//
// Day 25's v8 needs two launches to leave one float on the device: pass 1 writes one partial a
// block, pass 2 (one block) adds them. Today the grid finishes the job itself: every block writes
// its partial and takes a ticket from a counter; the block that draws the LAST ticket knows every
// other partial is written, adds them, and resets the counter for the next launch. No block ever
// waits for another, so it cannot hang.
//
// Rows, in order, with the one change between neighbours (all on the same 1024 x 256 grid, the same
// float4 grid-stride loads and the same warp-shuffle block reduction, so only the finish differs):
//   copy                   the ceiling: a float4 copy of the same buffer (bytes read + written).
//   v8                     two launches: pass 1 leaves partials, pass 2 (one block) adds them.
//   last-block fence       ONE launch: partial, __threadfence(), atomicAdd ticket; the last block
//                          fences again, reads the partials with __ldcg (L2, never a stale L1
//                          line), adds them and resets the counter.
//   last-block atomic_ref  the same promise in the C++ memory model: cuda::atomic_ref fetch_add
//                          with memory_order_acq_rel at thread_scope_device; plain loads after it.
// All three reductions produce one float on the device.
//
// Then the repetition: 10,000 back-to-back launches of each one-launch row on the same buffers,
// each followed by a one-thread checker kernel that compares the float with n, checks the counter
// is back to 0, counts any mismatch, and poisons the float (so the next launch must write it
// again). A counter that is not reset shows up here for certain; a missing fence only if an
// unlucky interleaving happens. The repetition is the smoke detector; the comments are the proof.
//
// Why not a grid-wide "wait until every block has arrived" flag: nothing guarantees that the
// blocks being waited for are resident. A spinning block holds its SM slot; if the awaited block
// needs that slot, the grid hangs. The README explains it; this file does not ship it.
//
// Build and run (any card; a Colab T4 is sm_75, an H200 sm_90):
//   nvcc -std=c++17 -O3 -arch=sm_75 -o last_block code/day27-last-block/last_block.cu
//   ./last_block                 the table at n = 2^16, 2^20, 2^24, 2^26, then the repetition
//   ./last_block --n 65537       one size (any n from 1 to 2^24, or a power of two up to 2^32)
//   ./last_block --self-test     every row over the day-25 edge matrix, then the repetition
//
// What is checked: every row's result, exactly (inputs are 1.0f, so the sum is n), before it is
// timed and again after; for the one-launch rows also that the ticket counter is back to 0; every
// one of the repeated launches, on the device. Out-of-range reads are caught by NaN guards around
// the input, unwritten results by NaN poison. What is NOT checked: speed (the table reports it; no
// threshold decides pass or fail).
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

#include <cuda/atomic>
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
constexpr int kBlock = 256;                        // threads a block, every reduction kernel
constexpr int kWarp = 32;                          // lanes a warp (checked on the device too)
constexpr int kWarpsPerBlock = kBlock / kWarp;     // one shared slot a warp in the block reduce
constexpr int kDefaultGrid = 1024;                 // blocks of every reduction row
constexpr size_t kDefaultN = size_t(1) << 26;      // the largest timed size: 2^26 floats = 256 MiB
constexpr size_t kExactAnyOrder = size_t(1) << 24; // a float holds every integer up to 2^24
constexpr size_t kMaxN = size_t(1) << 32;          // largest --n (needs 2 x 16 GiB on the device)
constexpr int kMaxGrid = 65536;                    // largest --blocks
constexpr int kPad = 4;                            // NaN guard floats before and after the input
constexpr int kDefaultReps = 10000;                // repeated launches a one-launch row
constexpr int kMaxReps = 1000000;                  // largest --reps

// The timed sizes when no --n is given: two that fit in an H200's L2, two that do not.
constexpr size_t kTimedSizes[] = {size_t(1) << 16, size_t(1) << 20, size_t(1) << 24, kDefaultN};

__host__ __device__ constexpr bool isPowerOfTwo(size_t x) {
  return x != 0 && (x & (x - 1)) == 0;
}

// The block reduction below: whole warps, at most 32 of them (warp 0 adds one value a warp).
static_assert(kBlock % kWarp == 0 && kWarpsPerBlock >= 1 && kWarpsPerBlock <= kWarp, "block");
static_assert(isPowerOfTwo(kBlock) && kBlock <= 1024, "block size: a power of two up to 1024");
// Exactness lemma: a float sum of values that are all integer multiples of 2^k is exact at every
// step while every running sum stays <= 2^(24+k). Up to n = 2^24 every value is a multiple of 1
// and every running sum <= 2^24: exact in any order. Above 2^24, n and the grid are powers of two
// (and the offset 0), so with T = grid x kBlock threads either every thread adds the same
// power-of-two count c of float4s (every thread sum 4c, every block partial 256 x 4c, running sums
// multiples of 4c, total n = T x 4c <= 2^24 x 4c since T <= 2^24), or n/4 < T and each thread
// adds 0 or 1 float4, the non-empty threads forming whole blocks (n/4 >= 2^23 >= kBlock), so
// every partial is 0 or 1024 and the total n <= 2^32 <= 2^(24+10).
static_assert(isPowerOfTwo(kDefaultN) && isPowerOfTwo(kDefaultGrid),
              "default n, grid: powers of 2");
static_assert(kDefaultN % (size_t(4) * kBlock * kDefaultGrid) == 0, "equal float4 count a thread");
static_assert(kDefaultN / (size_t(kBlock) * kDefaultGrid) <= kExactAnyOrder,
              "per-thread sum exact");
// Every thread total is at most kMaxN / (1 block x kBlock) = 2^24: exact in any order.
static_assert(kMaxN / kBlock <= kExactAnyOrder, "per-thread sums stay exact up to kMaxN");

// ---------------------------------------------------------------------------------------------
// timeKernel: CUDA events around batches of back-to-back launches of ONE kernel configuration.
// ---------------------------------------------------------------------------------------------
constexpr int kTimingBatches = 11;    // odd, so the median is one batch
constexpr int kLaunchesPerBatch = 20; // back-to-back calls between one event pair

struct Timing {
  double ms;     // median over batches of (batch ms / calls): ms per call
  double spread; // (slowest batch - fastest batch) / median, in percent
};

// launch: a callable that enqueues one call (v8: both launches) on the default stream and checks
// cudaGetLastError(). Warm-up: the same callable, run and synchronized first (lazy loading makes a
// kernel's first launch pay its module load). Returns ms per call (median over kTimingBatches) and
// the spread in percent. Errors: any CUDA failure exits 1 through CUDA_CHECK.
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
// Device helpers shared by every reduction row (day 25's v7 loads, a shuffle-first block reduce).
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
// of >= 3 threads. 64-bit indices throughout: n reaches 2^32. `in` must not be written by anyone
// while the kernel runs: the loads are __ldg (the read-only, non-coherent path). The compiler picks
// that path by itself for v8 but not inside the kernels with atomics and fences, so we ask for it
// in every row: the rows then differ only in how they finish.
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
// writes one shared slot, and warp 0 adds the kWarpsPerBlock slots the same way. Every thread of
// the block must call it (it holds a barrier); blockDim.x == kBlock. Returns the block's sum in
// thread 0 (other threads hold part of it). The full mask 0xffffffff is right: all 32 lanes of
// every warp run the first loop, and all 32 lanes of warp 0 run the second (the whole warp takes
// the `warp == 0` branch; lanes past kWarpsPerBlock add 0). warpSums holds kWarpsPerBlock
// floats; a caller that reuses it must pass a __syncthreads() between two calls.
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
    v = lane < kWarpsPerBlock ? warpSums[lane] : 0.0f;
    for (int offset = kWarp / 2; offset > 0; offset >>= 1) {
      v += __shfl_down_sync(0xffffffffu, v, offset);
    }
  }
  return v; // meaningful in thread 0 only
}

// ---------------------------------------------------------------------------------------------
// Kernels, in row order.
// ---------------------------------------------------------------------------------------------

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

// v8, each pass: in[0, n) -> partials[blockIdx.x]. Launch: blockDim.x == kBlock, any grid >= 1.
// Pass 1 runs it over the input on `grid` blocks; pass 2 on ONE block over the `grid` partials
// (cudaMalloc'd, so 16-byte aligned: no head), which leaves the sum in partials'[0] = the result.
// Between the passes the kernel boundary is the barrier: pass 2 starts after every block of pass 1
// has finished and its writes are visible. That second launch is what today removes.
// ptx: v4-loads shfl
__global__ void __launch_bounds__(kBlock)
    reduceToPartials(const float *__restrict__ in, float *__restrict__ partials, size_t n) {
  __shared__ float warpSums[kWarpsPerBlock];
  float v = blockReduceSum(gridStrideSum(in, n), warpSums);
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = v;
  }
}

// snippet: last-block-fence
// last-block fence: ONE launch leaves the sum in *result. Launch: blockDim.x == kBlock, any grid
// of 1..65536 blocks; *ticket == 0 at launch (cudaMemset once; every launch leaves it at 0).
// partials holds gridDim.x floats. NOT `const __restrict__`: the last block reads what other blocks
// wrote during this launch, which the read-only (non-coherent) load path may not see.
// Publisher (thread 0 of every block, after the block reduce's barrier): write the partial, then
// __threadfence() so that the partial is visible device-wide BEFORE the ticket, then atomicAdd.
// Last block: the thread that drew ticket gridDim.x - 1 fences again (the acquire half: nothing it
// reads afterwards may come from before the other blocks' fences), and the block reads the
// partials with __ldcg: ld.global.cg caches in L2 only, the level every SM's stores reach, so no
// stale L1 line of this SM can answer. (The CUDA guide's version uses a `volatile` pointer for the
// same reason; __ldcg says it at the one load that needs it.) Then it resets the counter: every
// other block has already drawn its ticket, so nothing else touches it in this launch, and the
// next launch, queued behind this one, starts from 0.
// Sources (research/day27-last-block.md): cuda-samples threadFenceReduction (the pattern), PyTorch
// Reduce.cuh (the acquire-side fence), the PTX atomics ABI (fence + atomic release/acquire).
// ptx: v4-loads shfl atom
__global__ void __launch_bounds__(kBlock)
    reduceLastBlockFence(const float *__restrict__ in, size_t n, float *partials,
                         unsigned int *ticket, float *result) {
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
  if (isLastBlockDone) { // the same value in every thread: the barriers inside are reached by all
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
// end snippet

// snippet: last-block-atomic-ref
// last-block atomic_ref: the same kernel with the ordering spelled in the C++ memory model
// (libcu++, <cuda/atomic>). fetch_add with memory_order_acq_rel at thread_scope_device is a
// release for the partial this thread wrote just before it and an acquire for the partials the
// other blocks released before their fetch_adds. The last block's other threads inherit that
// acquire through __syncthreads(), so they read the partials with ordinary loads: the memory model,
// not a cache hint, is what makes the values current. Launch: as last-block fence.
// Sources (research/day27-last-block.md): the libcu++ docs for cuda::atomic_ref and thread scopes.
// ptx: v4-loads shfl atom
__global__ void __launch_bounds__(kBlock)
    reduceLastBlockAtomicRef(const float *__restrict__ in, size_t n, float *partials,
                             unsigned int *ticket, float *result) {
  __shared__ float warpSums[kWarpsPerBlock];
  __shared__ bool isLastBlockDone;
  float v = blockReduceSum(gridStrideSum(in, n), warpSums);
  if (threadIdx.x == 0) { // ONE thread: it wrote the partial, it takes the ticket
    partials[blockIdx.x] = v;
    cuda::atomic_ref<unsigned int, cuda::thread_scope_device> counter(*ticket);
    unsigned int drawn = counter.fetch_add(1u, cuda::memory_order_acq_rel);
    isLastBlockDone = drawn == gridDim.x - 1;
  }
  __syncthreads(); // every thread reaches it; it hands isLastBlockDone to the whole block
  if (isLastBlockDone) {
    float s = 0.0f;
    for (unsigned int b = threadIdx.x; b < gridDim.x; b += blockDim.x) {
      s += partials[b];
    }
    s = blockReduceSum(s, warpSums);
    if (threadIdx.x == 0) {
      *result = s;
      cuda::atomic_ref<unsigned int, cuda::thread_scope_device> counter(*ticket);
      counter.store(0u, cuda::memory_order_relaxed); // reset for the next launch
    }
  }
}
// end snippet

// snippet: device-check
// The repetition's checker: ONE thread (launch <<<1, 1>>>), queued after each one-launch reduction.
// Counts a wrong sum (remembering the last wrong value) and a counter not back to 0, then poisons
// the result with NaN so that the next launch must write it again: a launch that wrote nothing
// (for example a counter never reset, so no block draws the last ticket) fails, not passes.
// ptx: atom
__global__ void checkAndPoison(float *result, float want, const unsigned int *ticket,
                               unsigned int *wrongSums, unsigned int *notReset, float *lastWrong) {
  if (blockIdx.x != 0 || threadIdx.x != 0) {
    return;
  }
  float got = *result;
  if (!(got == want)) { // NaN compares unequal: an unwritten result counts
    atomicAdd(wrongSums, 1u);
    *lastWrong = got;
  }
  if (*ticket != 0u) {
    atomicAdd(notReset, 1u);
  }
  *result = __int_as_float(0x7fc00000); // NaN
}
// end snippet

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

// The rows, in table order. The two one-launch rows each own a ticket counter and a result slot.
enum class Row { Copy, V8, LastBlockFence, LastBlockAtomicRef };
constexpr int kRowCount = 4;
constexpr Row kRows[kRowCount] = {Row::Copy, Row::V8, Row::LastBlockFence, Row::LastBlockAtomicRef};
constexpr Row kOneLaunchRows[] = {Row::LastBlockFence, Row::LastBlockAtomicRef};

static const char *rowName(Row r) {
  switch (r) {
  case Row::Copy:
    return "copy";
  case Row::V8:
    return "v8";
  case Row::LastBlockFence:
    return "last-block fence";
  case Row::LastBlockAtomicRef:
    return "last-block atomic_ref";
  }
  return "?";
}
static const char *rowProduces(Row r) {
  return r == Row::Copy ? "copy" : "one float";
}
static bool isOneLaunch(Row r) {
  return r == Row::LastBlockFence || r == Row::LastBlockAtomicRef;
}
static int slotOf(Row r) { // result slot (reduction rows) and ticket index (one-launch rows)
  return r == Row::LastBlockFence ? 1 : (r == Row::LastBlockAtomicRef ? 2 : 0);
}

// Device buffers, allocated once for the largest size a run needs.
struct Buffers {
  float *inAlloc = nullptr;          // kPad + 3 + maxN + kPad floats: NaN guards around the input
  float *outAlloc = nullptr;         // the copy's destination, same layout
  float *partials = nullptr;         // one float a block, kMaxGrid of them
  float *results = nullptr;          // 3 floats: v8, last-block fence, last-block atomic_ref
  unsigned int *tickets = nullptr;   // 3 counters (slot 0 unused): one a one-launch row
  unsigned int *repCounts = nullptr; // 2 a one-launch row: wrong sums, counter not reset
  float *repLastWrong = nullptr;     // 1 a one-launch row: the last wrong sum seen
  size_t maxN = 0;
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
static size_t bytesNeeded(size_t maxN) {
  return 2 * allocFloats(maxN) * sizeof(float) + (kMaxGrid + 3 + 2) * sizeof(float) +
         (3 + 4) * sizeof(unsigned int);
}

static void freeBuffers(Buffers &b) {
  // cudaFree(nullptr) is a no-op, so this is safe on every path.
  CUDA_CHECK(cudaFree(b.inAlloc));
  CUDA_CHECK(cudaFree(b.outAlloc));
  CUDA_CHECK(cudaFree(b.partials));
  CUDA_CHECK(cudaFree(b.results));
  CUDA_CHECK(cudaFree(b.tickets));
  CUDA_CHECK(cudaFree(b.repCounts));
  CUDA_CHECK(cudaFree(b.repLastWrong));
  b = Buffers{};
}

// Allocates for inputs up to maxN elements. Returns false (nothing left allocated) if the device
// is out of memory, so the caller can report it as a clear error. Tickets start at 0, once.
static bool allocBuffers(Buffers &b, size_t maxN) {
  b.maxN = maxN;
  size_t floats = allocFloats(maxN);
  if (cudaMalloc(&b.inAlloc, floats * sizeof(float)) != cudaSuccess ||
      cudaMalloc(&b.outAlloc, floats * sizeof(float)) != cudaSuccess ||
      cudaMalloc(&b.partials, kMaxGrid * sizeof(float)) != cudaSuccess ||
      cudaMalloc(&b.results, 3 * sizeof(float)) != cudaSuccess ||
      cudaMalloc(&b.tickets, 3 * sizeof(unsigned int)) != cudaSuccess ||
      cudaMalloc(&b.repCounts, 4 * sizeof(unsigned int)) != cudaSuccess ||
      cudaMalloc(&b.repLastWrong, 2 * sizeof(float)) != cudaSuccess) {
    (void)cudaGetLastError(); // clear the allocation error
    freeBuffers(b);
    return false;
  }
  CUDA_CHECK(cudaMemset(b.tickets, 0, 3 * sizeof(unsigned int)));
  CUDA_CHECK(cudaMemset(b.results, 0xFF, 3 * sizeof(float))); // NaN until a row writes it
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

// Blocks the row launches (pass 1 for v8).
static unsigned int rowGrid(Row r, size_t n, int grid) {
  if (r == Row::Copy) {
    // One float4 a thread at most, capped: the copy is a ceiling, not a lesson in grids.
    size_t blocks = (n / 4 + kBlock - 1) / kBlock;
    return unsigned(std::max<size_t>(1, std::min<size_t>(blocks, 65536)));
  }
  return unsigned(grid);
}

// Bytes a row moves: the copy reads and writes n floats; every reduction row reads n floats and
// then its `grid` partials (v8 in pass 2, the one-launch rows in their last block).
static double rowBytes(Row r, size_t n, int grid) {
  double b = double(n) * sizeof(float);
  return r == Row::Copy ? 2 * b : b + double(grid) * sizeof(float);
}

// Enqueues one call of row r over n elements starting `offset` floats in, on `grid` blocks.
// Checks every launch. No synchronization.
static void launchRow(Row r, const Buffers &b, size_t n, int offset, int grid) {
  const float *in = inputStart(b, offset);
  unsigned int blocks = rowGrid(r, n, grid);
  float *result = b.results + slotOf(r);
  unsigned int *ticket = b.tickets + slotOf(r);
  switch (r) {
  case Row::Copy:
    copyKernel<<<blocks, kBlock>>>(in, outputStart(b, offset), n);
    break;
  case Row::V8:
    reduceToPartials<<<blocks, kBlock>>>(in, b.partials, n);
    CUDA_CHECK(cudaGetLastError());
    reduceToPartials<<<1, kBlock>>>(b.partials, result, blocks);
    break;
  case Row::LastBlockFence:
    reduceLastBlockFence<<<blocks, kBlock>>>(in, n, b.partials, ticket, result);
    break;
  case Row::LastBlockAtomicRef:
    reduceLastBlockAtomicRef<<<blocks, kBlock>>>(in, n, b.partials, ticket, result);
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

// Reads row r's result (and, for a one-launch row, its ticket counter) as the device left it and
// checks it exactly: copy — every destination element is 1.0f and no guard was written; the
// reductions — the one float is n; the one-launch rows — the counter is back to 0.
static Check checkRow(Row r, const Buffers &b, size_t n, int offset) {
  Check c{true, 0.0, double(n), ""};
  if (r == Row::Copy) {
    // Count the ones in the destination, and check the guards around it were not written: the
    // kPad + offset floats before it and the kPad after it (an off-by-a-few write lands there;
    // compute-sanitizer memcheck catches writes past the allocation).
    std::vector<float> host(size_t(kPad) + offset + n + kPad);
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
  CUDA_CHECK(cudaMemcpy(&got, b.results + slotOf(r), sizeof(float), cudaMemcpyDeviceToHost));
  c.got = double(got);
  if (!(c.got == c.want)) { // NaN (an unwritten result) fails too
    c.ok = false;
  }
  if (isOneLaunch(r)) {
    unsigned int ticket = 0;
    CUDA_CHECK(
        cudaMemcpy(&ticket, b.tickets + slotOf(r), sizeof(unsigned int), cudaMemcpyDeviceToHost));
    if (ticket != 0u) {
      c.ok = false;
      c.detail = "the ticket counter was left at " + std::to_string(ticket) + ", not reset to 0";
      // Reset it here, so that this failure is reported once instead of failing every later run.
      CUDA_CHECK(cudaMemset(b.tickets + slotOf(r), 0, sizeof(unsigned int)));
    }
  }
  return c;
}

// Poisons row r's output with NaN (so an unwritten output fails), runs it once, checks it.
static Check runAndCheck(Row r, const Buffers &b, size_t n, int offset, int grid) {
  if (r == Row::Copy) {
    CUDA_CHECK(cudaMemset(b.outAlloc, 0xFF, allocFloats(b.maxN) * sizeof(float)));
  } else {
    CUDA_CHECK(cudaMemset(b.partials, 0xFF, kMaxGrid * sizeof(float)));
    CUDA_CHECK(cudaMemset(b.results + slotOf(r), 0xFF, sizeof(float)));
  }
  launchRow(r, b, n, offset, grid);
  CUDA_CHECK(cudaDeviceSynchronize());
  return checkRow(r, b, n, offset);
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
  bool haveN = false; // no --n: the table runs at every size of kTimedSizes
  int grid = kDefaultGrid;
  int offset = 0;
  int reps = kDefaultReps;
  bool selfTest = false;
  size_t selfTestMaxN = kExactAnyOrder; // --max-n: trims the self-test matrix (sanitizer runs)
  bool help = false;
};

static const char *kUsage =
    "usage: last_block [--n N] [--blocks B] [--offset K] [--reps R] [--self-test [--max-n N]]\n"
    "                  [--help]\n"
    "  --n N        one size, N elements, all 1.0f (default: the table at 65536, 1048576,\n"
    "               16777216 and 67108864, the repetition at 67108864). Exact domain: any N from\n"
    "               1 to 16777216 (2^24); above that a power of two up to 4294967296 (2^32), with\n"
    "               --offset 0, where device memory allows (2 x 4 N bytes).\n"
    "  --blocks B   grid of every reduction row: a power of two from 1 to 65536 (default 1024).\n"
    "  --offset K   the input starts K floats (K = 0..3) past a 256-byte-aligned address.\n"
    "  --reps R     repeated launches of each one-launch row, each checked on the device\n"
    "               (1 to 1000000, default 10000).\n"
    "  --self-test  every row over an edge matrix of n x offsets {0,1,2,3} x blocks {1,2,64,1024,\n"
    "               16384}, no timing, one line per failure; then the repetition at n = 65537.\n"
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
  bool haveMaxN = false, haveBlocks = false, haveOffset = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      o.help = true;
    } else if (a == "--self-test") {
      o.selfTest = true;
    } else if (a == "--n" || a == "--blocks" || a == "--offset" || a == "--reps" ||
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
        haveBlocks = true;
      } else if (a == "--reps") {
        if (!parseCount(v, kMaxReps, x) || x == 0) {
          return "--reps " + std::string(v) + ": must be a whole number from 1 to 1000000";
        }
        o.reps = int(x);
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
  if (haveMaxN && !o.selfTest) {
    return "--max-n only trims --self-test";
  }
  if (o.selfTest && (o.haveN || haveBlocks || haveOffset)) {
    return "--self-test runs its own sizes, offsets and grids: drop --n, --blocks and --offset "
           "(--max-n trims the sizes)";
  }
  if (o.n > kExactAnyOrder && !isPowerOfTwo(o.n)) {
    return "--n " + std::to_string(o.n) +
           ": above 16777216 (2^24) a float sum of ones is exact only for a power of two";
  }
  if (o.offset != 0 && (o.n > kExactAnyOrder || !o.haveN)) {
    return "--offset " + std::to_string(o.offset) +
           ": above n = 2^24 (the default sizes go to 2^26) only offset 0 keeps every thread's "
           "count equal (exact sum); give an --n up to 16777216";
  }
  return "";
}

// ---------------------------------------------------------------------------------------------
// The runs: the table, the repetition, the self-test.
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

// The input and the copy's destination (8 bytes an element) both fit in L2: every timed launch
// re-reads the same buffers, so such a row measures L2, not DRAM.
static bool fitsInL2(size_t n, const cudaDeviceProp &p) {
  return 2.0 * double(n) * sizeof(float) <= double(p.l2CacheSize);
}

// Checks row r, times it, checks it again. The timed launches run on the same buffers, back to
// back; the check after timing reads what the LAST timed launch left (the result was poisoned
// before timing, so a timed run that never wrote it fails). Failures are printed and counted.
static Measured measureRow(Row r, const Buffers &b, size_t n, int offset, int grid, int &checks,
                           int &failures) {
  Measured m{r, n, rowBytes(r, n, grid) / 1e6, {0.0, 0.0}, true};
  Check before = runAndCheck(r, b, n, offset, grid);
  ++checks;
  if (!before.ok) {
    reportFailure("before timing", r, n, offset, grid, before);
    ++failures;
    m.ok = false;
  }
  if (r == Row::Copy) {
    CUDA_CHECK(cudaMemset(b.outAlloc, 0xFF, allocFloats(b.maxN) * sizeof(float)));
  } else {
    CUDA_CHECK(cudaMemset(b.results + slotOf(r), 0xFF, sizeof(float)));
  }
  m.t = timeKernel([&] { launchRow(r, b, n, offset, grid); });
  CUDA_CHECK(cudaDeviceSynchronize());
  Check after = checkRow(r, b, n, offset);
  ++checks;
  if (!after.ok) {
    reportFailure("after timing", r, n, offset, grid, after);
    ++failures;
    m.ok = false;
  }
  return m;
}

static void printTableHeader() {
  std::printf("| row                   |          n | fits L2 |       MB |        us | spread %% |"
              "    GB/s | %% of copy | vs two-pass | produces  | check |\n");
  std::printf("|-----------------------|------------|---------|----------|-----------|----------|"
              "---------|-----------|-------------|-----------|-------|\n");
}

// One table row. GB/s = MB / us x 1000; % of copy and `vs two-pass` (v8's us / this row's us)
// compare numbers measured at the same n in this run.
static void printRow(const Measured &m, const Measured &copy, const Measured &v8, bool inL2) {
  double us = 1000.0 * m.t.ms;
  double gbs = m.mb / m.t.ms;
  double copyGBs = copy.mb / copy.t.ms;
  char vs[16];
  if (m.row == Row::Copy) {
    std::snprintf(vs, sizeof vs, "-");
  } else {
    std::snprintf(vs, sizeof vs, "%.2fx", v8.t.ms / m.t.ms);
  }
  std::printf("| %-21s | %10zu | %-7s | %8.3f | %9.2f | %8.1f | %7.1f | %9.1f | %11s | %-9s | %-5s "
              "|\n",
              rowName(m.row), m.n, inL2 ? "yes" : "no", m.mb, us, m.t.spread, gbs,
              100.0 * gbs / copyGBs, vs, rowProduces(m.row), m.ok ? "exact" : "FAIL");
}

static int runTable(const Options &o, const Buffers &b, const cudaDeviceProp &p, int &checks,
                    int &failures) {
  std::vector<size_t> sizes;
  if (o.haveN) {
    sizes.push_back(o.n);
  } else {
    sizes.assign(std::begin(kTimedSizes), std::end(kTimedSizes));
  }
  std::vector<Measured> out;
  for (size_t n : sizes) {
    prepareInput(b, n, o.offset);
    for (Row r : kRows) {
      out.push_back(measureRow(r, b, n, o.offset, o.grid, checks, failures));
    }
  }
  if (out.size() != sizes.size() * kRowCount) { // a real branch: Release builds delete assert()
    std::printf("internal error: %zu rows measured, the table has %zu\n", out.size(),
                sizes.size() * kRowCount);
    return 1;
  }
  std::printf(
      "\nreductions on %d blocks x %d threads (float4 grid-stride loads, offset %d); median "
      "of %d batches of %d calls, the same buffers every call\n\n",
      o.grid, kBlock, o.offset, kTimingBatches, kLaunchesPerBatch);
  printTableHeader();
  for (size_t i = 0; i < out.size(); ++i) {
    const Measured &copy = out[i - i % kRowCount];
    const Measured &v8 = out[i - i % kRowCount + 1];
    printRow(out[i], copy, v8, fitsInL2(out[i].n, p));
  }
  std::printf(
      "\nAll three reductions leave one float on the device: v8 with two launches, the last-block\n"
      "rows with one. vs two-pass = v8's us / this row's us (above 1.00x the one launch is "
      "faster).\n"
      "The copy row counts bytes read + written (8 a float); reduction rows count bytes read (4 a\n"
      "float, plus the %d partials), so a reduction can pass 100 %% of copy: the percentage "
      "compares\ntwo numbers from this run, not a limit.\n"
      "fits L2 = yes: the input and the copy's destination fit in this GPU's %d MiB L2 and every\n"
      "timed call reads the same buffers, so those rows measure L2, not DRAM bandwidth.\n",
      o.grid, p.l2CacheSize / (1024 * 1024));
  return 0;
}

// The repetition: `reps` back-to-back launches of each one-launch row over the same n ones, each
// followed by checkAndPoison on the device. One check a row: zero wrong sums and zero counters left
// non-zero. The input must already hold n ones at `offset`.
static void runRepetition(const Buffers &b, size_t n, int offset, int grid, int reps, int &checks,
                          int &failures) {
  CUDA_CHECK(cudaMemset(b.repCounts, 0, 4 * sizeof(unsigned int)));
  CUDA_CHECK(cudaMemset(b.repLastWrong, 0, 2 * sizeof(float)));
  float want = float(n); // exact: n <= 2^24, or a power of two
  for (int k = 0; k < 2; ++k) {
    Row r = kOneLaunchRows[k];
    CUDA_CHECK(cudaMemset(b.results + slotOf(r), 0xFF, sizeof(float)));
    for (int i = 0; i < reps; ++i) {
      launchRow(r, b, n, offset, grid);
      checkAndPoison<<<1, 1>>>(b.results + slotOf(r), want, b.tickets + slotOf(r),
                               b.repCounts + 2 * k, b.repCounts + 2 * k + 1, b.repLastWrong + k);
      CUDA_CHECK(cudaGetLastError());
    }
  }
  CUDA_CHECK(cudaDeviceSynchronize());
  unsigned int counts[4];
  float lastWrong[2];
  CUDA_CHECK(cudaMemcpy(counts, b.repCounts, sizeof counts, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(lastWrong, b.repLastWrong, sizeof lastWrong, cudaMemcpyDeviceToHost));

  std::printf("\nrepetition: %d back-to-back launches of each one-launch row, n = %zu, offset %d, "
              "%d blocks; every result checked on the device, then poisoned\n\n",
              reps, n, offset, grid);
  std::printf("| row                   |          n | launches | wrong sums | counter not reset | "
              "check |\n");
  std::printf("|-----------------------|------------|----------|------------|-------------------|"
              "-------|\n");
  for (int k = 0; k < 2; ++k) {
    Row r = kOneLaunchRows[k];
    bool ok = counts[2 * k] == 0 && counts[2 * k + 1] == 0;
    ++checks;
    if (!ok) {
      ++failures;
    }
    std::printf("| %-21s | %10zu | %8d | %10u | %17u | %-5s |\n", rowName(r), n, reps,
                counts[2 * k], counts[2 * k + 1], ok ? "exact" : "FAIL");
  }
  for (int k = 0; k < 2; ++k) {
    Row r = kOneLaunchRows[k];
    if (counts[2 * k] != 0 || counts[2 * k + 1] != 0) {
      std::printf("CHECK FAILED: repetition %s n=%zu blocks=%d: %u of %d launches left a wrong sum "
                  "(last: got %.0f want %.0f (off by %.0f elements)), %u left the counter "
                  "non-zero\n",
                  rowName(r), n, grid, counts[2 * k], reps, double(lastWrong[k]), double(want),
                  double(lastWrong[k]) - double(want), counts[2 * k + 1]);
    }
  }
}

static int runSelfTest(const Options &o, const Buffers &b, int &checks, int &failures) {
  const size_t sizes[] = {1,    2,    3,     4,     5,     7,       31,       32,      33,   255,
                          256,  257,  511,   512,   513,   1023,    1024,     1025,    1027, 4095,
                          4096, 4097, 65535, 65536, 65537, 1048577, 16776605, 16777216};
  const int grids[] = {1, 2, 64, 1024, 16384};
  int tested = 0;
  for (size_t n : sizes) {
    if (n > o.selfTestMaxN) {
      continue;
    }
    for (int offset = 0; offset < 4; ++offset) {
      prepareInput(b, n, offset);
      for (int g : grids) {
        for (Row r : kRows) {
          if (r == Row::Copy && g != grids[0]) {
            continue; // the copy ignores --blocks: test it once per (n, offset)
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
  // The repetition at an odd size (a head, a tail, most blocks with little to do: the blocks
  // finish close together, where a missing fence would show first), or the largest size allowed.
  size_t repN = std::min<size_t>(65537, o.selfTestMaxN);
  prepareInput(b, repN, 1);
  runRepetition(b, repN, 1, kDefaultGrid, o.reps, checks, failures);
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
  size_t need = bytesNeeded(maxN);
  if (need > freeBytes) {
    std::fprintf(stderr,
                 "error: n = %zu needs %.2f GiB of device memory (input and copy destination); "
                 "%.2f GiB are free on %s\n",
                 maxN, need / double(1u << 30), freeBytes / double(1u << 30), prop.name);
    return 2;
  }
  printBanner(prop);
  if (prop.warpSize != kWarp) {
    std::printf("error: this program's warp-shuffle block reduction assumes %d lanes a warp; the "
                "device has %d\n",
                kWarp, prop.warpSize);
    return 1;
  }

  Buffers b;
  if (!allocBuffers(b, maxN)) {
    std::fprintf(stderr, "error: cudaMalloc of %.2f GiB failed on %s\n", need / double(1u << 30),
                 prop.name);
    return 1;
  }

  int checks = 0, failures = 0, status = 0;
  if (o.selfTest) {
    status = runSelfTest(o, b, checks, failures);
  } else {
    status = runTable(o, b, prop, checks, failures);
    if (status == 0) {
      prepareInput(b, o.n, o.offset);
      runRepetition(b, o.n, o.offset, o.grid, o.reps, checks, failures);
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
