// The fiber scheduler (fiber_scheduler.h): resident blocks' threads as fibers
// on one OS thread. Each round runs every ready fiber until it returns or
// waits at a collective; then the waits that can complete do: a block barrier
// when every thread of the block still running waits at one (threads that
// returned no longer count, as PTX's exit resolves barriers waiting only on
// exited threads), a warp function when every lane of its mask still running
// waits at the same function with the same mask, activemask() with the lanes of
// the warp at the same call, a grid sync when every thread of the grid still
// running waits at one and no block has returned whole. A round in which nothing
// can complete is a deadlock: the scheduler stops and reports it. A fiber also
// yields (and is ready again in the next round) at cuda.nanosleep and at every
// kHostSpinInterval-th spin point (atomics, fences): a plain yield, so that a
// thread spinning on another's write lets it run; barriers do not count yields.
#include "fiber_scheduler.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>

namespace cujit::hostrt::detail {
namespace {

// Written at the lowest address of each fiber's stack; a thread whose stack ran over it has overflowed.
constexpr uint64_t kStackCanary = 0x6375'6a69'745f'7374;  // "cujit_st"
// Stack tops a fixed stride apart would all fall in the same cache sets: each fiber's starts up to this much
// lower (4 KiB + 64 B steps), in room added to its stack for the purpose.
constexpr std::size_t kStaggerBytes = 64 * 1024;

std::size_t stack_stride() { return thread_stack_bytes() + kStaggerBytes; }

uint64_t collective_hook(target::HostThreadContext* context, uint32_t kind, uint32_t mask, uint64_t value,
                         uint32_t operand, const char* where) {
  auto* fiber = static_cast<Fiber*>(context->runtime);
  return fiber->scheduler->wait(*fiber, Wait{static_cast<HostCollective>(kind), mask, value, operand, where});
}

void barrier_hook(target::HostThreadContext* context) {
  collective_hook(context, static_cast<uint32_t>(HostCollective::Barrier), 0, 0, 0, nullptr);
}

void spin_hook(target::HostThreadContext* context) {
  collective_hook(context, static_cast<uint32_t>(HostCollective::Spin), 0, 0, 0, nullptr);
}

// A lane spinning at activemask()'s side (yielding this many times in a row) no longer keeps the lanes waiting at
// it from completing without it.
constexpr uint32_t kActiveMaskPatience = 64;

void fiber_main(void* arg) {
  auto* fiber = static_cast<Fiber*>(arg);
  fiber->scheduler->run_entry(*fiber);
  fiber->scheduler->finished(*fiber);
}

}  // namespace

FiberStacks::~FiberStacks() { release(); }

void FiberStacks::release() {
  if (base_ != nullptr) munmap(base_, bytes_);
  base_ = nullptr;
  bytes_ = 0;
}

FiberStacks& thread_stacks(std::size_t slot) {
  static thread_local std::vector<std::unique_ptr<FiberStacks>> stacks;
  while (stacks.size() <= slot) stacks.push_back(std::make_unique<FiberStacks>());
  return *stacks[slot];
}

char* FiberStacks::get(std::size_t count) {
  const std::size_t stride = stack_stride();
  std::size_t bytes = (count + 1) * stride;
  if (bytes <= bytes_) return base_ + stride;
  release();
  void* mem = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  base_ = mem == MAP_FAILED ? nullptr : static_cast<char*>(mem);
  bytes_ = base_ == nullptr ? 0 : bytes;
  return base_ == nullptr ? nullptr : base_ + stride;
}

FiberScheduler::FiberScheduler(KernelEntry entry, void** params, const HostLaunch& config)
    : entry_(entry), params_(params), config_(config) {
  uint64_t static_part = (config.static_shared + 15) / 16 * 16;
  shared_words_ = (static_part + config.dynamic_shared + 15) / 16 * 2;
}

uint64_t FiberScheduler::wait(Fiber& fiber, const Wait& w) {
  fiber.wait = w;
  fiber.state = Fiber::State::Waiting;
  if (static_cast<char*>(__builtin_frame_address(0)) < fiber.stack_limit + 1024) overflowed(fiber);
  const uint32_t lane = fiber.thread % 32;
  if ((is_warp_function(w.kind) && (w.mask >> lane & 1) == 0) ||
      (w.kind == HostCollective::GridSync && !config_.cooperative))
    refuse(fiber);
  ResidentBlock& block = blocks_[fiber.block];
  if (w.kind == HostCollective::Yield || w.kind == HostCollective::Spin) {
    fiber.state = Fiber::State::Ready;  // runs again in the next round, after the others
    yielded_ = true;
    if (fiber.yields < kActiveMaskPatience) ++fiber.yields;
  } else {
    progress_ = true;
    fiber.yields = 0;
    if (is_block_barrier(w.kind))
      ++block.at_barrier;
    else if (w.kind == HostCollective::GridSync)
      ++block.at_grid;
    else
      ++block.at_warp;
  }
  fiber_switch(fiber.fiber_context, scheduler_);
  return fiber.result;
}

void FiberScheduler::overflowed(const Fiber& fiber) {
  if (error_) return;
  const Dim3& blk = config_.block;
  const ResidentBlock& block = blocks_[fiber.block];
  auto triple = [](uint64_t linear, const Dim3& d) {
    return "(" + std::to_string(linear % d.x) + ", " + std::to_string(linear / d.x % d.y) + ", " +
           std::to_string(linear / (uint64_t{d.x} * d.y)) + ")";
  };
  const std::string kernel = kernel_label(config_.kernel_name);
  error_ = Error{ErrorKind::Runtime,
                 kernel + ": thread " + triple(fiber.thread, blk) + " of block " + triple(block.linear, config_.grid) +
                     " overflowed its stack (the CPU target gives each thread " +
                     std::to_string((thread_stack_bytes() - kRuntimeStackBytes) / 1024) +
                     " KiB, CUJIT_HOST_STACK_KIB; deep recursion?); its writes may have reached other threads' "
                     "stacks",
                 {}};
}

void FiberScheduler::refuse(const Fiber& fiber) {
  const Wait& w = fiber.wait;
  if (w.kind == HostCollective::GridSync) return fail("grid.sync() needs a cooperative launch");
  char mask[16];
  std::snprintf(mask, sizeof mask, "0x%08x", w.mask);
  fail(std::string(collective_name(w.kind)) + " was called by lane " + std::to_string(fiber.thread % 32) +
       " of a warp with mask " + mask + ", which does not name it");
}

void FiberScheduler::finished(Fiber& fiber) {
  if (std::memcmp(fiber.stack_limit, &kStackCanary, sizeof kStackCanary) != 0) overflowed(fiber);
  fiber.state = Fiber::State::Done;
  progress_ = true;
  ++done_;
  --blocks_[fiber.block].live;
  fiber_switch(fiber.fiber_context, scheduler_);
  __builtin_unreachable();  // a finished fiber is never resumed
}

void FiberScheduler::set_up(const std::vector<uint64_t>& linear_ids, uint32_t first_thread,
                            std::vector<uint64_t>* shared) {
  const Dim3 g = config_.grid, blk = config_.block;
  const uint32_t n = threads_per_block();
  fibers_.assign(linear_ids.size() * n, Fiber{});
  blocks_.assign(linear_ids.size(), ResidentBlock{});
  if (shared != nullptr)
    shared_ = std::move(*shared);  // the same size: one block's, laid out as here
  else
    shared_.assign(linear_ids.size() * shared_words_ + 2, 0);
  done_ = 0;
  error_.reset();
  char* base = reinterpret_cast<char*>((reinterpret_cast<uintptr_t>(shared_.data()) + 15) & ~uintptr_t{15});
  const uint64_t static_part = (config_.static_shared + 15) / 16 * 16;
  for (uint32_t i = 0; i < linear_ids.size(); ++i) {
    const uint64_t linear = linear_ids[i];
    blocks_[i] = ResidentBlock{linear, i * n, n};
    const uint32_t block_id[3] = {static_cast<uint32_t>(linear % g.x), static_cast<uint32_t>(linear / g.x % g.y),
                                  static_cast<uint32_t>(linear / (uint64_t{g.x} * g.y))};
    char* shared = base + i * shared_words_ * 8;
    for (uint32_t t = 0; t < n; ++t) {
      Fiber& f = fibers_[i * n + t];
      auto& r = f.context.registers;
      r[0][0] = t % blk.x, r[0][1] = t / blk.x % blk.y, r[0][2] = static_cast<uint32_t>(t / (uint64_t{blk.x} * blk.y));
      for (int a = 0; a < 3; ++a) r[1][a] = block_id[a];
      r[2][0] = blk.x, r[2][1] = blk.y, r[2][2] = blk.z;
      r[3][0] = g.x, r[3][1] = g.y, r[3][2] = g.z;
      f.context.shared = shared;
      f.context.dynamic_shared = shared + static_part;
      f.context.dynamic_shared_bytes = config_.dynamic_shared;
      f.context.barrier = barrier_hook;
      f.context.collective = collective_hook;
      f.context.spin = spin_hook;
      f.context.runtime = &f;
      f.thread = t;
      f.block = i;
      f.scheduler = this;
      if (t < first_thread) f.state = Fiber::State::Done, ++done_, --blocks_[i].live;
    }
  }
}

std::optional<Error> FiberScheduler::run(const std::vector<uint64_t>& linear_ids) {
  FiberStacks& stacks = thread_stacks(0);
  if (auto e = start(linear_ids, stacks)) return e;
  while (!all_returned() && !error_) round();
  if (fibers_.size() > kMaxThreadsPerBlock) stacks.release();  // a cooperative grid's: back to the system
  return error_;
}

std::optional<Error> FiberScheduler::start(const std::vector<uint64_t>& linear_ids, FiberStacks& stacks,
                                           uint32_t first_thread, std::vector<uint64_t>* shared) {
  set_up(linear_ids, first_thread, shared);
  char* stack = stacks.get(fibers_.size());
  if (stack == nullptr)
    return error_ = Error{ErrorKind::Runtime,
                          "the host runtime could not map stacks for " + std::to_string(fibers_.size()) + " fibers",
                          {}};
  for (std::size_t i = 0; i < fibers_.size(); ++i) {
    if (fibers_[i].state == Fiber::State::Done) continue;  // ran without a fiber
    // Each stack's top a little lower than the last's (within kStaggerBytes), so the fibers' hot frames spread
    // over the L1 and L2 sets.
    const std::size_t stride = stack_stride(), stagger = i * 4160 % kStaggerBytes;
    fibers_[i].stack_limit = stack + i * stride;
    std::memcpy(fibers_[i].stack_limit, &kStackCanary, sizeof kStackCanary);
    fiber_prepare(fibers_[i].fiber_context, stack + i * stride, stride - stagger, fiber_main, &fibers_[i]);
  }
  return std::nullopt;
}

void FiberScheduler::abandon_current(void* scheduler) {
  auto* self = static_cast<FiberScheduler*>(scheduler);
  if (!self->error_) self->error_ = interrupted_error(self->config_.kernel_name);
  fiber_switch(self->current_->fiber_context, self->scheduler_);  // never resumed: the round sees the error
  __builtin_unreachable();
}

bool FiberScheduler::round() {
  yielded_ = progress_ = false;
  const target::HostInterruptHandler outer = target::host_interrupt_handler;  // a spinning native thread's
  target::host_interrupt_handler = {&FiberScheduler::abandon_current, this};
  for (Fiber& f : fibers_) {
    if (f.state != Fiber::State::Ready) continue;
    current_ = &f;
    fiber_switch(scheduler_, f.fiber_context);
    if (error_) break;  // the fibers left waiting are dropped: their stacks are reused
  }
  target::host_interrupt_handler = outer;
  if (!error_ && target::host_interrupt_requested.load(std::memory_order_relaxed) != 0)
    error_ = interrupted_error(config_.kernel_name);  // threads at barriers or spinning there stop too
  if (error_) return false;
  if (done_ == fibers_.size()) return true;
  const bool released = resolve();
  if (!released && !yielded_ && !error_) fail("no thread can go on");
  return released || progress_;
}

bool FiberScheduler::run_until_quiet(uint32_t quiet_rounds) {
  for (uint32_t quiet = 0; !all_returned() && !error_;) {
    quiet = round() ? 0 : quiet + 1;
    if (quiet >= quiet_rounds) return false;
  }
  return all_returned();
}

bool FiberScheduler::resolve() {
  bool released = false;
  for (ResidentBlock& block : blocks_) {
    if (block.live == 0) continue;
    released = resolve_block_barrier(block) || released;
    if (error_) return false;
    if (block.at_warp == 0) continue;
    for (uint32_t w = 0; w * 32 < threads_per_block(); ++w) released = resolve_warp(block, w) || released;
  }
  return resolve_grid_sync() || released;
}

bool FiberScheduler::resolve_block_barrier(ResidentBlock& block) {
  if (block.at_barrier != block.live) return false;
  const uint32_t n = threads_per_block();
  std::optional<HostCollective> kind;
  const char* where = nullptr;
  uint32_t true_count = 0;
  for (uint32_t t = 0; t < n; ++t) {
    const Fiber& f = fibers_[block.first + t];
    if (f.state == Fiber::State::Done) continue;
    if (f.state != Fiber::State::Waiting || !is_block_barrier(f.wait.kind)) return false;
    if (kind && *kind != f.wait.kind) {
      fail("the threads of a block wait at different kinds of barrier");
      return false;
    }
    if (config_.strict_barriers && kind && f.wait.where != where) {
      fail(
          "the threads of a block wait at different calls of the barrier (divergent code: on a GPU this hangs "
          "before Volta and is undefined after; reported under debug=True)",
          "reached a barrier in divergent code");
      return false;
    }
    kind = f.wait.kind;
    where = f.wait.where;
    true_count += f.wait.value != 0;
  }
  uint64_t result = block_reduction(*kind, true_count, block.live);
  for (uint32_t t = 0; t < n; ++t) {
    Fiber& f = fibers_[block.first + t];
    if (f.state == Fiber::State::Done) continue;
    f.result = result;
    f.state = Fiber::State::Ready;
  }
  block.at_barrier = 0;
  return true;
}

bool FiberScheduler::resolve_warp(ResidentBlock& block, uint32_t warp) {
  const uint32_t first = block.first + warp * 32;
  const uint32_t lanes = std::min(32u, threads_per_block() - warp * 32);
  uint32_t live = 0;
  for (uint32_t l = 0; l < lanes; ++l)
    if (fibers_[first + l].state != Fiber::State::Done) live |= 1u << l;
  auto waits_at = [&](uint32_t l, HostCollective kind) {
    const Fiber& f = fibers_[first + l];
    return f.state == Fiber::State::Waiting && f.wait.kind == kind;
  };
  uint32_t handled = 0;
  for (uint32_t l = 0; l < lanes; ++l) {
    const Wait& w = fibers_[first + l].wait;
    if ((handled >> l & 1) || !(live >> l & 1) || !waits_at(l, w.kind) || !is_warp_function(w.kind)) continue;
    const uint32_t group = w.mask & live;
    bool complete = true;
    for (uint32_t m = 0; m < lanes && complete; ++m)
      if (group >> m & 1) complete = waits_at(m, w.kind) && fibers_[first + m].wait.mask == w.mask;
    if (!complete) continue;
    uint64_t values[32] = {}, results[32] = {};
    uint32_t operands[32] = {};
    for (uint32_t m = 0; m < lanes; ++m)
      if (group >> m & 1) values[m] = fibers_[first + m].wait.value, operands[m] = fibers_[first + m].wait.operand;
    warp_results(w.kind, group, w.mask, values, operands, results);
    for (uint32_t m = 0; m < lanes; ++m)
      if (group >> m & 1) fibers_[first + m].result = results[m], fibers_[first + m].state = Fiber::State::Ready;
    handled |= group;
  }
  block.at_warp -= static_cast<uint32_t>(__builtin_popcount(handled));
  if (handled != 0) return true;
  // activemask(): the lanes waiting at the same call are the lanes running together (no other lane can move:
  // a lane that yielded at a spin point or nanosleep may still come, unless it has spun for long).
  for (uint32_t l = 0; l < lanes; ++l)
    if (fibers_[first + l].state == Fiber::State::Ready && fibers_[first + l].yields < kActiveMaskPatience)
      return false;
  for (uint32_t l = 0; l < lanes; ++l) {
    if ((handled >> l & 1) || !waits_at(l, HostCollective::ActiveMask)) continue;
    const char* where = fibers_[first + l].wait.where;
    uint32_t group = 0;
    for (uint32_t m = l; m < lanes; ++m)
      if (waits_at(m, HostCollective::ActiveMask) && fibers_[first + m].wait.where == where) group |= 1u << m;
    for (uint32_t m = l; m < lanes; ++m)
      if (group >> m & 1) fibers_[first + m].result = group, fibers_[first + m].state = Fiber::State::Ready;
    handled |= group;
  }
  block.at_warp -= static_cast<uint32_t>(__builtin_popcount(handled));
  return handled != 0;
}

bool FiberScheduler::resolve_grid_sync() {
  if (!config_.cooperative || done_ == fibers_.size()) return false;
  for (const ResidentBlock& block : blocks_)
    if (block.live == 0 || block.at_grid != block.live) return false;  // a block returned whole never arrives
  for (Fiber& f : fibers_)
    if (f.state != Fiber::State::Done) f.result = 0, f.state = Fiber::State::Ready;
  for (ResidentBlock& block : blocks_) block.at_grid = 0;
  return true;
}

void FiberScheduler::fail(const std::string& why, const char* what) {
  if (error_) return;
  error_ = Error{ErrorKind::Runtime, deadlock_report(config_, fibers_, blocks_, why, what), {}};
}

}  // namespace cujit::hostrt::detail
