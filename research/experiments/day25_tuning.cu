// Experiment (not a lesson file): how many independent float4 loads a thread must have in flight for
// the v7/v8 grid-stride reduction to reach the copy ceiling on the H200, and where CUB stands.
// Build: nvcc -std=c++17 -O3 -arch=sm_90 -o tuning research/experiments/day25_tuning.cu
// Prints one line per (variant, grid, block): median us over 11 batches of 20 launches, GB/s (read).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
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

template <typename F>
double timeKernel(F f) {
  f();
  CUDA_CHECK(cudaDeviceSynchronize());
  cudaEvent_t a, b;
  CUDA_CHECK(cudaEventCreate(&a));
  CUDA_CHECK(cudaEventCreate(&b));
  std::vector<double> v;
  for (int k = 0; k < 11; ++k) {
    CUDA_CHECK(cudaEventRecord(a));
    for (int i = 0; i < 20; ++i) {
      f();
    }
    CUDA_CHECK(cudaEventRecord(b));
    CUDA_CHECK(cudaEventSynchronize(b));
    float ms;
    CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
    v.push_back(ms / 20.0);
  }
  std::sort(v.begin(), v.end());
  CUDA_CHECK(cudaEventDestroy(a));
  CUDA_CHECK(cudaEventDestroy(b));
  return v[5];
}

template <int kThreads>
__device__ float blockSum(float v) {
  __shared__ float warpSums[kThreads / 32];
  for (int o = 16; o > 0; o >>= 1) {
    v += __shfl_down_sync(0xffffffffu, v, o);
  }
  if (threadIdx.x % 32 == 0) {
    warpSums[threadIdx.x / 32] = v;
  }
  __syncthreads();
  v = 0.0f;
  if (threadIdx.x < 32) {
    v = threadIdx.x < kThreads / 32 ? warpSums[threadIdx.x] : 0.0f;
    for (int o = 16; o > 0; o >>= 1) {
      v += __shfl_down_sync(0xffffffffu, v, o);
    }
  }
  return v;
}

// kUnroll independent float4 loads a thread before any add.
template <int kThreads, int kUnroll>
__global__ void reduceU(const float *__restrict__ in, float *__restrict__ out, size_t n) {
  size_t nv = n / 4;
  const float4 *vin = reinterpret_cast<const float4 *>(in);
  size_t stride = size_t(gridDim.x) * kThreads;
  size_t i = size_t(blockIdx.x) * kThreads + threadIdx.x;
  float v = 0.0f;
  for (; i + (kUnroll - 1) * stride < nv; i += kUnroll * stride) {
    float4 f[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      f[u] = vin[i + u * stride];
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      v += (f[u].x + f[u].y) + (f[u].z + f[u].w);
    }
  }
  for (; i < nv; i += stride) {
    float4 f = vin[i];
    v += (f.x + f.y) + (f.z + f.w);
  }
  v = blockSum<kThreads>(v);
  if (threadIdx.x == 0) {
    out[blockIdx.x] = v;
  }
}

__global__ void copy4(const float4 *__restrict__ in, float4 *__restrict__ out, size_t nv) {
  size_t stride = size_t(gridDim.x) * blockDim.x;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < nv; i += stride) {
    out[i] = in[i];
  }
}

__global__ void fill(float *p, size_t n) {
  size_t stride = size_t(gridDim.x) * blockDim.x;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    p[i] = 1.0f;
  }
}

template <int kThreads, int kUnroll>
void row(const char *name, const float *in, float *partials, float *result, size_t n, int grid) {
  auto launch = [&] {
    reduceU<kThreads, kUnroll><<<grid, kThreads>>>(in, partials, n);
    reduceU<kThreads, 1><<<1, kThreads>>>(partials, result, size_t(grid));
  };
  double ms = timeKernel(launch);
  float got = 0;
  CUDA_CHECK(cudaMemcpy(&got, result, 4, cudaMemcpyDeviceToHost));
  std::printf("%-10s n=2^%d block=%4d unroll=%d grid=%6d  %8.2f us  %7.1f GB/s  %s\n", name,
              __builtin_ctzll(n), kThreads, kUnroll, grid, ms * 1e3, n * 4 / ms / 1e6,
              double(got) == double(n) ? "exact" : "WRONG");
}

int main() {
  cudaDeviceProp p;
  CUDA_CHECK(cudaGetDeviceProperties(&p, 0));
  std::printf("%s, %d SMs, L2 %d MiB\n", p.name, p.multiProcessorCount, p.l2CacheSize >> 20);
  for (int lg : {26, 30}) {
    size_t n = size_t(1) << lg;
    float *in, *out, *partials, *result;
    CUDA_CHECK(cudaMalloc(&in, n * 4));
    CUDA_CHECK(cudaMalloc(&out, n * 4));
    CUDA_CHECK(cudaMalloc(&partials, 65536 * 4));
    CUDA_CHECK(cudaMalloc(&result, 4));
    fill<<<1024, 256>>>(in, n);
    CUDA_CHECK(cudaDeviceSynchronize());
    for (int g : {8192, 65536}) {
      double ms = timeKernel([&] {
        copy4<<<g, 256>>>((const float4 *)in, (float4 *)out, n / 4);
      });
      std::printf("copy       n=2^%d grid=%6d %8.2f us  %7.1f GB/s (read+write)\n", lg, g, ms * 1e3,
                  2.0 * n * 4 / ms / 1e6);
    }
    void *tmp = nullptr;
    size_t tmpBytes = 0;
    CUDA_CHECK(cub::DeviceReduce::Sum(tmp, tmpBytes, in, result, (long long)n));
    CUDA_CHECK(cudaMalloc(&tmp, tmpBytes));
    double ms = timeKernel([&] {
      CUDA_CHECK(cub::DeviceReduce::Sum(tmp, tmpBytes, in, result, (long long)n));
    });
    std::printf("cub        n=2^%d %8.2f us  %7.1f GB/s\n", lg, ms * 1e3, n * 4 / ms / 1e6);
    for (int g : {1024, 2048, 4096}) {
      row<256, 1>("v8-u1", in, partials, result, n, g);
      row<256, 2>("v8-u2", in, partials, result, n, g);
      row<256, 4>("v8-u4", in, partials, result, n, g);
      row<512, 1>("v8-u1", in, partials, result, n, g);
      row<512, 4>("v8-u4", in, partials, result, n, g);
    }
    CUDA_CHECK(cudaFree(tmp));
    CUDA_CHECK(cudaFree(in));
    CUDA_CHECK(cudaFree(out));
    CUDA_CHECK(cudaFree(partials));
    CUDA_CHECK(cudaFree(result));
  }
  return 0;
}
