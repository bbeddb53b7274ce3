// The host runtime: runs a kernel compiled for the CPU (codegen's host target)
// over a grid. Blocks run in parallel on worker threads (as many as the machine
// has cores, fewer for small grids); the threads of a block run as fibers on one
// worker, each with its own stack, switching at a barrier (cuda.syncthreads),
// so a barrier has CUDA's semantics. Each block gets its own shared memory.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "cujit/error.h"

#include "cujit/host_context.h"

namespace cujit::hostrt {

// A compiled kernel's entry: its per-thread context and its parameters as a
// kernel parameter array (cuLaunchKernel's kernelParams: one pointer per param).
using KernelEntry = void (*)(target::HostThreadContext* context, void** params);

struct Dim3 {
  uint32_t x = 1, y = 1, z = 1;
  uint64_t count() const { return uint64_t{x} * y * z; }
};

struct HostLaunch {
  Dim3 grid, block;
  uint64_t static_shared = 0;   // bytes per block (the module's __cujit_static_shared_bytes)
  uint64_t dynamic_shared = 0;  // bytes per block, given at launch
  // The kernel reaches a barrier: its threads run as fibers. Without, a block's threads run one after another
  // on the worker's own stack (the barrier hook is then a no-op: such a kernel never calls it).
  bool barriers = true;
};

// The most threads per block (as on every CUDA device) and the stack each thread's fiber gets.
inline constexpr uint32_t kMaxThreadsPerBlock = 1024;
inline constexpr std::size_t kFiberStackBytes = 256 * 1024;

// Runs every thread of the grid; returns when all have finished. A bad
// configuration is a ValueError (the Error returned; never an abort).
std::optional<Error> launch(KernelEntry entry, void** params, const HostLaunch& config);

// The number of worker threads launches use (the machine's cores; CUJIT_HOST_THREADS overrides).
unsigned worker_count();

}  // namespace cujit::hostrt
