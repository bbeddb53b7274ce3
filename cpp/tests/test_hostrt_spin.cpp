// The host runtime with threads that spin-wait (block_rotation.h): hand-written
// kernels that loop on an atomic flag, passing spin points as compiled code
// does (HostThreadContext::spin every kHostSpinInterval-th), until another
// thread of their block, or another block, sets it: with and without fibers,
// with one worker for more blocks than it holds at first.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <string>
#include <vector>

#include "cujit/hostrt.h"

namespace cujit::hostrt {
namespace {

using target::HostThreadContext;

void spin_point(HostThreadContext* c) {
  if (++c->spins % target::kHostSpinInterval == 0 && c->spin != nullptr) c->spin(c);
}

uint32_t thread_of(const HostThreadContext* c) { return c->registers[0][0]; }
uint32_t block_of(const HostThreadContext* c) { return c->registers[1][0]; }

struct Flags {
  std::vector<std::atomic<int>> flag;
  std::vector<int> seen;
  explicit Flags(std::size_t n) : flag(n), seen(n, -1) {}
};

// Thread 0 of each block waits until the block's last thread sets its flag.
void wait_for_last_thread(HostThreadContext* c, void** params) {
  auto* f = *static_cast<Flags**>(params[0]);
  const uint32_t b = block_of(c), n = c->registers[2][0];
  if (thread_of(c) == 0) {
    while (f->flag[b].load() == 0) spin_point(c);
    f->seen[b] = f->flag[b].load();
  } else if (thread_of(c) == n - 1) {
    f->flag[b].store(static_cast<int>(b) + 1);
  }
  if (c->registers[3][1] == 2) c->barrier(c);  // grid.y == 2: the kernel has a barrier (fibers)
}

// Thread 0 of block 0 waits until the grid's last block sets flag 0; every other block's thread 0 records itself.
void wait_for_last_block(HostThreadContext* c, void** params) {
  auto* f = *static_cast<Flags**>(params[0]);
  const uint32_t b = block_of(c), last = c->registers[3][0] - 1;
  if (thread_of(c) == 0) {
    if (b == 0) {
      while (f->flag[0].load() == 0) spin_point(c);
      f->seen[0] = f->flag[0].load();
    } else {
      f->seen[b] = static_cast<int>(b);
      if (b == last) f->flag[0].store(100);
    }
  }
  if (c->registers[3][1] == 2) c->barrier(c);
}

class OneWorker {
 public:
  OneWorker() {
    const char* old = std::getenv("CUJIT_HOST_THREADS");
    had_ = old != nullptr;
    if (had_) old_ = old;
    setenv("CUJIT_HOST_THREADS", "1", 1);
  }
  ~OneWorker() {
    if (had_)
      setenv("CUJIT_HOST_THREADS", old_.c_str(), 1);
    else
      unsetenv("CUJIT_HOST_THREADS");
  }

 private:
  bool had_ = false;
  std::string old_;
};

TEST(HostSpinWaits, AThreadSpinningOnALaterThreadOfItsBlockSeesItsWrite) {
  for (bool barriers : {false, true}) {
    HostLaunch config{{6, barriers ? 2u : 1u, 1}, {96, 1, 1}, 0, 0, barriers};
    Flags flags(6);
    auto* p = &flags;
    void* params[] = {&p};
    ASSERT_FALSE(launch(wait_for_last_thread, params, config).has_value()) << barriers;
    for (int b = 0; b < 6; ++b) EXPECT_EQ(flags.seen[b], b + 1) << barriers;
  }
}

TEST(HostSpinWaits, ABlockSpinningOnALaterBlockLetsItRunOnOneWorker) {
  OneWorker one;
  for (bool barriers : {false, true}) {
    HostLaunch config{{20, barriers ? 2u : 1u, 1}, {64, 1, 1}, 0, 0, barriers};
    Flags flags(20 * 2);
    auto* p = &flags;
    void* params[] = {&p};
    ASSERT_FALSE(launch(wait_for_last_block, params, config).has_value()) << barriers;
    EXPECT_EQ(flags.seen[0], 100) << barriers;
    for (int b = 1; b < 20; ++b) EXPECT_EQ(flags.seen[b], b) << barriers;
  }
}

}  // namespace
}  // namespace cujit::hostrt
