// Internal to codegen: the NVPTX TargetMachine and libdevice linking.
#pragma once

#include <memory>
#include <string>

#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/Target/TargetMachine.h>

#include "cujit/codegen.h"

namespace cujit::codegen {

inline constexpr const char* kNvptxTriple = "nvptx64-nvidia-cuda";

std::unique_ptr<llvm::TargetMachine> create_target_machine(const TargetArch& arch, const CompileOptions& options);

// The codegen passes that print a module as PTX into a stream (codegen_passes.cpp),
// with the list of passes LLVM's pipeline offered and whether each was kept.
class CodegenPasses : public llvm::legacy::PassManager {
 public:
  const std::vector<CodegenPass>& offered() const { return offered_; }

 protected:
  std::vector<CodegenPass> offered_;
};
std::unique_ptr<CodegenPasses> make_codegen_passes(llvm::TargetMachine& tm, llvm::raw_pwrite_stream& out);

// True if the module calls libdevice (__nv_*) functions.
bool needs_libdevice(const llvm::Module& module);
// Links the libdevice functions the module uses (lazily materialised).
void link_libdevice(llvm::Module& module);

}  // namespace cujit::codegen
