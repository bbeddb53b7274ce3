// The CUDA Driver API runtime: libcuda loaded with dlopen on first use (never
// linked at build time), devices and their primary contexts, device memory,
// streams, the ModuleLoader (the one owner of loaded cubins), and the
// KernelLauncher that packs numba's kernel arguments and calls cuLaunchKernel.
//
// Everything here works without a GPU until it is asked to touch one: then a
// machine with no driver gets DriverError{Support} naming what is missing.
// Failures are thrown as DriverError (every driver call can fail, and the
// bindings translate them at one place); the kind picks the Python exception.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace cujit::driver {

// Handles with cuda.h's representation, declared here so that cujit needs no
// CUDA headers to build. They live in this namespace, so a translation unit
// that also includes cuda.h sees distinct (not conflicting) types.
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = std::uint64_t;
struct CUctx_st;
struct CUstream_st;
struct CUfunc_st;
struct CUmod_st;
struct CUlib_st;
struct CUkern_st;
using CUcontext = CUctx_st*;
using CUstream = CUstream_st*;
using CUfunction = CUfunc_st*;
using CUmodule = CUmod_st*;
using CUlibrary = CUlib_st*;
using CUkernel = CUkern_st*;

// ---- errors ---------------------------------------------------------------

enum class DriverErrorKind {
  Support,       // no driver / no device: cujit.errors.CudaSupportError
  Driver,        // a driver call failed: cujit.errors.CudaDriverError
  LaunchConfig,  // a launch configuration the device cannot run: LaunchConfigError
  Argument,      // a bad argument from the caller (count, type, size): TypeError/ValueError
};

class DriverError : public std::runtime_error {
 public:
  DriverError(DriverErrorKind kind, std::string message, CUresult code = 0, std::string code_name = {},
              std::string call = {})
      : std::runtime_error(message),
        kind_(kind),
        code_(code),
        code_name_(std::move(code_name)),
        call_(std::move(call)) {}
  DriverErrorKind kind() const { return kind_; }
  CUresult code() const { return code_; }                  // the CUresult, 0 when not from a call
  const std::string& code_name() const { return code_name_; }  // "CUDA_ERROR_INVALID_VALUE"
  const std::string& call() const { return call_; }         // "cuLaunchKernel"

 private:
  DriverErrorKind kind_;
  CUresult code_;
  std::string code_name_;
  std::string call_;
};

// The driver's name for a result code ("CUDA_ERROR_OUT_OF_MEMORY"); works
// without a driver for the codes cujit checks for, "CUDA_ERROR_<n>" otherwise.
std::string error_name(CUresult code);

// ---- the driver library ---------------------------------------------------

struct DriverStatus {
  bool available = false;
  std::string reason;     // why not, when not: which library, where, what it said
  std::string library;    // the path or soname that was loaded
  int version = 0;        // cuDriverGetVersion, e.g. 13000
  int device_count = 0;
};

// Loads libcuda and calls cuInit(0) the first time; never throws.
// CUJIT_CUDA_DRIVER or NUMBA_CUDA_DRIVER name another library to load.
const DriverStatus& driver_status();
// Throws DriverError{Support} with the reason when the driver is unusable.
void ensure_driver();

// ---- devices --------------------------------------------------------------

// Attribute numbers of CUdevice_attribute that cujit reads by name.
namespace device_attr {
constexpr int MaxThreadsPerBlock = 1, MaxBlockDimX = 2, MaxBlockDimY = 3, MaxBlockDimZ = 4, MaxGridDimX = 5,
              MaxGridDimY = 6, MaxGridDimZ = 7, MaxSharedMemoryPerBlock = 8, TotalConstantMemory = 9, WarpSize = 10,
              MaxRegistersPerBlock = 12, ClockRate = 13, MultiprocessorCount = 16, Integrated = 18,
              ConcurrentKernels = 31, PciBusId = 33, PciDeviceId = 34, MaxThreadsPerMultiprocessor = 39,
              AsyncEngineCount = 40, UnifiedAddressing = 41, PciDomainId = 50, ComputeCapabilityMajor = 75,
              ComputeCapabilityMinor = 76, CooperativeLaunch = 95, MaxSharedMemoryPerBlockOptin = 97;
}

struct DeviceInfo {
  int id = 0;
  std::string name;
  std::string uuid;  // "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", empty if the driver cannot say
  int cc_major = 0, cc_minor = 0;
  std::size_t total_memory = 0;
  int pci_domain_id = 0, pci_bus_id = 0, pci_device_id = 0;
  int multiprocessor_count = 0;
  int warp_size = 32;
  int max_threads_per_block = 1024;
  std::array<int, 3> max_block_dim{1024, 1024, 64};
  std::array<int, 3> max_grid_dim{2147483647, 65535, 65535};
  int max_shared_memory_per_block = 48 * 1024;
  int max_shared_memory_per_block_optin = 48 * 1024;
  bool cooperative_launch = false;
};

int device_count();
const DeviceInfo& device_info(int ordinal);  // read once per device, then cached
int device_attribute(int ordinal, int attribute);

// ---- contexts -------------------------------------------------------------

// A CUDA context cujit uses: the primary context of a device (retained once,
// kept for the life of the process) or a context someone else made current.
// It owns the deferred deallocation list of memory freed in it.
class Context {
 public:
  Context(CUcontext handle, int device_id, bool primary);
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  CUcontext handle() const { return handle_; }
  int device_id() const { return device_id_; }
  bool is_primary() const { return primary_; }
  const DeviceInfo& device() const { return device_info(device_id_); }

  void make_current() const;  // for the calling thread
  void synchronize();         // cuCtxSynchronize, then flushes deferred frees
  std::pair<std::size_t, std::size_t> memory_info();  // (free, total) bytes
  // Unloads this context's modules (teardown hooks first) and frees the
  // deferred memory. Device arrays that are still alive stay valid.
  void reset();

  // Memory freed by a dropped allocation is queued and freed in batches
  // (cuMemFree synchronises the device); at most kMaxPending entries or
  // kMaxPendingFraction of the device memory wait.
  void defer_free(CUdeviceptr ptr, std::size_t bytes);
  void flush_deferred();
  std::size_t pending_frees() const;

  static constexpr std::size_t kMaxPending = 10;
  static constexpr double kMaxPendingFraction = 0.2;

 private:
  CUcontext handle_;
  int device_id_;
  bool primary_;
  mutable std::mutex pending_mutex_;
  std::vector<CUdeviceptr> pending_;
  std::size_t pending_bytes_ = 0;
};

Context& primary_context(int ordinal);  // retains it the first time
// The calling thread's context: the driver's current one when there is one,
// else device 0's primary context, made current.
Context& current_context();
Context* current_context_or_null();   // never creates one; null without a driver
// The calling thread's current CUcontext as the driver reports it (null when none); one driver call, no lookup.
CUcontext current_context_handle();
Context& select_device(int ordinal);  // makes `ordinal`'s primary context current here

// ---- memory ---------------------------------------------------------------

// One cuMemAlloc'd block. Views share it through shared_ptr; when the last
// owner drops it, its memory goes to the context's deferred free list.
class DeviceAllocation {
 public:
  static std::shared_ptr<DeviceAllocation> allocate(Context& ctx, std::size_t bytes);
  ~DeviceAllocation();
  DeviceAllocation(const DeviceAllocation&) = delete;
  DeviceAllocation& operator=(const DeviceAllocation&) = delete;

  CUdeviceptr ptr() const { return ptr_; }
  std::size_t size() const { return size_; }
  Context& context() const { return *ctx_; }

 private:
  DeviceAllocation(Context* ctx, CUdeviceptr ptr, std::size_t size) : ctx_(ctx), ptr_(ptr), size_(size) {}
  Context* ctx_;
  CUdeviceptr ptr_;
  std::size_t size_;
};

class Stream;

// Copies and memset. With `stream` null the operation is synchronous (numba's
// stream=0); with a stream it is queued on it. Transfers from/to pageable host
// memory complete (or are staged) before return, as the driver specifies.
void copy_host_to_device(Context& ctx, CUdeviceptr dst, const void* src, std::size_t bytes, const Stream* stream);
void copy_device_to_host(Context& ctx, void* dst, CUdeviceptr src, std::size_t bytes, const Stream* stream);
void copy_device_to_device(Context& ctx, CUdeviceptr dst, CUdeviceptr src, std::size_t bytes, const Stream* stream);
void memset_d8(Context& ctx, CUdeviceptr dst, unsigned char value, std::size_t bytes, const Stream* stream);

// ---- streams --------------------------------------------------------------

class Stream {
 public:
  // The handles numba calls default (0), legacy default (1) and per-thread (2).
  static constexpr std::uintptr_t kDefault = 0, kLegacy = 1, kPerThread = 2;

  static std::shared_ptr<Stream> create(Context& ctx, bool non_blocking = false);
  // A stream cujit does not own: a default stream or one made by other code.
  static std::shared_ptr<Stream> wrap(Context* ctx, std::uintptr_t handle);
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  CUstream handle() const { return handle_; }
  Context* context() const { return ctx_; }
  bool owned() const { return owned_; }
  void synchronize() const;
  bool query() const;  // true when all work queued so far is done

 private:
  Stream(Context* ctx, CUstream handle, bool owned) : ctx_(ctx), handle_(handle), owned_(owned) {}
  Context* ctx_;
  CUstream handle_;
  bool owned_;
};

// Work queued on `consumer` (null: the legacy default stream) from now on runs after the work queued so
// far on `producer`, a stream as the CUDA Array Interface v3 names it (1 legacy default, 2 per-thread default,
// else a CUstream). Nothing is queued where the driver orders the two already: the same stream, or the legacy
// default stream on one side and a blocking stream on the other. Otherwise an event recorded on the producer
// is waited on by the consumer (asynchronous), or, on drivers without events, the producer is synchronised.
void order_after(CUstream consumer, std::uintptr_t producer);

// ---- modules --------------------------------------------------------------

struct FunctionAttributes {
  int max_threads_per_block = 0;
  int shared_size_bytes = 0;  // static shared memory
  int const_size_bytes = 0;
  int local_size_bytes = 0;
  int num_regs = 0;
  int ptx_version = 0;
  int binary_version = 0;
  int max_dynamic_shared_size_bytes = 0;
};

class Function;

// What a launch may ask for; the defaults hold on every GPU cujit supports.
struct LaunchLimits {
  std::array<std::int64_t, 3> max_grid{2147483647, 65535, 65535};
  std::array<std::int64_t, 3> max_block{1024, 1024, 64};
  std::int64_t max_threads_per_block = 1024;  // the kernel's, when known (registers, launch bounds)
  std::int64_t max_shared_per_block = 48 * 1024;  // opt-in maximum, static + dynamic
  std::int64_t static_shared = 0;
  static LaunchLimits for_device(const DeviceInfo& device);
  static LaunchLimits for_function(const Function& fn);
};

class LoadedModule;

// A kernel of a loaded module, resolved for the module's context.
class Function {
 public:
  Function(LoadedModule* module, CUfunction handle, std::string name, FunctionAttributes attributes);
  CUfunction handle() const { return handle_; }
  const std::string& name() const { return name_; }
  const FunctionAttributes& attributes() const { return attributes_; }
  // Its launch limits (the device's, with the kernel's threads per block and static shared memory), read
  // once when it is resolved.
  const LaunchLimits& limits() const { return limits_; }
  // How many blocks of `block_size` threads (and `shared_mem` dynamic shared bytes) one multiprocessor runs at once.
  int max_active_blocks_per_multiprocessor(int block_size, std::size_t shared_mem) const;
  LoadedModule& module() const { return *module_; }
  Context& context() const;
  // Raises the kernel's dynamic shared memory limit when a launch asks for
  // more than the default (48 KiB less static); no-op otherwise.
  void ensure_dynamic_shared_memory(std::size_t bytes);
  // The share of the L1/shared memory the kernel prefers as shared memory: a percentage, or -1 for the
  // device's default (jit's shared_memory_carveout). A hint the driver may round.
  void set_preferred_shared_memory_carveout(int percent);
  int preferred_shared_memory_carveout() const;

 private:
  LoadedModule* module_;
  CUfunction handle_;
  std::string name_;
  FunctionAttributes attributes_;
  std::atomic<int> dynamic_shared_limit_;
  LaunchLimits limits_;
};

class ModuleLoader;

// Called with the module once after it is loaded (setup) and once before it
// is unloaded (teardown). Hooks may call back into Python: the bindings call
// the loader with the GIL released and the hooks take it.
struct ModuleHooks {
  std::function<void(LoadedModule&)> setup;
  std::function<void(LoadedModule&)> teardown;
};

// One loaded cubin in one context: a CUlibrary (cuLibraryLoadData) when the
// driver has the library API, else a CUmodule (cuModuleLoadData).
class LoadedModule : public std::enable_shared_from_this<LoadedModule> {
 public:
  enum class Kind { Library, Module };
  LoadedModule(std::string key, Context& ctx, Kind kind, void* handle, ModuleHooks hooks);
  LoadedModule(const LoadedModule&) = delete;
  LoadedModule& operator=(const LoadedModule&) = delete;

  const std::string& key() const { return key_; }
  Context& context() const { return *ctx_; }
  Kind kind() const { return kind_; }
  // The CUlibrary or CUmodule as an integer (what numba's callbacks receive as .handle).
  std::uintptr_t handle() const { return reinterpret_cast<std::uintptr_t>(handle_); }
  bool loaded() const { return loaded_.load(std::memory_order_acquire); }

  // The kernel `name` (cached); the returned pointer keeps this module alive.
  std::shared_ptr<Function> function(const std::string& name);
  // A __device__/__constant__ global: (device pointer, size in bytes).
  std::pair<CUdeviceptr, std::size_t> global(const std::string& name);

 private:
  friend class ModuleLoader;
  void unload();  // teardown hook, then the driver unload; idempotent
  void check_loaded(const char* what) const;

  std::string key_;
  Context* ctx_;
  Kind kind_;
  void* handle_;
  ModuleHooks hooks_;
  std::atomic<bool> loaded_{true};
  std::atomic<bool> unloading_{false};
  std::mutex functions_mutex_;
  std::unordered_map<std::string, std::unique_ptr<Function>> functions_;
};

// The one owner of loaded modules: one module per (key, context), loaded the
// first time it is asked for, with its setup hook run exactly once (under the
// module's own lock, so concurrent first users wait for it to finish). A
// failed setup unloads the module and rethrows, so a later load starts afresh.
class ModuleLoader {
 public:
  // `image` is a cubin (or fatbin) the driver can load; it is copied by the driver.
  std::shared_ptr<LoadedModule> load(const std::string& key, Context& ctx, std::string_view image,
                                     ModuleHooks hooks = {});
  std::shared_ptr<LoadedModule> find(const std::string& key, const Context& ctx) const;
  // Teardown hook, then unload. False when nothing was loaded for (key, ctx).
  bool unload(const std::string& key, const Context& ctx);
  std::size_t unload_key(const std::string& key);  // in every context
  std::size_t unload_context(const Context& ctx);
  std::size_t unload_all();
  std::size_t size() const;
  std::size_t count_key(const std::string& key) const;  // modules loaded for `key`, in every context

 private:
  struct Slot {
    std::mutex mutex;  // held while loading and running setup
    std::shared_ptr<LoadedModule> module;
    bool abandoned = false;  // the load failed or it was unloaded: look again
  };
  using Key = std::pair<std::string, CUcontext>;
  std::vector<std::shared_ptr<Slot>> take_slots(const std::function<bool(const Key&)>& match);
  static std::size_t unload_slots(std::vector<std::shared_ptr<Slot>> slots);

  mutable std::mutex mutex_;
  std::map<Key, std::shared_ptr<Slot>> slots_;
};

ModuleLoader& module_loader();

// ---- launches -------------------------------------------------------------

enum class ScalarKind : std::uint8_t { Bool, Signed, Unsigned, Float };

// One kernel argument as the kernel ABI (docs/numba_abi.md: Kernel arguments) sees it: a scalar passed
// as one parameter of 1, 2, 4 or 8 bytes, or an array of ndim N passed as
// 5 + 2N 8-byte parameters: meminfo, parent, nitems, itemsize, data,
// shape[N], strides[N] (bytes). Complex numbers and tuples are several slots.
struct ArgSlot {
  enum class Kind : std::uint8_t { Scalar, Array };
  Kind kind = Kind::Scalar;
  ScalarKind scalar = ScalarKind::Signed;  // how a host value converts to the bits (bindings)
  int size = 8;                            // scalar bytes
  int ndim = 0;                            // array dimensions

  static ArgSlot make_scalar(ScalarKind kind, int size);
  static ArgSlot make_array(int ndim);
  int param_count() const { return kind == Kind::Array ? 5 + 2 * ndim : 1; }
};

struct ArrayArg {
  CUdeviceptr data = 0;
  std::int64_t nitems = 0;
  std::int64_t itemsize = 0;
  const std::int64_t* shape = nullptr;    // ndim entries
  const std::int64_t* strides = nullptr;  // ndim entries, bytes
};

// Where each kernel parameter goes in one buffer: every parameter at an
// offset aligned to its size (the C rule), as cuLaunchKernel reads them.
class ArgumentPlan {
 public:
  ArgumentPlan() = default;
  explicit ArgumentPlan(std::vector<ArgSlot> slots);  // throws DriverError{Argument} on a bad slot

  const std::vector<ArgSlot>& slots() const { return slots_; }
  std::size_t param_count() const { return param_offsets_.size(); }
  const std::vector<std::size_t>& param_offsets() const { return param_offsets_; }
  const std::vector<std::size_t>& param_sizes() const { return param_sizes_; }
  std::size_t first_param(std::size_t slot) const { return first_param_[slot]; }
  std::size_t buffer_size() const { return buffer_size_; }
  // Where the last parameter ends: the size cuLaunchKernel's parameter buffer has (buffer_size rounds it up).
  std::size_t params_end() const { return params_end_; }

 private:
  std::vector<ArgSlot> slots_;
  std::vector<std::size_t> first_param_;
  std::vector<std::size_t> param_offsets_;
  std::vector<std::size_t> param_sizes_;
  std::size_t buffer_size_ = 0;
  std::size_t params_end_ = 0;
};

// One launch's parameter values: the aligned buffer and the pointer array.
class ArgumentBuffer {
 public:
  explicit ArgumentBuffer(const ArgumentPlan& plan);
  ArgumentBuffer(const ArgumentBuffer&) = delete;  // the pointer array points into this object's storage
  ArgumentBuffer& operator=(const ArgumentBuffer&) = delete;
  ArgumentBuffer(ArgumentBuffer&&) = default;
  void set_scalar(std::size_t slot, std::uint64_t bits);  // the low `size` bytes are used
  void set_array(std::size_t slot, const ArrayArg& array);
  // Whether the bytes of two array arguments overlap (empty arrays never do).
  bool arrays_overlap() const;
  void** params() { return pointers_.data(); }
  const std::uint8_t* data() const { return reinterpret_cast<const std::uint8_t*>(storage_.data()); }
  std::size_t size() const { return plan_->buffer_size(); }

 private:
  // An array's parameters from its first: meminfo, parent, nitems, itemsize, data, shape..., strides...
  static constexpr std::size_t kNitemsParam = 2, kItemsizeParam = 3, kDataParam = 4, kShapeParam = 5;
  std::uint8_t* at(std::size_t param) {
    return reinterpret_cast<std::uint8_t*>(storage_.data()) + plan_->param_offsets()[param];
  }
  const std::uint8_t* at(std::size_t param) const {
    return reinterpret_cast<const std::uint8_t*>(storage_.data()) + plan_->param_offsets()[param];
  }
  const ArgumentPlan* plan_;
  std::vector<std::uint64_t> storage_;  // 8-byte aligned
  std::vector<void*> pointers_;
};

// An array argument's 5 + 2 * ndim parameters (meminfo, parent, nitems, itemsize, data, shape..., strides...),
// written from `params`, where they lie one after another (each 8 bytes, 8-byte aligned). Inline: the launch
// fast path writes every array argument with it.
inline void write_array_params(std::int64_t* params, int ndim, const ArrayArg& array) {
  params[0] = 0;  // meminfo
  params[1] = 0;  // parent
  params[2] = array.nitems;
  params[3] = array.itemsize;
  params[4] = static_cast<std::int64_t>(array.data);
  for (int d = 0; d < ndim; ++d) {
    params[5 + d] = array.shape[d];
    params[5 + ndim + d] = array.strides[d];
  }
}

// The bytes [first, end) an array argument covers; nullopt for an empty array, which covers none.
struct ByteSpan {
  std::uint64_t first = 0, end = 0;
  bool operator<(const ByteSpan& o) const { return first < o.first || (first == o.first && end < o.end); }
};
std::optional<ByteSpan> array_span(const ArrayArg& array, int ndim);
// Whether two of `spans` share a byte (the order of `spans` is not kept).
bool any_overlap(std::vector<ByteSpan>& spans);

// IEEE binary16 bits of `value`, rounded to nearest even (numpy's float16(v)).
std::uint16_t half_bits(double value);

struct Dim3 {
  std::int64_t x = 1, y = 1, z = 1;
  std::int64_t product() const { return x * y * z; }
};

struct LaunchConfig {
  Dim3 grid, block;
  std::size_t shared_mem = 0;  // dynamic shared memory bytes
  CUstream stream = nullptr;
  bool cooperative = false;
};

// Throws DriverError{LaunchConfig} naming the problem; the message starts
// with CUDA_ERROR_INVALID_VALUE, which is what the driver would have said.
void validate_launch_config(const LaunchConfig& config, const LaunchLimits& limits, const std::string& kernel = {});

// Launches `fn` in its context, which the caller has made current: checks that its module is still loaded and
// the configuration against its limits, raises the kernel's dynamic shared memory limit when asked for more,
// then cuLaunchKernel (or the cooperative launch) with `params`, one pointer per kernel parameter.
void launch_function(Function& fn, const LaunchConfig& config, void** params);
// The same with the parameters as one buffer laid out as ArgumentPlan lays them (`size`: its params_end()), which
// the driver copies whole instead of parameter by parameter (a 16-array kernel has 112). Not for cooperative
// launches (cuLaunchCooperativeKernel takes the pointer array only): std::invalid_argument.
void launch_function(Function& fn, const LaunchConfig& config, void* buffer, std::size_t size);

// Packs arguments by its plan and launches.
class KernelLauncher {
 public:
  explicit KernelLauncher(ArgumentPlan plan) : plan_(std::move(plan)) {}
  const ArgumentPlan& plan() const { return plan_; }
  ArgumentBuffer make_buffer() const { return ArgumentBuffer(plan_); }
  // Validates against the kernel's limits, then cuLaunchKernel (or the
  // cooperative launch) in the kernel's context.
  void launch(Function& fn, const LaunchConfig& config, ArgumentBuffer& args) const;
  // A raw CUfunction in the current context: validated against the current
  // device's limits only (the driver checks the kernel's own).
  void launch(CUfunction fn, const LaunchConfig& config, ArgumentBuffer& args) const;

 private:
  void check_buffer(const ArgumentBuffer& args) const;
  ArgumentPlan plan_;
};

}  // namespace cujit::driver
