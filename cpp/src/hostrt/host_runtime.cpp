// The host runtime (cujit/hostrt.h): a grid's blocks on worker threads, a
// block's threads as ucontext fibers that switch at barriers. A worker runs its
// block's fibers in turns: each runs until it finishes or reaches a barrier;
// when every thread still running waits at the barrier, all go on. (Threads
// that have returned no longer count, as on the GPU.)
#include <sys/mman.h>
#include <ucontext.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "cujit/hostrt.h"

namespace cujit::hostrt {
namespace {

struct Worker;

struct Fiber {
  enum class State { Ready, AtBarrier, Done };
  target::HostThreadContext context{};
  ucontext_t uc{};
  State state = State::Ready;
  Worker* worker = nullptr;
};

// The fiber a worker thread runs now (read by a fiber's first function).
thread_local Fiber* current_fiber = nullptr;

struct Worker {
  KernelEntry entry = nullptr;
  void** params = nullptr;
  const HostLaunch* config = nullptr;
  ucontext_t scheduler{};
  std::vector<Fiber> fibers;
  char* stacks = nullptr;  // one kFiberStackBytes stack per fiber, mapped on first touch
  std::size_t stacks_bytes = 0;
  bool mapped = false;
  std::vector<uint64_t> shared;  // static then dynamic shared memory, 16-byte aligned parts

  explicit Worker(const HostLaunch& c, KernelEntry e, void** p) : entry(e), params(p), config(&c) {
    fibers.resize(c.block.count());
    stacks_bytes = c.barriers ? kFiberStackBytes * fibers.size() : 0;
    void* mem = stacks_bytes == 0 ? MAP_FAILED : mmap(nullptr, stacks_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                     -1, 0);
    stacks = mem == MAP_FAILED ? nullptr : static_cast<char*>(mem);
    mapped = stacks != nullptr || stacks_bytes == 0;
    shared.resize((static_part() + c.dynamic_shared + 7) / 8 + 2);
  }
  ~Worker() {
    if (stacks != nullptr) munmap(stacks, stacks_bytes);
  }
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  uint64_t static_part() const { return (config->static_shared + 15) / 16 * 16; }
  char* shared_base() { return reinterpret_cast<char*>((reinterpret_cast<uintptr_t>(shared.data()) + 15) & ~uintptr_t{15}); }

  void run_block(uint64_t linear);
  void make_fiber(Fiber& f, char* stack);
};

void barrier_hook(target::HostThreadContext* context) {
  auto* fiber = static_cast<Fiber*>(context->runtime);
  fiber->state = Fiber::State::AtBarrier;
  swapcontext(&fiber->uc, &fiber->worker->scheduler);
}

// The hook of threads run without fibers: their kernel has no barrier, so nothing calls it.
void no_barrier_hook(target::HostThreadContext*) {}

void fiber_main() {
  Fiber* fiber = current_fiber;
  fiber->worker->entry(&fiber->context, fiber->worker->params);
  fiber->state = Fiber::State::Done;
  // Returning resumes uc_link: the worker's scheduler.
}

void Worker::make_fiber(Fiber& f, char* stack) {
  getcontext(&f.uc);
  f.uc.uc_stack.ss_sp = stack;
  f.uc.uc_stack.ss_size = kFiberStackBytes;
  f.uc.uc_link = &scheduler;
  makecontext(&f.uc, fiber_main, 0);
}

void Worker::run_block(uint64_t linear) {
  const Dim3 g = config->grid, blk = config->block;
  const uint32_t block_id[3] = {static_cast<uint32_t>(linear % g.x), static_cast<uint32_t>(linear / g.x % g.y),
                                static_cast<uint32_t>(linear / (uint64_t{g.x} * g.y))};
  char* base = shared_base();
  std::memset(base, 0, static_part() + config->dynamic_shared);
  for (std::size_t t = 0; t < fibers.size(); ++t) {
    Fiber& f = fibers[t];
    auto& r = f.context.registers;
    r[0][0] = static_cast<uint32_t>(t % blk.x);
    r[0][1] = static_cast<uint32_t>(t / blk.x % blk.y);
    r[0][2] = static_cast<uint32_t>(t / (uint64_t{blk.x} * blk.y));
    for (int a = 0; a < 3; ++a) r[1][a] = block_id[a];
    r[2][0] = blk.x, r[2][1] = blk.y, r[2][2] = blk.z;
    r[3][0] = g.x, r[3][1] = g.y, r[3][2] = g.z;
    f.context.shared = base;
    f.context.dynamic_shared = base + static_part();
    f.context.dynamic_shared_bytes = config->dynamic_shared;
    f.context.barrier = config->barriers ? barrier_hook : no_barrier_hook;
    f.context.runtime = &f;
    f.worker = this;
    f.state = Fiber::State::Ready;
    if (config->barriers) make_fiber(f, stacks + t * kFiberStackBytes);
    else entry(&f.context, params);  // no barrier: the thread runs to its end here
  }
  if (!config->barriers) return;
  for (;;) {
    bool waiting = false;
    for (Fiber& f : fibers) {
      if (f.state == Fiber::State::Done) continue;
      f.state = Fiber::State::Ready;
      current_fiber = &f;
      swapcontext(&scheduler, &f.uc);
      waiting = waiting || f.state == Fiber::State::AtBarrier;
    }
    if (!waiting) return;  // every thread has finished
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
  return std::max(1u, std::thread::hardware_concurrency());
}

std::optional<Error> launch(KernelEntry entry, void** params, const HostLaunch& config) {
  if (auto error = check(config)) return error;
  const uint64_t blocks = config.grid.count();
  const unsigned workers = static_cast<unsigned>(std::min<uint64_t>(worker_count(), blocks));
  std::atomic<uint64_t> next{0};
  std::atomic<bool> out_of_memory{false};
  auto work = [&] {
    Worker worker(config, entry, params);
    if (!worker.mapped) {
      out_of_memory = true;
      return;
    }
    for (uint64_t b; (b = next.fetch_add(1)) < blocks;) worker.run_block(b);
  };
  if (workers == 1) {
    work();
  } else {
    std::vector<std::thread> threads;
    for (unsigned w = 0; w < workers; ++w) threads.emplace_back(work);
    for (auto& t : threads) t.join();
  }
  if (out_of_memory) return Error{ErrorKind::Runtime, "the host runtime could not map its fibers' stacks", {}};
  return std::nullopt;
}

}  // namespace cujit::hostrt
