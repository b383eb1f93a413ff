// The one shared test harness of the lesson days (host side only).
//
// A day's test program, tests/harness/<day>.cu, is:
//
//   #define REDUCTION_HARNESS            // switches the lesson's main() off
//   #ifndef LESSON                       // the mutation run (tools/mutation.py) passes
//   #define LESSON "../../code/<day>/<file>.cu"  // -DLESSON='"path"' to test a mutated copy
//   #endif
//   #include LESSON
//   #include "harness.h"
//   int main(int argc, char **argv) { ... the day's edge matrix over harness::Guarded buffers ... }
//
// so the lesson's own kernels, launchers and exact check are what is tested, with the lesson's
// CUDA_CHECK. What lives here, once for every day: the option parser of the test programs
// (--max-n, --seed, --input), guard-banded device buffers (NaN on both sides of every input and
// output, scanned whole after a run), the two exact inputs (all ones; seeded random 0/1 integers,
// n <= 2^24, exact in any order), chunked device reads (64 MiB at a time, never the whole buffer),
// the edge matrix of sizes and grids, and the report (CHECK FAILED lines with got/want, the RESULT
// line, the exit code).
//
// Exit codes of a test program: 0 every check passed, 1 a check failed or a CUDA error, 2 bad
// usage (one line on stderr, before any allocation).
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <cuda_runtime.h>

namespace harness {

// The edge matrix: sizes around every power of two a kernel cares about (warp, block, 2 x block,
// float4, tiles), the day-24 size 2^24 - 611, and 2^24. Offsets 0..3 floats past 256-byte
// alignment exercise the scalar head of every float4 kernel. Grids for days with a grid knob.
constexpr size_t kSizes[] = {1,    2,     3,     4,     5,       7,        31,
                             32,   33,    255,   256,   257,     511,      512,
                             513,  1023,  1024,  1025,  1027,    4095,     4096,
                             4097, 65535, 65536, 65537, 1048577, 16776605, 16777216};
constexpr int kOffsets = 4;
constexpr int kGrids[] = {1, 2, 64, 1024, 16384};
// The sanitizer runs' matrix (--quick): sizes that still reach every code path of the lessons'
// kernels - one element, an odd few, a warp - 1 and + 1, a block - 1 and + 1, 4 blocks + 1 (a
// float4 body with a scalar tail), a 4096-float tile + 1, and 65537 (several grid-stride trips and
// partial tiles on the timed grids); offsets 0 and 3 (aligned, and the longest scalar head); grids
// 1, 64 and 1024 (one block; more blocks than some sizes need; the lessons' timed grid). What it
// leaves out is more trips of the same code: 2^24 - 611 and 2^24 run the loops of 65537 longer,
// offsets 1 and 2 peel shorter heads than 3, grids 2 and 16384 add blocks that 64 and 1024 have.
// Memory and race checking see the same accesses and barriers at a fraction of the launches.
constexpr size_t kQuickSizes[] = {1, 3, 31, 33, 255, 257, 1025, 4097, 65537};
constexpr int kQuickOffsets[] = {0, 3};
constexpr int kQuickGrids[] = {1, 64, 1024};
constexpr size_t kMaxRandomN = size_t(1) << 24; // a count of ones up to 2^24 is exact in any order
constexpr int kPad = 64;                   // guard floats each side (256 bytes: alignment kept)
constexpr size_t kChunk = size_t(1) << 24; // floats a host read takes at most (64 MiB)

enum class Input { Ones, Random };
inline const char *inputName(Input in) {
  return in == Input::Ones ? "ones" : "random 0/1";
}

struct Options {
  size_t maxN = kMaxRandomN; // --max-n: the matrix's sizes up to this (sanitizer runs: 65537)
  uint64_t seed = 20261201;  // --seed: the random input's seed (printed)
  bool ones = true;          // --input ones|random|both
  bool random = true;
  bool quick = false; // --quick: the sanitizer runs' matrix (kQuickSizes ...)
  std::vector<Input> inputs() const {
    std::vector<Input> v;
    if (ones) {
      v.push_back(Input::Ones);
    }
    if (random) {
      v.push_back(Input::Random);
    }
    return v;
  }
};

// The matrix a test program walks: the full one, or --quick's; sizes up to --max-n.
inline std::vector<size_t> sizes(const Options &o) {
  std::vector<size_t> v;
  for (size_t n : o.quick ? std::vector<size_t>(std::begin(kQuickSizes), std::end(kQuickSizes))
                          : std::vector<size_t>(std::begin(kSizes), std::end(kSizes))) {
    if (n <= o.maxN) {
      v.push_back(n);
    }
  }
  return v;
}
inline std::vector<int> offsets(const Options &o) {
  return o.quick ? std::vector<int>(std::begin(kQuickOffsets), std::end(kQuickOffsets))
                 : std::vector<int>{0, 1, 2, 3};
}
inline std::vector<int> grids(const Options &o) {
  return o.quick ? std::vector<int>(std::begin(kQuickGrids), std::end(kQuickGrids))
                 : std::vector<int>(std::begin(kGrids), std::end(kGrids));
}

// Digits only, at most `max`: "1e6", "-1", "0x10" and "" are refused.
inline bool parseCount(const char *s, uint64_t max, uint64_t &out) {
  if (s == nullptr || *s == '\0' || std::strlen(s) > 20) {
    return false;
  }
  uint64_t v = 0;
  for (const char *p = s; *p; ++p) {
    if (*p < '0' || *p > '9' || v > (max - uint64_t(*p - '0')) / 10) {
      return false;
    }
    v = v * 10 + uint64_t(*p - '0');
  }
  out = v;
  return true;
}

// Parses --max-n N, --seed S, --input ones|random|both, --help. `extra` (may be null) is offered
// each other argument first, with the index, and returns how many arguments it consumed (0: not
// its). Bad usage: one line on stderr, exit 2 (nothing is allocated yet).
template <typename Extra>
Options parse(int argc, char **argv, const char *usage, Extra extra) {
  Options o;
  auto fail = [&](const std::string &why) {
    std::fprintf(stderr, "error: %s (see --help)\n", why.c_str());
    std::exit(2);
  };
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : nullptr;
    uint64_t x = 0;
    if (a == "--help" || a == "-h") {
      std::printf("%s", usage);
      std::exit(0);
    } else if (a == "--max-n") {
      if (!parseCount(v, kMaxRandomN, x) || x == 0) {
        fail("--max-n needs a whole number from 1 to 16777216");
      }
      o.maxN = x;
      ++i;
    } else if (a == "--seed") {
      if (!parseCount(v, UINT64_MAX, x)) {
        fail("--seed needs a whole number");
      }
      o.seed = x;
      ++i;
    } else if (a == "--quick") {
      o.quick = true;
    } else if (a == "--input") {
      std::string s = v ? v : "";
      if (s != "ones" && s != "random" && s != "both") {
        fail("--input needs ones, random or both");
      }
      o.ones = s != "random";
      o.random = s != "ones";
      ++i;
    } else {
      int used = extra(argc, argv, i);
      if (used < 0) {
        std::exit(2); // extra printed its one line
      }
      if (used == 0) {
        fail("unknown option '" + a + "'");
      }
      i += used - 1;
    }
  }
  return o;
}
inline Options parse(int argc, char **argv, const char *usage) {
  return parse(argc, argv, usage, [](int, char **, int) { return 0; });
}

// A device buffer of up to maxN floats with kPad NaN guard floats on each side and 3 floats of
// slack for the offset: [kPad guard][offset 0..3][n elements][rest ... kPad guard].
struct Guarded {
  float *alloc = nullptr;
  size_t floats = 0; // the whole allocation, guards included

  bool make(size_t maxN) {
    floats = size_t(kPad) + 3 + maxN + kPad;
    if (cudaMalloc(&alloc, floats * sizeof(float)) != cudaSuccess) {
      (void)cudaGetLastError();
      alloc = nullptr;
      return false;
    }
    return true;
  }
  void release() {
    CUDA_CHECK(cudaFree(alloc));
    alloc = nullptr;
  }
  float *at(int offset) const {
    return alloc + kPad + offset;
  }
  // NaN in every float (0xFF bytes are a NaN): an output nobody writes stays NaN.
  void poison() const {
    CUDA_CHECK(cudaMemset(alloc, 0xFF, floats * sizeof(float)));
  }
  // NaN everywhere, then n input values at `offset`: all ones, or seeded random 0/1 integers.
  // Returns the exact sum (the count of ones), computed here on the host.
  size_t fill(size_t n, int offset, Input in, uint64_t seed) const {
    poison();
    std::vector<float> host(std::min(n, kChunk));
    std::mt19937_64 rng(seed ^ (uint64_t(n) << 2) ^ uint64_t(offset));
    size_t ones = 0;
    for (size_t base = 0; base < n; base += kChunk) {
      size_t count = std::min(kChunk, n - base);
      for (size_t k = 0; k < count; ++k) {
        host[k] = in == Input::Ones ? 1.0f : float(rng() & 1);
        ones += host[k] == 1.0f;
      }
      CUDA_CHECK(cudaMemcpy(at(offset) + base, host.data(), count * sizeof(float),
                            cudaMemcpyHostToDevice));
    }
    return ones;
  }
  // Floats outside [offset, offset + n) that are not NaN: writes past either end. Scanned: the
  // front guard band and everything after the elements up to twice the used part plus 64 Ki
  // floats (a write at a doubled index, or a tile or grid past the end, lands there), the whole
  // allocation at most, in chunks; a buffer made for 2^24 floats is not read whole for n = 3.
  size_t strays(size_t n, int offset) const {
    size_t first = size_t(kPad) + offset, bad = 0;
    size_t scan = std::min(floats, 2 * (first + n + kPad) + (size_t(1) << 16));
    std::vector<float> host(std::min(scan, kChunk));
    for (size_t base = 0; base < scan; base += kChunk) {
      size_t count = std::min(kChunk, scan - base);
      CUDA_CHECK(
          cudaMemcpy(host.data(), alloc + base, count * sizeof(float), cudaMemcpyDeviceToHost));
      for (size_t k = 0; k < count; ++k) {
        size_t i = base + k;
        bool inside = i >= first && i < first + n;
        bad += !inside && !std::isnan(host[k]);
      }
    }
    return bad;
  }
  // Elements of [offset, offset + n) that differ from src's (another Guarded at the same offset).
  size_t differences(const Guarded &src, size_t n, int offset) const {
    std::vector<float> a(std::min(n, kChunk)), b(std::min(n, kChunk));
    size_t bad = 0;
    for (size_t base = 0; base < n; base += kChunk) {
      size_t count = std::min(kChunk, n - base);
      CUDA_CHECK(
          cudaMemcpy(a.data(), at(offset) + base, count * sizeof(float), cudaMemcpyDeviceToHost));
      CUDA_CHECK(cudaMemcpy(b.data(), src.at(offset) + base, count * sizeof(float),
                            cudaMemcpyDeviceToHost));
      for (size_t k = 0; k < count; ++k) {
        bad += !(a[k] == b[k]);
      }
    }
    return bad;
  }
};

// Reads `count` floats (partials, or one result) and adds them exactly. Returns false, with the
// index of the first bad one in `bad`, when one is not a whole number >= 0 (NaN poison left
// unwritten, or a NaN guard read).
inline bool sumWhole(const float *dev, size_t count, double &sum, size_t &bad) {
  std::vector<float> host(std::min(count, kChunk));
  sum = 0.0;
  for (size_t base = 0; base < count; base += kChunk) {
    size_t c = std::min(kChunk, count - base);
    CUDA_CHECK(cudaMemcpy(host.data(), dev + base, c * sizeof(float), cudaMemcpyDeviceToHost));
    for (size_t k = 0; k < c; ++k) {
      if (!(host[k] >= 0.0f) || host[k] != std::floor(host[k])) {
        bad = base + k;
        return false;
      }
      sum += host[k]; // whole numbers below 2^53: exact in a double
    }
  }
  return true;
}

// Counts checks and failures; prints each failure on one line with got and want.
struct Report {
  long checks = 0;
  long failures = 0;

  // Records one check. On failure prints `CHECK FAILED: <what> got G want W (off by D)`.
  bool expect(bool ok, double got, double want, const char *fmt, ...) {
    ++checks;
    if (ok) {
      return true;
    }
    ++failures;
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    std::printf("CHECK FAILED: %s got %.0f want %.0f (off by %.0f)\n", what, got, want, got - want);
    return false;
  }
  // Prints the RESULT line (the last line of stdout) and returns the exit code.
  int finish() const {
    if (failures == 0) {
      std::printf("\nRESULT: PASS (%ld checks, all exact)\n", checks);
      return 0;
    }
    std::printf("\nRESULT: FAIL (%ld of %ld checks failed)\n", failures, checks);
    return 1;
  }
};

// Waits up to `seconds` for everything enqueued on `stream`. Work still running then is a hang (a
// block waiting for one that never publishes): it prints a CHECK FAILED line and ends the process
// with exit 1 at once - a running kernel cannot be stopped from the host, and the process's exit
// tears its context down. Use it where a protocol bug could spin forever (delay injection,
// repetition) instead of cudaStreamSynchronize.
inline void waitFor(cudaStream_t stream, double seconds, const char *what) {
  auto start = std::chrono::steady_clock::now();
  for (;;) {
    cudaError_t e = cudaStreamQuery(stream);
    if (e == cudaSuccess) {
      return;
    }
    if (e != cudaErrorNotReady) {
      CUDA_CHECK(e);
    }
    std::chrono::duration<double> waited = std::chrono::steady_clock::now() - start;
    if (waited.count() > seconds) {
      std::printf("CHECK FAILED: %s did not finish within %.0f s (a hang)\n\nRESULT: FAIL (a "
                  "hang)\n",
                  what, seconds);
      std::fflush(stdout);
      std::_Exit(1);
    }
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

// One line a test program prints first: the device, the seed, the inputs, the largest size.
inline void banner(const char *day, const Options &o) {
  cudaDeviceProp p;
  int dev = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  CUDA_CHECK(cudaGetDeviceProperties(&p, dev));
  std::printf("harness %s | GPU: %s | cc %d.%d | %d SMs | inputs:%s%s | seed %llu | n <= %zu\n",
              day, p.name, p.major, p.minor, p.multiProcessorCount, o.ones ? " ones" : "",
              o.random ? " random-0/1" : "", (unsigned long long)o.seed, o.maxN);
}

} // namespace harness
