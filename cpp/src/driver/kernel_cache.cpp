// KernelCache (see cujit/kernel_cache.h): specialisations, images per device
// architecture, and modules and functions per context through the ModuleLoader.
#include "cujit/kernel_cache.h"

#include <atomic>

namespace cujit::driver {
namespace {

std::string next_prefix() {
  static std::atomic<long> counter{0};
  return "kernels#" + std::to_string(++counter) + ":";
}

}  // namespace

KernelCache::KernelCache() : prefix_(next_prefix()) {}

KernelCache::~KernelCache() {
  try {
    unload();
  } catch (...) {  // a destructor has no one to report to; hooks report their own errors
  }
}

std::shared_ptr<Function> KernelCache::Kernel::loaded_in(CUcontext ctx) const {
  std::lock_guard<std::mutex> lock(functions_mutex_);
  auto it = functions_.find(ctx);
  return it != functions_.end() && it->second->module().loaded() ? it->second : nullptr;
}

std::shared_ptr<Function> KernelCache::Kernel::function(const std::string& entry, Context& ctx,
                                                        const BuildImage& build, const ModuleHooks& hooks) {
  if (std::shared_ptr<Function> fn = loaded_in(ctx.handle())) return fn;
  std::lock_guard<std::mutex> lock(build_mutex_);
  if (std::shared_ptr<Function> fn = loaded_in(ctx.handle())) return fn;  // loaded while this one waited
  // Never loaded here, or unloaded since (reset, unload): load again, setup again.
  const DeviceInfo& device = ctx.device();
  std::pair<int, int> cc{device.cc_major, device.cc_minor};
  auto image = images_.find(cc);
  if (image == images_.end()) image = images_.emplace(cc, build(cc.first, cc.second)).first;
  std::shared_ptr<LoadedModule> module = module_loader().load(module_key_, ctx, image->second, hooks);
  std::shared_ptr<Function> fn = module->function(entry);
  std::lock_guard<std::mutex> table(functions_mutex_);
  functions_[ctx.handle()] = fn;
  return fn;
}

std::shared_ptr<KernelCache::Kernel> KernelCache::kernel(const std::string& key) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto& k = kernels_[key];
  if (!k) k = std::make_shared<Kernel>(prefix_ + key);
  return k;
}

std::shared_ptr<Function> KernelCache::function(const std::string& key, const std::string& entry, Context& ctx,
                                                 const BuildImage& build, const ModuleHooks& hooks) {
  return kernel(key)->function(entry, ctx, build, hooks);
}

std::size_t KernelCache::unload() {
  std::size_t count = 0;
  std::exception_ptr first_error;
  for (const auto& k : all()) {
    std::lock_guard<std::mutex> lock(k->build_mutex_);
    {
      std::lock_guard<std::mutex> table(k->functions_mutex_);
      k->functions_.clear();
    }
    try {
      count += module_loader().unload_key(k->module_key_);
    } catch (...) {
      if (!first_error) first_error = std::current_exception();
    }
  }
  if (first_error) std::rethrow_exception(first_error);
  return count;
}

std::vector<std::shared_ptr<KernelCache::Kernel>> KernelCache::all() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::shared_ptr<Kernel>> out;
  for (const auto& [key, k] : kernels_) out.push_back(k);
  return out;
}

std::size_t KernelCache::module_count() const {
  std::size_t count = 0;
  for (const auto& k : all()) count += module_loader().count_key(k->module_key_);
  return count;
}

std::size_t KernelCache::images_built() const {
  std::size_t count = 0;
  for (const auto& k : all()) {
    std::lock_guard<std::mutex> lock(k->build_mutex_);
    count += k->images_.size();
  }
  return count;
}

}  // namespace cujit::driver
