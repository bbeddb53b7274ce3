// The calling thread's stack of CUDA contexts, as numba-cuda's `with
// cuda.gpus[n]:` uses it (push on entry, pop on exit), and a guard that makes a
// context current for a scope and gives the thread its own context back.
#pragma once

#include <vector>

#include "cujit/driver.h"

namespace cujit::driver {

// cuCtxPushCurrent: `ctx` becomes current here until it is popped.
void push_context(const Context& ctx);
// cuCtxPopCurrent: the context below becomes current again; returns the popped handle (null: the stack was empty).
CUcontext pop_context();
// Pops every context of the calling thread's stack (numba's cuda.close() does); returns how many.
int pop_all_contexts();

// Every context cujit has used in this process (primary contexts it retained, contexts other code made
// current), for cuda.close(); in no particular order.
std::vector<Context*> known_contexts();

// Makes `ctx` current for the guard's life, then restores the thread's previous
// context (none included): work on another device's memory or events leaves the
// thread on the device it chose.
class ScopedCurrent {
 public:
  explicit ScopedCurrent(const Context& ctx);
  ~ScopedCurrent();
  ScopedCurrent(const ScopedCurrent&) = delete;
  ScopedCurrent& operator=(const ScopedCurrent&) = delete;

 private:
  CUcontext previous_ = nullptr;
  bool switched_ = false;
};

}  // namespace cujit::driver
