// One dispatcher's kernels (spec §6): for each specialisation (a type key), the
// image built for each device architecture and, for each context, its module
// and function. The first use of a specialisation in a context builds the
// image for the context's device (once per architecture), loads it through the
// ModuleLoader with the specialisation's hooks (so setup runs once per module,
// in every context: numba-cuda's bug B6), and looks up the entry. A module that
// was unloaded since (context reset, unload) is loaded again on the next use,
// setup included, and never launched stale (B7). Concurrent first uses of one
// specialisation wait for one build and one load; different specialisations
// build concurrently. The cache unloads its modules (teardown first) when it
// is destroyed or asked to.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "cujit/driver.h"

namespace cujit::driver {

class KernelCache {
 public:
  // The image (a cubin) for a device of compute capability (major, minor); may call back into Python.
  using BuildImage = std::function<std::string(int major, int minor)>;

  // One specialisation: its image per architecture and its module and function per context. The one place a
  // kernel's function in a context is kept: the launch paths ask it.
  class Kernel {
   public:
    explicit Kernel(std::string module_key) : module_key_(std::move(module_key)) {}
    // The function (symbol `entry`) in `ctx`, built and loaded on first use there. `build` and `hooks` are
    // used only when an image or a load is needed (they are not kept beyond the module they load). Throws
    // what building, loading or setup throw; the next call tries again.
    std::shared_ptr<Function> function(const std::string& entry, Context& ctx, const BuildImage& build,
                                       const ModuleHooks& hooks);
    // The function already loaded in `ctx` (its module still loaded), or null: no driver call, no build,
    // never waits for one.
    std::shared_ptr<Function> loaded_in(CUcontext ctx) const;
    const std::string& module_key() const { return module_key_; }

   private:
    friend class KernelCache;
    const std::string module_key_;
    std::mutex build_mutex_;  // held while building and loading: one of each at a time
    std::map<std::pair<int, int>, std::string> images_;
    mutable std::mutex functions_mutex_;  // the per-context table, read by launches while another builds
    std::map<CUcontext, std::shared_ptr<Function>> functions_;
  };

  KernelCache();
  KernelCache(const KernelCache&) = delete;
  KernelCache& operator=(const KernelCache&) = delete;
  ~KernelCache();

  // The specialisation `key`, made on first use.
  std::shared_ptr<Kernel> kernel(const std::string& key);
  // kernel(key)->function(...).
  std::shared_ptr<Function> function(const std::string& key, const std::string& entry, Context& ctx,
                                     const BuildImage& build, const ModuleHooks& hooks);
  // Teardown, then unload, of every module of this cache in every context; returns how many. Images stay:
  // the next use loads again without building.
  std::size_t unload();
  // Modules of this cache loaded now, in every context.
  std::size_t module_count() const;
  // Images built so far (one per specialisation and device architecture); waits for builds in progress.
  std::size_t images_built() const;

 private:
  std::vector<std::shared_ptr<Kernel>> all() const;  // a snapshot

  const std::string prefix_;  // unique per cache: module keys of two caches never meet
  mutable std::mutex mutex_;
  std::map<std::string, std::shared_ptr<Kernel>> kernels_;
};

}  // namespace cujit::driver
