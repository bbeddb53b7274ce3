// Internal to hostrt/: the process's worker threads, created on first use and
// reused by every launch. A launch hands the pool a job (a function that runs
// blocks until none are left) and runs it on its own thread too, so a launch
// finishes even while other launches keep every worker busy; several threads
// may launch at once. After a fork, the child starts a pool of its own.
#pragma once

#include <functional>

namespace cujit::hostrt::detail {

// Runs `work` on the calling thread and on up to `helpers` workers at once; returns when every run has returned.
void run_on_workers(unsigned helpers, const std::function<void()>& work);

}  // namespace cujit::hostrt::detail
