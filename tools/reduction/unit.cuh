// The C++ that every README kernel's check is made of (tools/reduction/sources.py, main_of):
// the preamble, then each helper a check uses, each part after its `//@ NAME` line. It is
// pasted into the generated unit, never compiled alone.
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
