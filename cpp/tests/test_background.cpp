// cujit's own threads (cujit/background.h): counted and waited for; fork() waits for them and runs the
// hooks in order, and the child has none running.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "cujit/background.h"

namespace cujit {
namespace {

TEST(Background, WaitIdleReturnsWhenTheWorkIsDone) {
  std::atomic<int> done{0};
  for (int i = 0; i < 8; ++i)
    ASSERT_TRUE(background::start([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      ++done;
    }));
  background::wait_idle();
  EXPECT_EQ(done.load(), 8);
  background::wait_idle();  // nothing runs: returns at once
}

TEST(Background, ForkWaitsForTheWorkAndRunsTheHooksInOrder) {
  static std::string order;  // the hooks are process-wide: they stay for the tests after this one
  static bool armed = false;
  background::add_fork_hooks(
      [] {
        if (armed) order += "p1";
      },
      [] {
        if (armed) order += "P1";
      },
      [] {
        if (armed) order += "C1";
      });
  background::add_fork_hooks(
      [] {
        if (armed) order += "p2";
      },
      [] {
        if (armed) order += "P2";
      },
      [] {
        if (armed) order += "C2";
      });
  std::atomic<bool> finished{false};
  ASSERT_TRUE(background::start([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    finished = true;
  }));
  armed = true;
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    // The child: the work finished before the fork, and none runs here.
    alarm(20);
    background::wait_idle();
    _exit(finished.load() && order == "p1p2C2C1" ? 0 : 1);
  }
  armed = false;
  EXPECT_TRUE(finished.load());  // fork() waited for it
  EXPECT_EQ(order, "p1p2P2P1");
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

}  // namespace
}  // namespace cujit
