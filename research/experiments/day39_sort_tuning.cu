// Day 39 sort, tuning experiment (not a lesson): the shapes `best` could take, measured side by
// side with CUB in one process (graph mode, one replay of 4-256 calls a batch, median of 7), every
// output checked against CUB's by the lesson's own check (keys equal, sorted, the guard).
//
//   nvcc -std=c++17 -O3 -arch=sm_90 -o sort_tuning research/experiments/day39_sort_tuning.cu
//   ./sort_tuning [MAX_N [MIN_N [ONLY]]]   (MAX_N default 2^28: the lesson's buffers, about 10 GiB;
//                            refused with exit 2 where the device has less free; MIN_N default
//                            1024; ONLY: run only the variants whose name contains it, and CUB)
//
// Variants: onesweep at several tiles (threads x keys a thread; CUB 3.0.1's sm_90 tile is 384 x
// 20), and ONE block of 256 x 4, 256 x 8, 512 x 4, 512 x 8, 1024 x 4, 512 x 16, 1024 x 8 and
// 1024 x 16 keys at small n (the lesson's shapes and others; a block needs 256 threads or more:
// one a digit). One copy of the input: the rows below 4 x L2 read it from L2 (the lesson's table
// rotates copies; this compares shapes, not absolutes). -DSORT_LESSON='"DIR/sort-V.cu"' builds it
// on a variant of the lesson's rank written by day39_sort_rank_variants.py.
// The records of 2026-12-02 were made by earlier versions of this file (git history): the first
// (day39_sort_tuning-2026-12-02-h200.txt) with 256 x 24 and 384 x 16 tiles, -rank-variants and its
// Nsight Compute records without the small one blocks.
#include <cub/device/device_radix_sort.cuh>
#define REDUCTION_HARNESS
#ifndef SORT_LESSON
#define SORT_LESSON "../../code/day39-sort/sort.cu"
#endif
#include SORT_LESSON

#include <cstring>
#include <functional>

int main(int argc, char **argv) {
  size_t maxN = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : kMaxN;
  size_t minN = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 1024;
  const char *only = argc > 3 ? argv[3] : "";
  if (!isPowerOfTwo(maxN) || maxN < 4096 || maxN > kMaxN || !isPowerOfTwo(minN) || minN < 1024 ||
      minN > maxN) {
    std::fprintf(stderr, "error: MAX_N and MIN_N must be powers of two, 1024 <= MIN_N <= MAX_N, "
                         "4096 <= MAX_N <= 2^28\n");
    return 2;
  }
  Setup s;
  CUDA_CHECK(cudaGetDeviceProperties(&s.prop, 0));
  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const size_t slot = maxN + kGuard;
  Buffers b; // the lesson's buffers, one copy of each input and output
  size_t need = planBuffers(s, b, maxN, slot), freeBytes = 0, totalBytes = 0;
  CUDA_CHECK(cudaMemGetInfo(&freeBytes, &totalBytes));
  if (need > freeBytes) {
    std::fprintf(stderr, "error: MAX_N %zu needs %zu MiB, %zu MiB are free\n", maxN, need >> 20,
                 freeBytes >> 20);
    return 2;
  }
  Rings g = allocateBuffers(s, b);
  // The one blocks above 48 KiB of shared memory: the device's opt-in (an H200 gives 227 KiB).
  for (auto [f, bytes] :
       {std::pair{(const void *)sortOneBlock<1024, 4, false, false>, oneBlockBytes(1024, 4)},
        std::pair{(const void *)sortOneBlock<1024, 8, false, false>, oneBlockBytes(1024, 8)},
        std::pair{(const void *)sortOneBlock<512, 16, false, false>, oneBlockBytes(512, 16)},
        std::pair{(const void *)sortOneBlock<1024, 16, false, false>, oneBlockBytes(1024, 16)}}) {
    CUDA_CHECK(cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
  }
  uint32_t *in = g.keys, *out = g.keysOut, *sorted = b.p[Buffers::SortedKeys];

  struct Variant {
    const char *name;
    size_t maxN;
    std::function<void(const Call &)> launch;
  };
  const std::vector<Variant> variants = {
      {"CUB", kMaxN, launchCubKeys},
      {"onesweep 256 x 8", kMaxN, [](const Call &c) { oneSweep<256, 8, false>(c, false); }},
      {"onesweep 256 x 16", kMaxN, [](const Call &c) { oneSweep<256, 16, false>(c, false); }},
      {"onesweep 384 x 20", kMaxN, [](const Call &c) { oneSweep<384, 20, false>(c, false); }},
      {"onesweep 512 x 12", kMaxN, [](const Call &c) { oneSweep<512, 12, false>(c, false); }},
      {"one block 256 x 4", 1024, [](const Call &c) { oneBlock<256, 4, false>(c, false); }},
      {"one block 256 x 8", 2048, [](const Call &c) { oneBlock<256, 8, false>(c, false); }},
      {"one block 512 x 4", 2048, [](const Call &c) { oneBlock<512, 4, false>(c, false); }},
      {"one block 1024 x 4", 4096, [](const Call &c) { oneBlock<1024, 4, false>(c, false); }},
      {"one block 512 x 8", 4096, [](const Call &c) { oneBlock<512, 8, false>(c, false); }},
      {"one block 512 x 16", 8192, [](const Call &c) { oneBlock<512, 16, false>(c, false); }},
      {"one block 1024 x 16", 16384, [](const Call &c) { oneBlock<1024, 16, false>(c, false); }},
      {"one block 1024 x 8", 8192, [](const Call &c) { oneBlock<1024, 8, false>(c, false); }},
  };
  std::printf(
      "GPU: %s | %d SMs | %d MiB L2 | CUB %d.%d.%d | graph mode, median of %d batches\n"
      "lesson: " SORT_LESSON "\n\n"
      "|          n | variant           |        us | spread %% | G keys/s | vs CUB | check "
      "|\n|------------|-------------------|-----------|----------|----------|--------|------"
      "-|\n",
      s.prop.name, s.prop.multiProcessorCount, s.prop.l2CacheSize >> 20, CUB_MAJOR_VERSION,
      CUB_MINOR_VERSION, CUB_SUBMINOR_VERSION, kTimingBatches);
  int failures = 0;
  for (size_t n = minN; n <= maxN; n *= 2) {
    fillRing<<<1024, 256, 0, stream>>>(in, slot, slot, n, Input::Random, 39, false);
    CUDA_CHECK(cudaGetLastError());
    launchCubKeys({s, in, sorted, nullptr, nullptr, n, stream});
    Reference ref{n, n + kGuard, in, in, nullptr, sorted, sorted, signature(s, in, n, stream), {}};
    double cubUs = 0;
    for (const Variant &v : variants) {
      if (n > v.maxN || (v.name[0] != 'C' && !std::strstr(v.name, only))) {
        continue;
      }
      auto call = [&] {
        v.launch(Call{s, in, out, nullptr, nullptr, n, stream});
        CUDA_CHECK(cudaGetLastError());
      };
      auto poison = [&] { CUDA_CHECK(cudaMemsetAsync(out, 0xA5, (n + kGuard) * 4, stream)); };
      int calls = int(std::max<double>(4, std::min<double>(256, double(size_t(1) << 28) / n)));
      Timing t = timeGraph(call, poison, calls, stream);
      CUDA_CHECK(cudaStreamSynchronize(stream));
      Check c = checkRow(Row::Best, s, ref, in, out, nullptr, stream);
      failures += !c.ok;
      cubUs = v.name[0] == 'C' ? t.us : cubUs;
      std::printf("| %10zu | %-17s | %9.2f | %8.1f | %8.2f | %6.2f | %-5s |%s%s\n", n, v.name, t.us,
                  t.spread, double(n) / t.us / 1000.0, cubUs / t.us, c.ok ? "exact" : "FAIL",
                  c.ok ? "" : " ", c.why.c_str());
    }
  }
  freeBuffers(s, b);
  CUDA_CHECK(cudaStreamDestroy(stream));
  std::printf("\nRESULT: %s\n", failures == 0 ? "PASS (every variant's output equal to CUB's)"
                                              : "FAIL (an output differs from CUB's)");
  return failures == 0 ? 0 : 1;
}
