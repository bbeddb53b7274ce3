// The host runtime: runs a kernel compiled for the CPU (codegen's host target)
// over a grid. Blocks run in parallel on worker threads (as many as the machine
// has cores, fewer for small grids); the threads of a block run as fibers on one
// worker, each with its own stack, switching at a barrier (cuda.syncthreads),
// so a barrier has CUDA's semantics, and yielding at spin points (atomics,
// fences) so that threads and blocks spinning on each other's writes finish
// (hostrt/block_rotation.h). Each block gets its own shared memory.
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
  // A cooperative launch (the kernel reaches a grid group's sync()): every block of the grid is resident at once
  // (all its threads as fibers of one worker), at most max_cooperative_blocks(...) of them.
  bool cooperative = false;
  std::string kernel_name{};  // for error reports ("": "the kernel")
  // (debug=True kernels) the threads of a block must meet at one syncthreads call: a block whose threads wait at
  // different calls of the same barrier (divergent code, which CUDA leaves undefined) is an error.
  bool strict_barriers = false;
  // The stack the kernel's fixed-size locals need per thread (codegen's static_frame_bytes): a launch whose
  // threads cannot have it is refused before it runs; one that needs more than a worker's own stack gives runs
  // its threads as fibers even without barriers.
  uint64_t frame_bytes = 0;
  // Every thread of a block in one call (hostgen's block entry: its code between barriers loops over the
  // threads); null: the threads are called one by one, or run as fibers. It keeps block_thread_bytes per thread
  // on the worker's stack: a launch whose blocks would need too much runs as without it.
  KernelEntry block_entry = nullptr;
  uint64_t block_thread_bytes = 0;
  // The axis of the block ids that the block entry's blocks are taken along (0: x fastest, 1: y fastest): the one
  // along which the next block goes on with the rows (of a C-order array) the last one read.
  int blocks_axis = 0;
};

// The most threads per block (as on every CUDA device).
inline constexpr uint32_t kMaxThreadsPerBlock = 1024;
// The stack each thread of a launch gets: what a kernel's own frames may use (by default 512 KiB, a GPU thread's
// most local memory, so what fits on a GPU fits here; CUJIT_HOST_STACK_KIB sets it, read once per process) plus
// kRuntimeStackBytes for the runtime's frames below the kernel's.
std::size_t thread_stack_bytes();
inline constexpr std::size_t kRuntimeStackBytes = 64 * 1024;
inline constexpr std::size_t kDefaultThreadStackBytes = 512 * 1024;

// Ctrl-C: while an InterruptScope lives on the thread that made it (the launching thread, holding no lock),
// SIGINT raises target::host_interrupt_requested (then calls the handler that was installed before, Python's,
// which records it as Python does); the threads of running launches stop at their next loop iteration, barrier or
// block, and each launch returns an Interrupted error. The scope restores the previous handler and clears the flag.
class InterruptScope {
 public:
  InterruptScope();
  ~InterruptScope();
  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;

 private:
  bool installed_ = false;
};
// The error an interrupted launch returns.
Error interrupted_error(const std::string& kernel_name);

// Runs every thread of the grid; returns when all have finished. A bad
// configuration is a ValueError; a barrier, warp function or grid sync that can
// never complete (a deadlock on the GPU) is a Runtime error naming the kernel,
// the calls and the threads waiting at them (the Error returned; never an abort
// nor a hang).
std::optional<Error> launch(KernelEntry entry, void** params, const HostLaunch& config);

// The number of worker threads launches use (the cores this process may run on; CUJIT_HOST_THREADS overrides). The
// workers are created once per process, on first use, and shared by every launch (several threads may launch at once).
unsigned worker_count();

// The most blocks of `threads_per_block` threads a cooperative launch may have: the CPU as a device of
// worker_count() multiprocessors, each holding 2048 threads in at most 32 blocks (0 above 1024 threads).
uint64_t max_cooperative_blocks(uint64_t threads_per_block);

}  // namespace cujit::hostrt
