// Internal to hostrt/: runs a set of resident blocks on one OS thread, every
// thread of them a fiber (fiber_switch.h). A fiber runs until it returns, reaches a
// collective operation (a barrier, a warp function, a grid sync: the context's
// collective hook) or yields (cuda.nanosleep, a spin point); when no fiber can run, the waits that can complete do
// (collectives.cpp computes their results), and when none can, the blocks have
// deadlocked and the scheduler returns a report of who waits where
// (deadlock_report.cpp) instead of hanging.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "cujit/hostrt.h"
#include "fiber_switch.h"

namespace cujit::hostrt::detail {

using target::HostCollective;

// What a fiber waits at: the arguments of its collective call.
struct Wait {
  HostCollective kind = HostCollective::Barrier;
  uint32_t mask = 0;
  uint64_t value = 0;
  uint32_t operand = 0;
  const char* where = nullptr;
};

class FiberScheduler;

struct Fiber {
  enum class State : uint8_t { Ready, Waiting, Done };
  target::HostThreadContext context{};
  FiberContext fiber_context{};
  State state = State::Ready;
  uint16_t yields = 0;  // its yields (nanosleep, spin points) in a row since its last collective (up to 64)
  Wait wait{};
  uint64_t result = 0;
  uint32_t thread = 0;  // linear id in its block
  uint32_t block = 0;   // index of its block in the resident set
  FiberScheduler* scheduler = nullptr;
  char* stack_limit = nullptr;  // the lowest address of its stack (a canary word lies there)
};

struct ResidentBlock {
  uint64_t linear = 0;    // the block's linear id in the grid
  uint32_t first = 0;     // its first fiber
  uint32_t live = 0;      // its threads that have not returned
  // Its threads waiting at a block barrier, at a warp function or activemask(), at a grid sync (so that a round
  // looks only where something may complete).
  uint32_t at_barrier = 0, at_warp = 0, at_grid = 0;
};

// Grow-only stacks for one OS thread's fibers, kept between launches.
class FiberStacks {
 public:
  ~FiberStacks();
  // `count` stacks of thread_stack_bytes() and a stagger's room (mapped on first touch) above one more of slack (where
  // the lowest stack overflows into instead of unmapped memory), or null if they cannot be mapped.
  char* get(std::size_t count);
  void release();  // unmaps them (after a cooperative launch's many)

 private:
  char* base_ = nullptr;
  std::size_t bytes_ = 0;
};

// This OS thread's stacks number `slot` (kept between launches; slot 0 serves a worker's first resident block and
// cooperative launches, the others blocks it takes in beside a block that spins: block_rotation.h).
FiberStacks& thread_stacks(std::size_t slot);

class FiberScheduler {
 public:
  FiberScheduler(KernelEntry entry, void** params, const HostLaunch& config);
  FiberScheduler(const FiberScheduler&) = delete;
  FiberScheduler& operator=(const FiberScheduler&) = delete;

  // Runs the blocks `linear_ids` together to their end on this OS thread. A deadlock is a Runtime error.
  std::optional<Error> run(const std::vector<uint64_t>& linear_ids);

  // Sets the blocks `linear_ids` up on `stacks` without running them. Threads of the (one) block below
  // `first_thread` count as returned (they ran without fibers) and `shared`, if given, is moved in as its shared
  // memory (which they have written).
  std::optional<Error> start(const std::vector<uint64_t>& linear_ids, FiberStacks& stacks, uint32_t first_thread = 0,
                             std::vector<uint64_t>* shared = nullptr);
  // One round: every ready fiber runs until it returns, waits or yields; then the waits that can complete do.
  // Returns whether the blocks progressed (a thread returned or reached a collective, a wait completed): a round
  // of yields only is not progress.
  bool round();
  // Runs rounds until every thread has returned (true), an error, or `quiet_rounds` rounds in a row without
  // progress (false: the blocks spin, waiting on something else).
  bool run_until_quiet(uint32_t quiet_rounds);
  bool all_returned() const { return done_ == fibers_.size(); }
  const std::optional<Error>& error() const { return error_; }

  // The collective hook's work: records the wait and switches to the scheduler.
  uint64_t wait(Fiber& fiber, const Wait& w);
  [[noreturn]] void finished(Fiber& fiber);  // switches to the scheduler for good
  void run_entry(Fiber& fiber) { entry_(&fiber.context, params_); }

 private:
  void set_up(const std::vector<uint64_t>& linear_ids, uint32_t first_thread, std::vector<uint64_t>* shared);
  bool resolve();  // completes every wait that can complete; false if none could
  bool resolve_block_barrier(ResidentBlock& block);
  bool resolve_warp(ResidentBlock& block, uint32_t warp);
  bool resolve_grid_sync();
  // A call that cannot be made: a lane outside its warp function's mask, a grid sync outside a cooperative launch.
  __attribute__((noinline, cold)) void refuse(const Fiber& fiber);
  // A thread that has run below its stack: an error naming it (its writes may have reached another's stack).
  __attribute__((noinline, cold)) void overflowed(const Fiber& fiber);
  // The interrupt handler of the running fiber (target::host_interrupted): the launch's error, and the fiber
  // switched away from for good.
  [[noreturn]] static void abandon_current(void* scheduler);
  // A report of every block still running, with `what` ("deadlocked ...") and `why` in front.
  void fail(const std::string& why, const char* what = "deadlocked (it would hang on a GPU)");
  uint32_t threads_per_block() const { return static_cast<uint32_t>(config_.block.count()); }

  KernelEntry entry_;
  void** params_;
  const HostLaunch& config_;
  FiberContext scheduler_{};
  Fiber* current_ = nullptr;  // the fiber running (in a round)
  std::vector<Fiber> fibers_;
  std::vector<ResidentBlock> blocks_;
  std::vector<uint64_t> shared_;  // each block's static then dynamic shared memory
  std::size_t shared_words_ = 0;  // per block
  std::size_t done_ = 0;
  bool yielded_ = false;  // a fiber yielded this round (cuda.nanosleep, a spin point): it is ready again
  bool progress_ = false;  // a fiber returned or reached a collective this round
  std::optional<Error> error_;
};

// The result of a warp function for each lane of `group` (bit i: lane i of the warp) from the lanes' values and
// operands (collectives.cpp). `mask` is the mask the lanes passed.
void warp_results(HostCollective kind, uint32_t group, uint32_t mask, const uint64_t (&value)[32],
                  const uint32_t (&operand)[32], uint64_t (&result)[32]);
// The result of syncthreads_count/_and/_or given how many of the block's `live` threads passed a true predicate.
uint64_t block_reduction(HostCollective kind, uint32_t true_count, uint32_t live);
bool is_block_barrier(HostCollective kind);
bool is_warp_function(HostCollective kind);
// "cuda.shfl_sync", "cuda.syncthreads", "grid.sync()" ...
const char* collective_name(HostCollective kind);
// How the runtime's reports name a launch's kernel: "kernel 'name'", or "the kernel" without a name
// (deadlock_report.cpp).
std::string kernel_label(const std::string& kernel_name);

// A deadlock report (deadlock_report.cpp): the kernel, `what`, `why`, and for each block still running, the threads
// waiting at each call (kind, mask, where) and those that have returned.
std::string deadlock_report(const HostLaunch& config, const std::vector<Fiber>& fibers,
                            const std::vector<ResidentBlock>& blocks, const std::string& why, const char* what);

}  // namespace cujit::hostrt::detail
