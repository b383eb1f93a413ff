// Day 27: finishing a multi-block reduction in ONE launch: the last block, fences, tickets.
//
// Rows, one change between neighbours (one 1024 x 256 grid, day 25's float4 grid-stride loads and
// a warp-shuffle block sum in every reduction row: only the finish differs):
//   copy                   the ceiling: a float4 copy of the same buffer (bytes read + written).
//   v8                     two launches: pass 1 leaves 1024 partials, pass 2 (one block) adds them.
//   last-block fence       ONE launch: partial, __threadfence(), atomicAdd ticket; the block that
//                          draws the last ticket fences, reads the partials with __ldcg, adds them
//                          and resets the counter. No block ever waits for another.
//   last-block atomic_ref  the same order in the C++ memory model: cuda::atomic_ref fetch_add with
//                          memory_order_acq_rel at thread_scope_device; plain loads after it.
// Then the repetition: 10,000 launches of each one-launch row, each checked on the device.
//
// Exact: the input is 1.0f, so the sum is n: any order up to 2^24, powers of two above (the lemma
// by the static_asserts). Every row is checked before timing and on what the LAST timed launch
// wrote, the tickets back at 0; speed is not checked. Edge matrix, second input, guard bands,
// sanitizers: tests/harness/day27-last-block.cu. Exit 0 pass, 1 a check or CUDA error, 2 usage.
// Build: nvcc -std=c++17 -O3 -arch=sm_75 -o last_block code/day27-last-block/last_block.cu
// Run:   ./last_block  (n = 2^16 .. 2^26, then the repetition; --n N, --reps R; --help)

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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

// snippet: delay-hook
// Empty in the lesson; the test program's delay.h makes a chosen block sleep before it publishes.
#ifndef DELAY_BEFORE_PUBLISH
#define DELAY_BEFORE_PUBLISH(block)
#endif
// end snippet

// The lesson's constants and the exactness argument they must keep.
// snippet: constants
constexpr int kBlock = 256;                    // threads a block, every reduction kernel
constexpr int kWarp = 32;                      // lanes a warp (checked on the device too)
constexpr unsigned kFullMask = 0xffffffffu;    // all 32 lanes: the mask of every shuffle
constexpr int kWarpsPerBlock = kBlock / kWarp; // one shared slot a warp in the block reduce
// end snippet
constexpr int kGrid = 1024;                        // blocks of every reduction row
constexpr int kMaxGrid = 65536;                    // largest grid the kernels take (partials)
constexpr size_t kDefaultN = size_t(1) << 26;      // the largest timed size: 2^26 floats = 256 MiB
constexpr size_t kExactAnyOrder = size_t(1) << 24; // a float holds every integer up to 2^24
constexpr size_t kMaxN = size_t(1) << 32;          // largest --n (needs 2 x 16 GiB on the device)
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
static_assert(isPowerOfTwo(kDefaultN) && isPowerOfTwo(kGrid), "default n, grid: powers of 2");
static_assert(kGrid <= kMaxGrid && size_t(kMaxGrid) * kBlock <= kExactAnyOrder, "grid range");
static_assert(kDefaultN % (size_t(4) * kBlock * kGrid) == 0, "equal float4 count a thread");
static_assert(kDefaultN / (size_t(kBlock) * kGrid) <= kExactAnyOrder, "per-thread sum exact");
// Every thread total is at most kMaxN / (1 block x kBlock) = 2^24: exact in any order.
static_assert(kMaxN / kBlock <= kExactAnyOrder, "per-thread sums stay exact up to kMaxN");

// ==== Kernels and the device functions they share, in row order.

// Device helpers shared by every reduction row (day 25's v7 loads, a shuffle-first block reduce).
// snippet: helpers
// Floats from `p` to the next 16-byte boundary (0..3), at most n: the scalar head peeled so that
// every float4 load starts on a 16-byte boundary.
// Needs: <cstdint>
__host__ __device__ inline size_t headToAlign16(const float *p, size_t n) {
  size_t past = (reinterpret_cast<uintptr_t>(p) / sizeof(float)) % 4; // floats past a boundary
  size_t head = past == 0 ? 0 : 4 - past;
  return head < n ? head : n;
}

// This thread's share of in[0, n): grid-stride over the aligned body's float4s, plus head and tail
// element t for grid thread t. Any grid of blocks of >= 3 threads; 64-bit indices (n to 2^32).
// Loads are __ldg (read-only path) in every row, so the rows differ only in how they finish; no
// one may write `in` while the kernel runs.
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

// Block sum, shuffle first: each warp adds its 32 values, lane 0 writes one shared slot, warp 0
// adds the slots. Every thread of the block calls it (a barrier); blockDim.x == kBlock. The sum is
// in thread 0. kFullMask is right: all 32 lanes run both loops (warp 0 takes its branch whole).
// Reusing warpSums needs a __syncthreads() between two calls.
// Needs: kBlock, kWarp, kWarpsPerBlock, kFullMask
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
    v = lane < kWarpsPerBlock ? warpSums[lane] : 0.0f;
    for (int offset = kWarp / 2; offset > 0; offset >>= 1) {
      v += __shfl_down_sync(kFullMask, v, offset);
    }
  }
  return v; // meaningful in thread 0 only
}
// end snippet

// Kernels, in row order.
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

// v8, each pass: in[0, n) -> partials[blockIdx.x]. Launch: blockDim.x == kBlock, any grid >= 1.
// Pass 1 runs it over the input on `grid` blocks; pass 2 on ONE block over the `grid` partials
// (cudaMalloc'd, so 16-byte aligned: no head); launchRow passes the row's result slot as pass 2's
// `partials`, so pass 2's one partial, partials[0], is the sum.
// Between the passes the kernel boundary is the barrier: pass 2 starts after every block of pass 1
// has finished and its writes are visible. That second launch is what today removes.
// Needs: kBlock, kWarpsPerBlock, gridStrideSum, blockReduceSum
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
// last-block fence: ONE launch leaves the sum in *result. blockDim.x == kBlock, 1..65536 blocks;
// *ticket == 0 at launch, and every launch leaves it 0. partials (gridDim.x floats) is NOT `const
// __restrict__`: the last block reads what other blocks wrote in this launch.
// Thread 0 of each block: partial, __threadfence() (release: the partial is visible before the
// ticket), atomicAdd. The thread that draws gridDim.x - 1 fences again (acquire); its block reads
// the partials with __ldcg (L2: no stale L1 line answers), adds them and resets the counter (all
// others have drawn; the next launch starts after this one). Sources: cuda-samples
// threadFenceReduction, PyTorch Reduce.cuh, the PTX atomics ABI (research/day27-last-block.md).
// Launch: reduceLastBlockFence<<<1024, kBlock>>>(in, n, partials, ticket, result)
// Needs: kBlock, kWarp, kWarpsPerBlock, headToAlign16, gridStrideSum, blockReduceSum,
//   <cstdint>, DELAY_BEFORE_PUBLISH, kFullMask
// ptx: v4-loads shfl atom
__global__ void __launch_bounds__(kBlock)
    reduceLastBlockFence(const float *__restrict__ in, size_t n, float *partials,
                         unsigned int *ticket, float *result) {
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

// last-block atomic_ref: the same kernel, the order in the C++ memory model (<cuda/atomic>).
// fetch_add(memory_order_acq_rel) at thread_scope_device releases the partial written just before
// it and, for the last block, acquires every partial released before the other fetch_adds. The
// block's other threads inherit that acquire through __syncthreads(), so plain loads read current
// values: the memory model, not a cache hint. Assumes: as last-block fence. Source: the libcu++
// docs for cuda::atomic_ref and thread scopes (research/day27-last-block.md).
// Launch: reduceLastBlockAtomicRef<<<1024, kBlock>>>(in, n, partials, ticket, result)
// Needs: kBlock, kWarp, kWarpsPerBlock, headToAlign16, gridStrideSum, blockReduceSum,
//   <cstdint>, <cuda/atomic>, DELAY_BEFORE_PUBLISH, kFullMask
// ptx: v4-loads shfl atom
__global__ void __launch_bounds__(kBlock)
    reduceLastBlockAtomicRef(const float *__restrict__ in, size_t n, float *partials,
                             unsigned int *ticket, float *result) {
  __shared__ float warpSums[kWarpsPerBlock];
  __shared__ bool isLastBlockDone;
  float v = blockReduceSum(gridStrideSum(in, n), warpSums);
  if (threadIdx.x == 0) { // ONE thread: it wrote the partial, it takes the ticket
    DELAY_BEFORE_PUBLISH(blockIdx.x);
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

// The repetition's checker: ONE thread (launch <<<1, 1>>>), queued after each one-launch reduction.
// Counts a wrong sum (remembering the last wrong value) and a counter not back to 0, then poisons
// the result with NaN so that the next launch must write it again: a launch that wrote nothing
// (for example a counter never reset, so no block draws the last ticket) fails, not passes.
// Its Launch line hands it the right sum on launch 1 and a sum one too large on launch 2.
// Launch: checkAndPoison<<<1, 1>>>(result, want, ticket, wrongSums, notReset, lastWrong);
//   with *result = want + launch - 1; check *wrongSums == launch - 1, *notReset == 0
// Needs: nothing
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

// The copy's check, on the device (no host copy of 16 GiB at n = 2^32): adds to *count the
// elements i < n where a[i] != b[i] (a NaN left by the poison counts). Any grid (grid-stride);
// one atomic a thread that found any. *count must be 0 before the launch.
// Needs: nothing
// ptx: atom
__global__ void countMismatches(const float *a, const float *b, size_t n,
                                unsigned long long *count) {
  size_t stride = size_t(gridDim.x) * blockDim.x;
  unsigned long long bad = 0;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    bad += !(a[i] == b[i]);
  }
  if (bad != 0) {
    atomicAdd(count, bad);
  }
}

// Fills p[0, count) with `value`. Any grid (grid-stride).
// Needs: nothing
__global__ void fillKernel(float *p, size_t count, float value) {
  size_t stride = size_t(gridDim.x) * blockDim.x;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    p[i] = value;
  }
}

// Host side. The rows, in table order; each reduction row owns a result slot, each one-launch row
// a ticket counter.
enum class Row { Copy, V8, LastBlockFence, LastBlockAtomicRef };
constexpr int kRowCount = 4;
constexpr Row kRows[kRowCount] = {Row::Copy, Row::V8, Row::LastBlockFence, Row::LastBlockAtomicRef};
constexpr Row kOneLaunchRows[] = {Row::LastBlockFence, Row::LastBlockAtomicRef};

const char *rowName(Row r) {
  const char *names[] = {"copy", "v8", "last-block fence", "last-block atomic_ref"};
  return names[int(r)];
}
int slotOf(Row r) { // result slot (reduction rows) and ticket index (one-launch rows)
  return r == Row::Copy ? 0 : int(r) - 1; // the copy has none: 0, never used
}

// Everything a row writes besides the copy's destination, allocated once.
struct Scratch {
  float *partials = nullptr;              // kMaxGrid floats: one a block
  float *results = nullptr;               // 3 floats: v8, last-block fence, last-block atomic_ref
  unsigned int *tickets = nullptr;        // 3 counters (slot 0 unused): 0 between launches
  unsigned int *repCounts = nullptr;      // 2 a one-launch row: wrong sums, counter not reset
  float *repLastWrong = nullptr;          // 1 a one-launch row: the last wrong sum seen
  unsigned long long *mismatch = nullptr; // the copy check's count
};

// false when the device is out of memory (freeScratch frees what was allocated). Tickets start 0.
bool allocScratch(Scratch &s) {
  bool ok = cudaMalloc(&s.partials, kMaxGrid * sizeof(float)) == cudaSuccess &&
            cudaMalloc(&s.results, 3 * sizeof(float)) == cudaSuccess &&
            cudaMalloc(&s.tickets, 3 * sizeof(unsigned int)) == cudaSuccess &&
            cudaMalloc(&s.repCounts, 4 * sizeof(unsigned int)) == cudaSuccess &&
            cudaMalloc(&s.repLastWrong, 2 * sizeof(float)) == cudaSuccess &&
            cudaMalloc(&s.mismatch, sizeof(unsigned long long)) == cudaSuccess;
  (void)cudaGetLastError(); // clear an allocation error, if any
  return ok && cudaMemset(s.tickets, 0, 3 * sizeof(unsigned int)) == cudaSuccess;
}
void freeScratch(Scratch &s) { // cudaFree(nullptr) is a no-op: safe on every path
  for (void *p : {(void *)s.partials, (void *)s.results, (void *)s.tickets, (void *)s.repCounts,
                  (void *)s.repLastWrong, (void *)s.mismatch}) {
    CUDA_CHECK(cudaFree(p));
  }
  s = Scratch{};
}

// Bytes a row moves: the copy reads and writes n floats; every reduction row reads n floats and
// then its `grid` partials (v8 in pass 2, the one-launch rows in their last block).
double rowBytes(Row r, size_t n, int grid) {
  double b = double(n) * sizeof(float);
  return r == Row::Copy ? 2 * b : b + double(grid) * sizeof(float);
}

// Enqueues one call of row r on `grid` blocks (1..kMaxGrid) of kBlock threads; checks every launch,
// no sync. The copy gets one float4 a thread at most, capped (a ceiling, not a lesson in grids).
void launchRow(Row r, const float *in, float *out, size_t n, int grid, const Scratch &s) {
  size_t copyBlocks = std::min<size_t>((n / 4 + kBlock - 1) / kBlock, kMaxGrid);
  unsigned int blocks = r == Row::Copy ? unsigned(std::max<size_t>(1, copyBlocks)) : unsigned(grid);
  float *result = s.results + slotOf(r);
  unsigned int *ticket = s.tickets + slotOf(r);
  switch (r) {
  case Row::Copy:
    copyKernel<<<blocks, kBlock>>>(in, out, n);
    break;
  case Row::V8:
    reduceToPartials<<<blocks, kBlock>>>(in, s.partials, n);
    CUDA_CHECK(cudaGetLastError());
    reduceToPartials<<<1, kBlock>>>(s.partials, result, blocks);
    break;
  case Row::LastBlockFence:
    reduceLastBlockFence<<<blocks, kBlock>>>(in, n, s.partials, ticket, result);
    break;
  case Row::LastBlockAtomicRef:
    reduceLastBlockAtomicRef<<<blocks, kBlock>>>(in, n, s.partials, ticket, result);
    break;
  }
  CUDA_CHECK(cudaGetLastError());
}

// Enqueues NaN (0xFF bytes) over what row r writes: the copy's destination, or the partials and
// the row's result. NOT the ticket counter: a one-launch row needs it at 0 when a launch starts
// (the check after timing tests that the timed launches left it at 0).
void poisonRow(Row r, float *out, size_t n, const Scratch &s) {
  if (r == Row::Copy) {
    CUDA_CHECK(cudaMemsetAsync(out, 0xFF, n * sizeof(float)));
  } else {
    CUDA_CHECK(cudaMemsetAsync(s.partials, 0xFF, kMaxGrid * sizeof(float)));
    CUDA_CHECK(cudaMemsetAsync(s.results + slotOf(r), 0xFF, sizeof(float)));
  }
}

// The exact check of what row r left on the device (after a sync). want: n for the lesson's ones,
// the count of ones for the harness's random 0/1 input. A one-launch row's counter left non-zero
// is reset here, so the failure shows once. One CHECK FAILED line a failure; true if exact.
bool checkRow(Row r, const float *in, const float *out, size_t n, double want, const Scratch &s,
              const char *when) {
  auto reportFailure = [&](const char *what, double got, double w) {
    std::printf("CHECK FAILED: %s n=%zu %s: %sgot %.0f want %.0f (off by %.0f)\n", rowName(r), n,
                when, what, got, w, got - w);
  };
  if (r == Row::Copy) {
    unsigned long long bad = 0;
    CUDA_CHECK(cudaMemset(s.mismatch, 0, sizeof bad));
    countMismatches<<<1024, kBlock>>>(in, out, n, s.mismatch);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(&bad, s.mismatch, sizeof bad, cudaMemcpyDeviceToHost));
    if (bad != 0) {
      reportFailure("elements equal to the source ", double(n - bad), double(n));
    }
    return bad == 0;
  }
  float got = 0.0f;
  CUDA_CHECK(cudaMemcpy(&got, s.results + slotOf(r), sizeof got, cudaMemcpyDeviceToHost));
  bool ok = double(got) == want; // NaN (an unwritten result) fails too
  if (!ok) {
    reportFailure("", double(got), want);
  }
  if (r == Row::LastBlockFence || r == Row::LastBlockAtomicRef) {
    unsigned int ticket = 0;
    CUDA_CHECK(cudaMemcpy(&ticket, s.tickets + slotOf(r), sizeof ticket, cudaMemcpyDeviceToHost));
    if (ticket != 0u) {
      reportFailure("ticket counter ", double(ticket), 0.0);
      CUDA_CHECK(cudaMemset(s.tickets + slotOf(r), 0, sizeof ticket));
      ok = false;
    }
  }
  return ok;
}

// Poisons row r's output, runs it once, synchronizes and checks it.
bool runAndCheck(Row r, const float *in, float *out, size_t n, double want, int grid,
                 const Scratch &s, const char *when) {
  poisonRow(r, out, n, s);
  launchRow(r, in, out, n, grid, s);
  CUDA_CHECK(cudaDeviceSynchronize());
  return checkRow(r, in, out, n, want, s, when);
}

// The repetition: `reps` launches of each one-launch row, each followed by checkAndPoison. One
// check a row (no wrong sum, no counter left non-zero); prints its table, then any CHECK FAILED.
void runRepetition(const float *in, size_t n, double want, int grid, int reps, const Scratch &s,
                   long &checks, long &failures) {
  CUDA_CHECK(cudaMemset(s.repCounts, 0, 4 * sizeof(unsigned int)));
  CUDA_CHECK(cudaMemset(s.repLastWrong, 0, 2 * sizeof(float)));
  for (int k = 0; k < 2; ++k) {
    Row r = kOneLaunchRows[k];
    CUDA_CHECK(cudaMemset(s.results + slotOf(r), 0xFF, sizeof(float)));
    for (int i = 0; i < reps; ++i) {
      launchRow(r, in, nullptr, n, grid, s);
      checkAndPoison<<<1, 1>>>(s.results + slotOf(r), float(want), s.tickets + slotOf(r),
                               s.repCounts + 2 * k, s.repCounts + 2 * k + 1, s.repLastWrong + k);
      CUDA_CHECK(cudaGetLastError());
    }
  }
  CUDA_CHECK(cudaDeviceSynchronize());
  unsigned int c[4]; // a row k: c[2k] wrong sums, c[2k + 1] counters not reset
  float lastWrong[2];
  CUDA_CHECK(cudaMemcpy(c, s.repCounts, sizeof c, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(lastWrong, s.repLastWrong, sizeof lastWrong, cudaMemcpyDeviceToHost));
  std::printf("\nrepetition: %d back-to-back launches of each one-launch row, n = %zu, %d blocks; "
              "every result checked on the device, then poisoned\n\n"
              "| row                   |          n | launches | wrong sums | counter not reset | "
              "check |\n|-----------------------|------------|----------|------------|----------"
              "---------|-------|\n",
              reps, n, grid);
  for (int k = 0; k < 2; ++k) {
    bool ok = c[2 * k] == 0 && c[2 * k + 1] == 0;
    checks += 1, failures += !ok;
    std::printf("| %-21s | %10zu | %8d | %10u | %17u | %-5s |\n", rowName(kOneLaunchRows[k]), n,
                reps, c[2 * k], c[2 * k + 1], ok ? "exact" : "FAIL");
  }
  for (int k = 0; k < 2; ++k) {
    if (c[2 * k] != 0 || c[2 * k + 1] != 0) {
      std::printf("CHECK FAILED: repetition %s n=%zu: %u of %d launches left a wrong sum (last: "
                  "got %.0f want %.0f (off by %.0f)), %u left the counter non-zero\n",
                  rowName(kOneLaunchRows[k]), n, c[2 * k], reps, double(lastWrong[k]), want,
                  double(lastWrong[k]) - want, c[2 * k + 1]);
    }
  }
}

// timeKernel: CUDA events around batches of back-to-back launches of ONE row.
constexpr int kTimingBatches = 11;    // odd, so the median is one batch
constexpr int kLaunchesPerBatch = 20; // back-to-back calls between one event pair

struct Timing {
  double ms;     // median over batches of (batch ms / calls): ms per call
  double spread; // (slowest batch - fastest batch) / median, in percent
};

// launch() enqueues one call (v8: both launches); poison() enqueues cudaMemsetAsync 0xFF (NaN)
// over the row's outputs, OUTSIDE the event pair, before every batch. A synchronized warm-up call
// first (a kernel's first launch pays its module load). So every batch starts from poison, and
// what the outputs hold when this returns is what the LAST timed launch wrote: a check after
// timing checks the timed launches themselves. Returns ms per call (median batch) and spread %.
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

const char *kUsage =
    "usage: last_block [--n N] [--reps R] [--help]\n"
    "  --n N     one size, all 1.0f: 1..16777216, or a power of two up to 4294967296 where device\n"
    "            memory allows (8 N bytes). Default: 65536, 1048576, 16777216 and 67108864.\n"
    "  --reps R  repeated launches of each one-launch row (1..1000000, default 10000)\n"
    "exit codes: 0 pass, 1 a check failed / a CUDA error / no 32-lane warps, 2 bad usage\n";

// The options: --n (0: the four timed sizes) and --reps. -1: parsed; else the exit code (0 after
// --help; 2 on bad usage, one line on stderr, before any device call).
static int parseOptions(int argc, char **argv, size_t &n, size_t &reps) {
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[++i] : "";
    if (!std::strcmp(a, "--help") || !std::strcmp(a, "-h")) {
      std::printf("%s", kUsage);
      return 0;
    }
    // A value: digits only (no sign, exponent or trailing text), 1..max; --n also exact.
    size_t len = std::strlen(v);
    bool isN = !std::strcmp(a, "--n"), digits = len < 12 && std::strspn(v, "0123456789") == len;
    size_t x = digits && len > 0 ? std::strtoull(v, nullptr, 10) : 0;
    if ((!isN && std::strcmp(a, "--reps")) || x == 0 || x > (isN ? kMaxN : size_t(kMaxReps)) ||
        (isN && x > kExactAnyOrder && !isPowerOfTwo(x))) {
      std::fprintf(stderr,
                   "error: %s '%s': want --n 1..2^24 or a power of two up to 2^32, --reps "
                   "1..1000000 (see --help)\n",
                   a, v);
      return 2;
    }
    (isN ? n : reps) = x;
  }
  return -1;
}

// The table of every row at every size (times[i], exact[i]: row kRows[i % kRowCount] at n =
// sizes[i / kRowCount]) and the lines that say how to read it.
static void printTable(const std::vector<size_t> &sizes, const std::vector<Timing> &times,
                       const std::vector<bool> &exact, const cudaDeviceProp &p) {
  std::printf("\nreductions on %d blocks x %d threads (float4 grid-stride loads, offset 0); "
              "median of %d batches of %d calls, the same buffers every call\n\n"
              "| row                   |          n | input   |       MB |        us | spread %% "
              "|    GB/s | %% of copy | vs two-pass | produces  | check |\n"
              "|-----------------------|------------|---------|----------|-----------|---------"
              "-|---------|-----------|-------------|-----------|-------|\n",
              kGrid, kBlock, kTimingBatches, kLaunchesPerBatch);
  // % of copy and vs two-pass compare rows of the same n: entry c is that n's copy, c + 1 its
  // v8. input: L2-warm when the input and the copy's destination fit in L2, else DRAM.
  for (size_t i = 0; i < times.size(); ++i) {
    size_t c = i - i % kRowCount, sz = sizes[i / kRowCount];
    Row r = kRows[i % kRowCount];
    double mb = rowBytes(r, sz, kGrid) / 1e6, gbs = mb / times[i].ms;
    double copyGBs = rowBytes(Row::Copy, sz, kGrid) / 1e6 / times[c].ms;
    char vs[16] = "-";
    if (r != Row::Copy) {
      std::snprintf(vs, sizeof vs, "%.2fx", times[c + 1].ms / times[i].ms);
    }
    bool warm = 2.0 * double(sz) * sizeof(float) <= double(p.l2CacheSize);
    std::printf("| %-21s | %10zu | %-7s | %8.3f | %9.2f | %8.1f | %7.1f | %9.1f | %11s | %-9s "
                "| %-5s |\n",
                rowName(r), sz, warm ? "L2-warm" : "DRAM", mb, 1000.0 * times[i].ms,
                times[i].spread, gbs, 100.0 * gbs / copyGBs, vs,
                r == Row::Copy ? "copy" : "one float", exact[i] ? "exact" : "FAIL");
  }
  std::printf("\nAll three reductions leave one float on the device: v8 with two launches, the "
              "last-block\nrows with one. vs two-pass = v8's us / this row's us (above 1.00x the "
              "one launch is faster).\nThe copy row counts bytes read + written (8 a float); "
              "reduction rows count bytes read (4 a\nfloat, plus the %d partials), so a "
              "reduction can pass 100 %% of copy: the percentage compares\ntwo numbers from "
              "this run, not a limit.\ninput = L2-warm: the input and the copy's destination "
              "fit in this GPU's %d MiB L2 and every\ntimed call reads the same buffers, so "
              "those rows measure L2, not DRAM bandwidth; DRAM: they do not fit.\n",
              kGrid, p.l2CacheSize / (1024 * 1024));
}

int main(int argc, char **argv) {
  size_t n = 0, reps = kDefaultReps; // n == 0: the four timed sizes
  if (int rc = parseOptions(argc, argv, n, reps); rc >= 0) {
    return rc;
  }
  std::vector<size_t> sizes = n == 0 ? std::vector<size_t>(kTimedSizes, kTimedSizes + 4)
                                     : std::vector<size_t>(1, n); // ascending
  size_t maxN = sizes.back();

  cudaDeviceProp p;
  size_t freeBytes = 0, totalBytes = 0;
  CUDA_CHECK(cudaGetDeviceProperties(&p, 0));
  CUDA_CHECK(cudaMemGetInfo(&freeBytes, &totalBytes));
  double need = 2.0 * maxN * sizeof(float) + kMaxGrid * sizeof(float) + 4096, GiB = 1u << 30;
  if (need > double(freeBytes)) {
    std::fprintf(stderr, "error: n = %zu needs %.2f GiB of device memory; %.2f GiB free on %s\n",
                 maxN, need / GiB, freeBytes / GiB, p.name);
    return 2;
  }
  int l2MiB = p.l2CacheSize / (1024 * 1024);
  std::printf("GPU: %s | cc %d.%d | %d SMs | %zu KiB shared/block | %d MiB L2 | warp %d\n", p.name,
              p.major, p.minor, p.multiProcessorCount, p.sharedMemPerBlock / 1024, l2MiB,
              p.warpSize);
  if (p.warpSize != kWarp) {
    std::printf("error: the block reduction assumes %d lanes a warp; this device has %d\n", kWarp,
                p.warpSize);
    return 1;
  }

  float *in = nullptr, *out = nullptr;
  Scratch s;
  long checks = 0, failures = 0;
  bool allocated = cudaMalloc(&in, maxN * sizeof(float)) == cudaSuccess &&
                   cudaMalloc(&out, maxN * sizeof(float)) == cudaSuccess && allocScratch(s);
  if (!allocated) {
    (void)cudaGetLastError(); // clear the allocation error
    std::printf("error: cudaMalloc failed for n = %zu on %s\n", maxN, p.name);
  } else {
    // Every row checked, timed, and checked again (what the LAST timed launch left). The table is
    // printed after every row has run, so no CHECK FAILED line splits it.
    std::vector<Timing> times;
    std::vector<bool> exact; // entry i: row kRows[i % kRowCount] at n = sizes[i / kRowCount]
    for (size_t sz : sizes) {
      fillKernel<<<1024, kBlock>>>(in, sz, 1.0f);
      CUDA_CHECK(cudaGetLastError());
      for (Row r : kRows) {
        bool before = runAndCheck(r, in, out, sz, double(sz), kGrid, s, "before timing");
        times.push_back(timeKernel([&] { launchRow(r, in, out, sz, kGrid, s); },
                                   [&] { poisonRow(r, out, sz, s); }));
        CUDA_CHECK(cudaDeviceSynchronize());
        bool after = checkRow(r, in, out, sz, double(sz), s, "after timing");
        checks += 2, failures += !before + !after;
        exact.push_back(before && after);
      }
    }
    printTable(sizes, times, exact, p);
    runRepetition(in, maxN, double(maxN), kGrid, int(reps), s, checks, failures); // last size
  }
  CUDA_CHECK(cudaFree(in));
  CUDA_CHECK(cudaFree(out));
  freeScratch(s);
  if (allocated && failures == 0) {
    std::printf("\nRESULT: PASS (%ld checks, all exact)\n", checks);
  } else if (allocated) {
    std::printf("\nRESULT: FAIL (%ld of %ld checks failed)\n", failures, checks);
  }
  return allocated && failures == 0 ? 0 : 1;
}
#endif // REDUCTION_HARNESS
