// Internal to hostrt/: one worker's share of a launch's blocks. The worker takes
// the grid's blocks one after another (a counter the workers share) and runs
// each to its end: through the kernel's block entry (its threads as loops
// between barriers, hostgen's block regions), as fibers (fiber_scheduler.h), or,
// for a kernel without collectives, its threads one after another on the
// worker's own stack. GPU
// threads run independently, so a thread may spin on another's write (an atomic
// flag); threads that spin pass spin points (atomics, fences) and must not
// starve the thread they wait for:
// - a thread running without a fiber that keeps passing spin points turns the
//   rest of its block into fibers, which run a round at each of its later spin
//   points (the thread itself runs in between, as a fiber would);
// - a resident block whose threads only yield, round after round, spins on
//   something outside it: the worker takes another block of the grid in beside
//   it (at most kMaxResidentBlocks, as a multiprocessor holds several blocks)
//   and gives each resident block its turn until it returns or spins again.
#pragma once

#include <atomic>
#include <csetjmp>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "cujit/hostrt.h"
#include "fiber_scheduler.h"

namespace cujit::hostrt::detail {

// The most blocks one worker holds at once (blocks it took in beside blocks that spin).
inline constexpr std::size_t kMaxResidentBlocks = 32;
// Rounds of nothing but yields after which a resident block counts as spinning on something outside it.
inline constexpr uint32_t kQuietRounds = 16;
// Spin hooks (every kHostSpinInterval-th spin point: 1024 spin points) a thread running without a fiber passes
// before the rest of its block becomes fibers (a thread that merely does many atomics costs nothing until then).
inline constexpr uint32_t kPromoteAfter = 4;

class WorkerBlocks {
 public:
  WorkerBlocks(KernelEntry entry, void** params, const HostLaunch& config, std::atomic<uint64_t>& next,
               const std::atomic<bool>& failed);
  WorkerBlocks(const WorkerBlocks&) = delete;
  WorkerBlocks& operator=(const WorkerBlocks&) = delete;
  ~WorkerBlocks();

  // Runs blocks until none is left (or another worker failed: `failed`); the first error of its blocks.
  std::optional<Error> run();
  // The spin hook of the thread running without a fiber.
  void spun();

 private:
  struct Resident {
    std::unique_ptr<FiberScheduler> scheduler;
    std::size_t slot = 0;  // its stacks: thread_stacks(slot)
  };

  std::optional<uint64_t> take();
  Resident make_resident();
  void admit(uint64_t linear);            // the block's threads as fibers, resident from now on
  void run_without_fibers(uint64_t linear);
  bool turn();                            // each resident block until it returns or spins; true if one returned
  void retire(std::size_t index);
  void make_room();                       // every resident block spins: take another in, or let other threads run
  void spin_turn();                       // spun()'s work
  // The interrupt handler of the thread running without a fiber: back to run_without_fibers (interrupted_at_).
  [[noreturn]] static void abandon_thread(void* blocks);

  KernelEntry entry_;
  void** params_;
  const HostLaunch& config_;
  std::atomic<uint64_t>& next_;
  const std::atomic<bool>& failed_;
  std::vector<Resident> resident_;
  std::vector<std::unique_ptr<FiberScheduler>> spare_;
  std::vector<bool> slot_busy_;
  std::optional<Error> error_;
  // The block whose threads run without fibers: its context, shared memory, the running thread's spin hooks in a
  // row and hooks without progress, and the rest of the block once it spins (resident when the thread returns).
  target::HostThreadContext context_{};
  std::vector<uint64_t> shared_;
  uint64_t linear_ = 0, spinning_block_ = ~uint64_t{0};
  uint32_t thread_ = 0, spins_ = 0, quiet_ = 0;  // of the thread that last called spun()
  uint64_t taken_next_ = 0, taken_end_ = 0;      // the blocks taken from the counter and not yet run
  Resident rest_;
  std::jmp_buf interrupted_at_{};
};

}  // namespace cujit::hostrt::detail
