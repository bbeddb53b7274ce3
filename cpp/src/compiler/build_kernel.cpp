// The compile driver with a store of kept kernels (cujit/compiler.h: build_kernel): AOT bundles and the disk cache
// are asked, locked and written in the order decided here; the store, which keys entries by the function's names,
// answers each step.
#include <exception>

#include "cujit/compiler.h"

namespace cujit::compiler {

std::variant<KernelBuild, KernelFailure> build_kernel(const KernelRequest& request, KernelStore& store) {
  KernelBuild build;
  if ((build.kept = store.find())) return build;
  std::shared_ptr<void> lock;
  if (store.keeps()) {
    lock = store.lock();
    if ((build.kept = store.find())) return build;  // kept by another process while this one waited
  }
  std::variant<CompiledKernel, KernelFailure> made = compile_kernel(request);
  if (auto* failure = std::get_if<KernelFailure>(&made)) return std::move(*failure);
  build.compiled = std::move(std::get<CompiledKernel>(made));
  const auto* gpu = dynamic_cast<const codegen::GpuKernelCode*>(build.compiled->code.get());
  if (lock == nullptr || gpu == nullptr) return build;
  try {
    std::vector<std::shared_ptr<link::LinkInput>> inputs = store.link_inputs(*build.compiled);
    const codegen::ComputeCapability& cc = build.compiled->options.cc;
    link::ProgramLinkResult linked = gpu->link(cc.major, cc.minor, request.include_dirs, &inputs);
    store.keep(*build.compiled, linked.cubin);
    build.image = std::move(linked.cubin);
    build.nvrtc_logs = std::move(linked.nvrtc_logs);
  } catch (const std::exception& e) {  // not kept: the first launch links again and raises it there
    build.not_kept = e.what();
  }
  return build;
}

}  // namespace cujit::compiler
