// Work cujit runs on threads of its own, which the user never started: NVRTC prefetches, the code
// generator's warm-up, loading nvJitLink. fork() waits for that work, so that no such thread is inside
// LLVM, NVRTC or the dynamic loader when the process forks (the child would inherit the locks it held,
// or results it promised, with no thread left to release or deliver them). The interpreter's exit waits
// for it too: static destructors must not run under it.
//
// A utility of the core like telemetry: it depends on nothing of cujit's.
#pragma once

#include <functional>

namespace cujit::background {

// Runs `work` on a detached thread, counted until it returns. Returns false, without running it, when no
// thread could be started. `work` must not throw.
bool start(std::function<void()> work);

// Returns once nothing started by start() runs.
void wait_idle();

// Hooks run around fork() once cujit's own threads are idle and no new one can start: every `prepare` in
// the order added, then every `parent` (in the parent) or `child` (in the child) in the reverse order.
void add_fork_hooks(std::function<void()> prepare, std::function<void()> parent, std::function<void()> child);

}  // namespace cujit::background
