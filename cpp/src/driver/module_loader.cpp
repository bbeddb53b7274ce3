// The ModuleLoader: the one owner of loaded cubins. One module per (key,
// context); setup hook once after loading, teardown hook before unloading;
// kernels and globals looked up through the library API or the module API.
#include "cujit/telemetry.h"
#include "driver_api.h"

namespace cujit::driver {
namespace {

FunctionAttributes read_attributes(CUfunction fn) {
  const detail::DriverApi& a = detail::api();
  auto get = [&](int which) {
    int value = 0;
    detail::check(a.cuFuncGetAttribute(&value, which, fn), "cuFuncGetAttribute");
    return value;
  };
  FunctionAttributes at;
  at.max_threads_per_block = get(detail::FUNC_MAX_THREADS_PER_BLOCK);
  at.shared_size_bytes = get(detail::FUNC_SHARED_SIZE_BYTES);
  at.const_size_bytes = get(detail::FUNC_CONST_SIZE_BYTES);
  at.local_size_bytes = get(detail::FUNC_LOCAL_SIZE_BYTES);
  at.num_regs = get(detail::FUNC_NUM_REGS);
  at.ptx_version = get(detail::FUNC_PTX_VERSION);
  at.binary_version = get(detail::FUNC_BINARY_VERSION);
  at.max_dynamic_shared_size_bytes = get(detail::FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES);
  return at;
}

}  // namespace

int Function::max_active_blocks_per_multiprocessor(int block_size, std::size_t shared_mem) const {
  const detail::DriverApi& a = detail::api();
  if (a.cuOccupancyMaxActiveBlocksPerMultiprocessor == nullptr)
    throw DriverError(DriverErrorKind::Support, "the CUDA driver lacks cuOccupancyMaxActiveBlocksPerMultiprocessor");
  int blocks = 0;
  detail::check(a.cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, handle(), block_size, shared_mem),
                "cuOccupancyMaxActiveBlocksPerMultiprocessor");
  return blocks;
}

namespace {

void driver_unload(LoadedModule::Kind kind, void* handle) {
  const detail::DriverApi* a = detail::api_if_loaded();
  if (a == nullptr) return;
  if (kind == LoadedModule::Kind::Library)
    a->cuLibraryUnload(static_cast<CUlibrary>(handle));
  else
    a->cuModuleUnload(static_cast<CUmodule>(handle));
}

// Loads `image` in `ctx`, which is current. Library API first (what numba-cuda
// does through cuda.core), the module API when the driver predates it.
std::pair<LoadedModule::Kind, void*> driver_load(std::string_view image) {
  const detail::DriverApi& a = detail::api();
  if (image.empty()) throw DriverError(DriverErrorKind::Argument, "cannot load an empty image");
  telemetry::ScopedStage timed(telemetry::Stage::ModuleLoad);
  if (a.has_library_api()) {
    CUlibrary lib = nullptr;
    detail::check(a.cuLibraryLoadData(&lib, image.data(), nullptr, nullptr, 0, nullptr, nullptr, 0),
                  "cuLibraryLoadData");
    return {LoadedModule::Kind::Library, lib};
  }
  CUmodule mod = nullptr;
  detail::check(a.cuModuleLoadData(&mod, image.data()), "cuModuleLoadData");
  return {LoadedModule::Kind::Module, mod};
}

}  // namespace

// ---- Function -------------------------------------------------------------

Function::Function(LoadedModule* module, CUfunction handle, std::string name, FunctionAttributes attributes)
    : module_(module),
      handle_(handle),
      name_(std::move(name)),
      attributes_(attributes),
      dynamic_shared_limit_(attributes.max_dynamic_shared_size_bytes) {
  limits_ = LaunchLimits::for_function(*this);
}

Context& Function::context() const { return module_->context(); }

void Function::ensure_dynamic_shared_memory(std::size_t bytes) {
  if (static_cast<long long>(bytes) <= dynamic_shared_limit_.load(std::memory_order_relaxed)) return;
  detail::ensure_current(context());
  detail::check(
      detail::api().cuFuncSetAttribute(handle_, detail::FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES, static_cast<int>(bytes)),
      "cuFuncSetAttribute");
  dynamic_shared_limit_.store(static_cast<int>(bytes), std::memory_order_relaxed);
}

void Function::set_preferred_shared_memory_carveout(int percent) {
  detail::ensure_current(context());
  detail::check(detail::api().cuFuncSetAttribute(handle_, detail::FUNC_PREFERRED_SHARED_MEMORY_CARVEOUT, percent),
                "cuFuncSetAttribute");
}

int Function::preferred_shared_memory_carveout() const {
  detail::ensure_current(context());
  int value = 0;
  detail::check(detail::api().cuFuncGetAttribute(&value, detail::FUNC_PREFERRED_SHARED_MEMORY_CARVEOUT, handle_),
                "cuFuncGetAttribute");
  return value;
}

// ---- LoadedModule ---------------------------------------------------------

LoadedModule::LoadedModule(std::string key, Context& ctx, Kind kind, void* handle, ModuleHooks hooks)
    : key_(std::move(key)), ctx_(&ctx), kind_(kind), handle_(handle), hooks_(std::move(hooks)) {}

void LoadedModule::check_loaded(const char* what) const {
  if (!loaded())
    throw DriverError(
        DriverErrorKind::Driver,
        std::string("CUDA_ERROR_INVALID_HANDLE: cannot ") + what + ": module '" + key_ + "' has been unloaded", 400,
        "CUDA_ERROR_INVALID_HANDLE");
}

std::shared_ptr<Function> LoadedModule::function(const std::string& name) {
  check_loaded("look up a kernel");
  std::lock_guard<std::mutex> lock(functions_mutex_);
  auto it = functions_.find(name);
  if (it == functions_.end()) {
    const detail::DriverApi& a = detail::api();
    detail::ensure_current(*ctx_);
    CUfunction fn = nullptr;
    if (kind_ == Kind::Library) {
      CUkernel kernel = nullptr;
      detail::check(a.cuLibraryGetKernel(&kernel, static_cast<CUlibrary>(handle_), name.c_str()), "cuLibraryGetKernel");
      detail::check(a.cuKernelGetFunction(&fn, kernel), "cuKernelGetFunction");
    } else {
      detail::check(a.cuModuleGetFunction(&fn, static_cast<CUmodule>(handle_), name.c_str()), "cuModuleGetFunction");
    }
    it = functions_.emplace(name, std::make_unique<Function>(this, fn, name, read_attributes(fn))).first;
  }
  // Aliasing: the Function lives inside this module and keeps it alive.
  return std::shared_ptr<Function>(shared_from_this(), it->second.get());
}

std::pair<CUdeviceptr, std::size_t> LoadedModule::global(const std::string& name) {
  check_loaded("look up a global");
  const detail::DriverApi& a = detail::api();
  detail::ensure_current(*ctx_);
  CUdeviceptr ptr = 0;
  std::size_t bytes = 0;
  if (kind_ == Kind::Library) {
    if (a.cuLibraryGetGlobal == nullptr)
      throw DriverError(DriverErrorKind::Support, "the CUDA driver lacks cuLibraryGetGlobal");
    detail::check(a.cuLibraryGetGlobal(&ptr, &bytes, static_cast<CUlibrary>(handle_), name.c_str()),
                  "cuLibraryGetGlobal");
  } else {
    detail::check(a.cuModuleGetGlobal(&ptr, &bytes, static_cast<CUmodule>(handle_), name.c_str()), "cuModuleGetGlobal");
  }
  return {ptr, bytes};
}

void LoadedModule::unload() {
  if (unloading_.exchange(true, std::memory_order_acq_rel)) return;
  // Teardown sees a still-loaded module (docs/modules.md: teardown, then unload),
  // and the unload happens even when teardown fails.
  struct UnloadAtExit {
    LoadedModule* m;
    ~UnloadAtExit() {
      m->loaded_.store(false, std::memory_order_release);
      driver_unload(m->kind_, m->handle_);
    }
  } unload_after{this};
  if (hooks_.teardown) hooks_.teardown(*this);
}

// ---- ModuleLoader ---------------------------------------------------------

std::shared_ptr<LoadedModule> ModuleLoader::load(const std::string& key, Context& ctx, std::string_view image,
                                                 ModuleHooks hooks) {
  const Key k{key, ctx.handle()};
  for (;;) {
    std::shared_ptr<Slot> slot;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto& s = slots_[k];
      if (!s) s = std::make_shared<Slot>();
      slot = s;
    }
    std::lock_guard<std::mutex> slot_lock(slot->mutex);
    if (slot->abandoned) continue;  // a failed load or an unload got here first: start over
    if (slot->module) return slot->module;

    auto forget = [&] {
      slot->abandoned = true;
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = slots_.find(k);
      if (it != slots_.end() && it->second == slot) slots_.erase(it);
    };
    std::shared_ptr<LoadedModule> module;
    try {
      detail::ensure_current(ctx);
      auto [kind, handle] = driver_load(image);
      module = std::make_shared<LoadedModule>(key, ctx, kind, handle, std::move(hooks));
    } catch (...) {
      forget();
      throw;
    }
    if (module->hooks_.setup) {
      try {
        module->hooks_.setup(*module);
      } catch (...) {
        // The module never became usable: no teardown for it, just the unload.
        module->unloading_.store(true, std::memory_order_release);
        module->loaded_.store(false, std::memory_order_release);
        driver_unload(module->kind_, module->handle_);
        forget();
        throw;
      }
    }
    slot->module = module;
    return module;
  }
}

std::shared_ptr<LoadedModule> ModuleLoader::find(const std::string& key, const Context& ctx) const {
  std::shared_ptr<Slot> slot;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = slots_.find(Key{key, ctx.handle()});
    if (it == slots_.end()) return nullptr;
    slot = it->second;
  }
  std::lock_guard<std::mutex> slot_lock(slot->mutex);  // waits for a load in progress
  return slot->abandoned ? nullptr : slot->module;
}

std::vector<std::shared_ptr<ModuleLoader::Slot>> ModuleLoader::take_slots(
    const std::function<bool(const Key&)>& match) {
  std::vector<std::shared_ptr<Slot>> taken;
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto it = slots_.begin(); it != slots_.end();) {
    if (match(it->first)) {
      taken.push_back(it->second);
      it = slots_.erase(it);
    } else {
      ++it;
    }
  }
  return taken;
}

std::size_t ModuleLoader::unload_slots(std::vector<std::shared_ptr<Slot>> slots) {
  std::size_t count = 0;
  std::exception_ptr first_error;
  for (auto& slot : slots) {
    std::lock_guard<std::mutex> slot_lock(slot->mutex);
    slot->abandoned = true;
    if (!slot->module) continue;
    try {
      slot->module->unload();
    } catch (...) {
      if (!first_error) first_error = std::current_exception();
    }
    slot->module.reset();
    ++count;
  }
  // Every module is unloaded before the first teardown error is reported.
  if (first_error) std::rethrow_exception(first_error);
  return count;
}

bool ModuleLoader::unload(const std::string& key, const Context& ctx) {
  Key k{key, ctx.handle()};
  return unload_slots(take_slots([&](const Key& x) { return x == k; })) > 0;
}

std::size_t ModuleLoader::unload_key(const std::string& key) {
  return unload_slots(take_slots([&](const Key& x) { return x.first == key; }));
}

std::size_t ModuleLoader::unload_context(const Context& ctx) {
  CUcontext h = ctx.handle();
  return unload_slots(take_slots([&](const Key& x) { return x.second == h; }));
}

std::size_t ModuleLoader::unload_all() {
  return unload_slots(take_slots([](const Key&) { return true; }));
}

std::size_t ModuleLoader::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return slots_.size();
}

std::size_t ModuleLoader::count_key(const std::string& key) const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::size_t count = 0;
  for (auto it = slots_.lower_bound(Key{key, nullptr}); it != slots_.end() && it->first.first == key; ++it) ++count;
  return count;
}

ModuleLoader& module_loader() {
  static ModuleLoader* loader = new ModuleLoader;  // leaked: modules outlive static destructors
  return *loader;
}

}  // namespace cujit::driver
