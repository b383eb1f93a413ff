// Day 24: parallel reduction, versions 1-4, with a compile-time model of divergence and bank
// conflicts. Four block-level sum kernels over the same n floats, one change between neighbours:
//   v1  interleaved addressing: the stride s doubles, thread tid adds when tid % (2s) == 0;
//   v2  the same additions by packed threads, index = 2 * s * tid (whole warps idle, but the
//       active lanes of a warp crowd into a few shared-memory banks);
//   v3  sequential addressing: the stride halves, thread tid < s adds tile[tid + s];
//   v4  v3 with the first add during the load: two elements a thread, half the grid.
// Each version reduces ALL the way to one float, pass after pass over two scratch buffers. The
// model counts a block's warp executions of the tree body, plain and weighted by bank-conflict
// ways: (47, 12, 12, 12) and (47, 47, 12, 12) at 256 threads.
//
// Checked: every version's one float, exactly (inputs are 1.0f and n <= 2^24, so the sum is n in
// any order), before timing and on what the LAST TIMED run wrote (batches start from NaN scratch).
// Not checked: speed. Exit 0 all checks passed; 1 a check failed, a CUDA error or warps not 32
// lanes; 2 bad usage (one `error:` line, before any device allocation).
// Build: nvcc -std=c++17 -O3 -arch=sm_75 -o reduction code/day24-reduction/reduction.cu
// Run:   ./reduction [--n N] [--help]. Edge sizes, a second exact input, guard bands and the
//        sanitizer runs: tests/harness/day24-reduction.cu.

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                                           \
  do {                                                                                             \
    cudaError_t err_ = (call);                                                                     \
    if (err_ != cudaSuccess) {                                                                     \
      std::fprintf(stderr, "CUDA error: %s at %s:%d: %s\n", #call, __FILE__, __LINE__,             \
                   cudaGetErrorString(err_));                                                      \
      std::exit(1);                                                                                \
    }                                                                                              \
  } while (0)

// ---- The constants of the lesson ------------------------------------------------------------

// snippet: helpers
// Threads a block, every version: the size of each kernel's shared tile, and the block size every
// launcher uses. The exercise changes it: any power of two from 32 to 1024 builds, and the model
// below recounts itself.
constexpr unsigned kBlock = 256;
static_assert(kBlock >= 32 && kBlock <= 1024 && (kBlock & (kBlock - 1)) == 0,
              "kBlock must be a power of two from 32 to 1024: the tree halves it evenly");
// end snippet

// Lanes a warp and shared-memory banks (word w in bank w % 32): the model counts with these, and
// main() refuses a device whose warp size is not kWarp.
constexpr unsigned kWarp = 32;
constexpr unsigned kBanks = 32;

// Exactness: inputs are 1.0f (the test program's second input 0s and 1s), so every partial sum is
// a whole number no larger than n, and a float holds every whole number up to 2^24: for n <= 2^24
// every add is exact in any order and the one float must equal n. So --n stops at 2^24.
constexpr size_t kMaxN = size_t(1) << 24;
// 2^24 - 611, with 611 = 13 * 47: no power-of-two block size divides it, so the bounds check of
// the last block runs on every pass.
constexpr size_t kDefaultN = kMaxN - 611;
static_assert(kDefaultN % 2 == 1 && kDefaultN <= kMaxN, "odd n: every last block is ragged");
// The largest pass-1 grid, (2^24 + kBlock - 1) / kBlock blocks, fits gridDim.x (2^31 - 1).
static_assert(kMaxN / kBlock < (size_t(1) << 31), "grid too large for gridDim.x");

constexpr int kVersionCount = 4;

// ---- The compile-time model -------------------------------------------------------------------
//
// One block of B = kBlock threads runs a tree of log2(B) steps, one per stride s; at a step the
// ACTIVE threads run the body (load tile[a], load tile[a + s], add, store tile[a]). Counted:
//   warp executions:  (step, warp) pairs with at least one active lane (such a warp issues the
//                     whole body; a warp with none branches around it);
//   conflict-weighted: each of those times its bank-conflict ways, the most active lanes of the
//                     warp whose words fall in one of the 32 banks (CUDA C++ Programming Guide,
//                     shared memory; research/day24-reduction.md).
// The functions below evaluate each kernel's branch and index for every thread at compile time;
// the README's model section derives the counts at 256 threads by hand, and the static_asserts
// hold them: v1 47/47, v2 12/47, v3 and v4 12/12 (closed forms v1 = 6B/32 - 1, v3 = B/32 + 4).

// Does thread tid run the tree body at stride s in version v (1..4)? Mirrors the kernels.
constexpr bool modelActive(int version, unsigned tid, unsigned s, unsigned block) {
  return version == 1 ? tid % (2 * s) == 0 : version == 2 ? 2 * s * tid < block : tid < s;
}

// The shared word the body stores to (its two loads are this word and the word s further on).
constexpr unsigned modelWord(int version, unsigned tid, unsigned s) {
  return version == 2 ? 2 * s * tid : tid;
}

// Per block of `block` threads: warp executions of the tree body, each weighted by its
// bank-conflict ways when `weighted` is true (see the rule above).
constexpr unsigned modelTreeCount(int version, unsigned block, bool weighted) {
  unsigned total = 0;
  for (unsigned s = 1; s < block; s *= 2) {
    for (unsigned warp = 0; warp < block / kWarp; ++warp) {
      unsigned lanesInBank[kBanks] = {};
      unsigned activeLanes = 0;
      unsigned ways = 0;
      for (unsigned lane = 0; lane < kWarp; ++lane) {
        const unsigned tid = warp * kWarp + lane;
        if (modelActive(version, tid, s, block)) {
          const unsigned bank = modelWord(version, tid, s) % kBanks;
          ++activeLanes;
          ++lanesInBank[bank];
          ways = std::max(ways, lanesInBank[bank]);
        }
      }
      if (activeLanes > 0) {
        total += weighted ? ways : 1;
      }
    }
  }
  return total;
}

constexpr unsigned modelWarpExecutions(int version, unsigned block) {
  return modelTreeCount(version, block, false);
}
constexpr unsigned modelConflictWeighted(int version, unsigned block) {
  return modelTreeCount(version, block, true);
}

// The literal counts the lesson quotes hold at 256 threads; each is written as an implication so
// that another kBlock still builds (the model table prints that size's own counts).
static_assert(kBlock != 256 || modelWarpExecutions(1, kBlock) == 47, "v1: 47 at 256 threads");
static_assert(kBlock != 256 || modelWarpExecutions(2, kBlock) == 12, "v2: 12 at 256 threads");
static_assert(kBlock != 256 || modelWarpExecutions(3, kBlock) == 12, "v3: 12 at 256 threads");
static_assert(kBlock != 256 || modelWarpExecutions(4, kBlock) == 12, "v4: 12 at 256 threads");
static_assert(kBlock != 256 || modelConflictWeighted(1, kBlock) == 47, "v1: 47 weighted at 256");
static_assert(kBlock != 256 || modelConflictWeighted(2, kBlock) == 47, "v2: 47 weighted at 256");
static_assert(kBlock != 256 || modelConflictWeighted(3, kBlock) == 12, "v3: 12 weighted at 256");
static_assert(kBlock != 256 || modelConflictWeighted(4, kBlock) == 12, "v4: 12 weighted at 256");
// General claims, true at every power of two from 32 to 1024:
// v1 and v3 are conflict-free (weighted equals plain);
static_assert(modelConflictWeighted(1, kBlock) == modelWarpExecutions(1, kBlock), "v1 conflicts");
static_assert(modelConflictWeighted(3, kBlock) == modelWarpExecutions(3, kBlock), "v3 conflicts");
// v2 keeps exactly as many warps busy as v3 (same active-lane counts, packed the same way) ...
static_assert(modelWarpExecutions(2, kBlock) == modelWarpExecutions(3, kBlock), "v2 vs v3");
static_assert(modelWarpExecutions(2, kBlock) <= modelWarpExecutions(1, kBlock), "v2 vs v1");
// ... but its conflicts give back exactly what packing saved: weighted, v2 equals v1;
static_assert(modelConflictWeighted(2, kBlock) == modelConflictWeighted(1, kBlock), "v2 = v1");
// v4 runs v3's tree unchanged;
static_assert(modelWarpExecutions(4, kBlock) == modelWarpExecutions(3, kBlock), "v4 = v3");
static_assert(modelConflictWeighted(4, kBlock) == modelConflictWeighted(3, kBlock), "v4 = v3");
// and the closed forms agree with the count.
static_assert(modelWarpExecutions(1, kBlock) == 6 * kBlock / 32 - 1, "v1 closed form");
static_assert(modelWarpExecutions(3, kBlock) == kBlock / 32 + 4, "v3 closed form");

// ---- Kernels, in row order --------------------------------------------------------------------
//
// Every __syncthreads() is outside the branches, so every thread of the block reaches it (the
// CUDA guide allows a barrier in conditional code only if the condition is the same for the whole
// block). Within a step, a word an active thread stores to is loaded by no other thread in that
// step (v1, v2 store at multiples of 2s and load the others at odd multiples of s; v3, v4 store
// below s and load the others from s to 2s - 1), so the barrier between steps is the only ordering
// needed. Threads past the end load 0.0f, which leaves the sum unchanged. After Harris,
// "Optimizing Parallel Reduction in CUDA", kernels 1-4 (the same four are cuda-samples'
// reduce0-reduce3); sources in research/day24-reduction.md.

// snippet: v1-interleaved
// v1: interleaved addressing. Thread tid works at step s only if tid % (2s) == 0: at s = 1 every
// warp has 16 active lanes out of 32, and the integer modulo itself costs several instructions.
// Assumes: exactly kBlock threads a block (the tile's size; the tree walks blockDim.x, so the two
// must agree: launchReduction always passes kBlock), one element a thread, any float alignment,
// grid = ceil(n / kBlock) blocks. Writes out[blockIdx.x], the block's partial sum.
// Launch: reduceV1Interleaved<<<(n + kBlock - 1) / kBlock, kBlock>>>(in, partials, n)
// Needs: kBlock, <cstddef>
__global__ void reduceV1Interleaved(const float *in, float *out, size_t n) {
  __shared__ float tile[kBlock];
  const unsigned tid = threadIdx.x;
  const size_t i = size_t(blockIdx.x) * blockDim.x + tid;
  tile[tid] = (i < n) ? in[i] : 0.0f;
  __syncthreads();
  for (unsigned s = 1; s < blockDim.x; s *= 2) {
    if (tid % (2 * s) == 0) {
      tile[tid] += tile[tid + s];
    }
    __syncthreads();
  }
  if (tid == 0) {
    out[blockIdx.x] = tile[0];
  }
}
// end snippet

// snippet: v2-strided
// v2: the same additions as v1, done by the first kBlock / (2s) threads: whole warps are either
// all active or all idle (no divergence inside a warp until fewer than 32 remain), but the lanes
// of a warp store to words 2s apart, so its active lanes fold onto 32 / gcd(2s, 32) banks: bank
// conflicts of 2, 4, 8, 8, 8, 4, 2, 1 ways for s = 1 ... 128 at 256 threads.
// Assumes: exactly kBlock threads a block (launchReduction always passes kBlock), one element a
// thread, any float alignment, grid = ceil(n / kBlock) blocks. Writes out[blockIdx.x].
// Launch: reduceV2Strided<<<(n + kBlock - 1) / kBlock, kBlock>>>(in, partials, n)
// Needs: kBlock, <cstddef>
__global__ void reduceV2Strided(const float *in, float *out, size_t n) {
  __shared__ float tile[kBlock];
  const unsigned tid = threadIdx.x;
  const size_t i = size_t(blockIdx.x) * blockDim.x + tid;
  tile[tid] = (i < n) ? in[i] : 0.0f;
  __syncthreads();
  for (unsigned s = 1; s < blockDim.x; s *= 2) {
    const unsigned index = 2 * s * tid;
    if (index < blockDim.x) {
      tile[index] += tile[index + s];
    }
    __syncthreads();
  }
  if (tid == 0) {
    out[blockIdx.x] = tile[0];
  }
}
// end snippet

// snippet: v3-sequential
// v3: sequential addressing. The stride starts at half the block and halves; thread tid < s adds
// the word s above its own. Active lanes are contiguous (whole warps busy or idle until s < 32)
// and touch consecutive words, one bank each: no divergence inside a warp, no bank conflicts.
// Assumes: exactly kBlock threads a block (launchReduction always passes kBlock), one element a
// thread, any float alignment, grid = ceil(n / kBlock) blocks. Writes out[blockIdx.x].
// Launch: reduceV3Sequential<<<(n + kBlock - 1) / kBlock, kBlock>>>(in, partials, n)
// Needs: kBlock, <cstddef>
__global__ void reduceV3Sequential(const float *in, float *out, size_t n) {
  __shared__ float tile[kBlock];
  const unsigned tid = threadIdx.x;
  const size_t i = size_t(blockIdx.x) * blockDim.x + tid;
  tile[tid] = (i < n) ? in[i] : 0.0f;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) {
      tile[tid] += tile[tid + s];
    }
    __syncthreads();
  }
  if (tid == 0) {
    out[blockIdx.x] = tile[0];
  }
}
// end snippet

// snippet: v4-first-add
// v4: v3 with the first add during the load. Block b owns the 2 * kBlock inputs starting at
// b * 2 * kBlock; thread tid loads element i and element i + kBlock and stores their sum, so
// half of v3's blocks do the same work and no thread is idle during the first add.
// Assumes: exactly kBlock threads a block (launchReduction always passes kBlock), two elements a
// thread (kBlock apart), any float alignment, grid = ceil(n / (2 * kBlock)) blocks. Writes
// out[blockIdx.x].
// Launch: reduceV4FirstAdd<<<(n + 2 * kBlock - 1) / (2 * kBlock), kBlock>>>(in, partials, n)
// Needs: kBlock, <cstddef>
__global__ void reduceV4FirstAdd(const float *in, float *out, size_t n) {
  __shared__ float tile[kBlock];
  const unsigned tid = threadIdx.x;
  // Not the tempting i = 2 * (blockIdx.x * blockDim.x + tid): with the second load at
  // i + blockDim.x it reads only even elements, some of them twice (README, pitfalls).
  const size_t i = size_t(blockIdx.x) * (blockDim.x * 2) + tid;
  float sum = (i < n) ? in[i] : 0.0f;
  if (i + blockDim.x < n) {
    sum += in[i + blockDim.x];
  }
  tile[tid] = sum;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) {
      tile[tid] += tile[tid + s];
    }
    __syncthreads();
  }
  if (tid == 0) {
    out[blockIdx.x] = tile[0];
  }
}
// end snippet

// ---- Launchers: the versions, the pass plan, buffers, the exact check -------------------------

using ReduceKernel = void (*)(const float *, float *, size_t);

struct Version {
  const char *name;   // the row's name in every table
  const char *change; // what changed from the row above
  ReduceKernel kernel;
  unsigned elementsPerBlock; // kBlock, or 2 * kBlock for v4
  int modelVersion;          // the model's version number (1..4)
};

static const Version kVersions[] = {
    {"v1", "interleaved addressing, branch on tid % (2s)", reduceV1Interleaved, kBlock, 1},
    {"v2", "same additions by packed threads, index = 2*s*tid", reduceV2Strided, kBlock, 2},
    {"v3", "sequential addressing, tid < s, stride halves", reduceV3Sequential, kBlock, 3},
    {"v4", "v3 plus the first add during the load", reduceV4FirstAdd, 2 * kBlock, 4},
};
static_assert(sizeof(kVersions) / sizeof(kVersions[0]) == kVersionCount, "four versions");

// The passes one version makes over n inputs: a pass reads m values and writes
// ceil(m / elementsPerBlock) partials, until one value is left (at least one pass, so even n = 1
// goes through a kernel). launchReduction follows the same rule, so the bytes counted here are the
// bytes the launches read.
struct Plan {
  int passes = 0;
  size_t elementsRead = 0;    // over every pass
  size_t outputs[2] = {0, 0}; // the most floats any pass writes into scratch[0], scratch[1]
};

Plan planPasses(size_t n, unsigned elementsPerBlock) {
  Plan plan;
  size_t m = n;
  do {
    const size_t blocks = (m + elementsPerBlock - 1) / elementsPerBlock;
    plan.outputs[plan.passes % 2] = std::max(plan.outputs[plan.passes % 2], blocks);
    plan.elementsRead += m;
    plan.passes += 1;
    m = blocks;
  } while (m > 1);
  return plan;
}

// Enqueues every pass of one version: input -> scratch[0] -> scratch[1] -> scratch[0] -> ...,
// each with kBlock threads a block (the block size every kernel's tile assumes). Checks each
// launch; no synchronization. Returns the device address of the final one float.
const float *launchReduction(const Version &v, const float *in, size_t n, float *const scratch[2]) {
  const float *src = in;
  size_t m = n;
  int pass = 0;
  do {
    const size_t blocks = (m + v.elementsPerBlock - 1) / v.elementsPerBlock;
    float *dst = scratch[pass % 2];
    v.kernel<<<unsigned(blocks), kBlock>>>(src, dst, m);
    CUDA_CHECK(cudaGetLastError());
    src = dst;
    m = blocks;
    pass += 1;
  } while (m > 1);
  return src;
}

// Device buffers for one n: the input (n ones, exactly n floats, so a read past the end is outside
// the allocation where memcheck sees it) and two scratch buffers, each sized for the most partials
// any version writes into it.
struct Buffers {
  float *in = nullptr;
  float *scratch[2] = {nullptr, nullptr};
  size_t scratchCount[2] = {0, 0};
};

// Enqueues all bits set (a NaN) over both scratch buffers on the default stream: a run that fails
// to write its partials or its one float leaves NaN, which no check accepts.
void poisonScratch(const Buffers &b) {
  CUDA_CHECK(cudaMemsetAsync(b.scratch[0], 0xFF, b.scratchCount[0] * sizeof(float)));
  CUDA_CHECK(cudaMemsetAsync(b.scratch[1], 0xFF, b.scratchCount[1] * sizeof(float)));
}

void scratchCounts(size_t n, size_t counts[2]) {
  counts[0] = counts[1] = 1;
  for (const Version &v : kVersions) {
    const Plan plan = planPasses(n, v.elementsPerBlock);
    counts[0] = std::max(counts[0], plan.outputs[0]);
    counts[1] = std::max(counts[1], plan.outputs[1]);
  }
}

size_t bytesNeeded(size_t n) {
  size_t counts[2];
  scratchCounts(n, counts);
  return (n + counts[0] + counts[1]) * sizeof(float);
}

void freeBuffers(Buffers &b) {
  // cudaFree(nullptr) is a no-op, so this is safe on every path.
  CUDA_CHECK(cudaFree(b.in));
  CUDA_CHECK(cudaFree(b.scratch[0]));
  CUDA_CHECK(cudaFree(b.scratch[1]));
  b = Buffers{};
}

// Allocates and fills the buffers for n (n <= 2^24: one 64 MiB host copy at most). Returns false
// (nothing left allocated) if the device is out of memory, so the caller can report it clearly.
bool allocBuffers(Buffers &b, size_t n) {
  scratchCounts(n, b.scratchCount);
  if (cudaMalloc(&b.in, n * sizeof(float)) != cudaSuccess ||
      cudaMalloc(&b.scratch[0], b.scratchCount[0] * sizeof(float)) != cudaSuccess ||
      cudaMalloc(&b.scratch[1], b.scratchCount[1] * sizeof(float)) != cudaSuccess) {
    (void)cudaGetLastError(); // clear the allocation error
    freeBuffers(b);
    return false;
  }
  const std::vector<float> ones(n, 1.0f);
  CUDA_CHECK(cudaMemcpy(b.in, ones.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  return true;
}

// The exact check of a one-float row. want: n for the lesson's all-ones input; the count of ones
// for the test program's random 0/1 input (whole numbers up to 2^24: exact in any order, see
// kMaxN). Returns true when the float equals want; else prints
// `CHECK FAILED: <row> <when> n=... got G want W (off by D)` and returns false. A NaN (scratch
// poison that no pass overwrote) fails too.
bool checkOneFloat(const char *row, const char *when, size_t n, const float *dResult, double want) {
  float got = 0.0f;
  CUDA_CHECK(cudaMemcpy(&got, dResult, sizeof(float), cudaMemcpyDeviceToHost));
  if (double(got) == want) {
    return true;
  }
  std::printf("CHECK FAILED: %s %s n=%zu got %.0f want %.0f (off by %.0f)\n", row, when, n,
              double(got), want, double(got) - want);
  return false;
}

// ---- timeKernel ---------------------------------------------------------------------------------

// Timing: kTimingBatches batches of kLaunchesPerBatch back-to-back runs; median reported.
constexpr int kTimingBatches = 11;    // odd, so the median is one batch
constexpr int kLaunchesPerBatch = 20; // back-to-back runs between one event pair
static_assert(kTimingBatches % 2 == 1, "an odd batch count has one median batch");

struct Timing {
  double ms;     // median over batches of (batch ms / runs): ms per run (all passes of a version)
  double spread; // (slowest batch - fastest batch) / median, in percent
};

// launch: enqueues one run (every pass of one version) on the default stream and checks
// cudaGetLastError() after each launch. poison: enqueues cudaMemsetAsync(0xFF) of everything a run
// writes (both scratch buffers: all bits set is a NaN) on the default stream.
// Warm-up first: the same launch, synchronized (with lazy loading, the default since CUDA 12.2 on
// Linux, a kernel's first launch also pays for loading it). Then kTimingBatches batches of
// kLaunchesPerBatch back-to-back runs, each batch between one pair of events
// (cudaEventElapsedTime resolves about 0.5 us, so a batch is timed, not a run). poison() runs
// before each batch, outside the event pair: every batch starts from NaN, and what the outputs
// hold when timeKernel returns is what the LAST TIMED run wrote (not the warm-up's answer), so
// the check after timing checks the timed runs. Returns ms per run (median) and the spread.
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
  const double median = perLaunch[perLaunch.size() / 2];
  return {median, 100.0 * (perLaunch.back() - perLaunch.front()) / median};
}

// ---- main: the knobs, the banner, every row checked, timed and checked again; the tables -----
#ifndef REDUCTION_HARNESS

struct Measured {
  const Version *v;
  Plan plan;
  Timing t;
  bool ok;
};

double megabytes(const Plan &p) {
  return double(p.elementsRead) * sizeof(float) / 1e6;
}

void printModelTable() {
  unsigned steps = 0;
  for (unsigned s = 1; s < kBlock; s *= 2) {
    ++steps;
  }
  std::printf("model, per block of %u threads, counted at compile time (see modelTreeCount):\n\n",
              kBlock);
  std::printf("| row | %-50s | elements a block | tree steps | warp executions | "
              "conflict-weighted |\n",
              "what changes");
  std::printf("|-----|----------------------------------------------------|------------------|-----"
              "-------|-----------------|-------------------|\n");
  for (const Version &v : kVersions) {
    std::printf("| %-3s | %-50s | %16u | %10u | %15u | %17u |\n", v.name, v.change,
                v.elementsPerBlock, steps, modelWarpExecutions(v.modelVersion, kBlock),
                modelConflictWeighted(v.modelVersion, kBlock));
  }
  std::printf("\nwarp executions: (tree step, warp) pairs in which at least one lane runs the "
              "body.\nconflict-weighted: each of those times its bank-conflict ways (the most "
              "active lanes of the\nwarp whose shared words fall in one bank).\n");
}

void printTimingTable(const std::vector<Measured> &rows, size_t n, int l2Bytes) {
  std::printf("\nn = %zu floats (%.1f MiB), %u threads a block, every row reduced to one float on "
              "the device;\nmedian of %d batches of %d runs, a run being every pass of one "
              "version\n\n",
              n, n * 4.0 / (1 << 20), kBlock, kTimingBatches, kLaunchesPerBatch);
  std::printf("| row | passes |       MB |       ms | spread %% |    GB/s | speed-up vs v1 | check "
              "|\n");
  std::printf("|-----|--------|----------|----------|----------|---------|----------------|-------"
              "|\n");
  for (const Measured &m : rows) {
    const double mb = megabytes(m.plan);
    std::printf("| %-3s | %6d | %8.3f | %8.5f | %8.1f | %7.1f | %14.2f | %-5s |\n", m.v->name,
                m.plan.passes, mb, m.t.ms, m.t.spread, mb / m.t.ms, rows[0].t.ms / m.t.ms,
                m.ok ? "exact" : "FAIL");
  }
  std::printf("\nMB: bytes read over all passes (n floats, then each later pass's partials), 10^6 "
              "bytes.\nGB/s = MB / ms counts bytes read only; day 25 adds a copy ceiling to "
              "compare it with.\n");
  // One line on L2: bytes a run finds still in L2 from the run before come faster than DRAM.
  const double inMiB = n * 4.0 / (1 << 20), l2MiB = l2Bytes / double(1 << 20);
  const bool fits = inMiB <= l2MiB;
  std::printf("L2 (%.0f MiB) %s the %.1f MiB input between runs: GB/s %s.\n", l2MiB,
              fits ? "holds all of" : "keeps part of", inMiB,
              fits ? "is L2 speed, not DRAM's" : "can exceed DRAM's; compare rows");
}

void printStepTable(const std::vector<Measured> &rows) {
  std::printf("\n| step     | %-50s | warp executions | conflict-weighted | speed-up |\n",
              "what changes");
  std::printf("|----------|----------------------------------------------------|-----------------|-"
              "------------------|----------|\n");
  auto execs = [&](size_t k) { return modelWarpExecutions(rows[k].v->modelVersion, kBlock); };
  auto weighted = [&](size_t k) { return modelConflictWeighted(rows[k].v->modelVersion, kBlock); };
  auto speedup = [&](size_t k) { return rows[k - 1].t.ms / rows[k].t.ms; };
  auto drop = [&](size_t k) { return int(weighted(k - 1)) - int(weighted(k)); };
  size_t best = 0, modelBest = 0; // the step's second row: largest speed-up, largest model drop
  for (size_t k = 1; k < rows.size(); ++k) {
    char step[16], e[32], w[32];
    std::snprintf(step, sizeof(step), "%s -> %s", rows[k - 1].v->name, rows[k].v->name);
    std::snprintf(e, sizeof(e), "%u -> %u", execs(k - 1), execs(k));
    std::snprintf(w, sizeof(w), "%u -> %u", weighted(k - 1), weighted(k));
    std::printf("| %-8s | %-50s | %15s | %17s | %8.2f |\n", step, rows[k].v->change, e, w,
                speedup(k));
    best = best == 0 || speedup(k) > speedup(best) ? k : best;
    modelBest = drop(k) > 0 && (modelBest == 0 || drop(k) > drop(modelBest)) ? k : modelBest;
  }
  std::printf("\nspeed-up: the row above's ms / this row's ms. The model columns count per block, "
              "and v4's\nblock covers twice the elements, so per element its tree work is half of "
              "v3's.\n\n");
  if (best > 0) {
    std::printf("largest single step: %s -> %s (%.2fx)\n", rows[best - 1].v->name,
                rows[best].v->name, speedup(best));
  }
  if (modelBest > 0) {
    std::printf("largest drop in the model's conflict-weighted count: %s -> %s (%u -> %u)\n",
                rows[modelBest - 1].v->name, rows[modelBest].v->name, weighted(modelBest - 1),
                weighted(modelBest));
  } else {
    std::printf("largest drop in the model's conflict-weighted count: none at %u threads\n",
                kBlock);
  }
}

static const char *kUsage =
    "usage: reduction [--n N] [--help]\n"
    "  Reduces n floats of 1.0f to one float with four kernels (v1 interleaved, v2 strided,\n"
    "  v3 sequential, v4 first add during the load), prints a compile-time model of their\n"
    "  divergence and bank conflicts, times each, and checks every result exactly.\n"
    "  --n N    elements, 1 to 16777216 (2^24, up to which a float sum of ones is exact in any\n"
    "           order); default 16776605 (2^24 - 611: odd, so every last block is ragged)\n"
    "  --help   this text\n"
    "exit codes: 0 all checks passed, 1 a check failed or a CUDA error, 2 bad usage.\n"
    "The edge-size matrix and the random 0/1 input: tests/harness/day24-reduction.cu.\n";

// Digits only, 1 to kMaxN: "1e6", "-1", "0x10", "" and 0 are refused. Saturates past kMaxN.
bool parseN(const char *s, size_t &out) {
  size_t v = 0;
  for (const char *p = s; *p != '\0'; ++p) {
    if (*p < '0' || *p > '9') {
      return false;
    }
    v = std::min(v * 10 + size_t(*p - '0'), kMaxN + 1);
  }
  out = v;
  return v >= 1 && v <= kMaxN;
}

int main(int argc, char **argv) {
  size_t n = kDefaultN;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::printf("%s", kUsage);
      return 0;
    }
    if (a != "--n") {
      std::fprintf(stderr, "error: unknown option '%s'; the knobs are --n N and --help\n", argv[i]);
      return 2;
    }
    if (i + 1 == argc || !parseN(argv[++i], n)) {
      std::fprintf(stderr, "error: --n needs a whole number from 1 to 16777216 in digits (above "
                           "2^24 a float sum of ones is no longer exact in every order)\n");
      return 2;
    }
  }

  int devices = 0;
  const cudaError_t probe = cudaGetDeviceCount(&devices);
  if (probe != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "error: no usable CUDA device (%s)\n",
                 probe != cudaSuccess ? cudaGetErrorString(probe) : "none found");
    return 1;
  }
  cudaDeviceProp p;
  CUDA_CHECK(cudaGetDeviceProperties(&p, 0));
  size_t freeBytes = 0, totalBytes = 0;
  CUDA_CHECK(cudaMemGetInfo(&freeBytes, &totalBytes));
  if (bytesNeeded(n) > freeBytes) { // refused before any allocation
    std::fprintf(stderr, "error: n = %zu needs %zu bytes of device memory; %zu are free on %s\n", n,
                 bytesNeeded(n), freeBytes, p.name);
    return 2;
  }
  std::printf("GPU: %s | cc %d.%d | %d SMs | %zu KiB shared/block | %d MiB L2 | warp %d\n", p.name,
              p.major, p.minor, p.multiProcessorCount, p.sharedMemPerBlock / 1024,
              p.l2CacheSize / (1024 * 1024), p.warpSize);
  if (p.warpSize != int(kWarp)) {
    std::fprintf(stderr,
                 "error: this device has %d-lane warps; the model and the kernels' "
                 "reasoning assume 32, so the program does not run here\n",
                 p.warpSize);
    return 1;
  }
  std::printf("\n");
  printModelTable();

  Buffers b;
  if (!allocBuffers(b, n)) {
    std::fprintf(stderr, "error: cudaMalloc for n = %zu failed\n", n);
    return 1;
  }
  int checks = 0, failures = 0;
  std::vector<Measured> rows;
  for (const Version &v : kVersions) {
    const float *result = nullptr;
    auto launch = [&] { result = launchReduction(v, b.in, n, b.scratch); };
    auto poison = [&] { poisonScratch(b); };
    // First run: from poison, synchronized, checked before any timing.
    poison();
    launch();
    CUDA_CHECK(cudaDeviceSynchronize());
    const bool before = checkOneFloat(v.name, "before timing", n, result, double(n));
    const Timing t = timeKernel(launch, poison);
    // What the last timed run wrote (its batch began from poison): a race can show only here.
    const bool after = checkOneFloat(v.name, "after timing", n, result, double(n));
    checks += 2;
    failures += int(!before) + int(!after);
    rows.push_back(Measured{&v, planPasses(n, v.elementsPerBlock), t, before && after});
  }
  freeBuffers(b); // the one cleanup path: nothing else is allocated

  printTimingTable(rows, n, p.l2CacheSize);
  printStepTable(rows);
  if (failures == 0) {
    std::printf("\nRESULT: PASS (%d checks, all exact)\n", checks);
    return 0;
  }
  std::printf("\nRESULT: FAIL (%d of %d checks failed)\n", failures, checks);
  return 1;
}
#endif // REDUCTION_HARNESS
