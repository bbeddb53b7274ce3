// The host runtime's limits and interrupts (cujit/hostrt.h): a launch whose
// threads' locals cannot fit their stacks is refused before it runs; a thread
// that overruns its stack at run time is an error naming it; a launch whose
// threads spin forever stops when the interrupt flag rises (as compiled code
// polls it at every loop), in fibers and without, and the next launch runs.
#include <alloca.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "cujit/hostrt.h"

namespace cujit::hostrt {
namespace {

using target::HostThreadContext;

void nothing(HostThreadContext*, void**) {}

void count(HostThreadContext*, void** params) { (*static_cast<std::atomic<int>**>(params[0]))->fetch_add(1); }

TEST(HostRuntimeLimits, ALaunchWhoseLocalsCannotFitIsRefusedBeforeItRuns) {
  HostLaunch config{{1, 1, 1}, {32, 1, 1}, 0, 0};
  config.kernel_name = "big";
  config.frame_bytes = thread_stack_bytes();  // more than the kernel's share (the runtime keeps some)
  std::optional<Error> error = launch(nothing, nullptr, config);
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->kind, ErrorKind::Runtime);
  EXPECT_NE(error->message.find("kernel 'big' needs"), std::string::npos) << error->message;
  EXPECT_NE(error->message.find("CUJIT_HOST_STACK_KIB="), std::string::npos) << error->message;
  config.frame_bytes = thread_stack_bytes() - kRuntimeStackBytes;  // exactly the share: runs
  EXPECT_FALSE(launch(nothing, nullptr, config).has_value());
}

TEST(HostRuntimeLimits, TheDefaultShareIsAGpuThreadsMostLocalMemory) {
  if (std::getenv("CUJIT_HOST_STACK_KIB") != nullptr) GTEST_SKIP() << "CUJIT_HOST_STACK_KIB is set";
  EXPECT_EQ(thread_stack_bytes() - kRuntimeStackBytes, kDefaultThreadStackBytes);
  EXPECT_EQ(kDefaultThreadStackBytes, 512u * 1024);
}

// Writes a buffer larger than any thread's stack: what only run time sees (alloca of a run-time size).
void overrun(HostThreadContext*, void**) {
  const std::size_t n = thread_stack_bytes() + 96 * 1024;
  auto* buf = static_cast<volatile char*>(alloca(n));
  for (std::size_t i = 0; i < n; i += 64) buf[i] = 1;
}

TEST(HostRuntimeLimits, AThreadThatOverrunsItsStackAtRunTimeIsAnError) {
  HostLaunch config{{1, 1, 1}, {1, 1, 1}, 0, 0, /*barriers=*/true};
  config.kernel_name = "deep";
  std::optional<Error> error = launch(overrun, nullptr, config);
  ASSERT_TRUE(error.has_value());
  EXPECT_NE(error->message.find("kernel 'deep': thread (0, 0, 0) of block (0, 0, 0) overflowed its stack"),
            std::string::npos)
      << error->message;
}

// Spins as a kernel waiting on a flag nobody sets, polling the interrupt flag as compiled loops do.
void spin_forever(HostThreadContext*, void**) {
  for (;;) {
    if (target::host_interrupt_requested.load(std::memory_order_relaxed) != 0) target::host_interrupted();
    std::this_thread::yield();
  }
}

class HostRuntimeInterrupts : public ::testing::TestWithParam<bool> {};

TEST_P(HostRuntimeInterrupts, ASpinningLaunchStopsAndTheNextRuns) {
  HostLaunch config{{64, 1, 1}, {32, 1, 1}, 0, 0, /*barriers=*/GetParam()};
  config.kernel_name = "spin";
  std::thread user([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    target::host_interrupt_requested.store(1);  // what InterruptScope's SIGINT handler does
  });
  std::optional<Error> error = launch(spin_forever, nullptr, config);
  user.join();
  target::host_interrupt_requested.store(0);  // what InterruptScope's end does
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->kind, ErrorKind::Interrupted);
  EXPECT_NE(error->message.find("kernel 'spin' was interrupted"), std::string::npos) << error->message;

  std::atomic<int> threads{0};
  auto* p = &threads;
  void* params[] = {&p};
  config.kernel_name = "count";
  ASSERT_FALSE(launch(count, params, config).has_value());
  EXPECT_EQ(threads.load(), 64 * 32);
}

INSTANTIATE_TEST_SUITE_P(FibersAndNot, HostRuntimeInterrupts, ::testing::Values(true, false),
                         [](const auto& info) { return info.param ? "Fibers" : "WithoutFibers"; });

}  // namespace
}  // namespace cujit::hostrt
