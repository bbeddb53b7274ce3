// LLVM module -> PTX: link libdevice, internalize everything but the exported
// symbols, run the O3 (or O0) pipeline with NVPTX's callbacks (NVVMReflect),
// and print PTX.
#include <llvm/ADT/SmallString.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Transforms/IPO/Internalize.h>

#include "cujit/lowering.h"
#include "target_machine.h"

namespace cujit::codegen {
namespace {

void optimize(llvm::Module& module, llvm::TargetMachine& tm, bool opt) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(&tm);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm = opt ? pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3)
                                    : pb.buildO0DefaultPipeline(llvm::OptimizationLevel::O0);
  mpm.run(module, mam);
}

std::string print_ptx(llvm::Module& module, llvm::TargetMachine& tm) {
  llvm::SmallString<0> out;
  llvm::raw_svector_ostream os(out);
  llvm::legacy::PassManager pm;
  if (tm.addPassesToEmitFile(pm, os, nullptr, llvm::CodeGenFileType::AssemblyFile))
    fail(ErrorKind::Internal, "the NVPTX backend cannot emit PTX");
  pm.run(module);
  return std::string(out.str());
}

}  // namespace

Expected<CompiledPtx> compile_to_ptx(const ir::TypedFunction& fn, const CompileOptions& options, bool keep_llvm_ir) {
  try {
    auto arch = resolve_arch(options.cc);
    if (!arch) return arch.error();
    llvm::LLVMContext ctx;
    llvm::Module module(fn.fn->module + "." + fn.fn->qualname, ctx);
    auto tm = create_target_machine(*arch, options);
    module.setTargetTriple(kNvptxTriple);
    module.setDataLayout(tm->createDataLayout());
    module.addModuleFlag(llvm::Module::Override, "nvvm-reflect-ftz", options.fastmath ? 1 : 0);

    lowering::LoweringOptions lo;
    lo.fastmath = options.fastmath;
    lo.debug = options.debug ? lowering::DebugLevel::Full
                             : options.lineinfo ? lowering::DebugLevel::LineTables : lowering::DebugLevel::None;
    auto lowered = lowering::lower_module(fn, module, lo);
    if (!lowered) return lowered.error();

    if (needs_libdevice(module)) link_libdevice(module);
    llvm::internalizeModule(module, [&](const llvm::GlobalValue& gv) {
      return gv.getName() == fn.symbol || gv.getName() == fn.env_symbol;
    });
    optimize(module, *tm, options.opt);

    CompiledPtx out;
    out.symbol = fn.symbol;
    if (keep_llvm_ir) {
      llvm::raw_string_ostream os(out.llvm_ir);
      module.print(os, nullptr);
    }
    out.ptx = print_ptx(module, *tm);
    retarget_ptx(out.ptx, *arch);
    return out;
  } catch (CompileError& e) {
    return e.error();
  }
}

}  // namespace cujit::codegen
