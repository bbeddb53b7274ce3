// The host target's compile (cujit/hostgen.h): lowering with the host
// target's hooks, an entry that unpacks a kernelParams array, LLVM's O3 pipeline
// tuned for this CPU, then an object of this machine that ORC's LLJIT loads in
// process (host_object.cpp: the disk cache keeps it, a later process loads it).
#include <cstddef>
#include <set>

#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Transforms/IPO/Internalize.h>
#include <llvm/Transforms/InstCombine/InstCombine.h>
#include <llvm/Transforms/Scalar/InductiveRangeCheckElimination.h>
#include <llvm/Transforms/Scalar/SimplifyCFG.h>

#include "cujit/hostgen.h"
#include "cujit/lowering.h"
#include "cujit/target.h"
#include "host_block_regions.h"
#include "host_interrupts.h"
#include "host_math.h"
#include "host_object.h"
#include "host_print.h"

namespace cujit::hostgen {

HostKernel::HostKernel() = default;
HostKernel::~HostKernel() = default;

namespace {

// void __cujit_host_entry(ptr context, ptr params): loads each parameter of the kernel from params[i].
void add_entry(llvm::Module& module, llvm::Function* kernel) {
  auto& ctx = module.getContext();
  auto* ptr = llvm::PointerType::get(ctx, 0);
  auto* fty = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), {ptr, ptr}, false);
  auto* entry = llvm::Function::Create(fty, llvm::GlobalValue::ExternalLinkage, kHostEntrySymbol, module);
  entry->addFnAttr(llvm::Attribute::NoUnwind);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", entry));
  // The thread starts before its first barrier and syncwarp.
  for (size_t offset :
       {offsetof(target::HostThreadContext, barriers_passed), offsetof(target::HostThreadContext, warp_syncs_passed)})
    b.CreateAlignedStore(b.getInt32(0), b.CreateConstInBoundsGEP1_64(b.getInt8Ty(), entry->getArg(0), offset),
                         llvm::Align(4));
  std::vector<llvm::Value*> args{entry->getArg(0)};
  for (unsigned i = 1; i < kernel->arg_size(); ++i) {
    llvm::Value* slot = b.CreateLoad(ptr, b.CreateConstInBoundsGEP1_64(ptr, entry->getArg(1), i - 1));
    args.push_back(b.CreateLoad(kernel->getArg(i)->getType(), slot));
  }
  b.CreateCall(kernel, args);
  b.CreateRetVoid();
}

// void __cujit_host_block(ptr context, ptr params): every thread of the block `context` describes, through the
// block function host_block_regions.cpp made (its regions loops over the threads). The parameters are loaded
// once; the threads' ids are written into a copy of the context on this frame, which the kernel never lets escape
// (host_target.cpp), so that the optimiser keeps it in registers and can vectorise the loops over x.
void add_block_entry(llvm::Module& module, llvm::Function* block) {
  auto& ctx = module.getContext();
  auto* ptr = llvm::PointerType::get(ctx, 0);
  auto* fty = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), {ptr, ptr}, false);
  auto* entry = llvm::Function::Create(fty, llvm::GlobalValue::ExternalLinkage, kHostBlockEntrySymbol, module);
  entry->addFnAttr(llvm::Attribute::NoUnwind);
  // The kernel reads the registers other than the thread's ids with !invariant.load: true of the context the
  // runtime fills, not of this function's copy, which it writes first (a load the code generator moved above
  // that write would read the stack's garbage). The module's loads lose the mark: the copy's fields are promoted
  // to registers, or read once where it escapes.
  for (llvm::Function& f : module)
    for (llvm::BasicBlock& bb : f)
      for (llvm::Instruction& inst : bb) inst.setMetadata(llvm::LLVMContext::MD_invariant_load, nullptr);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", entry));
  auto* local = b.CreateAlloca(llvm::ArrayType::get(b.getInt8Ty(), sizeof(target::HostThreadContext)));
  local->setAlignment(llvm::Align(alignof(target::HostThreadContext)));
  b.CreateMemCpy(local, llvm::Align(alignof(target::HostThreadContext)), entry->getArg(0),
                 llvm::Align(alignof(target::HostThreadContext)), sizeof(target::HostThreadContext));
  for (size_t offset :
       {offsetof(target::HostThreadContext, barriers_passed), offsetof(target::HostThreadContext, warp_syncs_passed)})
    b.CreateAlignedStore(b.getInt32(0), b.CreateConstInBoundsGEP1_64(b.getInt8Ty(), local, offset), llvm::Align(4));
  std::vector<llvm::Value*> args{local};
  for (unsigned i = 1; i < block->arg_size(); ++i) {
    llvm::Value* slot = b.CreateLoad(ptr, b.CreateConstInBoundsGEP1_64(ptr, entry->getArg(1), i - 1));
    args.push_back(b.CreateLoad(block->getArg(i)->getType(), slot));
  }
  b.CreateCall(block, args)->addFnAttr(llvm::Attribute::AlwaysInline);
  b.CreateRetVoid();
}

// Whether a block's threads may run as loops (host_block_regions.h decides the rest): the kernel reaches no spin
// point (atomics and fences, where a thread may wait for another) and records no debug checks of shared memory.
bool may_run_as_loops(const llvm::Module& module, bool debug) {
  if (debug) return false;
  const llvm::Function* spin = module.getFunction(target::kHostSpinPointFunction);
  return spin == nullptr || spin->use_empty();
}

// The functions the module calls that nothing defines: neither the host's libdevice (host_math.h) nor LLVM
// (NVVM intrinsics, device runtime functions).
std::set<std::string> unresolved_calls(const llvm::Module& module) {
  std::set<std::string> names;
  for (const llvm::Function& f : module)
    if (f.isDeclaration() && !f.use_empty() && (!f.isIntrinsic() || f.getName().starts_with("llvm.nvvm.")) &&
        !is_host_math(f.getName()) && f.getName() != target::kHostIndexErrorFunction &&
        f.getName() != target::kHostSharedAccessFunction && f.getName() != kHostPrintFunction)
      names.insert(f.getName().str());
  return names;
}

// InstCombine joins the checks of two indices against one power of two (a 16 x 16 shared array's `tx < 16 && ty <
// 16`) into one test of their bits, `(tx | ty) < 16`, which neither loop unswitching (for the index invariant in a
// loop) nor IRCE (for the loop's own) can read. After each InstCombine, such a test becomes the two comparisons
// again, joined by `and`, which both take apart.
struct SplitJoinedRangeChecks : llvm::PassInfoMixin<SplitJoinedRangeChecks> {
  llvm::PreservedAnalyses run(llvm::Function& f, llvm::FunctionAnalysisManager&) {
    bool changed = false;
    for (llvm::BasicBlock& block : f)
      for (llvm::Instruction& inst : llvm::make_early_inc_range(block)) {
        auto* cmp = llvm::dyn_cast<llvm::ICmpInst>(&inst);
        auto* bound = cmp != nullptr ? llvm::dyn_cast<llvm::ConstantInt>(cmp->getOperand(1)) : nullptr;
        auto* joined = cmp != nullptr ? llvm::dyn_cast<llvm::BinaryOperator>(cmp->getOperand(0)) : nullptr;
        if (bound == nullptr || joined == nullptr || joined->getOpcode() != llvm::Instruction::Or ||
            cmp->getPredicate() != llvm::ICmpInst::ICMP_ULT || !bound->getValue().isPowerOf2())
          continue;
        llvm::IRBuilder<> b(cmp);
        llvm::Value* both =
            b.CreateAnd(b.CreateICmpULT(joined->getOperand(0), bound), b.CreateICmpULT(joined->getOperand(1), bound));
        cmp->replaceAllUsesWith(both);
        cmp->eraseFromParent();
        changed = true;
      }
    return changed ? llvm::PreservedAnalyses::none() : llvm::PreservedAnalyses::all();
  }
};

void optimise(llvm::Module& module, llvm::TargetMachine& tm, bool opt) {
  llvm::PassBuilder pb(&tm);
  // Before the vectoriser: a loop over a block's threads whose body tests `i < n` or checks bounds on an index
  // affine in the thread's id is split so that its main part runs without the tests, and the tests' blocks and
  // what chose between their paths (a checked access's address) fold away there, so that the vectoriser takes it.
  pb.registerPeepholeEPCallback(
      [](llvm::FunctionPassManager& fpm, llvm::OptimizationLevel) { fpm.addPass(SplitJoinedRangeChecks()); });
  pb.registerVectorizerStartEPCallback([](llvm::FunctionPassManager& fpm, llvm::OptimizationLevel) {
    fpm.addPass(llvm::IRCEPass());
    fpm.addPass(llvm::SimplifyCFGPass());
    fpm.addPass(llvm::InstCombinePass());
  });
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm = opt ? pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3)
                                    : pb.buildO0DefaultPipeline(llvm::OptimizationLevel::O0);
  mpm.run(module, mam);
}

Expected<std::shared_ptr<HostKernel>> compile(const ir::TypedFunction& fn, const CompileOptions& options,
                                              bool bounds_check) {
  auto jtmb = host_machine_builder(options.opt);
  if (!jtmb) return jtmb.error();
  auto tm = jtmb->createTargetMachine();
  if (!tm) return jit_error("creating the target machine", tm.takeError());

  auto ctx = std::make_unique<llvm::LLVMContext>();
  auto module = std::make_unique<llvm::Module>(fn.fn->module + "." + fn.fn->qualname, *ctx);
  module->setTargetTriple((*tm)->getTargetTriple());
  module->setDataLayout((*tm)->createDataLayout());

  lowering::LoweringOptions lo = codegen::lowering_options(options, target::host());  // as every target's
  lo.bounds_check = bounds_check;
  lo.shared_checks = options.debug;  // debug=True: shared memory's uninitialised reads and races
  auto lowered = lowering::lower_module(fn, *module, lo);
  if (!lowered) return lowered.error();
  std::set<std::string> missing = unresolved_calls(*module);
  if (!missing.empty()) {
    std::string names;
    for (const auto& n : missing) names += (names.empty() ? "" : ", ") + n;
    return Error{ErrorKind::NotImplemented,
                 "kernel '" + fn.fn->qualname + "' calls functions the CPU target does not have yet: " + names,
                 {}};
  }
  add_entry(*module, *lowered);
  uint64_t block_thread_bytes = 0;
  int blocks_axis = 0;
  llvm::Function* block = may_run_as_loops(*module, options.debug)
                              ? make_block_regions(**lowered, block_thread_bytes, blocks_axis)
                              : nullptr;
  if (block != nullptr) add_block_entry(*module, block);
  define_inline_math(*module);
  describe_host_math_calls(*module);
  bool uses_barrier = module->getNamedMetadata(target::kHostBarrierMetadata) != nullptr;
  const std::string exception_prefix = fn.symbol + "__";  // a debug kernel's <symbol>__errcode__, __tidx__...
  llvm::internalizeModule(*module, [&](const llvm::GlobalValue& gv) {
    return gv.getName() == kHostEntrySymbol || gv.getName() == kHostBlockEntrySymbol ||
           gv.getName() == target::kHostSharedBytesSymbol || gv.getName() == target::kHostIndexErrorSymbol ||
           gv.getName() == target::kHostSharedChecksSymbol ||
           (llvm::isa<llvm::GlobalVariable>(gv) && gv.getName().starts_with(exception_prefix));
  });
  optimise(*module, **tm, options.opt);
  add_interrupt_polls(*module);

  HostFacts facts{static_frame_bytes(*module, kHostEntrySymbol), block_thread_bytes, uses_barrier, blocks_axis};
  std::string llvm_ir;
  {
    llvm::raw_string_ostream os(llvm_ir);
    module->print(os, nullptr);
  }
  Expected<std::string> object = emit_object(*module, **tm, facts);
  if (!object) return object.error();
  auto kernel = load_object(std::move(*object), fn.symbol, fn.fn->qualname);
  if (kernel) (*kernel)->llvm_ir = std::move(llvm_ir);
  return kernel;
}

}  // namespace

Expected<std::shared_ptr<HostKernel>> load_host_kernel(std::string object, const std::string& symbol,
                                                       const std::string& qualname) {
  try {
    return load_object(std::move(object), symbol, qualname);
  } catch (CompileError& e) {
    return e.error();
  }
}

Expected<std::shared_ptr<HostKernel>> compile_for_host(const ir::TypedFunction& fn, const CompileOptions& options,
                                                       bool bounds_check) {
  try {
    return compile(fn, options, bounds_check);
  } catch (CompileError& e) {
    return e.error();
  }
}

namespace {

class HostTarget final : public codegen::KernelTarget {
 public:
  const char* name() const override { return "cpu"; }

  CompileOptions adapt(const CompileOptions& options) const override {
    CompileOptions out = options;
    out.noalias_arrays = false;
    return out;
  }

  std::optional<Error> check(const ir::TypedFunction& kernel, const std::string& describe) const override {
    if (kernel.link_inputs.empty()) return std::nullopt;
    std::string names;
    for (const auto& item : kernel.link_inputs)
      names += (names.empty() ? "'" : ", '") + item->name + "' (" + link::input_kind_name(item->kind) + ")";
    return Error{ErrorKind::NotImplemented,
                 describe + " links " + names +
                     ": linked code (PTX, cubin, LTO-IR, CUDA C++) is GPU code and cannot run on the CPU target (a "
                     ".cu item may be compiled for the host later; see docs/cpu_target.md)",
                 {}};
  }

  Expected<std::shared_ptr<codegen::KernelCode>> emit(const std::shared_ptr<ir::TypedFunction>& typed,
                                                      const CompileOptions& options,
                                                      codegen::Output /*output*/) const override {
    Expected<std::shared_ptr<HostKernel>> kernel =
        compile_for_host(*typed, options, options.boundscheck.value_or(true));
    if (!kernel) return kernel.error();
    return std::shared_ptr<codegen::KernelCode>(std::move(*kernel));
  }
};

}  // namespace

const codegen::KernelTarget& host_target() {
  static const HostTarget target;
  return target;
}

}  // namespace cujit::hostgen
