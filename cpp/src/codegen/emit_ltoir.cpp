// The LTO-IR stage: the optimised module in the NVVM IR dialect libNVVM reads
// for the target (legacy below compute_100, modern from it), a kernel kept
// alive through @llvm.used and its nvvm.annotations, then libNVVM -gen-lto.
#include "emit_ltoir.h"

#include <cstdlib>

#include <llvm/IR/Constants.h>
#include <llvm/IR/Metadata.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Transforms/Utils/ModuleUtils.h>

#include "cujit/nvvm.h"
#include "legacy_nvvm_ir.h"
#include "nvvm_intrinsic_spelling.h"

namespace cujit::codegen {
namespace {

// nvJitLink -lto keeps only what @llvm.used (or a caller) reaches; NVVM finds
// kernels by their annotation.
void keep_kernel(llvm::Module& module, const std::string& symbol) {
  llvm::Function* f = module.getFunction(symbol);
  if (f == nullptr) fail(ErrorKind::Internal, "the kernel '" + symbol + "' is missing from its module");
  llvm::appendToUsed(module, {f});
  llvm::NamedMDNode* annotations = module.getOrInsertNamedMetadata("nvvm.annotations");
  for (llvm::MDNode* node : annotations->operands()) {
    if (node->getNumOperands() >= 2)
      if (auto* md = llvm::dyn_cast_or_null<llvm::ValueAsMetadata>(node->getOperand(0).get()))
        if (md->getValue() == f)
          if (auto* s = llvm::dyn_cast<llvm::MDString>(node->getOperand(1)); s && s->getString() == "kernel") return;
  }
  llvm::LLVMContext& ctx = module.getContext();
  annotations->addOperand(
      llvm::MDNode::get(ctx, {llvm::ValueAsMetadata::get(f), llvm::MDString::get(ctx, "kernel"),
                              llvm::ConstantAsMetadata::get(llvm::ConstantInt::get(llvm::Type::getInt32Ty(ctx), 1))}));
}

// libNVVM checks the module's NVVM IR version against its own.
void set_nvvm_ir_version(llvm::Module& module) {
  std::vector<int> version = link::nvvm_ir_version();
  llvm::LLVMContext& ctx = module.getContext();
  std::vector<llvm::Metadata*> fields;
  for (int v : version)
    fields.push_back(llvm::ConstantAsMetadata::get(llvm::ConstantInt::get(llvm::Type::getInt32Ty(ctx), v)));
  llvm::NamedMDNode* node = module.getOrInsertNamedMetadata("nvvmir.version");
  node->clearOperands();
  node->addOperand(llvm::MDNode::get(ctx, fields));
}

}  // namespace

std::string emit_ltoir(llvm::Module& module, const ir::TypedFunction& fn, const CompileOptions& options,
                       const TargetArch& arch) {
  if (fn.kernel) keep_kernel(module, fn.symbol);
  std::string text;
  spell_intrinsics_for_nvvm(module, /*legacy=*/arch.arch < 100);
  if (arch.arch >= 100) {
    // The modern dialect's data layout, spelled as its code generator (inside nvJitLink) checks it.
    module.setDataLayout(
        "e-p:64:64:64-p6:32:32:32-i1:8:8-i8:8:8-i16:16:16-i32:32:32-i64:64:64-i128:128:128-f32:32:32-f64:64:64-"
        "f128:128:128-v16:16:16-v32:32:32-v64:64:64-v128:128:128-n16:32:64-a:8:8");
    set_nvvm_ir_version(module);
    llvm::raw_string_ostream os(text);
    module.print(os, nullptr);
  } else {
    Expected<std::string> legacy = write_legacy_nvvm_ir(module);
    if (!legacy) throw CompileError(legacy.error().kind, legacy.error().message);
    text = std::move(*legacy);
  }
  if (const char* dump = std::getenv("CUJIT_DUMP_IR")) {  // developer aid: the NVVM IR libNVVM is given
    std::error_code ec;
    llvm::raw_fd_ostream os(std::string(dump) + "/" + fn.symbol.substr(0, 60) + ".nvvm.ll", ec);
    if (!ec) os << text;
  }
  std::vector<std::string> nvvm_options{"-arch=compute_" + std::to_string(arch.arch) + arch.suffix, "-gen-lto",
                                        options.opt ? "-opt=3" : "-opt=0"};
  if (options.fastmath) {
    for (const char* o : {"-ftz=1", "-fma=1", "-prec-div=0", "-prec-sqrt=0"}) nvvm_options.push_back(o);
  }
  return link::nvvm_compile(text, fn.symbol, nvvm_options).code;
}

}  // namespace cujit::codegen
