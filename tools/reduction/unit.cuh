// The C++ that every README kernel's check is made of (tools/reduction/sources.py, main_of):
// the preamble, then each helper a check uses, each part after its `//@ NAME` line; the parts of
// its main (`part_...`, $NAME filled in by unit_main). It is pasted into the generated unit,
// never compiled alone.
// The launch contract: one `// Launch:` line in each README kernel's comment, in sources.py's
// LAUNCH_FORM; unit_main writes the check's main from it. Its names:
//   in        n input floats on the device, whole numbers 0..6: every sum below 2^24 is exact in
//             any order, and a kernel that reads a wrong element gets a wrong sum (ones could not)
//   n         the count, N unless `with n = ...` says otherwise
//   want      the exact answer: the input's sum, added on the host (or `want = sum of EXPR for i < n`)
//   partials  one float a block of the grid, NaN before each launch (an unwritten one fails)
//   result    one float, 0 before each launch (atomics add into it)
//   ticket    one unsigned int, 0 before the FIRST launch only: a kernel must leave it at 0
//   out       n floats, NaN before each launch
//   status    one status word (unsigned long long) a block of the grid, 0 before each launch (the
//             one-pass scans' tiles publish there)
//   keys      n uint32_t keys on the device (the sorts' input): the top 32 bits of i times
//             0x9E3779B97F4A7C15 (a Weyl sequence: every digit varies); hostKeys: the same, on the host
//   sorted    n uint32_t, 0xA5A5A5A5 before each launch (the sorts' output)
//   any other name of a pointer parameter: one value of its type, 0 before each launch
//   resident  (the grid) as many blocks as the GPU holds at once, from the occupancy calculator
//   cooperative  launched with cudaLaunchCooperativeKernel (grid.sync() needs it)
//   launch    the launch's number (each unit launches twice: the second shows what the first left)
// What is checked, exactly: `check A == B, ...` when given; else *result == want if the kernel takes
// result, else the partials added up == want, else out == in element by element; and *ticket == 0.
// A check may call prefixErrors(out, host): the elements of out that differ from the exact
// inclusive prefix sums of the input (the scans; every prefix of 0..6 at n = N is below 2^24); a
// kernel that takes sorted is checked by sortErrors(sorted, hostKeys): the keys that differ from
// hostKeys sorted on the host.
//@ preamble
// ---- The check: a main that launches the kernel above as its `// Launch:` line says, twice, ----
// ---- and compares what it leaves with the exact answer (tools/reduction/sources.py wrote it) ----
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

static void cudaCheck(cudaError_t e) {
  if (e != cudaSuccess) {
    std::printf("CUDA error: %s\n", cudaGetErrorString(e));
    std::exit(1);
  }
}
static int checks = 0, failed = 0;
static void expect(int launch, const char *what, double got, double want) { // exact; NaN fails
  ++checks;
  failed += !(got == want);
  std::printf("%slaunch %d: %s: got %.17g want %.17g%s\n", got == want ? "" : "CHECK FAILED: ",
              launch, what, got, want, got == want ? ": exact" : "");
}
//@ deviceArray
template <class T> static T *deviceArray(size_t count) {
  T *p = nullptr;
  cudaCheck(cudaMalloc(&p, count * sizeof(T)));
  return p;
}
//@ fromDevice
template <class T> static T fromDevice(const T *p) { // one value, device to host
  T v;
  cudaCheck(cudaMemcpy(&v, p, sizeof v, cudaMemcpyDeviceToHost));
  return v;
}
//@ toDevice
template <class T> static void toDevice(T *p, T v) { // one value, host to device
  cudaCheck(cudaMemcpy(p, &v, sizeof v, cudaMemcpyHostToDevice));
}
//@ sumOf
static double sumOf(const float *p, size_t count) { // device floats, added on the host
  std::vector<float> h(count);
  cudaCheck(cudaMemcpy(h.data(), p, count * sizeof(float), cudaMemcpyDeviceToHost));
  double s = 0.0;
  for (float x : h) {
    s += x;
  }
  return s;
}
//@ prefixErrors
static double prefixErrors(const float *p, const std::vector<float> &in) { // out vs exact prefixes
  std::vector<float> h(in.size());
  cudaCheck(cudaMemcpy(h.data(), p, h.size() * sizeof(float), cudaMemcpyDeviceToHost));
  size_t bad = 0;
  double prefix = 0.0; // whole numbers below 2^24: exact in a double and in a float
  for (size_t i = 0; i < h.size(); ++i) {
    prefix += in[i];
    bad += !(h[i] == float(prefix));
  }
  return double(bad);
}
//@ mismatches
static double mismatches(const float *p, const std::vector<float> &want) { // elements that differ
  std::vector<float> h(want.size());
  cudaCheck(cudaMemcpy(h.data(), p, h.size() * sizeof(float), cudaMemcpyDeviceToHost));
  size_t bad = 0;
  for (size_t i = 0; i < h.size(); ++i) {
    bad += !(h[i] == want[i]);
  }
  return double(bad);
}
//@ sortErrors
#include <algorithm>
#include <cstdint>
static double sortErrors(const uint32_t *p, std::vector<uint32_t> keys) { // vs a host sort
  std::vector<uint32_t> h(keys.size());
  cudaCheck(cudaMemcpy(h.data(), p, h.size() * sizeof(uint32_t), cudaMemcpyDeviceToHost));
  std::sort(keys.begin(), keys.end());
  size_t bad = 0;
  for (size_t i = 0; i < h.size(); ++i) {
    bad += h[i] != keys[i];
  }
  return double(bad);
}
//@ part_input
  std::vector<float> host(n); // the input: whole numbers 0..6, every sum exact
  for (size_t i = 0; i < n; ++i) {
    host[i] = float(i % 7);
    want += $term;
  }
//@ part_want
  for (size_t i = 0; i < n; ++i) {
    want += $term;
  }
//@ part_in
  float *in = deviceArray<float>(n);
  cudaCheck(cudaMemcpy(in, host.data(), n * sizeof(float), cudaMemcpyHostToDevice));
//@ part_keys
  std::vector<uint32_t> hostKeys(n); // hashes of the index: every digit varies
  for (size_t i = 0; i < n; ++i) {
    hostKeys[i] = uint32_t((i * 0x9E3779B97F4A7C15ull) >> 32);
  }
  uint32_t *keys = deviceArray<uint32_t>(n);
  cudaCheck(cudaMemcpy(keys, hostKeys.data(), n * sizeof(uint32_t), cudaMemcpyHostToDevice));
//@ part_resident
  int perSm = 0, sms = 0; // resident: every block of the grid on the GPU at once
  cudaCheck(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, $fn, $block, $shared));
  cudaCheck(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const unsigned int grid = perSm * sms;
//@ part_end
  if (failed) {
    std::printf("RESULT: FAIL (%d of %d checks failed)\n", failed, checks);
    return 1;
  }
  std::printf("RESULT: PASS (%d checks, all exact)\n", checks);
  return 0;
}
