// Targets as objects: what the compile driver (cujit/compiler.h) asks of the target a kernel compiles for. The
// driver runs the stages every target shares (frontend, typing, the checks of a typed kernel) and hands the typed
// function to its target, which makes the code: the GPU target (codegen/cuda_kernel_target.cpp) PTX or LTO-IR,
// linked into a cubin per device architecture; the CPU target (hostgen/) code compiled in process. A new target
// is one component implementing KernelTarget, named in the bindings' table of targets.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cujit/codegen.h"
#include "cujit/link.h"
#include "cujit/lowering.h"

namespace cujit::codegen {

// What a target made of one typed function, and its optimised LLVM IR (inspect_llvm): kept by the CPU target, made
// again on first need by the GPU target (printing every module cost a tenth of a small function's compile).
class KernelCode {
 public:
  virtual ~KernelCode() = default;
  virtual Expected<std::string> optimised_ir() const { return llvm_ir; }
  std::string llvm_ir;
};

// Which code a GPU compile makes: decided by the target (PTX, or LTO-IR when the kernel links with LTO), or asked
// for (cuda.compile's output=).
enum class Output { Decide, Ptx, LtoIr };

class KernelTarget {
 public:
  virtual ~KernelTarget() = default;
  virtual const char* name() const = 0;  // "cuda", "cpu": the Python Target's name
  // The options a compile for this target runs with, from those the user's call checked.
  virtual CompileOptions adapt(const CompileOptions& options) const { return options; }
  // What this target refuses in a typed kernel before making code (`describe` names the function in messages).
  virtual std::optional<Error> check(const ir::TypedFunction& /*kernel*/, const std::string& /*describe*/) const {
    return std::nullopt;
  }
  virtual Expected<std::shared_ptr<KernelCode>> emit(const std::shared_ptr<ir::TypedFunction>& typed,
                                                     const CompileOptions& options, Output output) const = 0;
};

// The GPU target.
const KernelTarget& cuda_target();

// How the options of a compile lower a function on `target` (the one mapping every target's code generation
// starts from: fastmath, debug levels, launch bounds, noalias arrays, the exception channel); a target adds its
// own checks after.
lowering::LoweringOptions lowering_options(const CompileOptions& options, const target::Target& target);

// The GPU target's code of one function: PTX or LTO-IR from its one optimised module, and what linking it for a
// device needs (its typed function and options: LTO-IR for another architecture is compiled from them).
class GpuKernelCode final : public KernelCode {
 public:
  GpuKernelCode(std::shared_ptr<ir::TypedFunction> typed, CompileOptions options, bool lto, CompiledCode own);

  const std::shared_ptr<ir::TypedFunction>& typed() const { return typed_; }
  const CompileOptions& options() const { return options_; }
  bool lto() const { return lto_; }  // linked with link-time optimisation: its own code is LTO-IR
  const CompiledCode& own() const { return own_; }
  // Its PTX: the own code, or (an LTO kernel) made from the typed function on first need.
  Expected<std::string> ptx() const;
  // Its optimised LLVM IR, made from the typed function on first need (the same module the compile made).
  Expected<std::string> optimised_ir() const override;
  // Its code as a link input for a device of (major, minor): PTX, or LTO-IR compiled for that device.
  Expected<link::LinkInput> own_input(int major, int minor) const;
  // The cubin for a device of (major, minor): its code linked with every input its calls collected (`inputs`
  // stands for them when given: the disk cache's NVRTC results), the device runtime for cooperative kernels.
  // Throws link::LinkError, NvrtcError, or CompileError (compiling for the device failed).
  // `ptx_output`: the LTO link's optimised PTX instead (inspect_lto_ptx; an LTO kernel's only, else
  // std::invalid_argument).
  link::ProgramLinkResult link(int major, int minor, const std::vector<std::string>& include_dirs,
                               const std::vector<std::shared_ptr<link::LinkInput>>* inputs = nullptr,
                               bool ptx_output = false) const;

 private:
  std::shared_ptr<ir::TypedFunction> typed_;
  CompileOptions options_;
  bool lto_;
  CompiledCode own_;
  mutable std::mutex ptx_mutex_;
  mutable std::optional<std::string> ptx_;
  mutable std::optional<std::string> ir_;  // under ptx_mutex_
};

}  // namespace cujit::codegen
