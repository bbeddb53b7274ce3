// The worker pool (worker_pool.h): threads that wait for jobs on one queue. A
// job stays at the queue's front until as many workers as it asked for have
// taken it; the launching thread runs it as well, then withdraws what no worker
// took and waits for those that did. The pool is never destroyed (its threads
// wait at process exit); a forked child drops its parent's and makes its own.
#include "worker_pool.h"

#include <pthread.h>

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

namespace cujit::hostrt::detail {
namespace {

struct Job {
  const std::function<void()>* work;
  unsigned wanted;      // workers still to take it
  unsigned running = 0;  // workers running it now
};

class WorkerPool {
 public:
  void run(unsigned helpers, const std::function<void()>& work) {
    Job job{&work, helpers};
    if (helpers > 0) {
      std::lock_guard<std::mutex> lock(mutex_);
      while (threads_.size() < helpers) threads_.emplace_back([this] { serve(); });
      queue_.push_back(&job);
      jobs_.notify_all();
    }
    work();
    if (helpers == 0) return;
    std::unique_lock<std::mutex> lock(mutex_);
    for (auto it = queue_.begin(); it != queue_.end(); ++it)
      if (*it == &job) {
        queue_.erase(it);
        break;
      }
    finished_.wait(lock, [&] { return job.running == 0; });
  }

 private:
  void serve() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      jobs_.wait(lock, [&] { return !queue_.empty(); });
      Job* job = queue_.front();
      if (--job->wanted == 0) queue_.pop_front();
      ++job->running;
      lock.unlock();
      (*job->work)();
      lock.lock();
      if (--job->running == 0) finished_.notify_all();
    }
  }

  std::mutex mutex_;
  std::condition_variable jobs_, finished_;
  std::deque<Job*> queue_;
  std::vector<std::thread> threads_;  // detached in effect: the pool lives until the process ends
};

WorkerPool* pool = nullptr;
std::once_flag pool_once;

void forget_pool_in_child() { pool = nullptr; }  // the parent's threads do not exist in the child

WorkerPool& the_pool() {
  std::call_once(pool_once, [] { pthread_atfork(nullptr, nullptr, forget_pool_in_child); });
  // A child forked while a launch held the lock starts from a fresh pool; the parent's is left as it was.
  static std::mutex creating;
  std::lock_guard<std::mutex> lock(creating);
  if (pool == nullptr) pool = new WorkerPool();
  return *pool;
}

}  // namespace

void run_on_workers(unsigned helpers, const std::function<void()>& work) {
  if (helpers == 0) {
    work();
    return;
  }
  the_pool().run(helpers, work);
}

}  // namespace cujit::hostrt::detail
