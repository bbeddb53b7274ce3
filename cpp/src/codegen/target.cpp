// Target selection: compute capability -> PTX architecture, and the NVPTX
// TargetMachine. LLVM 19 generates code up to sm_90a; newer architectures get
// sm_90 code with the .target/.version lines raised (PTX is forward compatible).
#include <mutex>

#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Target/TargetOptions.h>

#include "cujit/codegen.h"
#include "target_machine.h"

namespace cujit::codegen {

const std::vector<int>& supported_archs() {
  static const std::vector<int> archs = {75, 80, 86, 87, 88, 89, 90, 100, 103, 110, 120, 121};
  return archs;
}

Expected<TargetArch> resolve_arch(const ComputeCapability& cc) {
  if (cc.suffix != "" && cc.suffix != "a" && cc.suffix != "f")
    return Error{ErrorKind::ValueError,
                 "Invalid architecture suffix '" + cc.suffix + "' in compute capability (" +
                     std::to_string(cc.major) + ", " + std::to_string(cc.minor) + ", '" + cc.suffix +
                     "'). Expected '', 'a', or 'f'.",
                 {}};
  if (cc.major < 0 || cc.minor < 0 || cc.minor > 9)
    return Error{ErrorKind::ValueError, "Invalid compute capability (" + std::to_string(cc.major) + ", " +
                                            std::to_string(cc.minor) + ")", {}};
  int wanted = cc.major * 10 + cc.minor;
  if ((cc.suffix == "a" && wanted < 90) || (cc.suffix == "f" && wanted < 100))
    return Error{ErrorKind::ValueError,
                 "Invalid architecture suffix '" + cc.suffix + "' for compute capability " + std::to_string(cc.major) +
                     "." + std::to_string(cc.minor) + ": arch-specific ('a') targets start at 9.0, family ('f') "
                     "targets at 10.0",
                 {}};
  const auto& archs = supported_archs();
  if (wanted < archs.front())
    return Error{ErrorKind::CCSupport, "GPU compute capability " + std::to_string(cc.major) + "." +
                                           std::to_string(cc.minor) + " is not supported (requires >=7.5)", {}};
  int found = archs.front();
  for (int a : archs)
    if (a <= wanted) found = a;
  if (!cc.suffix.empty() && found != wanted)
    return Error{ErrorKind::ValueError, "Can't use arch-specific compute_" + std::to_string(wanted) + cc.suffix +
                                            " with closest found compute capability compute_" +
                                            std::to_string(found), {}};
  return TargetArch{found, cc.suffix};
}

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
  });
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(kNvptxTriple, error);
  if (target == nullptr) fail(ErrorKind::Internal, "LLVM has no NVPTX target: " + error);
  llvm::TargetOptions to;
  to.AllowFPOpFusion = llvm::FPOpFusion::Fast;  // contract a*b+c into fma, like nvcc
  if (options.fastmath) {
    to.UnsafeFPMath = true;
    to.NoInfsFPMath = true;
    to.NoNaNsFPMath = true;
    to.NoSignedZerosFPMath = true;
  }
  // Architectures beyond LLVM's table are generated as sm_90 (see retarget_ptx).
  std::string cpu = arch.arch > 90 ? "sm_90" : arch.name();
  // Default rather than Aggressive: the latter only swaps codegen's EarlyCSE for two
  // GVN runs, which cost a tenth of the compile and gave no shorter PTX on any kernel
  // of the test suite (Default gave shorter PTX for some, by better block layout).
  auto level = options.opt ? llvm::CodeGenOptLevel::Default : llvm::CodeGenOptLevel::None;
  return std::unique_ptr<llvm::TargetMachine>(
      target->createTargetMachine(kNvptxTriple, cpu, "+ptx80", to, std::nullopt, std::nullopt, level));
}

// Minimum PTX ISA version for architectures LLVM 19 does not know.
static const char* ptx_version_for(const TargetArch& arch) {
  switch (arch.arch) {
    case 100: return arch.suffix == "f" ? "8.8" : "8.6";
    case 103: return "8.8";
    case 110: return "9.0";
    case 120: return arch.suffix == "f" ? "8.8" : "8.7";
    case 121: return "8.8";
    default: return "8.8";
  }
}

void retarget_ptx(std::string& ptx, const TargetArch& arch) {
  if (arch.arch <= 90) return;
  auto replace_line = [&](const std::string& prefix, const std::string& value) {
    size_t pos = ptx.find(prefix);
    if (pos == std::string::npos) return;
    size_t start = pos + prefix.size();
    size_t end = ptx.find_first_of(",\n", start);
    ptx.replace(start, end - start, value);
  };
  replace_line(".version ", ptx_version_for(arch));
  replace_line(".target ", arch.name());
}

}  // namespace cujit::codegen
