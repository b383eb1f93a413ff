// Day 39 scan, tuning experiment (not a lesson): the shapes `best` could take, measured side by
// side with CUB and the copy in one process, every output checked exactly by the lesson's own
// check.
//
//   nvcc -std=c++17 -O3 -arch=sm_90 -o scan_tuning research/experiments/day39_scan_tuning.cu
//   ./scan_tuning
//
// Variants (large n): the lesson's scanBest (warp 0 publishes the aggregate, then looks back) at
// several tile shapes; the same with a __nanosleep back-off in the poll; and a block with one more,
// DEDICATED look-back warp that starts polling as soon as the tile is drawn, while the data warps
// load and scan (they synchronise on a named barrier of their own), so the look-back overlaps the
// tile's load latency instead of following it. Small n: ONE block of 256/512/1024 threads.
#define REDUCTION_HARNESS
#include "../../code/day39-scan/scan.cu"

#include <functional>

// The poll with a back-off: as the lesson's lookBack, but a lane that finds nothing sleeps kPollNs,
// and the warp first sleeps kInitNs (CUB 3.0.1's sm_90 float scan: 1140 ns, then 688 a retry).
template <int kPollNs, int kInitNs = 0>
__device__ float lookBackPoll(unsigned long long *status, unsigned int tile, unsigned int epoch) {
  unsigned int lane = threadIdx.x % kWarp;
  float exclusive = 0.0f;
  if (kInitNs > 0) {
    __nanosleep(kInitNs);
  }
  for (long long window = (long long)tile - 1;; window -= kWarp) {
    long long pred = window - lane;
    unsigned long long w = 0;
    unsigned int st = kInclusive;
    if (pred >= 0) {
      while ((st = statusOf(w = readWord(&status[pred]), epoch)) == 0) {
        if (kPollNs > 0) {
          __nanosleep(kPollNs);
        }
      }
    }
    unsigned int inclusive = __ballot_sync(kFullMask, st == kInclusive);
    unsigned int stop = inclusive != 0 ? __ffs(inclusive) - 1 : kWarp - 1;
    float v = lane <= stop ? __uint_as_float(unsigned(w)) : 0.0f;
    for (int offset = 1; offset < kWarp; offset *= 2) {
      v += __shfl_down_sync(kFullMask, v, offset);
    }
    exclusive += __shfl_sync(kFullMask, v, 0);
    if (inclusive != 0) {
      return exclusive;
    }
  }
}

__device__ inline void drawTile(unsigned long long *counter, unsigned int &tile,
                                unsigned int &epoch) {
  cuda::atomic_ref<unsigned long long, cuda::thread_scope_device> draws(*counter);
  unsigned long long drawn = draws.fetch_add(1ull, cuda::memory_order_relaxed);
  tile = unsigned(drawn);
  epoch = unsigned(drawn >> 32);
  if (tile == gridDim.x - 1) {
    draws.store(static_cast<unsigned long long>(epoch + 1) << 32, cuda::memory_order_relaxed);
  }
}

// Classic order with a poll back-off.
template <int kThreads, int kLoads, int kPollNs, int kInitNs = 0>
__global__ void __launch_bounds__(kThreads)
    scanSleep(const float *in, float *out, size_t n, bool vec, unsigned long long *counter,
              unsigned long long *status) {
  __shared__ float warpTotals[kThreads / kWarp];
  __shared__ unsigned int sTile, sEpoch;
  __shared__ float sPrefix;
  constexpr size_t kTileFloats = size_t(kThreads) * kLoads * 4;
  if (threadIdx.x == 0) {
    drawTile(counter, sTile, sEpoch);
  }
  __syncthreads();
  const unsigned int tile = sTile, epoch = sEpoch;
  const size_t first = size_t(tile) * kTileFloats;
  const bool full = vec && first + kTileFloats <= n;
  float4 v[kLoads];
  float before[kLoads], warpBefore = 0.0f;
  float total =
      scanTileStriped<kThreads, kLoads>(in, n, first, full, v, before, warpBefore, warpTotals);
  if (threadIdx.x == 0) {
    publish(&status[tile], epoch, tile == 0 ? kInclusive : kAggregate, total);
  }
  if (threadIdx.x < kWarp) {
    float prefix = tile == 0 ? 0.0f : lookBackPoll<kPollNs, kInitNs>(status, tile, epoch);
    if (threadIdx.x == 0) {
      if (tile > 0) {
        publish(&status[tile], epoch, kInclusive, prefix + total);
      }
      sPrefix = prefix;
    }
  }
  __syncthreads();
  storeTileStriped<kLoads>(out, n, first, full, v, before, sPrefix + warpBefore);
}

// scanTileStriped with the data warps' own named barrier (1, kThreads threads) instead of
// __syncthreads(): the look-back warp does not take part.
template <int kThreads, int kLoads>
__device__ float scanTileStripedData(const float *in, size_t n, size_t first, bool full,
                                     float4 (&v)[kLoads], float (&before)[kLoads],
                                     float &warpBefore, float *warpTotals) {
  const unsigned int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  const size_t part = first + size_t(warp) * kLoads * kWarp * 4 + size_t(lane) * 4;
  if (full) {
#pragma unroll
    for (int j = 0; j < kLoads; ++j) {
      v[j] = *reinterpret_cast<const float4 *>(in + part + size_t(j) * kWarp * 4);
    }
  } else {
#pragma unroll
    for (int j = 0; j < kLoads; ++j) {
      size_t i = part + size_t(j) * kWarp * 4;
      v[j] = make_float4(i < n ? in[i] : 0.0f, i + 1 < n ? in[i + 1] : 0.0f,
                         i + 2 < n ? in[i + 2] : 0.0f, i + 3 < n ? in[i + 3] : 0.0f);
    }
  }
  float carry = 0.0f;
#pragma unroll
  for (int j = 0; j < kLoads; ++j) {
    v[j].y += v[j].x;
    v[j].z += v[j].y;
    v[j].w += v[j].z;
    float upTo = warpInclusiveScan(v[j].w);
    before[j] = carry + (upTo - v[j].w);
    carry += __shfl_sync(kFullMask, upTo, kWarp - 1);
  }
  if (lane == 0) {
    warpTotals[warp] = carry;
  }
  asm volatile("bar.sync 1, %0;" ::"r"(kThreads) : "memory");
  float tileTotal = 0.0f;
  warpBefore = 0.0f;
#pragma unroll
  for (int w = 0; w < kThreads / kWarp; ++w) {
    float t = warpTotals[w];
    warpBefore += unsigned(w) < warp ? t : 0.0f;
    tileTotal += t;
  }
  return tileTotal;
}

// A dedicated look-back warp (warp kThreads / 32): it looks back from the moment the tile is drawn.
template <int kThreads, int kLoads, int kPollNs>
__global__ void __launch_bounds__(kThreads + kWarp)
    scanWarp(const float *in, float *out, size_t n, bool vec, unsigned long long *counter,
             unsigned long long *status) {
  __shared__ float warpTotals[kThreads / kWarp];
  __shared__ unsigned int sTile, sEpoch;
  __shared__ float sPrefix, sTotal;
  constexpr size_t kTileFloats = size_t(kThreads) * kLoads * 4;
  if (threadIdx.x == 0) {
    drawTile(counter, sTile, sEpoch);
  }
  __syncthreads();
  const unsigned int tile = sTile, epoch = sEpoch;
  const size_t first = size_t(tile) * kTileFloats;
  const bool full = vec && first + kTileFloats <= n;
  float4 v[kLoads];
  float before[kLoads], warpBefore = 0.0f;
  if (threadIdx.x >= kThreads) { // the look-back warp
    float prefix = tile == 0 ? 0.0f : lookBackPoll<kPollNs>(status, tile, epoch);
    if (threadIdx.x == kThreads) {
      sPrefix = prefix;
    }
  } else {
    float total = scanTileStripedData<kThreads, kLoads>(in, n, first, full, v, before, warpBefore,
                                                        warpTotals);
    if (threadIdx.x == 0) {
      publish(&status[tile], epoch, tile == 0 ? kInclusive : kAggregate, total);
      sTotal = total;
    }
  }
  __syncthreads();
  if (threadIdx.x == 0 && tile > 0) {
    publish(&status[tile], epoch, kInclusive, sPrefix + sTotal);
  }
  if (threadIdx.x < kThreads) {
    storeTileStriped<kLoads>(out, n, first, full, v, before, sPrefix + warpBefore);
  }
}

struct Variant {
  std::string name;
  std::function<void(const float *, float *, size_t, bool, cudaStream_t)> launch;
  std::vector<size_t> graphAt, streamAt; // the sizes it is timed at, in each mode
};

int main() {
  Setup s;
  CUDA_CHECK(cudaGetDeviceProperties(&s.prop, 0));
  const size_t maxN = size_t(1) << 28;
  Reference ref = referenceFor(Input::PlusMinusOne, 39, maxN);
  std::printf("GPU %s, range %lld\n", s.prop.name, ref.range);
  size_t l2 = size_t(s.prop.l2CacheSize);
  size_t ringFloats = std::max<size_t>(maxN + 64, size_t(kL2Multiple) * l2 / 4 + (size_t(1) << 20));
  float *in = nullptr, *out = nullptr;
  CUDA_CHECK(cudaMalloc(&in, ringFloats * 4));
  CUDA_CHECK(cudaMalloc(&out, ringFloats * 4));
  s.stateWords = 2 + maxN / 2048;
  s.bestStateWords = s.stateWords;
  CUDA_CHECK(cudaMalloc(&s.partials, kMaxChunks * 4));
  CUDA_CHECK(cudaMalloc(&s.state, s.stateWords * 8));
  CUDA_CHECK(cudaMalloc(&s.bestState, s.bestStateWords * 8));
  CUDA_CHECK(cudaMemset(s.bestState, 0, s.bestStateWords * 8));
  unsigned long long *st2 = nullptr; // the variants' own counter and words
  CUDA_CHECK(cudaMalloc(&st2, s.stateWords * 8));
  CUDA_CHECK(cudaMemset(st2, 0, s.stateWords * 8));
  CUDA_CHECK(cubScan(nullptr, s.cubTempBytes, nullptr, nullptr, maxN, 0));
  CUDA_CHECK(cudaMalloc(&s.cubTemp, s.cubTempBytes));
  CUDA_CHECK(cudaMalloc(&s.counts, 24));
  CUDA_CHECK(cudaMalloc(&s.seeds, ref.seeds.size() * 8));
  CUDA_CHECK(cudaMemcpy(s.seeds, ref.seeds.data(), ref.seeds.size() * 8, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaDeviceSynchronize());
  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

  auto row = [&](Row r) {
    return [&s, r](const float *a, float *b, size_t n, bool, cudaStream_t st) {
      launchRow(r, s, a, b, n, st);
    };
  };
  auto tiles = [](size_t n, size_t t) { return unsigned((n + t - 1) / t); };
  const std::vector<size_t> large = {size_t(1) << 20, size_t(1) << 24, size_t(1) << 26,
                                     size_t(1) << 28};
  const std::vector<size_t> small = {size_t(1) << 10, size_t(1) << 12, size_t(1) << 13,
                                     size_t(1) << 14, size_t(1) << 15, size_t(1) << 16};
  std::vector<size_t> all = small;
  all.insert(all.end(), large.begin(), large.end());
  const std::vector<size_t> big = {size_t(1) << 28};
#define SLEEP(T, L, P, I, AT, ST)                                                                  \
  Variant {                                                                                        \
    "classic " #T "x" #L " poll " #P " init " #I,                                                  \
        [&](const float *a, float *b, size_t n, bool vec, cudaStream_t st) {                       \
          scanSleep<T, L, P, I><<<tiles(n, T *L * 4), T, 0, st>>>(a, b, n, vec, st2, st2 + 1);     \
        },                                                                                         \
        AT, ST                                                                                     \
  }
#define WARP(T, L, P)                                                                              \
  Variant {                                                                                        \
    "lbwarp " #T "x" #L " poll " #P,                                                               \
        [&](const float *a, float *b, size_t n, bool vec, cudaStream_t st) {                       \
          scanWarp<T, L, P><<<tiles(n, T *L * 4), T + kWarp, 0, st>>>(a, b, n, vec, st2, st2 + 1); \
        },                                                                                         \
        large, big                                                                                 \
  }
#define ONE(T, L)                                                                                  \
  Variant {                                                                                        \
    "one block " #T "x" #L,                                                                        \
        [&](const float *a, float *b, size_t n, bool vec, cudaStream_t st) {                       \
          scanOneBlock<T, L><<<1, T, 0, st>>>(a, b, n, vec);                                       \
        },                                                                                         \
        small, small                                                                               \
  }
  std::vector<Variant> variants = {
      {"copy", row(Row::Copy), all, all},
      {"CUB", row(Row::Cub), all, all},
      {"best (lesson)", row(Row::Best), all, all},
      {"look-back (rung)", row(Row::LookBack), large, big},
      SLEEP(256, 8, 0, 0, all, all),
      SLEEP(256, 8, 100, 0, large, big),
      SLEEP(256, 8, 300, 0, large, big),
      SLEEP(256, 8, 700, 0, large, big),
      SLEEP(256, 8, 300, 1000, large, big),
      SLEEP(256, 8, 700, 1100, large, big),
      SLEEP(256, 4, 300, 0, all, big),
      SLEEP(512, 4, 300, 0, large, big),
      SLEEP(128, 8, 300, 0, all, big),
      SLEEP(256, 16, 300, 0, large, big),
      SLEEP(512, 8, 300, 0, large, big),
      SLEEP(128, 6, 700, 1100, large, big),
      SLEEP(128, 8, 100, 0, small, small),
      SLEEP(64, 8, 100, 0, small, small),
      WARP(256, 8, 0),
      WARP(256, 8, 100),
      WARP(256, 8, 300),
      WARP(256, 16, 100),
      WARP(512, 8, 100),
      WARP(256, 4, 100),
      WARP(128, 8, 100),
      ONE(32, 8),
      ONE(64, 8),
      ONE(128, 8),
      ONE(256, 4),
      ONE(512, 4),
      ONE(1024, 4),
  };
  std::printf(
      "| variant | n | mode | us | spread %% | vs CUB | %% of copy | check |\n|---|---|---|---|"
      "---|---|---|---|\n");
  int failures = 0;
  for (size_t n : all) {
    size_t slot = (n + kGuard + 63) / 64 * 64;
    int buffers = 8.0 * n >= kL2Multiple * double(l2)
                      ? 1
                      : int(std::ceil(kL2Multiple * double(l2) / (8.0 * n)));
    buffers = int(std::min<size_t>(buffers, ringFloats / slot));
    fillRing<<<1024, 256, 0, stream>>>(in, size_t(buffers) * slot, slot, n, Input::PlusMinusOne,
                                       39);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaStreamSynchronize(stream));
    int calls = int(std::max<double>(4, std::min<double>(4096, kBatchBytes / (4.0 * n))));
    for (int graph = 1; graph >= 0; --graph) {
      double cubUs = 0, copyUs = 0;
      for (const Variant &v : variants) {
        const std::vector<size_t> &at = graph ? v.graphAt : v.streamAt;
        if (std::find(at.begin(), at.end(), n) == at.end()) {
          continue;
        }
        auto poison = [&] {
          CUDA_CHECK(cudaMemsetAsync(out, 0xFF, size_t(buffers) * slot * 4, stream));
        };
        long long next = 0;
        int last = 0;
        auto call = [&] {
          last = int(next++ % buffers);
          v.launch(in + size_t(last) * slot, out + size_t(last) * slot, n, true, stream);
          CUDA_CHECK(cudaGetLastError());
        };
        poison();
        call();
        CUDA_CHECK(cudaStreamSynchronize(stream));
        Row kind = v.name == "copy" ? Row::Copy : Row::Best;
        float *ip = in + size_t(last) * slot, *op = out + size_t(last) * slot;
        Check c1 = checkRow(kind, s, ref, ip, op, n, slot, stream);
        Timing t = graph ? timeGraph(call, poison, calls, stream)
                         : timeKernel(call, poison, calls, stream);
        CUDA_CHECK(cudaStreamSynchronize(stream));
        ip = in + size_t(last) * slot, op = out + size_t(last) * slot;
        Check c2 = checkRow(kind, s, ref, ip, op, n, slot, stream);
        bool ok = c1.ok && c2.ok;
        failures += !ok;
        copyUs = v.name == "copy" ? t.us : copyUs;
        cubUs = v.name == "CUB" ? t.us : cubUs;
        char pct[16] = "-";
        if (8.0 * n >= kL2Multiple * double(l2)) {
          std::snprintf(pct, sizeof pct, "%.1f", 100.0 * copyUs / t.us);
        }
        std::printf("| %s | %zu | %s | %.2f | %.1f | %.3f | %s | %s |\n", v.name.c_str(), n,
                    graph ? "graph" : "stream", t.us, t.spread, cubUs / t.us, pct,
                    ok ? "exact" : "FAIL");
        if (!ok) {
          const Check &c = c1.ok ? c2 : c1;
          std::printf("  first bad %llu got %.0f want %.0f (%llu wrong, %llu strays)\n", c.first,
                      c.got, c.want, c.wrong, c.strays);
        }
        std::fflush(stdout);
      }
    }
  }
  std::printf("\nRESULT: %s (%d failed)\n", failures ? "FAIL" : "PASS", failures);
  return failures ? 1 : 0;
}
