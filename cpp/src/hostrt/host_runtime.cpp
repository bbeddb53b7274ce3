// The host runtime (cujit/hostrt.h): a grid's blocks on the process's worker
// threads (worker_pool.h). A kernel that reaches no collective runs each block's
// threads one after another on the worker's stack; one that does runs them as
// fibers (fiber_scheduler.h), a block at a time per worker, or, for a
// cooperative launch, every block of the grid at once on the launching thread,
// so that a grid sync can complete.
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

#include "cujit/hostrt.h"
#include "fiber_scheduler.h"
#include "worker_pool.h"

namespace cujit::hostrt {
namespace {

// The hooks of threads run without fibers: their kernel reaches no collective, so nothing calls them.
void no_barrier_hook(target::HostThreadContext*) {}
uint64_t no_collective_hook(target::HostThreadContext*, uint32_t, uint32_t, uint64_t, uint32_t, const char*) {
  return 0;
}

// Runs block `linear`'s threads one after another on this thread's stack (a kernel without collectives).
void run_block_without_fibers(KernelEntry entry, void** params, const HostLaunch& config, uint64_t linear,
                              std::vector<uint64_t>& shared) {
  const Dim3 g = config.grid, blk = config.block;
  const uint64_t static_part = (config.static_shared + 15) / 16 * 16;
  shared.assign((static_part + config.dynamic_shared + 15) / 16 * 2 + 2, 0);
  char* base = reinterpret_cast<char*>((reinterpret_cast<uintptr_t>(shared.data()) + 15) & ~uintptr_t{15});
  target::HostThreadContext context{};
  auto& r = context.registers;
  r[1][0] = static_cast<uint32_t>(linear % g.x), r[1][1] = static_cast<uint32_t>(linear / g.x % g.y);
  r[1][2] = static_cast<uint32_t>(linear / (uint64_t{g.x} * g.y));
  r[2][0] = blk.x, r[2][1] = blk.y, r[2][2] = blk.z;
  r[3][0] = g.x, r[3][1] = g.y, r[3][2] = g.z;
  context.shared = base;
  context.dynamic_shared = base + static_part;
  context.dynamic_shared_bytes = config.dynamic_shared;
  context.barrier = no_barrier_hook;
  context.collective = no_collective_hook;
  const uint64_t n = blk.count();
  for (uint64_t t = 0; t < n; ++t) {
    r[0][0] = static_cast<uint32_t>(t % blk.x), r[0][1] = static_cast<uint32_t>(t / blk.x % blk.y);
    r[0][2] = static_cast<uint32_t>(t / (uint64_t{blk.x} * blk.y));
    entry(&context, params);
  }
}

std::optional<Error> check(const HostLaunch& c) {
  auto bad = [](const std::string& what) { return Error{ErrorKind::ValueError, what, {}}; };
  if (c.grid.count() == 0 || c.block.count() == 0)
    return bad("grid and block dimensions must be positive, got grid (" + std::to_string(c.grid.x) + ", " +
               std::to_string(c.grid.y) + ", " + std::to_string(c.grid.z) + ") and block (" +
               std::to_string(c.block.x) + ", " + std::to_string(c.block.y) + ", " + std::to_string(c.block.z) +
               ")");
  if (c.block.count() > kMaxThreadsPerBlock)
    return bad("too many threads per block: " + std::to_string(c.block.count()) + " (at most " +
               std::to_string(kMaxThreadsPerBlock) + ")");
  if (c.grid.y > 65535 || c.grid.z > 65535 || c.block.z > 64)
    return bad("grid or block dimension out of CUDA's limits");
  return std::nullopt;
}

}  // namespace

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

std::optional<Error> launch(KernelEntry entry, void** params, const HostLaunch& config) {
  if (auto error = check(config)) return error;
  if (config.cooperative) return launch_cooperative(entry, params, config);
  const uint64_t blocks = config.grid.count();
  const unsigned participants = static_cast<unsigned>(std::min<uint64_t>(worker_count(), blocks));
  std::atomic<uint64_t> next{0};
  std::mutex error_lock;
  std::optional<Error> first_error;
  auto work = [&] {
    std::optional<Error> error = guarded([&]() -> std::optional<Error> {
      std::vector<uint64_t> shared;
      std::optional<detail::FiberScheduler> scheduler;
      if (config.barriers) scheduler.emplace(entry, params, config);
      for (uint64_t b; (b = next.fetch_add(1)) < blocks;) {
        if (!config.barriers) run_block_without_fibers(entry, params, config, b, shared);
        else if (auto e = scheduler->run({b})) return e;
      }
      return std::nullopt;
    });
    if (!error) return;
    std::lock_guard<std::mutex> lock(error_lock);
    if (!first_error) first_error = std::move(error);
    next = blocks;  // no more blocks start
  };
  detail::run_on_workers(participants - 1, work);
  return first_error;
}

}  // namespace cujit::hostrt
