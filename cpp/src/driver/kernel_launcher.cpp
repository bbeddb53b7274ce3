// Kernel launches: the argument plan (numba's flattened kernel ABI, spec
// §2.13 and §3.5), packing into one aligned buffer, launch-configuration
// checks with messages that name the problem, and cuLaunchKernel.
#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "driver_api.h"

namespace cujit::driver {
namespace {

[[noreturn]] void bad_argument(const std::string& message) { throw DriverError(DriverErrorKind::Argument, message); }

std::size_t align_up(std::size_t offset, std::size_t alignment) {
  return (offset + alignment - 1) / alignment * alignment;
}

std::string dims_text(const Dim3& d) {
  return "(" + std::to_string(d.x) + ", " + std::to_string(d.y) + ", " + std::to_string(d.z) + ")";
}

}  // namespace

// ---- plan and buffer ------------------------------------------------------

ArgSlot ArgSlot::make_scalar(ScalarKind kind, int size) {
  ArgSlot s;
  s.kind = Kind::Scalar;
  s.scalar = kind;
  s.size = size;
  return s;
}

ArgSlot ArgSlot::make_array(int ndim) {
  ArgSlot s;
  s.kind = Kind::Array;
  s.size = 8;
  s.ndim = ndim;
  return s;
}

ArgumentPlan::ArgumentPlan(std::vector<ArgSlot> slots) : slots_(std::move(slots)) {
  std::size_t offset = 0;
  auto add_param = [&](std::size_t size) {
    offset = align_up(offset, size);
    param_offsets_.push_back(offset);
    param_sizes_.push_back(size);
    offset += size;
  };
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    const ArgSlot& s = slots_[i];
    first_param_.push_back(param_offsets_.size());
    if (s.kind == ArgSlot::Kind::Array) {
      if (s.ndim < 0 || s.ndim > 32)
        bad_argument("argument slot " + std::to_string(i) + ": an array has 0 to 32 dimensions, not " +
                     std::to_string(s.ndim));
      for (int p = 0; p < s.param_count(); ++p) add_param(8);
    } else {
      if (s.size != 1 && s.size != 2 && s.size != 4 && s.size != 8)
        bad_argument("argument slot " + std::to_string(i) + ": a scalar is 1, 2, 4 or 8 bytes, not " +
                     std::to_string(s.size));
      if (s.scalar == ScalarKind::Float && s.size == 1)
        bad_argument("argument slot " + std::to_string(i) + ": there is no 1-byte float");
      add_param(static_cast<std::size_t>(s.size));
    }
  }
  params_end_ = offset;
  buffer_size_ = align_up(offset, 8);
}

ArgumentBuffer::ArgumentBuffer(const ArgumentPlan& plan)
    : plan_(&plan), storage_(plan.buffer_size() / 8, 0), pointers_(plan.param_count()) {
  for (std::size_t p = 0; p < pointers_.size(); ++p) pointers_[p] = at(p);
}

void ArgumentBuffer::set_scalar(std::size_t slot, std::uint64_t bits) {
  const ArgSlot& s = plan_->slots().at(slot);
  if (s.kind != ArgSlot::Kind::Scalar) bad_argument("argument slot " + std::to_string(slot) + " is an array");
  // Kernel parameters are little-endian, as are the hosts CUDA runs on.
  std::memcpy(at(plan_->first_param(slot)), &bits, static_cast<std::size_t>(s.size));
}

void ArgumentBuffer::set_array(std::size_t slot, const ArrayArg& array) {
  const ArgSlot& s = plan_->slots().at(slot);
  if (s.kind != ArgSlot::Kind::Array) bad_argument("argument slot " + std::to_string(slot) + " is a scalar");
  write_array_params(reinterpret_cast<std::int64_t*>(at(plan_->first_param(slot))), s.ndim, array);
}

bool ArgumentBuffer::arrays_overlap() const {
  std::vector<ByteSpan> spans;
  const auto& slots = plan_->slots();
  for (std::size_t slot = 0; slot < slots.size(); ++slot) {
    if (slots[slot].kind != ArgSlot::Kind::Array) continue;
    const auto* params = reinterpret_cast<const std::int64_t*>(at(plan_->first_param(slot)));  // 8-byte aligned
    ArrayArg array;
    array.nitems = params[kNitemsParam];
    array.itemsize = params[kItemsizeParam];
    array.data = static_cast<CUdeviceptr>(params[kDataParam]);
    array.shape = params + kShapeParam;
    array.strides = params + kShapeParam + slots[slot].ndim;
    if (auto span = array_span(array, slots[slot].ndim)) spans.push_back(*span);
  }
  return any_overlap(spans);
}

std::optional<ByteSpan> array_span(const ArrayArg& array, int ndim) {
  if (array.nitems <= 0) return std::nullopt;
  std::int64_t low = 0, high = array.itemsize;
  for (int d = 0; d < ndim; ++d) {
    std::int64_t reach = (array.shape[d] - 1) * array.strides[d];
    (reach < 0 ? low : high) += reach;
  }
  return ByteSpan{array.data + static_cast<std::uint64_t>(low), array.data + static_cast<std::uint64_t>(high)};
}

bool any_overlap(std::vector<ByteSpan>& spans) {
  std::sort(spans.begin(), spans.end());
  for (std::size_t i = 1; i < spans.size(); ++i)
    if (spans[i].first < spans[i - 1].end) return true;
  return false;
}

std::uint16_t half_bits(double value) {
  std::uint64_t bits = 0;
  std::memcpy(&bits, &value, 8);
  const std::uint16_t sign = static_cast<std::uint16_t>((bits >> 48) & 0x8000u);
  const int exp = static_cast<int>((bits >> 52) & 0x7ff);
  const std::uint64_t mant = bits & ((std::uint64_t{1} << 52) - 1);
  if (exp == 0x7ff) {
    if (mant == 0) return sign | 0x7c00u;
    std::uint16_t nan = static_cast<std::uint16_t>(0x7c00u + (mant >> 42));  // keep the payload's top bits...
    if (nan == 0x7c00u) ++nan;                                               // ...but stay a NaN
    return sign | nan;
  }
  // Rounds sig >> shift to nearest, ties to even.
  auto round_shift = [](std::uint64_t sig, int shift) {
    std::uint64_t q = sig >> shift, rem = sig & ((std::uint64_t{1} << shift) - 1),
                  half = std::uint64_t{1} << (shift - 1);
    if (rem > half || (rem == half && (q & 1))) ++q;
    return q;
  };
  const int e = exp - 1023 + 15;  // the binary16 exponent field
  if (e >= 31) return sign | 0x7c00u;
  if (e >= 1) {
    // A carry out of the mantissa moves into the exponent, up to infinity.
    std::uint64_t h = (static_cast<std::uint64_t>(e) << 10) + round_shift(mant, 42);
    return sign | static_cast<std::uint16_t>(h >= 0x7c00u ? 0x7c00u : h);
  }
  const int shift = 1051 - exp;  // value / 2^-24 = sig >> shift
  if (shift > 53) return sign;
  return sign | static_cast<std::uint16_t>(round_shift((std::uint64_t{1} << 52) | mant, shift));
}

// ---- launch configuration -------------------------------------------------

LaunchLimits LaunchLimits::for_device(const DeviceInfo& device) {
  LaunchLimits l;
  for (int i = 0; i < 3; ++i) {
    l.max_grid[i] = device.max_grid_dim[i];
    l.max_block[i] = device.max_block_dim[i];
  }
  l.max_threads_per_block = device.max_threads_per_block;
  l.max_shared_per_block = device.max_shared_memory_per_block_optin;
  return l;
}

LaunchLimits LaunchLimits::for_function(const Function& fn) {
  LaunchLimits l = for_device(fn.context().device());
  if (fn.attributes().max_threads_per_block > 0) l.max_threads_per_block = fn.attributes().max_threads_per_block;
  l.static_shared = fn.attributes().shared_size_bytes;
  return l;
}

void validate_launch_config(const LaunchConfig& config, const LaunchLimits& limits, const std::string& kernel) {
  auto fail = [&](const std::string& what) {
    throw DriverError(DriverErrorKind::LaunchConfig,
                      "CUDA_ERROR_INVALID_VALUE: invalid launch configuration" +
                          (kernel.empty() ? std::string() : " of kernel '" + kernel + "'") + ": " + what,
                      detail::CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "cuLaunchKernel");
  };
  const char* axis[3] = {"x", "y", "z"};
  auto check_dims = [&](const Dim3& d, const std::array<std::int64_t, 3>& max, const char* what) {
    const std::int64_t v[3] = {d.x, d.y, d.z};
    for (int i = 0; i < 3; ++i) {
      if (v[i] < 1)
        fail(std::string(what) + " " + dims_text(d) + " has " + std::to_string(v[i]) + " in " + axis[i] +
             "; every grid and block dimension must be at least 1" + (v[i] == 0 ? " (a launch of zero threads)" : ""));
      if (v[i] > max[i])
        fail(std::string(what) + " " + dims_text(d) + " has " + std::to_string(v[i]) + " in " + axis[i] +
             "; the device allows at most " + std::to_string(max[i]));
    }
  };
  check_dims(config.grid, limits.max_grid, "grid");
  check_dims(config.block, limits.max_block, "block");
  std::int64_t threads = config.block.product();
  if (threads > limits.max_threads_per_block)
    fail(std::to_string(threads) + " threads per block " + dims_text(config.block) + " exceed the limit of " +
         std::to_string(limits.max_threads_per_block) +
         (limits.max_threads_per_block < 1024 ? " for this kernel (set by its register use or launch bounds)" : ""));
  std::int64_t shared = static_cast<std::int64_t>(config.shared_mem) + limits.static_shared;
  if (shared > limits.max_shared_per_block)
    fail(std::to_string(config.shared_mem) + " bytes of dynamic shared memory" +
         (limits.static_shared ? " plus " + std::to_string(limits.static_shared) + " bytes of static shared memory"
                               : std::string()) +
         " exceed the " + std::to_string(limits.max_shared_per_block) + " bytes a block may use");
}

// ---- KernelLauncher -------------------------------------------------------

namespace {

// cuLaunchKernel's `extra` keys for a parameter buffer (cuda.h's CU_LAUNCH_PARAM_*).
void* const kLaunchParamEnd = nullptr;
void* const kLaunchParamBufferPointer = reinterpret_cast<void*>(1);
void* const kLaunchParamBufferSize = reinterpret_cast<void*>(2);

void driver_launch(CUfunction fn, const LaunchConfig& c, void** params, void** extra = nullptr) {
  const detail::DriverApi& a = detail::api();
  auto u = [](std::int64_t v) { return static_cast<unsigned>(v); };
  if (c.cooperative) {
    if (a.cuLaunchCooperativeKernel == nullptr)
      throw DriverError(DriverErrorKind::Support, "the CUDA driver lacks cuLaunchCooperativeKernel");
    CUresult r = a.cuLaunchCooperativeKernel(fn, u(c.grid.x), u(c.grid.y), u(c.grid.z), u(c.block.x), u(c.block.y),
                                             u(c.block.z), static_cast<unsigned>(c.shared_mem), c.stream, params);
    constexpr CUresult kCooperativeLaunchTooLarge = 720;
    if (r == kCooperativeLaunchTooLarge)
      throw DriverError(DriverErrorKind::LaunchConfig,
                        "a cooperative launch needs every block of the grid resident at once, and the device cannot "
                        "hold a grid of " +
                            std::to_string(c.grid.x * c.grid.y * c.grid.z) + " blocks of " +
                            std::to_string(c.block.x * c.block.y * c.block.z) +
                            " threads: launch at most kernel.max_cooperative_grid_blocks(blockdim) blocks (" +
                            detail::describe(r) + ")",
                        r, "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE", "cuLaunchCooperativeKernel");
    detail::check(r, "cuLaunchCooperativeKernel");
    return;
  }
  detail::check(a.cuLaunchKernel(fn, u(c.grid.x), u(c.grid.y), u(c.grid.z), u(c.block.x), u(c.block.y), u(c.block.z),
                                 static_cast<unsigned>(c.shared_mem), c.stream, params, extra),
                "cuLaunchKernel");
}

}  // namespace

void KernelLauncher::check_buffer(const ArgumentBuffer& args) const {
  if (args.size() != plan_.buffer_size())
    bad_argument("the argument buffer was built for another plan (" + std::to_string(args.size()) +
                 " bytes, the "
                 "plan has " +
                 std::to_string(plan_.buffer_size()) + ")");
}

namespace {

// What every launch of a Function checks first: its module is loaded, the configuration fits it, its dynamic shared
// memory is set.
void prepare_launch(Function& fn, const LaunchConfig& config) {
  if (!fn.module().loaded())
    throw DriverError(DriverErrorKind::Driver,
                      "CUDA_ERROR_INVALID_HANDLE: kernel '" + fn.name() + "' belongs to module '" + fn.module().key() +
                          "', which has been unloaded",
                      400, "CUDA_ERROR_INVALID_HANDLE", "cuLaunchKernel");
  validate_launch_config(config, fn.limits(), fn.name());
  if (config.shared_mem > 0) fn.ensure_dynamic_shared_memory(config.shared_mem);
}

}  // namespace

void launch_function(Function& fn, const LaunchConfig& config, void** params) {
  prepare_launch(fn, config);
  driver_launch(fn.handle(), config, params);
}

void launch_function(Function& fn, const LaunchConfig& config, void* buffer, std::size_t size) {
  if (config.cooperative) throw std::invalid_argument("a cooperative launch takes its parameters as pointers");
  prepare_launch(fn, config);
  if (size == 0) return driver_launch(fn.handle(), config, nullptr);
  void* extra[] = {kLaunchParamBufferPointer, buffer, kLaunchParamBufferSize, &size, kLaunchParamEnd};
  driver_launch(fn.handle(), config, nullptr, extra);
}

void KernelLauncher::launch(Function& fn, const LaunchConfig& config, ArgumentBuffer& args) const {
  check_buffer(args);
  detail::ensure_current(fn.context());
  launch_function(fn, config, args.params());
}

void KernelLauncher::launch(CUfunction fn, const LaunchConfig& config, ArgumentBuffer& args) const {
  check_buffer(args);
  Context& ctx = current_context();
  validate_launch_config(config, LaunchLimits::for_device(ctx.device()));
  driver_launch(fn, config, args.params());
}

}  // namespace cujit::driver
