// The GPU target of the compile driver (cujit/kernel_target.h): a typed function lowered and optimised once, to
// PTX, or to LTO-IR when the kernel links with link-time optimisation; linked per device architecture by
// nvJitLink with everything its calls collected.
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "cujit/kernel_target.h"
#include "cujit/toolkit.h"

namespace cujit::codegen {
namespace {

std::vector<link::InputKind> input_kinds(const ir::TypedFunction& typed) {
  std::vector<link::InputKind> kinds;
  for (const auto& input : typed.link_inputs) kinds.push_back(input->kind);
  return kinds;
}

// libcudadevrt.a, which cooperative kernels link (grid synchronisation lives there).
std::shared_ptr<link::LinkInput> device_runtime() {
  std::string reason;
  std::string path = toolkit::cudadevrt_path(&reason);
  if (path.empty()) throw link::LinkError(link::LinkError::Kind::BadInput, reason);
  std::ifstream file(path, std::ios::binary);
  if (!file) throw link::LinkError(link::LinkError::Kind::BadInput, "cannot read the CUDA device runtime " + path);
  std::ostringstream data;
  data << file.rdbuf();
  auto input = std::make_shared<link::LinkInput>();
  input->kind = link::InputKind::Library;
  input->data = data.str();
  input->name = path;
  return input;
}

template <typename T>
T value_or_throw(Expected<T> made) {
  if (!made) throw CompileError(made.error().kind, made.error().message, made.error().loc);
  return std::move(*made);
}

class CudaTarget final : public KernelTarget {
 public:
  const char* name() const override { return "cuda"; }

  Expected<std::shared_ptr<KernelCode>> emit(const std::shared_ptr<ir::TypedFunction>& typed,
                                             const CompileOptions& options, Output output) const override {
    bool lto = output == Output::LtoIr;
    if (output == Output::Decide)  // device functions are linked by their callers, with the callers' choice
      lto = options.kernel && link::resolve_lto(options.lto, options.debug, input_kinds(*typed));
    Expected<CompiledCode> own = lto ? compile_to_ltoir(*typed, options) : compile_to_ptx(*typed, options);
    if (!own) return own.error();
    auto code = std::make_shared<GpuKernelCode>(typed, options, lto, std::move(*own));
    return std::shared_ptr<KernelCode>(std::move(code));
  }
};

}  // namespace

const KernelTarget& cuda_target() {
  static const CudaTarget target;
  return target;
}

lowering::LoweringOptions lowering_options(const CompileOptions& options, const target::Target& target) {
  lowering::LoweringOptions lo;
  lo.target = &target;
  lo.fastmath = options.fastmath;
  lo.max_threads = options.max_threads;
  lo.min_blocks = options.min_blocks;
  lo.max_cluster = options.max_cluster;
  lo.noalias_arrays = options.noalias_arrays && options.kernel;
  lo.exception_channel = options.debug && options.kernel;
  lo.debug = options.debug      ? lowering::DebugLevel::Full
             : options.lineinfo ? lowering::DebugLevel::LineTables
                                : lowering::DebugLevel::None;
  return lo;
}

GpuKernelCode::GpuKernelCode(std::shared_ptr<ir::TypedFunction> typed, CompileOptions options, bool lto,
                             CompiledCode own)
    : typed_(std::move(typed)), options_(std::move(options)), lto_(lto), own_(std::move(own)) {}

Expected<std::string> GpuKernelCode::optimised_ir() const {
  std::lock_guard<std::mutex> lock(ptx_mutex_);
  if (!ir_) {
    Expected<CompiledCode> made =
        lto_ ? compile_to_ltoir(*typed_, options_, /*keep_llvm_ir=*/true) : compile_to_ptx(*typed_, options_, true);
    if (!made) return made.error();
    ir_ = std::move(made->llvm_ir);
  }
  return *ir_;
}

Expected<std::string> GpuKernelCode::ptx() const {
  if (own_.kind == CompiledCode::Kind::Ptx) return own_.code;
  std::lock_guard<std::mutex> lock(ptx_mutex_);
  if (!ptx_) {
    Expected<CompiledCode> made = compile_to_ptx(*typed_, options_);
    if (!made) return made.error();
    ptx_ = std::move(made->code);
  }
  return *ptx_;
}

Expected<link::LinkInput> GpuKernelCode::own_input(int major, int minor) const {
  link::LinkInput input;
  if (!lto_) {
    Expected<std::string> text = ptx();
    if (!text) return text.error();
    input.kind = link::InputKind::Ptx;
    input.data = std::move(*text);
    input.name = "<cudapy-ptx>";
    return input;
  }
  input.kind = link::InputKind::LtoIr;
  input.name = "<cudapy-ltoir>";
  if (options_.cc.major == major && options_.cc.minor == minor && options_.cc.suffix.empty()) {
    input.data = own_.code;  // the compile's own architecture: its LTO-IR
    return input;
  }
  CompileOptions for_device = options_;
  for_device.cc = ComputeCapability{major, minor, ""};
  if (Expected<TargetArch> arch = resolve_arch(for_device.cc); !arch) return arch.error();
  Expected<CompiledCode> made = compile_to_ltoir(*typed_, for_device);
  if (!made) return made.error();
  input.data = std::move(made->code);
  return input;
}

link::ProgramLinkResult GpuKernelCode::link(int major, int minor, const std::vector<std::string>& include_dirs,
                                            const std::vector<std::shared_ptr<link::LinkInput>>* inputs,
                                            bool ptx_output) const {
  if (ptx_output && !lto_) throw std::invalid_argument("LTO is not enabled: an LTO link's PTX needs jit(lto=True)");
  link::ProgramLink program;
  program.own = value_or_throw(own_input(major, minor));
  program.inputs = inputs != nullptr ? *inputs : typed_->link_inputs;
  if (typed_->cooperative) program.inputs.push_back(device_runtime());
  program.arch = device_arch(major, minor);
  program.lto = lto_;
  program.debug = options_.debug;
  program.lineinfo = options_.lineinfo;
  program.max_registers = options_.max_registers;
  program.include_dirs = include_dirs;
  program.entry = typed_->symbol;
  program.externs = ir::reached_externs(*typed_);
  program.ptx_output = ptx_output;
  return link::link_program(program);
}

}  // namespace cujit::codegen
