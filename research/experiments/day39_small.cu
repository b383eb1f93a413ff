// Experiment (not a lesson file), the sequel of day39_finish.cu: small and mid n only (2^10..2^20),
// a single-tile block for n <= 4096, a 512-thread one-launch tile, and a thread-block CLUSTER
// (sm_90) whose blocks meet in distributed shared memory instead of a ticket. Variants as there, plus
//   T1    n <= 4096: one block, the whole input in one tile, no loop, one barrier fewer
//   A512  A with 512-thread tiles (8192 floats)
//   K8/K16  ONE cluster of 8 / 16 blocks (16 needs the non-portable size); cluster.sync(); block 0
//         adds the blocks' sums through cluster.map_shared_rank; no ticket, no partials
// Timed as day 39 times (CUDA-graph replay of a batch of calls over rotating input copies, and
// stream launches; median of 7 batches; the output poisoned before every batch and checked after).
//   CUB   cub::DeviceReduce::Sum
//   S<T>  ONE block of T threads, 4 float4 loads in flight a thread, predicated tail, no ticket
//   A     ONE launch, one CUB-sized tile (256 x 4 float4 = 4096 floats) a block, acq_rel ticket
//         (cuda::atomic_ref), the last block adds the partials in a fixed order with __ldcg
//   B     TWO launches shaped like CUB's: pass 1 one partial a block, pass 2 one block
//   C     B with programmatic dependent launch (sm_90): pass 1 triggers at its START, pass 2 waits
//         in cudaGridDependencySynchronize() before it reads the partials
//   P     the persistent last-block shape day 39's best has: grid = SMs x occupancy x waves
// Build: nvcc -std=c++17 -O3 -arch=sm_90 -o small39 research/experiments/day39_small.cu
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#include <cub/device/device_reduce.cuh>
#include <cooperative_groups.h>
#include <cuda/atomic>
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

__device__ float blockSum(float v, float *ws) {
  for (int o = 16; o > 0; o >>= 1) {
    v += __shfl_down_sync(0xffffffffu, v, o);
  }
  __syncthreads(); // ws may still be read by a previous call
  if (threadIdx.x % 32 == 0) {
    ws[threadIdx.x / 32] = v;
  }
  __syncthreads();
  if (threadIdx.x < 32) {
    v = threadIdx.x < blockDim.x / 32 ? ws[threadIdx.x] : 0.0f;
    for (int o = 16; o > 0; o >>= 1) {
      v += __shfl_down_sync(0xffffffffu, v, o);
    }
  }
  return v;
}

// Tiles of T x L float4s, tile t to block t % blocks; the partial last tile guarded (n % 4 == 0).
template <int T, int L>
__device__ float tiles(const float *in, size_t n, unsigned b, unsigned nb) {
  const float4 *in4 = reinterpret_cast<const float4 *>(in);
  size_t n4 = n / 4, tile = size_t(T) * L, nt = (n4 + tile - 1) / tile;
  float s = 0.0f;
  for (size_t t = b; t < nt; t += nb) {
    float4 v[L];
#pragma unroll
    for (int u = 0; u < L; ++u) {
      size_t k = t * tile + u * T + threadIdx.x;
      v[u] = k < n4 ? __ldg(in4 + k) : make_float4(0.f, 0.f, 0.f, 0.f);
    }
#pragma unroll
    for (int u = 0; u < L; ++u) {
      s += (v[u].x + v[u].y) + (v[u].z + v[u].w);
    }
  }
  return s;
}

template <int T>
__global__ void __launch_bounds__(T) single(const float *in, size_t n, float *out) {
  __shared__ float ws[32];
  float v = blockSum(tiles<T, 4>(in, n, 0, 1), ws);
  if (threadIdx.x == 0) {
    *out = v;
  }
}

// A: one launch, acq_rel ticket, fixed-order finish.
template <int T, int L>
__global__ void __launch_bounds__(T) oneLaunch(const float *in, size_t n, float *partials,
                                               unsigned *ticket, float *out) {
  __shared__ float ws[32];
  __shared__ bool last;
  float v = blockSum(tiles<T, L>(in, n, blockIdx.x, gridDim.x), ws);
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = v;
    cuda::atomic_ref<unsigned, cuda::thread_scope_device> t(*ticket);
    last = t.fetch_add(1u, cuda::memory_order_acq_rel) == gridDim.x - 1;
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

// B / C pass 1 (C: trigger at the start) and pass 2 (C: wait before reading).
template <int T, int L, bool kPdl>
__global__ void __launch_bounds__(T) pass1(const float *in, size_t n, float *partials) {
#if __CUDA_ARCH__ >= 900
  if (kPdl) {
    cudaTriggerProgrammaticLaunchCompletion();
  }
#endif
  __shared__ float ws[32];
  float v = blockSum(tiles<T, L>(in, n, blockIdx.x, gridDim.x), ws);
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = v;
  }
}
template <int T, bool kPdl>
__global__ void __launch_bounds__(T) pass2(const float *partials, unsigned count, float *out) {
#if __CUDA_ARCH__ >= 900
  if (kPdl) {
    cudaGridDependencySynchronize();
  }
#endif
  __shared__ float ws[32];
  float s = 0.0f;
  for (unsigned b = threadIdx.x; b < count; b += T) {
    s += partials[b];
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

size_t gPoolN;
float *gPool, *gPartials, *gOut;
unsigned *gTicket;
cudaStream_t gStream;
int gSms;
int gBad = 0;

// us per call: graph replay of `calls` calls over rotating copies, or stream launches; median of 7.
double timeIt(const std::function<void(const float *)> &call, size_t n, bool graph) {
  size_t slots = std::max<size_t>(1, gPoolN / n);
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
    CUDA_CHECK(cudaGetLastError());
  };
  run();
  CUDA_CHECK(cudaStreamSynchronize(gStream));
  cudaEvent_t a, b;
  CUDA_CHECK(cudaEventCreate(&a));
  CUDA_CHECK(cudaEventCreate(&b));
  std::vector<double> t;
  for (int k = 0; k < 7; ++k) {
    CUDA_CHECK(cudaMemsetAsync(gOut, 0xFF, 4, gStream)); // poison: the batch must write anew
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
  unsigned tk = 0;
  CUDA_CHECK(cudaMemcpy(&got, gOut, 4, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(&tk, gTicket, 4, cudaMemcpyDeviceToHost));
  if (double(got) != double(n) || tk != 0) {
    std::printf("WRONG: got %.0f want %zu ticket %u\n", got, n, tk);
    ++gBad;
  }
  return t[3];
}

template <typename K>
unsigned gridFor(K kernel, int threads, size_t n, size_t tileFloats, int waves) {
  int occ = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, kernel, threads, 0));
  size_t tilesN = (n + tileFloats - 1) / tileFloats;
  return unsigned(std::max<size_t>(1, std::min<size_t>(tilesN, size_t(gSms) * occ * waves)));
}

void row(const char *name, size_t n, bool graph, double cub,
         const std::function<void(const float *)> &call) {
  double us = timeIt(call, n, graph);
  std::printf("| %-6s | 2^%-2d | %-10s | %9.2f | %6.3f |\n", graph ? "graph" : "stream",
              __builtin_ctzll(n), name, us, cub > 0 ? cub / us : 1.0);
}


namespace cg = cooperative_groups;

// T1: exactly one block of T threads over n <= 4 T L floats, n % 4 == 0: no loop.
template <int T, int L>
__global__ void __launch_bounds__(T) singleTile(const float *in, size_t n, float *out) {
  __shared__ float ws[32];
  const float4 *in4 = reinterpret_cast<const float4 *>(in);
  unsigned n4 = unsigned(n / 4);
  float4 v[L];
#pragma unroll
  for (int u = 0; u < L; ++u) {
    unsigned k = u * T + threadIdx.x;
    v[u] = k < n4 ? __ldg(in4 + k) : make_float4(0.f, 0.f, 0.f, 0.f);
  }
  float s = 0.0f;
#pragma unroll
  for (int u = 0; u < L; ++u) {
    s += (v[u].x + v[u].y) + (v[u].z + v[u].w);
  }
  for (int o = 16; o > 0; o >>= 1) {
    s += __shfl_down_sync(0xffffffffu, s, o);
  }
  if (threadIdx.x % 32 == 0) {
    ws[threadIdx.x / 32] = s;
  }
  __syncthreads();
  if (threadIdx.x < 32) {
    s = threadIdx.x < T / 32 ? ws[threadIdx.x] : 0.0f;
    for (int o = 16; o > 0; o >>= 1) {
      s += __shfl_down_sync(0xffffffffu, s, o);
    }
    if (threadIdx.x == 0) {
      *out = s;
    }
  }
}

// K: one cluster (the whole grid), blocks meet in distributed shared memory.
template <int T, int L>
__global__ void __launch_bounds__(T) clusterSum(const float *in, size_t n, float *out) {
  __shared__ float ws[32];
  __shared__ float blockTotal;
  cg::cluster_group cluster = cg::this_cluster();
  unsigned rank = cluster.block_rank(), size = cluster.num_blocks();
  float v = blockSum(tiles<T, L>(in, n, rank, size), ws);
  if (threadIdx.x == 0) {
    blockTotal = v;
  }
  cluster.sync();
  if (rank == 0 && threadIdx.x < 32) {
    float s = threadIdx.x < size ? *cluster.map_shared_rank(&blockTotal, threadIdx.x) : 0.0f;
    for (int o = 16; o > 0; o >>= 1) {
      s += __shfl_down_sync(0xffffffffu, s, o);
    }
    if (threadIdx.x == 0) {
      *out = s;
    }
  }
  cluster.sync(); // every block's shared memory stays alive until block 0 has read it
}

template <int T, int L>
void launchCluster(const float *in, size_t n, unsigned size, cudaStream_t s) {
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(size);
  cfg.blockDim = dim3(T);
  cfg.stream = s;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = size;
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  CUDA_CHECK(cudaLaunchKernelEx(&cfg, clusterSum<T, L>, in, n, gOut));
}
int main() {
  CUDA_CHECK(cudaDeviceGetAttribute(&gSms, cudaDevAttrMultiProcessorCount, 0));
  CUDA_CHECK(cudaStreamCreateWithFlags(&gStream, cudaStreamNonBlocking));
  gPoolN = size_t(1) << 28;
  CUDA_CHECK(cudaMalloc(&gPool, gPoolN * 4));
  CUDA_CHECK(cudaMalloc(&gPartials, 1 << 22));
  CUDA_CHECK(cudaMalloc(&gOut, 4));
  CUDA_CHECK(cudaMalloc(&gTicket, 4));
  CUDA_CHECK(cudaMemset(gTicket, 0, 4));
  fill<<<4096, 256>>>(gPool, gPoolN);
  CUDA_CHECK(cudaDeviceSynchronize());
  CUDA_CHECK(cudaFuncSetAttribute(clusterSum<256, 4>, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  CUDA_CHECK(cudaFuncSetAttribute(clusterSum<512, 4>, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  CUDA_CHECK(cudaFuncSetAttribute(clusterSum<1024, 4>, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  void *tmp = nullptr;
  size_t tmpBytes = 0;
  CUDA_CHECK(cub::DeviceReduce::Sum(tmp, tmpBytes, gPool, gOut, gPoolN));
  CUDA_CHECK(cudaMalloc(&tmp, tmpBytes));
  std::printf("| mode   | n    | variant    |   us/call | CUB/it |\n|---|---|---|---|---|\n");
  for (bool graph : {true, false}) {
    for (int lg = 10; lg <= 20; ++lg) {
      size_t n = size_t(1) << lg;
      double cub = timeIt(
          [&](const float *in) {
            CUDA_CHECK(cub::DeviceReduce::Sum(tmp, tmpBytes, in, gOut, n, gStream));
          },
          n, graph);
      row("CUB", n, graph, 0, [&](const float *in) {
        CUDA_CHECK(cub::DeviceReduce::Sum(tmp, tmpBytes, in, gOut, n, gStream));
      });
      if (lg <= 12) {
        row("T1-256", n, graph, cub, [&](const float *in) { singleTile<256, 4><<<1, 256, 0, gStream>>>(in, n, gOut); });
        row("T1-512", n, graph, cub, [&](const float *in) { singleTile<512, 2><<<1, 512, 0, gStream>>>(in, n, gOut); });
        row("T1-1024", n, graph, cub, [&](const float *in) { singleTile<1024, 1><<<1, 1024, 0, gStream>>>(in, n, gOut); });
        row("S256", n, graph, cub, [&](const float *in) { single<256><<<1, 256, 0, gStream>>>(in, n, gOut); });
      }
      if (lg >= 12) {
        unsigned gA = gridFor(oneLaunch<256, 4>, 256, n, 4096, 5);
        row("A", n, graph, cub, [&](const float *in) {
          oneLaunch<256, 4><<<gA, 256, 0, gStream>>>(in, n, gPartials, gTicket, gOut);
        });
        unsigned gA5 = gridFor(oneLaunch<512, 4>, 512, n, 8192, 5);
        row("A512", n, graph, cub, [&](const float *in) {
          oneLaunch<512, 4><<<gA5, 512, 0, gStream>>>(in, n, gPartials, gTicket, gOut);
        });
        unsigned gA2 = gridFor(oneLaunch<256, 2>, 256, n, 2048, 5);
        row("A-L2", n, graph, cub, [&](const float *in) {
          oneLaunch<256, 2><<<gA2, 256, 0, gStream>>>(in, n, gPartials, gTicket, gOut);
        });
      }
      if (lg >= 12 && lg <= 18) {
        row("K8-256", n, graph, cub, [&](const float *in) { launchCluster<256, 4>(in, n, 8, gStream); });
        row("K16-256", n, graph, cub, [&](const float *in) { launchCluster<256, 4>(in, n, 16, gStream); });
        row("K8-512", n, graph, cub, [&](const float *in) { launchCluster<512, 4>(in, n, 8, gStream); });
        row("K16-512", n, graph, cub, [&](const float *in) { launchCluster<512, 4>(in, n, 16, gStream); });
        row("K8-1024", n, graph, cub, [&](const float *in) { launchCluster<1024, 4>(in, n, 8, gStream); });
      }
    }
  }
  std::printf("%s: %d wrong results\n", gBad ? "FAIL" : "PASS", gBad);
  return gBad ? 1 : 0;
}
