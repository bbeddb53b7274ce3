// The compile driver's one entry (cujit/compiler.h): a request in, a compiled kernel (or a located failure) out,
// the stages every target shares run here and the code made by the request's target.
#include "cujit/compiler.h"

namespace cujit::compiler {
namespace {

// The caller's lock given up for as long as it lives.
class Unlocked {
 public:
  explicit Unlocked(Unlocker* u) : u_(u) {
    if (u_ != nullptr) u_->unlock();
  }
  ~Unlocked() {
    if (u_ != nullptr) u_->relock();
  }
  Unlocked(const Unlocked&) = delete;
  Unlocked& operator=(const Unlocked&) = delete;

 private:
  Unlocker* u_;
};

}  // namespace

std::variant<CompiledKernel, KernelFailure> compile_kernel(const KernelRequest& request) {
  const codegen::KernelTarget& target = request.target != nullptr ? *request.target : codegen::cuda_target();
  CompiledKernel out;
  out.options = target.adapt(request.options);
  Expected<std::shared_ptr<ir::TypedFunction>> typed =
      type_function(*request.source, *request.names, *request.callees, request.signature, out.options, request.links);
  if (!typed) return KernelFailure{typed.error(), nullptr, nullptr};
  out.typed = std::move(*typed);
  if (out.options.kernel && request.launchable) {
    if (std::optional<codegen::LocatedError> e = codegen::check_static_shared_memory(*out.typed))
      return KernelFailure{e->error, e->fn, out.typed};
    if (std::optional<Error> refused = target.check(*out.typed, request.describe))
      return KernelFailure{*refused, out.typed->fn.get(), out.typed};
  }
  Expected<std::shared_ptr<codegen::KernelCode>> code = [&] {
    Unlocked unlocked(request.unlocker);
    return target.emit(out.typed, out.options, request.output);
  }();
  if (!code) return KernelFailure{code.error(), out.typed->fn.get(), out.typed};
  out.code = std::move(*code);
  return out;
}

}  // namespace cujit::compiler
