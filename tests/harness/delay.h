// Delay injection for the finishing protocols (last block, grid barrier, look-back, tickets).
//
// A test program includes this BEFORE its lesson file. The lesson calls DELAY_BEFORE_PUBLISH(b)
// just before block (or tile) b publishes what other blocks wait for: its partial before its
// ticket, its status word; in the lesson itself the hook is empty. Here it makes ONE chosen block
// sleep a chosen number of microseconds, so that an early finisher, a block that reads before the
// value it needs is there, or a missing wait shows as a wrong answer - or as a hang, which
// harness::waitFor turns into a failed check. On an H200 every block otherwise finishes at nearly
// the same time, and such ordering bugs stay exact almost always.
#pragma once

#include <cuda/atomic>
#include <cuda_runtime.h>

namespace delay {

constexpr unsigned int kNone = 0xffffffffu;   // no block sleeps
constexpr unsigned int kRotate = 0xfffffffeu; // launch k: block k % gridDim.x sleeps (a sleeper
                                              // moves the turn on when it wakes)
__device__ unsigned int gBlock = kNone;       // the block (or tile) that sleeps, or kRotate
__device__ unsigned int gMicroseconds = 0;    // how long
__device__ unsigned int gTurn = 0;            // kRotate: whose turn it is

__device__ inline void beforePublish(unsigned int block) {
  cuda::atomic_ref<unsigned int, cuda::thread_scope_device> turn(gTurn);
  unsigned int chosen =
      gBlock == kRotate ? turn.load(cuda::memory_order_relaxed) % gridDim.x : gBlock;
  if (block == chosen) {
    for (unsigned int k = 0; k < gMicroseconds; ++k) {
      __nanosleep(1000); // sm_70 and newer; the test programs build for sm_75 and sm_90
    }
    if (gBlock == kRotate) {
      turn.fetch_add(1u, cuda::memory_order_relaxed);
    }
  }
}

// Host: block `block` (kNone: none; kRotate: a different one each launch) sleeps `microseconds`
// before it publishes, in every launch from now on. Waits for the device, so that no later launch
// on another stream can start before the setting has landed.
inline cudaError_t set(unsigned int block, unsigned int microseconds) {
  cudaError_t e = cudaMemcpyToSymbol(gBlock, &block, sizeof block);
  if (e == cudaSuccess) {
    e = cudaMemcpyToSymbol(gMicroseconds, &microseconds, sizeof microseconds);
  }
  return e == cudaSuccess ? cudaDeviceSynchronize() : e;
}

} // namespace delay

#define DELAY_BEFORE_PUBLISH(block) delay::beforePublish(block)
