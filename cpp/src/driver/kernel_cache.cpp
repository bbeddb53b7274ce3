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

std::shared_ptr<KernelCache::Specialisation> KernelCache::specialisation(const std::string& key) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto& s = specialisations_[key];
  if (!s) {
    s = std::make_shared<Specialisation>();
    s->module_key = prefix_ + key;
  }
  return s;
}

std::shared_ptr<Function> KernelCache::function(const std::string& key, const std::string& entry, Context& ctx,
                                                 const BuildImage& build, const ModuleHooks& hooks) {
  std::shared_ptr<Specialisation> s = specialisation(key);
  std::lock_guard<std::mutex> lock(s->mutex);
  auto it = s->functions.find(ctx.handle());
  if (it != s->functions.end()) {
    if (it->second->module().loaded()) return it->second;
    s->functions.erase(it);  // unloaded since (reset, unload): load again, setup again
  }
  const DeviceInfo& device = ctx.device();
  std::pair<int, int> cc{device.cc_major, device.cc_minor};
  auto image = s->images.find(cc);
  if (image == s->images.end()) image = s->images.emplace(cc, build(cc.first, cc.second)).first;
  std::shared_ptr<LoadedModule> module = module_loader().load(s->module_key, ctx, image->second, hooks);
  std::shared_ptr<Function> fn = module->function(entry);
  s->functions[ctx.handle()] = fn;
  return fn;
}

std::size_t KernelCache::unload() {
  std::size_t count = 0;
  std::exception_ptr first_error;
  for (const auto& s : all()) {
    std::lock_guard<std::mutex> lock(s->mutex);
    s->functions.clear();
    try {
      count += module_loader().unload_key(s->module_key);
    } catch (...) {
      if (!first_error) first_error = std::current_exception();
    }
  }
  if (first_error) std::rethrow_exception(first_error);
  return count;
}

std::vector<std::shared_ptr<KernelCache::Specialisation>> KernelCache::all() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::shared_ptr<Specialisation>> out;
  for (const auto& [key, s] : specialisations_) out.push_back(s);
  return out;
}

std::size_t KernelCache::module_count() const {
  std::size_t count = 0;
  for (const auto& s : all()) count += module_loader().count_key(s->module_key);
  return count;
}

std::size_t KernelCache::images_built() const {
  std::size_t count = 0;
  for (const auto& s : all()) {
    std::lock_guard<std::mutex> lock(s->mutex);
    count += s->images.size();
  }
  return count;
}

}  // namespace cujit::driver
