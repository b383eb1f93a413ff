// Experiment (not a lesson file): which tile shape, grid and small-n path let day 39's "best"
// single-pass reduction match CUB at every size, timed as day 39 times (CUDA-graph replay of a
// batch of calls over rotating input copies, so every call reads DRAM; and stream launches).
// Build: nvcc -std=c++17 -O3 -arch=sm_90 -o tuning39 research/experiments/day39_tuning.cu
// Output: one line per (variant, n, mode): median us per call over 7 batches, ratio CUB/variant.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#include <cub/device/device_reduce.cuh>
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

__device__ float blockSum(float v, float *warpSums) {
  for (int o = 16; o > 0; o >>= 1) {
    v += __shfl_down_sync(0xffffffffu, v, o);
  }
  if (threadIdx.x % 32 == 0) {
    warpSums[threadIdx.x / 32] = v;
  }
  __syncthreads();
  if (threadIdx.x < 32) {
    v = threadIdx.x < blockDim.x / 32 ? warpSums[threadIdx.x] : 0.0f;
    for (int o = 16; o > 0; o >>= 1) {
      v += __shfl_down_sync(0xffffffffu, v, o);
    }
  }
  return v;
}

// Whole tiles of T x L float4s per block (n a multiple of 4 T L here: powers of two >= 2^14).
template <int T, int L>
__device__ float tiles(const float *in, size_t n, unsigned b, unsigned nb) {
  const float4 *in4 = reinterpret_cast<const float4 *>(in);
  size_t nt = n / 4 / (size_t(T) * L);
  float s = 0.0f;
  for (size_t t = b; t < nt; t += nb) {
    float4 v[L];
#pragma unroll
    for (int u = 0; u < L; ++u) {
      v[u] = __ldg(in4 + t * T * L + u * T + threadIdx.x);
    }
#pragma unroll
    for (int u = 0; u < L; ++u) {
      s += (v[u].x + v[u].y) + (v[u].z + v[u].w);
    }
  }
  return s;
}

template <int T, int L>
__global__ void __launch_bounds__(T) lastBlock(const float *in, size_t n, float *partials,
                                               unsigned *ticket, float *out) {
  __shared__ float ws[32];
  __shared__ bool last;
  float v = blockSum(tiles<T, L>(in, n, blockIdx.x, gridDim.x), ws);
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = v;
    __threadfence();
    bool l = atomicAdd(ticket, 1u) == gridDim.x - 1;
    if (l) {
      __threadfence();
    }
    last = l;
  }
  __syncthreads();
  if (last) {
    float s = 0.0f;
    for (unsigned b = threadIdx.x; b < gridDim.x; b += T) {
      s += __ldcg(&partials[b]);
    }
    s = blockSum(s, ws);
    if (threadIdx.x == 0) {
      *out = s;
      *ticket = 0u;
    }
  }
}

// One block, scalar-free: n a multiple of 4 (powers of two >= 2^10 here).
template <int T, int L>
__global__ void __launch_bounds__(T) oneBlock(const float *in, size_t n, float *out) {
  __shared__ float ws[32];
  const float4 *in4 = reinterpret_cast<const float4 *>(in);
  size_t n4 = n / 4;
  float s = 0.0f;
  for (size_t i = threadIdx.x; i < n4; i += size_t(T) * L) {
    float4 v[L];
#pragma unroll
    for (int u = 0; u < L; ++u) {
      size_t k = i + size_t(u) * T;
      v[u] = k < n4 ? __ldg(in4 + k) : make_float4(0.f, 0.f, 0.f, 0.f);
    }
#pragma unroll
    for (int u = 0; u < L; ++u) {
      s += (v[u].x + v[u].y) + (v[u].z + v[u].w);
    }
  }
  s = blockSum(s, ws);
  if (threadIdx.x == 0) {
    *out = s;
  }
}

__global__ void fill(float *p, size_t n) {
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x) {
    p[i] = 1.0f;
  }
}

constexpr size_t kPool = size_t(1) << 28; // 1 GiB of floats to rotate over (> 4 x 60 MiB L2)
float *gPool, *gPartials, *gOut;
unsigned *gTicket;
cudaStream_t gStream;

// us per call: graph replay of `calls` calls (rotating copies) or stream launches; median of 7.
double timeIt(const std::function<void(const float *)> &call, size_t n, bool graph) {
  size_t slots = std::max<size_t>(1, kPool / n);
  int calls = int(std::min<size_t>(256, std::max<size_t>(4, (size_t(1) << 30) / (4 * n))));
  auto batch = [&] {
    for (int c = 0; c < calls; ++c) {
      call(gPool + (c % slots) * n);
    }
  };
  cudaGraphExec_t exec = nullptr;
  if (graph) {
    cudaGraph_t g;
    CUDA_CHECK(cudaStreamBeginCapture(gStream, cudaStreamCaptureModeGlobal));
    batch();
    CUDA_CHECK(cudaStreamEndCapture(gStream, &g));
    CUDA_CHECK(cudaGraphInstantiate(&exec, g, 0));
    CUDA_CHECK(cudaGraphDestroy(g));
  }
  auto run = [&] {
    if (graph) {
      CUDA_CHECK(cudaGraphLaunch(exec, gStream));
    } else {
      batch();
    }
  };
  run();
  CUDA_CHECK(cudaStreamSynchronize(gStream));
  cudaEvent_t a, b;
  CUDA_CHECK(cudaEventCreate(&a));
  CUDA_CHECK(cudaEventCreate(&b));
  std::vector<double> t;
  for (int k = 0; k < 7; ++k) {
    CUDA_CHECK(cudaEventRecord(a, gStream));
    run();
    CUDA_CHECK(cudaEventRecord(b, gStream));
    CUDA_CHECK(cudaEventSynchronize(b));
    float ms;
    CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
    t.push_back(1e3 * ms / calls);
  }
  if (exec) {
    CUDA_CHECK(cudaGraphExecDestroy(exec));
  }
  CUDA_CHECK(cudaEventDestroy(a));
  CUDA_CHECK(cudaEventDestroy(b));
  std::sort(t.begin(), t.end());
  float got = 0;
  CUDA_CHECK(cudaMemcpy(&got, gOut, 4, cudaMemcpyDeviceToHost));
  if (double(got) != double(n)) {
    std::printf("WRONG: got %.0f want %zu\n", got, n);
  }
  return t[3];
}

int sms;
template <int T, int L>
void lastBlockRow(size_t n, int waves, double cub, bool graph) {
  int occ = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, lastBlock<T, L>, T, 0));
  size_t tilesN = n / 4 / (size_t(T) * L);
  unsigned grid = unsigned(std::max<size_t>(1, std::min<size_t>(tilesN, size_t(sms) * occ * waves)));
  double us = timeIt(
      [&](const float *in) {
        lastBlock<T, L><<<grid, T, 0, gStream>>>(in, n, gPartials, gTicket, gOut);
      },
      n, graph);
  std::printf("%s n=2^%-2d lastBlock T=%4d L=%d waves=%d grid=%5u %8.2f us  vs CUB %.3f\n",
              graph ? "graph " : "stream", __builtin_ctzll(n), T, L, waves, grid, us, cub / us);
}
template <int T, int L>
void oneBlockRow(size_t n, double cub, bool graph) {
  double us = timeIt([&](const float *in) { oneBlock<T, L><<<1, T, 0, gStream>>>(in, n, gOut); },
                     n, graph);
  std::printf("%s n=2^%-2d oneBlock  T=%4d L=%d                   %8.2f us  vs CUB %.3f\n",
              graph ? "graph " : "stream", __builtin_ctzll(n), T, L, us, cub / us);
}

int main() {
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  CUDA_CHECK(cudaStreamCreate(&gStream));
  CUDA_CHECK(cudaMalloc(&gPool, kPool * 4));
  CUDA_CHECK(cudaMalloc(&gPartials, 1 << 20));
  CUDA_CHECK(cudaMalloc(&gOut, 4));
  CUDA_CHECK(cudaMalloc(&gTicket, 4));
  CUDA_CHECK(cudaMemset(gTicket, 0, 4));
  fill<<<4096, 256>>>(gPool, kPool);
  void *tmp = nullptr;
  size_t tmpBytes = 0;
  CUDA_CHECK(cub::DeviceReduce::Sum(tmp, tmpBytes, gPool, gOut, int(1 << 26)));
  CUDA_CHECK(cudaMalloc(&tmp, tmpBytes));
  for (bool graph : {true, false}) {
    for (int lg = 10; lg <= 26; lg += 2) {
      size_t n = size_t(1) << lg;
      double cub = timeIt(
          [&](const float *in) {
            CUDA_CHECK(cub::DeviceReduce::Sum(tmp, tmpBytes, in, gOut, int(n), gStream));
          },
          n, graph);
      std::printf("%s n=2^%-2d CUB                                    %8.2f us\n",
                  graph ? "graph " : "stream", lg, cub);
      if (lg <= 18) {
        oneBlockRow<256, 4>(n, cub, graph);
        oneBlockRow<512, 4>(n, cub, graph);
        oneBlockRow<1024, 2>(n, cub, graph);
        oneBlockRow<1024, 8>(n, cub, graph);
      }
      if (lg >= 14) {
        for (int w : {1, 2, 8}) {
          lastBlockRow<512, 4>(n, w, cub, graph);
          lastBlockRow<256, 4>(n, w, cub, graph);
          lastBlockRow<256, 2>(n, w, cub, graph);
          lastBlockRow<128, 4>(n, w, cub, graph);
        }
      }
    }
  }
  return 0;
}
