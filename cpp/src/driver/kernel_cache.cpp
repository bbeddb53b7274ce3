// KernelCache (see cujit/kernel_cache.h): specialisations behind their compile
// gates, images per device architecture, and modules and functions per context
// through the ModuleLoader.
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

std::shared_ptr<Function> KernelCache::Kernel::function(Context& ctx) {
  if (std::shared_ptr<Function> fn = loaded_in(ctx.handle())) return fn;
  if (!compiled()) throw std::logic_error("kernel " + module_key_ + " used before its compile finished");
  if (!code_.build) throw std::logic_error("kernel " + module_key_ + " has no code to load (a device function)");
  std::lock_guard<std::mutex> lock(build_mutex_);
  if (std::shared_ptr<Function> fn = loaded_in(ctx.handle())) return fn;  // loaded while this one waited
  // Never loaded here, or unloaded since (reset, unload): load again, setup again.
  const DeviceInfo& device = ctx.device();
  std::pair<int, int> cc{device.cc_major, device.cc_minor};
  auto image = images_.find(cc);
  if (image == images_.end()) image = images_.emplace(cc, code_.build(cc.first, cc.second)).first;
  ModuleHooks hooks = code_.hooks ? code_.hooks() : ModuleHooks{};
  std::shared_ptr<LoadedModule> module = module_loader().load(module_key_, ctx, image->second, hooks);
  std::shared_ptr<Function> fn = module->function(code_.entry);
  if (code_.carveout) fn->set_preferred_shared_memory_carveout(*code_.carveout);
  std::lock_guard<std::mutex> table(functions_mutex_);
  functions_[ctx.handle()] = fn;
  return fn;
}

std::shared_ptr<KernelCache::Kernel> KernelCache::entry(const std::string& key) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto& k = kernels_[key];
  if (!k) k = std::make_shared<Kernel>(prefix_ + std::to_string(kernels_.size()));
  return k;
}

std::shared_ptr<KernelCache::Kernel> KernelCache::find(const std::string& key) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = kernels_.find(key);
  return it != kernels_.end() && it->second->compiled() ? it->second : nullptr;
}

std::shared_ptr<KernelCache::Kernel> KernelCache::specialise(const std::string& key, const Compile& compile) {
  std::shared_ptr<Kernel> k = entry(key);
  if (k->compiled()) return k;
  const std::thread::id me = std::this_thread::get_id();
  if (k->compiling_.load() == me) throw Reentered("specialisation requested again while it compiles");
  std::lock_guard<std::mutex> gate(k->compile_mutex_);
  if (k->compiled()) return k;  // compiled while this one waited
  k->compiling_.store(me);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    compiling_threads_.insert(me);
  }
  struct Done {  // whatever the compile does, this thread is no longer compiling the key
    KernelCache& cache;
    Kernel& kernel;
    std::thread::id me;
    ~Done() {
      kernel.compiling_.store(std::thread::id{});
      std::lock_guard<std::mutex> lock(cache.mutex_);
      cache.compiling_threads_.erase(cache.compiling_threads_.find(me));
    }
  } done{*this, *k, me};
  k->code_ = compile();
  k->compiled_.store(true, std::memory_order_release);
  std::lock_guard<std::mutex> lock(mutex_);
  order_.push_back(key);
  return k;
}

bool KernelCache::compiling_on_this_thread() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return compiling_threads_.count(std::this_thread::get_id()) > 0;
}

std::vector<std::pair<std::string, std::shared_ptr<KernelCache::Kernel>>> KernelCache::specialisations() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::pair<std::string, std::shared_ptr<Kernel>>> out;
  for (const std::string& key : order_) out.emplace_back(key, kernels_.at(key));
  return out;
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

void KernelCache::clear() {
  std::exception_ptr error;
  try {
    unload();
  } catch (...) {
    error = std::current_exception();
  }
  std::map<std::string, std::shared_ptr<Kernel>> dropped;  // released outside the lock: payloads may run code
  {
    std::lock_guard<std::mutex> lock(mutex_);
    dropped.swap(kernels_);
    order_.clear();
  }
  dropped.clear();
  if (error) std::rethrow_exception(error);
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
