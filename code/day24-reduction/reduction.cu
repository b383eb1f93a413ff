// Day 24: parallel reduction, versions 1-4, with a compile-time model of divergence and bank
// conflicts.
//
// Four block-level sum kernels over the same n floats, one change between neighbours:
//   v1  interleaved addressing: the stride s doubles, thread tid adds when tid % (2s) == 0
//       (active threads are scattered over every warp: divergence);
//   v2  the same additions done by packed threads: index = 2 * s * tid, tid < kBlock / (2s)
//       (whole warps go idle, but the active lanes of a warp crowd into a few shared-memory banks);
//   v3  sequential addressing: the stride halves, thread tid < s adds tile[tid + s]
//       (contiguous active lanes, consecutive words: no divergence inside a warp, no conflicts);
//   v4  v3 with the first add during the load: each thread loads two elements, kBlock apart,
//       so the grid is half as large and no thread sits idle through the first step.
// Each version reduces ALL the way to one float: pass 1 turns n inputs into one partial a block,
// the next pass reduces those partials, and so on, alternating between two scratch buffers. The
// bytes read are counted over every pass; the number of passes is printed.
//
// Before anything runs, a compile-time model (constexpr functions, static_asserts) counts per
// block the warp-level executions of the tree body and the same weighted by bank-conflict ways:
// (47, 12, 12, 12) and (47, 47, 12, 12) at 256 threads. The program prints the model, then the
// measured table, the step speed-ups (v1 -> v2, v2 -> v3, v3 -> v4) and the largest single step.
//
// Build and run (from the repository root):
//   nvcc -std=c++17 -O3 -arch=sm_75 -o reduction code/day24-reduction/reduction.cu
//   ./reduction                 n = 2^24 - 611 = 16,776,605 ones, the model and the timing table
//   ./reduction --n 65537       any n from 1 to 2^24 (what the sanitizer runs use)
//   ./reduction --self-test     every version at 12 edge sizes of n, checked, no timing
//
// Checked: every version's one float, exactly (inputs are 1.0f, so the sum is n), before it is
// timed and again after; the device's warp size (the model and kernels assume 32 lanes); the row
// count of the table. Deliberately not checked: speed (never a pass/fail condition), and the
// model against a profiler (the model is arithmetic; the table is the experiment). No copy
// ceiling on this day: day 25 adds one.
#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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

// Threads a block, every version. The exercise changes it: any power of two from 32 to 1024
// builds, and the model below recounts itself.
constexpr unsigned kBlock = 256;
static_assert(kBlock >= 32 && kBlock <= 1024 && (kBlock & (kBlock - 1)) == 0,
              "kBlock must be a power of two from 32 to 1024: the tree halves it evenly");

// Lanes a warp and shared-memory banks (4-byte words, word w in bank w % 32). The model counts
// with these; main() refuses a device whose warp size is not kWarp.
constexpr unsigned kWarp = 32;
constexpr unsigned kBanks = 32;

// Exactness: inputs are 1.0f, so every partial sum is a whole number no larger than n. A float
// holds every whole number up to 2^24 exactly, so for n <= 2^24 every add is exact in any order
// and the one float must equal n. Above 2^24 that argument needs more (see day 25), so --n stops
// at 2^24.
constexpr size_t kMaxN = size_t(1) << 24;
// 2^24 - 611, with 611 = 13 * 47: no power-of-two block size divides it, so the bounds check of
// the last block runs on every pass.
constexpr size_t kDefaultN = kMaxN - 611;
static_assert(kDefaultN % 2 == 1 && kDefaultN <= kMaxN, "odd n: every last block is ragged");
// The largest pass-1 grid, (2^24 + kBlock - 1) / kBlock blocks, fits gridDim.x (2^31 - 1).
static_assert(kMaxN / kBlock < (size_t(1) << 31), "grid too large for gridDim.x");

constexpr int kVersionCount = 4;

// Timing: kTimingBatches batches of kLaunchesPerBatch back-to-back runs; median reported.
constexpr int kTimingBatches = 7;
constexpr int kLaunchesPerBatch = 20;
static_assert(kTimingBatches % 2 == 1, "an odd batch count has one median batch");

// ---- The compile-time model -------------------------------------------------------------------
//
// One block of B threads (B = kBlock) runs a tree of log2(B) steps, one step per stride s in
// {1, 2, 4, ..., B/2} (v1, v2 walk the strides upward, v3, v4 downward; the count does not depend
// on the order). At a step, the ACTIVE threads take the branch and run the body: load tile[a],
// load tile[a + s], add, store tile[a]. The model counts:
//
//   warp executions:  (step, warp) pairs in which at least one lane of the warp is active. Such
//                     a warp issues the whole body, however few of its lanes use it; a warp with
//                     no active lane branches around it. (Every warp still evaluates the branch
//                     and waits at the barrier; that cost is the same for all four versions, so
//                     the model leaves it out.)
//   conflict-weighted: each warp execution times its bank-conflict ways. Shared memory has 32
//                     banks; when k active lanes of one warp touch k different words of one bank,
//                     the access is split into k conflict-free passes. Ways = the largest number
//                     of active lanes whose words fall in one bank. (Within one access the lanes'
//                     words are all different here, so no broadcast case arises.) The body's
//                     three accesses use the same pattern shifted by s, hence the same ways.
//
// The functions below simply evaluate each version's branch and index for every thread of the
// block at compile time. What they give at B = 256 (8 warps, 8 steps):
//   v1  active: tid % (2s) == 0, word tid. While 2s <= 32 every warp holds an active lane
//       (s = 1..16: 5 steps x 8 warps); after that one warp in 2s/32 does (s = 32, 64, 128: 4, 2,
//       1 warps): 8+8+8+8+8+4+2+1 = 47. The active lanes of a warp sit 2s words apart, at most
//       32/(2s) of them, all in different banks: 1 way, weighted 47.
//   v2  active: index = 2*s*tid < B, i.e. tid < B/(2s), packed into ceil(B/(2s)/32) warps:
//       4+2+1+1+1+1+1+1 = 12. Their words 2*s*tid fold onto 32/gcd(2s, 32) banks: ways
//       2, 4, 8, 8, 8, 4, 2, 1, weighted 4*2 + 2*4 + 8+8+8+4+2+1 = 47 -- exactly v1's 47.
//   v3  active: tid < s, ceil(s/32) warps: 4+2+1+1+1+1+1+1 = 12, consecutive words, 1 way: 12.
//   v4  v3's tree unchanged: 12 and 12 per block, but a block now covers 2B elements, so per
//       element its tree work is half of v3's. The model counts per block; the table per run.
// Closed forms, derived by hand and asserted below as a cross-check of the counting code:
//   v1 = 5 * B/32 + (B/32 - 1) = 6B/32 - 1;   v3 = 5 + (B/64 + ... + 1) = B/32 + 4.

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

// ---- timeKernel -------------------------------------------------------------------------------

struct Timing {
  double ms;        // median over batches, per launch (here: per full reduction, all passes)
  double spreadPct; // (slowest - fastest batch) / median, in percent
};

// Times `launch` (a callable that enqueues one full reduction on the default stream and checks
// each launch). Warm-up first: with lazy module loading (the default since CUDA 12.2 on Linux) a
// kernel's first launch also pays for loading it. Then kTimingBatches batches of
// kLaunchesPerBatch back-to-back runs, each batch between one pair of events
// (cudaEventElapsedTime resolves about 0.5 us, so a batch, not a single run, is timed).
template <typename Launch>
Timing timeKernel(Launch &&launch) {
  launch();
  CUDA_CHECK(cudaDeviceSynchronize());
  cudaEvent_t start = nullptr;
  cudaEvent_t stop = nullptr;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  std::vector<double> perLaunch;
  for (int b = 0; b < kTimingBatches; ++b) {
    CUDA_CHECK(cudaEventRecord(start));
    for (int k = 0; k < kLaunchesPerBatch; ++k) {
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
  Timing t;
  t.ms = perLaunch[perLaunch.size() / 2];
  t.spreadPct = t.ms > 0.0 ? 100.0 * (perLaunch.back() - perLaunch.front()) / t.ms : 0.0;
  return t;
}

// ---- Kernels, in row order --------------------------------------------------------------------
//
// Common launch assumptions (the host launches every pass this way):
//   threads a block: exactly kBlock (a power of two, 32..1024), the size of the shared tile;
//   elements a thread: 1 (v4: 2); scalar loads, so no alignment beyond float's own;
//   grid: ceil(m / kBlock) blocks for m inputs (v4: ceil(m / (2 kBlock))), so every input has
//         exactly one owner; threads past the end load 0.0f, which leaves the sum unchanged;
//   writes: out[blockIdx.x], the block's partial sum (one float for the last pass).
// Every __syncthreads() is outside the branches, so every thread of the block reaches it
// (the CUDA guide allows a barrier in conditional code only if the condition is the same for
// the whole block). Within a step, the active threads store only to words no thread loads in
// that step (v1, v2: multiples of 2s; they load those and odd multiples of s; v3, v4: words
// below s, loading words below 2s), so the barrier between steps is the only ordering needed.
// After Harris, "Optimizing Parallel Reduction in CUDA", kernels 1-4 (cuda-samples reduce0-3).

// v1: interleaved addressing. Thread tid works at step s only if tid % (2s) == 0: at s = 1 every
// warp has 16 active lanes out of 32, and the integer modulo itself costs several instructions.
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

// snippet: v2-strided
// v2: the same additions as v1, done by the first kBlock / (2s) threads: whole warps are either
// all active or all idle (no divergence inside a warp until fewer than 32 remain), but the lanes
// of a warp store to words 2s apart, so 32 lanes fold onto 32 / gcd(2s, 32) banks: an n-way
// bank conflict (2-way at s = 1, 8-way from s = 4 at 256 threads).
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
__global__ void reduceV4FirstAdd(const float *in, float *out, size_t n) {
  __shared__ float tile[kBlock];
  const unsigned tid = threadIdx.x;
  // Why not the tempting i = 2 * (blockIdx.x * blockDim.x + tid), i.e. i = 2g for global
  // thread g? With the second load at i + blockDim.x (even, as blockDim.x is even) every load
  // lands on an even index: odd elements are never read, and even elements from blockDim.x on
  // are read twice (once as 2g, once as 2g' + blockDim.x). For n = 2^24 ones it sums
  // 2^24 - blockDim.x / 2: close enough to look like an off-by-a-little bug. With the second
  // load at i + 1 instead, each element is read once, but each warp-wide load instruction reads
  // every other float of a 256-byte span: half of every sector it fetches is for the other
  // instruction, a stride-2 pattern where this one is two fully used 128-byte rows.
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

// ---- Host launchers ---------------------------------------------------------------------------

using ReduceKernel = void (*)(const float *, float *, size_t);

struct Version {
  const char *name;   // the row's name in every table
  const char *change; // what changed from the row above
  ReduceKernel kernel;
  unsigned elementsPerBlock; // kBlock, or 2 * kBlock for v4
  int modelVersion;          // the model's version number (1..4)
};

const Version kVersions[] = {
    {"v1", "interleaved addressing, branch on tid % (2s)", reduceV1Interleaved, kBlock, 1},
    {"v2", "same additions by packed threads, index = 2*s*tid", reduceV2Strided, kBlock, 2},
    {"v3", "sequential addressing, tid < s, stride halves", reduceV3Sequential, kBlock, 3},
    {"v4", "v3 plus the first add during the load", reduceV4FirstAdd, 2 * kBlock, 4},
};
static_assert(sizeof(kVersions) / sizeof(kVersions[0]) == kVersionCount, "four versions");

// The passes one version makes over n inputs: pass p reads m_p values and writes
// ceil(m_p / elementsPerBlock) partials, until one value is left (at least one pass, so even
// n = 1 goes through a kernel). Used both to launch and to count bytes, so the two agree.
struct Plan {
  int passes = 0;
  size_t elementsRead = 0;    // over every pass
  size_t outputs[2] = {0, 0}; // the most floats written into scratch[0] and scratch[1]
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

// Enqueues every pass of one version: input -> scratch[0] -> scratch[1] -> scratch[0] ...
// Returns the device address of the final one float.
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

// Device buffers for one n: the input (n ones) and two scratch buffers sized for the largest
// partial count any version writes into each (so memcheck sees any write past a pass's output).
struct Buffers {
  float *in = nullptr;
  float *scratch[2] = {nullptr, nullptr};
  size_t scratchCount[2] = {0, 0};
};

size_t bytesNeeded(size_t n, size_t scratchCount[2]) {
  scratchCount[0] = scratchCount[1] = 0;
  for (const Version &v : kVersions) {
    const Plan plan = planPasses(n, v.elementsPerBlock);
    scratchCount[0] = std::max(scratchCount[0], plan.outputs[0]);
    scratchCount[1] = std::max(scratchCount[1], std::max<size_t>(plan.outputs[1], 1));
  }
  return (n + scratchCount[0] + scratchCount[1]) * sizeof(float);
}

void allocateBuffers(size_t n, Buffers *b) {
  bytesNeeded(n, b->scratchCount);
  CUDA_CHECK(cudaMalloc(&b->in, n * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&b->scratch[0], b->scratchCount[0] * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&b->scratch[1], b->scratchCount[1] * sizeof(float)));
  const std::vector<float> ones(n, 1.0f);
  CUDA_CHECK(cudaMemcpy(b->in, ones.data(), n * sizeof(float), cudaMemcpyHostToDevice));
}

void freeBuffers(Buffers *b) {
  CUDA_CHECK(cudaFree(b->in));
  CUDA_CHECK(cudaFree(b->scratch[0]));
  CUDA_CHECK(cudaFree(b->scratch[1]));
  *b = Buffers();
}

// Poisons both scratch buffers (all bits set: a NaN), so a pass that fails to write its partials
// cannot leave an earlier run's right answer behind.
void poisonScratch(const Buffers &b) {
  CUDA_CHECK(cudaMemset(b.scratch[0], 0xFF, b.scratchCount[0] * sizeof(float)));
  CUDA_CHECK(cudaMemset(b.scratch[1], 0xFF, b.scratchCount[1] * sizeof(float)));
}

// ---- Checks -----------------------------------------------------------------------------------

// The right answer is n (inputs are 1.0f and n <= 2^24, see kMaxN). Prints one line on a miss.
bool checkOneFloat(const char *row, const float *dResult, size_t n) {
  float got = 0.0f;
  CUDA_CHECK(cudaMemcpy(&got, dResult, sizeof(float), cudaMemcpyDeviceToHost));
  const float want = float(n);
  if (got == want) {
    return true;
  }
  std::printf("CHECK FAILED: %s got %.1f want %.1f (off by %.0f elements)\n", row, double(got),
              double(want), double(got) - double(want));
  return false;
}

// ---- Tables -----------------------------------------------------------------------------------

struct Row {
  const Version *v;
  Plan plan;
  Timing t;
  bool exact;
};

double megabytes(const Plan &p) {
  return double(p.elementsRead) * sizeof(float) / 1e6;
}

int printModelTable() {
  std::printf("Model, per block of %u threads (compile time; see the comment above "
              "modelTreeCount):\n\n",
              kBlock);
  std::printf("| row | what changes | elements a block | tree steps | warp executions | "
              "conflict-weighted |\n");
  std::printf("|---|---|---|---|---|---|\n");
  int rows = 0;
  unsigned steps = 0;
  for (unsigned s = 1; s < kBlock; s *= 2) {
    ++steps;
  }
  for (const Version &v : kVersions) {
    std::printf("| %s | %s | %u | %u | %u | %u |\n", v.name, v.change, v.elementsPerBlock, steps,
                modelWarpExecutions(v.modelVersion, kBlock),
                modelConflictWeighted(v.modelVersion, kBlock));
    ++rows;
  }
  std::printf("\nwarp executions: (tree step, warp) pairs with at least one active lane. "
              "conflict-weighted: each one\ntimes its bank-conflict ways (the most active lanes "
              "of the warp whose words share a bank).\n\n");
  return rows;
}

int printTimingTable(const std::vector<Row> &rows, size_t n) {
  std::printf("Measured: n = %zu floats of 1.0f, %u threads a block, every row reduced to one "
              "float on the device:\n\n",
              n, kBlock);
  std::printf("| row | passes | MB | ms | spread %% | GB/s | speed-up vs v1 | check |\n");
  std::printf("|---|---|---|---|---|---|---|---|\n");
  const double v1ms = rows.empty() ? 0.0 : rows[0].t.ms;
  int printed = 0;
  for (const Row &r : rows) {
    const double mb = megabytes(r.plan);
    const double gbps = r.t.ms > 0.0 ? mb / r.t.ms : 0.0;
    const double speedup = r.t.ms > 0.0 ? v1ms / r.t.ms : 0.0;
    std::printf("| %s | %d | %.3f | %.4f | %.1f | %.1f | %.2f | %s |\n", r.v->name, r.plan.passes,
                mb, r.t.ms, r.t.spreadPct, gbps, speedup, r.exact ? "exact" : "FAIL");
    ++printed;
  }
  std::printf("\nMB: bytes read over all passes, 10^6 bytes; GB/s = MB / ms; ms: median of %d "
              "batches of %d runs,\neach run all passes of one version; spread %%: (slowest - "
              "fastest batch) / median.\n\n",
              kTimingBatches, kLaunchesPerBatch);
  return printed;
}

int printSteps(const std::vector<Row> &rows) {
  std::printf("| step | what changes | warp executions | conflict-weighted | speed-up |\n");
  std::printf("|---|---|---|---|---|\n");
  int printed = 0;
  int bestStep = -1;
  double bestSpeedup = 0.0;
  int modelStep = -1;
  unsigned modelDrop = 0;
  for (size_t k = 1; k < rows.size(); ++k) {
    const Version &a = *rows[k - 1].v;
    const Version &b = *rows[k].v;
    const double speedup = rows[k].t.ms > 0.0 ? rows[k - 1].t.ms / rows[k].t.ms : 0.0;
    const unsigned wa = modelConflictWeighted(a.modelVersion, kBlock);
    const unsigned wb = modelConflictWeighted(b.modelVersion, kBlock);
    std::printf("| %s -> %s | %s | %u -> %u | %u -> %u | %.2f |\n", a.name, b.name, b.change,
                modelWarpExecutions(a.modelVersion, kBlock),
                modelWarpExecutions(b.modelVersion, kBlock), wa, wb, speedup);
    ++printed;
    if (speedup > bestSpeedup) {
      bestSpeedup = speedup;
      bestStep = int(k);
    }
    if (wa > wb && wa - wb > modelDrop) {
      modelDrop = wa - wb;
      modelStep = int(k);
    }
  }
  std::printf("\nspeed-up: the row above's ms / this row's ms. The model columns are per block; "
              "v4's block covers\ntwice the elements, so its tree work per element is half of "
              "v3's.\n\n");
  if (bestStep > 0) {
    std::printf("largest single step: %s -> %s (%.2fx)\n", rows[bestStep - 1].v->name,
                rows[bestStep].v->name, bestSpeedup);
  }
  if (modelStep > 0) {
    std::printf("the model's largest drop in conflict-weighted warp executions: %s -> %s "
                "(%u -> %u)\n",
                rows[modelStep - 1].v->name, rows[modelStep].v->name,
                modelConflictWeighted(rows[modelStep - 1].v->modelVersion, kBlock),
                modelConflictWeighted(rows[modelStep].v->modelVersion, kBlock));
  } else {
    std::printf("the model's largest drop in conflict-weighted warp executions: none at %u "
                "threads\n",
                kBlock);
  }
  return printed;
}

// ---- Argument parsing -------------------------------------------------------------------------

struct Options {
  size_t n = kDefaultN;
  bool nGiven = false;
  bool selfTest = false;
};

void printHelp() {
  std::printf(
      "usage: reduction [--n N] [--self-test] [--help]\n"
      "  Reduces n floats of 1.0f to one float with four kernels (v1 interleaved, v2 strided,\n"
      "  v3 sequential, v4 first add during the load), prints a compile-time model of their\n"
      "  divergence and bank conflicts, times each, and checks every result exactly.\n"
      "  --n N        elements, 1 to %zu (2^24: a float sum of ones is exact up to there);\n"
      "               default %zu (2^24 - 611, so no block size divides it)\n"
      "  --self-test  every version at n = 1, 2, 255, 256, 257, 511, 512, 513, 65535, 65536,\n"
      "               65537 and 2^24, checked, no timing; exit 1 on any failure\n"
      "  --help       this text\n"
      "exit code: 0 all checks passed, 1 a check failed or a CUDA error, 2 bad usage\n",
      kMaxN, kDefaultN);
}

// Decimal digits only; anything else (sign, exponent, hex, empty) is refused. Values past kMaxN
// saturate at kMaxN + 1, so a long string cannot overflow and is reported as out of range.
bool parseCount(const char *text, size_t *value) {
  if (text == nullptr || *text == '\0') {
    return false;
  }
  size_t v = 0;
  for (const char *p = text; *p != '\0'; ++p) {
    if (*p < '0' || *p > '9') {
      return false;
    }
    v = std::min(v * 10 + size_t(*p - '0'), kMaxN + 1);
  }
  *value = v;
  return true;
}

// Returns -1 to go on, or the exit code (0 after --help, 2 after a refusal).
int parseArgs(int argc, char **argv, Options *opt) {
  for (int a = 1; a < argc; ++a) {
    if (std::strcmp(argv[a], "--help") == 0 || std::strcmp(argv[a], "-h") == 0) {
      printHelp();
      return 0;
    } else if (std::strcmp(argv[a], "--self-test") == 0) {
      opt->selfTest = true;
    } else if (std::strcmp(argv[a], "--n") == 0) {
      if (a + 1 >= argc) {
        std::fprintf(stderr, "error: --n needs a value: a whole number from 1 to %zu\n", kMaxN);
        return 2;
      }
      const char *text = argv[++a];
      size_t n = 0;
      if (!parseCount(text, &n)) {
        std::fprintf(stderr,
                     "error: --n '%s' is not a decimal whole number; use digits only, 1 to %zu\n",
                     text, kMaxN);
        return 2;
      }
      if (n < 1 || n > kMaxN) {
        std::fprintf(stderr,
                     "error: --n %s is outside 1..%zu: above 2^24 a float sum of ones is no "
                     "longer exact in every order\n",
                     text, kMaxN);
        return 2;
      }
      opt->n = n;
      opt->nGiven = true;
    } else {
      std::fprintf(stderr,
                   "error: unknown argument '%s'; the knobs are --n N, --self-test, "
                   "--help\n",
                   argv[a]);
      return 2;
    }
  }
  if (opt->selfTest && opt->nGiven) {
    std::fprintf(stderr, "error: --self-test runs its own list of n; leave out --n\n");
    return 2;
  }
  return -1;
}

// ---- main -------------------------------------------------------------------------------------

// Prints the banner; returns false (after one error line) if the device's warp is not kWarp
// lanes wide, since the model and the "whole warp idle" arguments assume it.
bool printBannerAndCheckWarp() {
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  cudaDeviceProp prop;
  CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  std::printf("GPU: %s | cc %d.%d | %d SMs | %zu KiB shared/block | %d MiB L2 | warp %d\n",
              prop.name, prop.major, prop.minor, prop.multiProcessorCount,
              prop.sharedMemPerBlock / 1024, prop.l2CacheSize / (1024 * 1024), prop.warpSize);
  if (prop.warpSize != int(kWarp)) {
    std::fprintf(stderr,
                 "error: this device has %d-lane warps; the model and kernels of this program "
                 "assume %u, so it will not run here\n",
                 prop.warpSize, kWarp);
    return false;
  }
  return true;
}

// Refuses (exit 2) an n whose buffers do not fit the device's free memory, before allocating.
bool fitsInFreeMemory(size_t n) {
  size_t scratch[2];
  const size_t need = bytesNeeded(n, scratch);
  size_t freeBytes = 0;
  size_t totalBytes = 0;
  CUDA_CHECK(cudaMemGetInfo(&freeBytes, &totalBytes));
  if (need > freeBytes) {
    std::fprintf(stderr, "error: n = %zu needs %zu bytes of device memory, %zu are free\n", n, need,
                 freeBytes);
    return false;
  }
  return true;
}

int runSelfTest() {
  const size_t sizes[] = {1, 2, 255, 256, 257, 511, 512, 513, 65535, 65536, 65537, kMaxN};
  if (!fitsInFreeMemory(kMaxN)) {
    return 2;
  }
  std::printf("Self-test: every version at 12 sizes, one exact check each, no timing.\n\n");
  std::printf("| n | row | passes | MB | check |\n");
  std::printf("|---|---|---|---|---|\n");
  int checks = 0;
  int failed = 0;
  int rowsPrinted = 0;
  for (size_t n : sizes) {
    Buffers b;
    allocateBuffers(n, &b);
    for (const Version &v : kVersions) {
      poisonScratch(b);
      const float *result = launchReduction(v, b.in, n, b.scratch);
      CUDA_CHECK(cudaDeviceSynchronize());
      const Plan plan = planPasses(n, v.elementsPerBlock);
      const bool ok = checkOneFloat(v.name, result, n);
      ++checks;
      failed += ok ? 0 : 1;
      std::printf("| %zu | %s | %d | %.3f | %s |\n", n, v.name, plan.passes, megabytes(plan),
                  ok ? "exact" : "FAIL");
      ++rowsPrinted;
    }
    freeBuffers(&b);
  }
  const int wantRows = int(sizeof(sizes) / sizeof(sizes[0])) * kVersionCount;
  if (rowsPrinted != wantRows) {
    std::printf("CHECK FAILED: self-test table has %d rows, want %d\n", rowsPrinted, wantRows);
    ++checks;
    ++failed;
  }
  std::printf("\n");
  if (failed == 0) {
    std::printf("RESULT: PASS (%d checks, all exact)\n", checks);
    return 0;
  }
  std::printf("RESULT: FAIL (%d of %d checks failed)\n", failed, checks);
  return 1;
}

int runDefault(size_t n) {
  if (!fitsInFreeMemory(n)) {
    return 2;
  }
  std::printf("n = %zu floats of 1.0f (at most 2^24, so every float sum is exact in any order), "
              "%u threads a block\n\n",
              n, kBlock);
  int checks = 0;
  int failed = 0;
  const int modelRows = printModelTable();

  Buffers b;
  allocateBuffers(n, &b);
  std::vector<Row> rows;

  // Every version checked once before any timing.
  for (const Version &v : kVersions) {
    poisonScratch(b);
    const float *result = launchReduction(v, b.in, n, b.scratch);
    CUDA_CHECK(cudaDeviceSynchronize());
    const bool ok = checkOneFloat(v.name, result, n);
    ++checks;
    failed += ok ? 0 : 1;
    rows.push_back(Row{&v, planPasses(n, v.elementsPerBlock), Timing{0.0, 0.0}, ok});
  }
  // Then each timed, and checked again on what its last timed run left behind.
  for (Row &r : rows) {
    const Version &v = *r.v;
    const float *result = nullptr;
    r.t = timeKernel([&] { result = launchReduction(v, b.in, n, b.scratch); });
    const bool ok = checkOneFloat(v.name, result, n);
    ++checks;
    failed += ok ? 0 : 1;
    r.exact = r.exact && ok;
  }

  const int timingRows = printTimingTable(rows, n);
  const int stepRows = printSteps(rows);
  // The tables, the step list and the README all assume four rows; a real branch, not assert.
  if (modelRows != kVersionCount || timingRows != kVersionCount || stepRows != kVersionCount - 1) {
    std::printf("CHECK FAILED: table rows model %d timing %d steps %d, want %d, %d, %d\n",
                modelRows, timingRows, stepRows, kVersionCount, kVersionCount, kVersionCount - 1);
    ++checks;
    ++failed;
  }

  freeBuffers(&b);
  std::printf("\n");
  if (failed == 0) {
    std::printf("RESULT: PASS (%d checks, all exact)\n", checks);
    return 0;
  }
  std::printf("RESULT: FAIL (%d of %d checks failed)\n", failed, checks);
  return 1;
}

int main(int argc, char **argv) {
  Options opt;
  const int parsed = parseArgs(argc, argv, &opt);
  if (parsed >= 0) {
    return parsed;
  }
  if (!printBannerAndCheckWarp()) {
    return 1;
  }
  return opt.selfTest ? runSelfTest() : runDefault(opt.n);
}
