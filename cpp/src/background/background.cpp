// cujit's own threads (see cujit/background.h): counted, waited for at exit and around fork().
#include "cujit/background.h"

#include <condition_variable>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

#include <pthread.h>

namespace cujit::background {
namespace {

struct ForkHooks {
  std::function<void()> prepare, parent, child;
};

// Leaked: threads may still finish while the process's static destructors run.
struct State {
  std::mutex mutex;
  std::condition_variable idle;
  long running = 0;
  std::vector<ForkHooks> hooks;
};

State& state() {
  static State* s = new State;
  return *s;
}

// prepare: waits until no work runs and keeps the mutex, so that none starts before the fork; then the
// hooks. parent and child: the hooks in reverse, then the mutex is released. In the child no work runs:
// the threads that ran it stayed in the parent.
void install_fork_handlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    pthread_atfork(
        [] {
          State& s = state();
          std::unique_lock<std::mutex> lock(s.mutex);
          s.idle.wait(lock, [&] { return s.running == 0; });
          lock.release();
          for (const auto& h : s.hooks) h.prepare();
        },
        [] {
          State& s = state();
          for (auto it = s.hooks.rbegin(); it != s.hooks.rend(); ++it) it->parent();
          s.mutex.unlock();
        },
        [] {
          State& s = state();
          for (auto it = s.hooks.rbegin(); it != s.hooks.rend(); ++it) it->child();
          s.mutex.unlock();
        });
  });
}

void finished() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  --s.running;
  s.idle.notify_all();
}

}  // namespace

bool start(std::function<void()> work) {
  install_fork_handlers();
  State& s = state();
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    ++s.running;
  }
  try {
    std::thread([work = std::move(work)]() mutable {
      work();
      work = nullptr;  // what it holds goes before the count says it is done
      finished();
    }).detach();
    return true;
  } catch (const std::system_error&) {
    finished();
    return false;
  }
}

void wait_idle() {
  State& s = state();
  std::unique_lock<std::mutex> lock(s.mutex);
  s.idle.wait(lock, [&] { return s.running == 0; });
}

void add_fork_hooks(std::function<void()> prepare, std::function<void()> parent, std::function<void()> child) {
  install_fork_handlers();
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.hooks.push_back({std::move(prepare), std::move(parent), std::move(child)});
}

}  // namespace cujit::background
