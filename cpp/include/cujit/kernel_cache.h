// One dispatcher's specialisations and everything made of them (docs/modules.md, docs/architecture.md): the
// one owner of a kernel from its type key to its function in each context.
//
//   type key -> specialisation (compiled once, behind its own gate)
//            -> image per device architecture (built on first need)
//            -> module and function per context (loaded on first use there)
//
// specialise(key, compile) is the compile gate: the first caller of a key
// compiles it while later callers of that key wait and then share the result;
// other keys compile meanwhile; a compile that throws leaves the key to be
// compiled again by the next caller. A compile gives the specialisation's Code:
// its entry symbol, how to build its image for an architecture, its module
// hooks, launch facts, and an opaque payload the caller keeps there (the
// bindings keep the Python face and the launch path's facts).
//
// The first use of a specialisation in a context builds the image for the
// context's device (once per architecture), loads it through the ModuleLoader
// with fresh hooks (so setup runs once per module, in every context: numba-cuda's
// bug B6), and looks up the entry. A module that was unloaded since (context
// reset, unload) is loaded again on the next use, setup included, and never
// launched stale (B7). The cache unloads its modules (teardown first) when it
// is destroyed or asked to.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "cujit/driver.h"

namespace cujit::driver {

class KernelCache {
 public:
  // The image (a cubin) for a device of compute capability (major, minor); may call back into Python.
  using BuildImage = std::function<std::string(int major, int minor)>;
  // The hooks of one module about to be loaded (a module keeps its own: setup hands teardown what it saw).
  using MakeHooks = std::function<ModuleHooks()>;

  // What a compile gives the cache.
  struct Code {
    std::string entry;             // the kernel's symbol in its image
    BuildImage build;
    MakeHooks hooks;               // empty: modules load without hooks
    std::optional<int> carveout;   // set on each loaded function (jit's shared_memory_carveout)
    bool cooperative = false;      // a declaration it reaches needs a cooperative launch
    bool listed = true;            // false: a variant the dispatcher keeps out of its overloads
    std::shared_ptr<void> payload; // the caller's own record of the specialisation
  };
  using Compile = std::function<Code()>;

  // Thrown by specialise() when a thread asks for the key it is compiling (it would wait on itself).
  struct Reentered : std::runtime_error {
    using std::runtime_error::runtime_error;
  };

  // One specialisation: its code, its image per architecture and its module and function per context.
  class Kernel {
   public:
    explicit Kernel(std::string module_key) : module_key_(std::move(module_key)) {}
    bool compiled() const { return compiled_.load(std::memory_order_acquire); }
    const Code& code() const { return code_; }  // once compiled(): never changes after
    // The function in `ctx`, built and loaded on first use there. Throws what building, loading or setup
    // throw (the next call tries again), or std::logic_error before the kernel is compiled.
    std::shared_ptr<Function> function(Context& ctx);
    // The function already loaded in `ctx` (its module still loaded), or null: no driver call, no build,
    // never waits for one.
    std::shared_ptr<Function> loaded_in(CUcontext ctx) const;
    const std::string& module_key() const { return module_key_; }

   private:
    friend class KernelCache;
    const std::string module_key_;
    std::mutex compile_mutex_;  // the compile gate of this key
    std::atomic<std::thread::id> compiling_{};
    std::atomic<bool> compiled_{false};
    Code code_;
    std::mutex build_mutex_;  // held while building and loading: one of each at a time
    std::map<std::pair<int, int>, std::string> images_;
    mutable std::mutex functions_mutex_;  // the per-context table, read by launches while another builds
    std::map<CUcontext, std::shared_ptr<Function>> functions_;
  };

  KernelCache();
  KernelCache(const KernelCache&) = delete;
  KernelCache& operator=(const KernelCache&) = delete;
  ~KernelCache();

  // The specialisation `key` compiled, or null: never compiles, never waits.
  std::shared_ptr<Kernel> find(const std::string& key) const;
  // The specialisation `key`, compiled by `compile` on its first request (see the file comment). Throws what
  // `compile` throws, or Reentered.
  std::shared_ptr<Kernel> specialise(const std::string& key, const Compile& compile);
  // Whether this thread is compiling a specialisation of this cache now (a device function reached again
  // while its own typing runs is recursion).
  bool compiling_on_this_thread() const;
  // The compiled specialisations, in the order their compiles finished.
  std::vector<std::pair<std::string, std::shared_ptr<Kernel>>> specialisations() const;
  // Teardown, then unload, of every module of this cache in every context; returns how many. Images stay:
  // the next use loads again without building.
  std::size_t unload();
  // unload(), then forget every specialisation (their payloads released): what a collected owner asks.
  void clear();
  // Modules of this cache loaded now, in every context.
  std::size_t module_count() const;
  // Images built so far (one per specialisation and device architecture); waits for builds in progress.
  std::size_t images_built() const;

 private:
  std::shared_ptr<Kernel> entry(const std::string& key);  // made (uncompiled) on first request
  std::vector<std::shared_ptr<Kernel>> all() const;       // a snapshot

  const std::string prefix_;  // unique per cache: module keys of two caches never meet
  mutable std::mutex mutex_;
  std::map<std::string, std::shared_ptr<Kernel>> kernels_;
  std::vector<std::string> order_;  // keys in the order their compiles finished
  std::multiset<std::thread::id> compiling_threads_;
};

}  // namespace cujit::driver
