// The host runtime (cujit/hostrt.h): a grid's blocks on the process's worker
// threads (worker_pool.h), each worker's as block_rotation.h runs them. A kernel
// with a block entry runs each block in one call (its threads as loops between
// barriers); one that reaches no collective runs each block's threads one after
// another on the worker's stack (until one spins); one that does runs them as fibers
// (fiber_scheduler.h), a block at a time per worker (more while blocks spin), or,
// for a cooperative launch, every block of the grid at once on the launching
// thread, so that a grid sync can complete.
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <stdexcept>
#include <thread>
#include <vector>

#include "block_rotation.h"
#include "cujit/hostrt.h"
#include "fiber_scheduler.h"
#include "worker_pool.h"

namespace cujit::hostrt {
namespace {

std::optional<Error> check(const HostLaunch& c) {
  auto bad = [](const std::string& what) { return Error{ErrorKind::ValueError, what, {}}; };
  if (c.grid.count() == 0 || c.block.count() == 0)
    return bad("grid and block dimensions must be positive, got grid (" + std::to_string(c.grid.x) + ", " +
               std::to_string(c.grid.y) + ", " + std::to_string(c.grid.z) + ") and block (" +
               std::to_string(c.block.x) + ", " + std::to_string(c.block.y) + ", " + std::to_string(c.block.z) + ")");
  if (c.block.count() > kMaxThreadsPerBlock)
    return bad("too many threads per block: " + std::to_string(c.block.count()) + " (at most " +
               std::to_string(kMaxThreadsPerBlock) + ")");
  if (c.grid.y > 65535 || c.grid.z > 65535 || c.block.z > 64)
    return bad("grid or block dimension out of CUDA's limits");
  const std::size_t room = thread_stack_bytes() - kRuntimeStackBytes;
  if (c.frame_bytes > room) {
    const uint64_t needs_kib = (c.frame_bytes + 1023) / 1024;
    return Error{ErrorKind::Runtime,
                 detail::kernel_label(c.kernel_name) + " needs " + std::to_string(needs_kib) +
                     " KiB of stack per thread for its locals (cuda.local.array...), more than the " +
                     std::to_string(room / 1024) +
                     " KiB the CPU target gives each thread: make the local arrays smaller, or raise the limit "
                     "with CUJIT_HOST_STACK_KIB=" +
                     std::to_string(needs_kib + 16) + " (or more) in the environment before the process's first launch",
                 {}};
  }
  return std::nullopt;
}

// A thread run without a fiber uses the worker's own stack (8 MiB on Linux): a kernel whose frames come near it
// runs as fibers, whose stacks are as large as the limit.
constexpr uint64_t kWorkerStackShare = 1024 * 1024;

}  // namespace

std::size_t thread_stack_bytes() {
  static const std::size_t bytes = [] {
    std::size_t kernel_part = kDefaultThreadStackBytes;
    if (const char* env = std::getenv("CUJIT_HOST_STACK_KIB")) {
      long long kib = std::atoll(env);
      if (kib > 0) kernel_part = static_cast<std::size_t>(kib) * 1024;
    }
    return (kernel_part + 4095) / 4096 * 4096 + kRuntimeStackBytes;
  }();
  return bytes;
}

unsigned worker_count() {
  if (const char* env = std::getenv("CUJIT_HOST_THREADS")) {
    int n = std::atoi(env);
    if (n > 0) return static_cast<unsigned>(n);
  }
#if defined(__linux__)
  cpu_set_t cpus;  // the cores this process may run on (a container's or taskset's), not the machine's all
  if (sched_getaffinity(0, sizeof cpus, &cpus) == 0 && CPU_COUNT(&cpus) > 0)
    return static_cast<unsigned>(CPU_COUNT(&cpus));
#endif
  return std::max(1u, std::thread::hardware_concurrency());
}

uint64_t max_cooperative_blocks(uint64_t threads_per_block) {
  constexpr uint64_t kThreadsPerWorker = 2048, kBlocksPerWorker = 32;
  if (threads_per_block == 0 || threads_per_block > kMaxThreadsPerBlock) return 0;
  return uint64_t{worker_count()} * std::min(kBlocksPerWorker, kThreadsPerWorker / threads_per_block);
}

namespace {

// run(), with the memory it could not allocate (fibers, shared memory) as an Error: never an abort on a worker.
template <typename Run>
std::optional<Error> guarded(Run run) {
  try {
    return run();
  } catch (const std::bad_alloc&) {
    return Error{ErrorKind::Runtime, "the host runtime ran out of memory for the grid's fibers and shared memory", {}};
  } catch (const std::length_error&) {
    return Error{ErrorKind::Runtime, "the host runtime ran out of memory for the grid's fibers and shared memory", {}};
  }
}

std::optional<Error> launch_cooperative(KernelEntry entry, void** params, const HostLaunch& config) {
  const uint64_t blocks = config.grid.count(), most = max_cooperative_blocks(config.block.count());
  if (blocks > most)
    return Error{ErrorKind::ValueError,
                 "a cooperative launch needs every block of the grid resident at once: " + std::to_string(blocks) +
                     " blocks of " + std::to_string(config.block.count()) + " threads is more than the CPU target's " +
                     std::to_string(most) + " (kernel.max_cooperative_grid_blocks(blockdim))",
                 {}};
  return guarded([&]() -> std::optional<Error> {
    std::vector<uint64_t> all(blocks);
    for (uint64_t b = 0; b < blocks; ++b) all[b] = b;
    detail::FiberScheduler scheduler(entry, params, config);
    return scheduler.run(all);
  });
}

}  // namespace

std::optional<Error> launch(KernelEntry entry, void** params, const HostLaunch& given) {
  if (auto error = check(given)) return error;
  HostLaunch config = given;
  if (config.block_thread_bytes * config.block.count() + config.frame_bytes > kWorkerStackShare)
    config.block_entry = nullptr;  // its frames would not fit on the worker's stack
  if (config.frame_bytes > kWorkerStackShare) config.barriers = true;
  if (config.cooperative) return launch_cooperative(entry, params, config);
  const uint64_t blocks = config.grid.count();
  const unsigned participants = static_cast<unsigned>(std::min<uint64_t>(worker_count(), blocks));
  std::atomic<uint64_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex error_lock;
  std::optional<Error> first_error;
  auto work = [&] {
    std::optional<Error> error = guarded([&]() -> std::optional<Error> {
      detail::WorkerBlocks worker(entry, params, config, next, failed);
      return worker.run();
    });
    if (!error) return;
    std::lock_guard<std::mutex> lock(error_lock);
    if (!first_error) first_error = std::move(error);
    next = blocks;  // no more blocks start
    failed = true;  // and blocks that spin (on this worker's, perhaps) stop
  };
  detail::run_on_workers(participants - 1, work);
  return first_error;
}

}  // namespace cujit::hostrt
