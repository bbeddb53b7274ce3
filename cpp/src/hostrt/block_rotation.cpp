// A worker's blocks (block_rotation.h): blocks taken one after another and run
// to their end; resident blocks that spin on something outside them take turns
// with blocks the worker takes in beside them; a kernel without collectives runs
// a block's threads on the worker's stack until one spins, when the rest of its
// block becomes fibers that run at its spin points.
#include "block_rotation.h"

#include <algorithm>

#include <sched.h>

#include <csetjmp>

#include <exception>
#include <utility>

namespace cujit::hostrt::detail {
namespace {

// The hooks of a thread run without a fiber: its kernel reaches no collective, so only `spin` is ever called.
void no_barrier_hook(target::HostThreadContext*) {}
uint64_t no_collective_hook(target::HostThreadContext*, uint32_t, uint32_t, uint64_t, uint32_t, const char*) {
  return 0;
}
void native_spin_hook(target::HostThreadContext* context) { static_cast<WorkerBlocks*>(context->runtime)->spun(); }

}  // namespace

WorkerBlocks::WorkerBlocks(KernelEntry entry, void** params, const HostLaunch& config, std::atomic<uint64_t>& next,
                           const std::atomic<bool>& failed)
    : entry_(entry), params_(params), config_(config), next_(next), failed_(failed) {}

WorkerBlocks::~WorkerBlocks() {
  // The stacks of blocks taken in beside others go back to the system (slot 0 is kept, as a worker's only one).
  for (std::size_t slot = 1; slot < slot_busy_.size(); ++slot) thread_stacks(slot).release();
}

std::optional<uint64_t> WorkerBlocks::take() {
  if (taken_next_ < taken_end_) return taken_next_++;
  // Blocks of a kernel that has a block entry (its threads as loops) never wait for one another (no spin point):
  // a worker takes them in runs (an eighth of its share, at most 64), so that the workers do not meet at the
  // counter for every block.
  const uint64_t blocks = config_.grid.count();
  const uint64_t run =
      config_.block_entry == nullptr ? 1 : std::clamp<uint64_t>(blocks / (uint64_t{worker_count()} * 8), 1, 64);
  const uint64_t b = next_.fetch_add(run);
  if (b >= blocks) return std::nullopt;
  taken_next_ = b + 1;
  taken_end_ = std::min(b + run, blocks);
  return b;
}

WorkerBlocks::Resident WorkerBlocks::make_resident() {
  Resident r;
  if (spare_.empty()) {
    r.scheduler = std::make_unique<FiberScheduler>(entry_, params_, config_);
  } else {
    r.scheduler = std::move(spare_.back());
    spare_.pop_back();
  }
  while (r.slot < slot_busy_.size() && slot_busy_[r.slot]) ++r.slot;
  if (r.slot == slot_busy_.size()) slot_busy_.push_back(false);
  slot_busy_[r.slot] = true;
  return r;
}

void WorkerBlocks::admit(uint64_t linear) {
  Resident r = make_resident();
  r.scheduler->start({linear}, thread_stacks(r.slot));  // an error stays in the scheduler: turn() reports it
  resident_.push_back(std::move(r));
}

void WorkerBlocks::retire(std::size_t index) {
  slot_busy_[resident_[index].slot] = false;
  spare_.push_back(std::move(resident_[index].scheduler));
  resident_.erase(resident_.begin() + static_cast<std::ptrdiff_t>(index));
}

bool WorkerBlocks::turn() {
  bool returned = false;
  for (std::size_t i = 0; i < resident_.size();) {
    FiberScheduler& s = *resident_[i].scheduler;
    const bool done = s.run_until_quiet(kQuietRounds);
    if (s.error()) {
      if (!error_) error_ = s.error();
      return true;
    }
    if (done) {
      retire(i);
      returned = true;
    } else {
      ++i;
    }
  }
  return returned;
}

void WorkerBlocks::make_room() {
  std::optional<uint64_t> b = resident_.size() < kMaxResidentBlocks ? take() : std::nullopt;
  if (b)
    admit(*b);
  else
    sched_yield();  // what they wait for runs on another worker (or never: as on a GPU, it hangs)
}

std::optional<Error> WorkerBlocks::run() {
  while (!error_ && !failed_.load(std::memory_order_relaxed)) {
    if (target::host_interrupt_requested.load(std::memory_order_relaxed) != 0) {
      error_ = interrupted_error(config_.kernel_name);
      break;
    }
    if (resident_.empty()) {
      std::optional<uint64_t> b = take();
      if (!b) break;
      if (config_.barriers && config_.block_entry == nullptr)
        admit(*b);
      else
        run_without_fibers(*b);
      continue;
    }
    if (!turn() && !error_) make_room();  // every resident block spins: another block may be what they wait for
  }
  return error_;
}

void WorkerBlocks::run_without_fibers(uint64_t linear) {
  const Dim3 g = config_.grid, blk = config_.block;
  const uint64_t static_part = (config_.static_shared + 15) / 16 * 16;
  // Laid out as FiberScheduler lays out one block's, which takes it over if a thread spins.
  shared_.assign((static_part + config_.dynamic_shared + 15) / 16 * 2 + 2, 0);
  char* base = reinterpret_cast<char*>((reinterpret_cast<uintptr_t>(shared_.data()) + 15) & ~uintptr_t{15});
  context_ = target::HostThreadContext{};
  auto& r = context_.registers;
  if (config_.block_entry != nullptr && config_.blocks_axis == 1) {  // blocks along y: on along the rows
    r[1][1] = static_cast<uint32_t>(linear % g.y), r[1][0] = static_cast<uint32_t>(linear / g.y % g.x);
  } else {
    r[1][0] = static_cast<uint32_t>(linear % g.x), r[1][1] = static_cast<uint32_t>(linear / g.x % g.y);
  }
  r[1][2] = static_cast<uint32_t>(linear / (uint64_t{g.x} * g.y));
  r[2][0] = blk.x, r[2][1] = blk.y, r[2][2] = blk.z;
  r[3][0] = g.x, r[3][1] = g.y, r[3][2] = g.z;
  context_.shared = base;
  context_.dynamic_shared = base + static_part;
  context_.dynamic_shared_bytes = config_.dynamic_shared;
  context_.barrier = no_barrier_hook;
  context_.collective = no_collective_hook;
  context_.spin = native_spin_hook;
  context_.runtime = this;
  linear_ = linear;
  // Ctrl-C: a thread stopped at a loop's poll jumps back here (compiled code has nothing to unwind).
  struct Handler {
    target::HostInterruptHandler outer = target::host_interrupt_handler;
    ~Handler() { target::host_interrupt_handler = outer; }
  } handler;
  target::host_interrupt_handler = {&WorkerBlocks::abandon_thread, this};
  if (setjmp(interrupted_at_) != 0) {
    if (!error_) error_ = interrupted_error(config_.kernel_name);
    return;
  }
  if (config_.block_entry != nullptr) {  // every thread of the block, as loops between its barriers
    config_.block_entry(&context_, params_);
    return;
  }
  const uint64_t n = blk.count();
  for (uint64_t t = 0; t < n; ++t) {
    r[0][0] = static_cast<uint32_t>(t % blk.x), r[0][1] = static_cast<uint32_t>(t / blk.x % blk.y);
    r[0][2] = static_cast<uint32_t>(t / (uint64_t{blk.x} * blk.y));
    entry_(&context_, params_);
    if (rest_.scheduler) {  // the thread spun: the block's later threads are fibers, resident from now on
      resident_.push_back(std::move(rest_));
      rest_ = Resident{};
      return;
    }
  }
}

void WorkerBlocks::abandon_thread(void* blocks) {
  std::longjmp(static_cast<WorkerBlocks*>(blocks)->interrupted_at_, 1);
}

void WorkerBlocks::spun() {
  // Called from compiled code, which exceptions must not cross: memory for fibers that cannot be had is an error
  // of the launch (reported when the thread returns).
  try {
    spin_turn();
  } catch (const std::exception&) {
    if (!error_)
      error_ = Error{ErrorKind::Runtime, "the host runtime ran out of memory for a spinning block's fibers", {}};
  }
}

void WorkerBlocks::spin_turn() {
  const auto& r = context_.registers;
  const uint32_t thread = r[0][0] + r[2][0] * (r[0][1] + r[2][1] * r[0][2]);
  if (thread != thread_ || linear_ != spinning_block_) {  // a new thread's first hook
    thread_ = thread, spinning_block_ = linear_;
    spins_ = quiet_ = 0;
  }
  if (++spins_ < kPromoteAfter) return;  // many atomics, perhaps no spin: nothing to do yet
  if (!rest_.scheduler) {
    // The block's later threads (which may be what this one waits for) become fibers, on its shared memory.
    rest_ = make_resident();
    rest_.scheduler->start({linear_}, thread_stacks(rest_.slot), thread_ + 1, &shared_);
  }
  FiberScheduler& rest = *rest_.scheduler;
  const bool progress = !rest.all_returned() && !rest.error() && rest.round();
  quiet_ = progress ? 0 : quiet_ + 1;
  if (quiet_ < kQuietRounds) return;
  quiet_ = 0;
  // The thread and its block wait on other blocks: the resident ones' turn, or another block's.
  if (!turn() && !error_) make_room();
}

}  // namespace cujit::hostrt::detail
