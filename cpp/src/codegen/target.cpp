// Target selection: compute capability -> PTX architecture, and the NVPTX
// TargetMachine. LLVM 22 generates native code for every architecture CUDA 13's
// ptxas accepts, sm_75 to sm_121f, each under the PTX ISA version it needs.
#include <mutex>

#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Target/TargetOptions.h>

#include "cujit/codegen.h"
#include "target_machine.h"

namespace cujit::codegen {

// The PTX ISA version of the code: 8.0 (what sm_90a needs) up to Hopper, as
// before; the first version that has the architecture for the newer ones (LLVM's
// processor table: sm_88 and sm_110 came with PTX 9.0, sm_120 with 8.7, the
// family-specific 'f' targets with 8.8).
int ptx_isa_version(const TargetArch& arch) {
  bool family = arch.suffix == "f";
  switch (arch.arch) {
    case 88:
      return 90;
    case 100:
      return family ? 88 : 86;
    case 103:
      return 88;
    case 110:
      return 90;
    case 120:
      return family ? 88 : 87;
    case 121:
      return 88;
    default:
      return 80;
  }
}

static std::string ptx_feature(const TargetArch& arch) { return "+ptx" + std::to_string(ptx_isa_version(arch)); }

std::unique_ptr<llvm::TargetMachine> create_target_machine(const TargetArch& arch, const CompileOptions& options) {
  static std::once_flag init;
  std::call_once(init, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
    // No loop strength reduction in codegen (an option of LLVM's own, in our private
    // copy of LLVM): on an H200 it made grid-stride loops 9-26% slower than without
    // (0.69-0.98x nvcc -O3 against 0.94-1.08x), for 1.4% on the tiled matmul, and it
    // is a tenth of that kernel's compile time. ptxas strength-reduces after us.
    auto& registered = llvm::cl::getRegisteredOptions();
    if (auto* lsr = registered.lookup("disable-lsr")) static_cast<llvm::cl::opt<bool>*>(lsr)->setValue(true);
    // A loop whose trip count is a division (`while i < n: ... i += stride`, a grid-stride loop written with
    // while) is runtime-unrolled only where computing that count is "cheap": LLVM's default budget of 4 refuses
    // the division nvcc and NVVM pay for (the block-tree sum ran at 0.61x nvcc -O3 on an H200 for that).
    if (auto* budget = registered.lookup("scev-cheap-expansion-budget"))
      static_cast<llvm::cl::opt<unsigned>*>(budget)->setValue(32);
  });
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(llvm::Triple(kNvptxTriple), error);
  if (target == nullptr) fail(ErrorKind::Internal, "LLVM has no NVPTX target: " + error);
  llvm::TargetOptions to;
  to.AllowFPOpFusion = llvm::FPOpFusion::Fast;  // contract a*b+c into fma, like nvcc
  if (options.fastmath) {  // (the approximations themselves follow the instructions' fast-math flags)
    to.NoInfsFPMath = true;
    to.NoNaNsFPMath = true;
    to.NoSignedZerosFPMath = true;
  }
  // Default rather than Aggressive: the latter only swaps codegen's EarlyCSE for two
  // GVN runs, which cost a tenth of the compile and gave no shorter PTX on any kernel
  // of the test suite (Default gave shorter PTX for some, by better block layout).
  auto level = options.opt ? llvm::CodeGenOptLevel::Default : llvm::CodeGenOptLevel::None;
  return std::unique_ptr<llvm::TargetMachine>(target->createTargetMachine(
      llvm::Triple(kNvptxTriple), arch.name(), ptx_feature(arch), to, std::nullopt, std::nullopt, level));
}

}  // namespace cujit::codegen
