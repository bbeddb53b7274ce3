// Codegen in stages: lower a typed function, link libdevice, internalize
// everything but the exported symbols, optimise (O3, or a shorter pipeline of
// the same passes for modules without calls); then the one optimised module
// becomes PTX (NVPTX backend) or LTO-IR (emit_ltoir.cpp, through libNVVM).
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <tuple>

#include <llvm/ADT/SmallPtrSet.h>
#include <llvm/ADT/SmallString.h>
#include <llvm/ADT/StringExtras.h>
#include <llvm/IR/AutoUpgrade.h>
#include <llvm/IR/CFG.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Operator.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Support/xxhash.h>
#include <llvm/Transforms/IPO/Internalize.h>
#include <llvm/Transforms/InstCombine/InstCombine.h>
#include <llvm/Transforms/Scalar/ADCE.h>
#include <llvm/Transforms/Scalar/DeadStoreElimination.h>
#include <llvm/Transforms/Scalar/EarlyCSE.h>
#include <llvm/Transforms/Scalar/GVN.h>
#include <llvm/Transforms/Scalar/IndVarSimplify.h>
#include <llvm/Transforms/Scalar/LICM.h>
#include <llvm/Transforms/Scalar/LoopDeletion.h>
#include <llvm/Transforms/Scalar/LoopPassManager.h>
#include <llvm/Transforms/Scalar/LoopRotation.h>
#include <llvm/Transforms/Scalar/LoopUnrollPass.h>
#include <llvm/Transforms/Scalar/SROA.h>
#include <llvm/Transforms/Scalar/SimplifyCFG.h>

#include "cujit/background.h"
#include "cujit/kernel_target.h"
#include "cujit/lowering.h"
#include "cujit/target.h"
#include "cujit/telemetry.h"
#include "emit_ltoir.h"
#include "fatal_error_recovery.h"
#include "fault_injection.h"
#include "target_machine.h"

namespace cujit::codegen {
namespace {

// Whether the function's control flow has a loop (a back edge reachable from the entry).
bool has_cycle(const llvm::Function& f) {
  enum { kNew, kActive, kDone };
  std::map<const llvm::BasicBlock*, int> state;
  std::vector<std::pair<const llvm::BasicBlock*, llvm::const_succ_iterator>> stack;
  stack.emplace_back(&f.getEntryBlock(), llvm::succ_begin(&f.getEntryBlock()));
  state[&f.getEntryBlock()] = kActive;
  while (!stack.empty()) {
    auto& [bb, it] = stack.back();
    if (it == llvm::succ_end(bb)) {
      state[bb] = kDone;
      stack.pop_back();
      continue;
    }
    const llvm::BasicBlock* next = *it++;
    int& st = state[next];
    if (st == kActive) return true;
    if (st == kNew) {
      st = kActive;
      stack.emplace_back(next, llvm::succ_begin(next));
    }
  }
  return false;
}

// What the optimiser can skip for a module. One function that calls nothing
// but intrinsics (most kernels) gets nothing from the inliner or the
// interprocedural passes of O3; without loops it gets nothing from the loop
// passes either.
enum class ModuleShape { kStraightLine, kCallFree, kGeneral };

ModuleShape shape_of(const llvm::Module& module) {
  const llvm::Function* only = nullptr;
  for (const llvm::Function& f : module) {
    if (f.isDeclaration()) {
      if (!f.isIntrinsic()) return ModuleShape::kGeneral;
      continue;
    }
    if (only != nullptr) return ModuleShape::kGeneral;
    only = &f;
  }
  if (only == nullptr) return ModuleShape::kGeneral;
  for (const llvm::BasicBlock& bb : *only)
    for (const llvm::Instruction& inst : bb)
      if (auto* call = llvm::dyn_cast<llvm::CallBase>(&inst))
        if (!llvm::isa<llvm::IntrinsicInst>(call)) return ModuleShape::kGeneral;
  return has_cycle(*only) ? ModuleShape::kCallFree : ModuleShape::kStraightLine;
}

// A kernel's noalias pointer arguments that it only reads from become
// `readonly`: NVPTX then loads through them with ld.global.nc. (O3 infers the
// attribute too; the shorter pipelines do not run its interprocedural passes.)
bool only_read_through(llvm::Argument& arg) {
  std::vector<const llvm::Value*> work{&arg};
  llvm::SmallPtrSet<const llvm::Value*, 16> seen{&arg};
  while (!work.empty()) {
    const llvm::Value* v = work.back();
    work.pop_back();
    for (const llvm::Use& use : v->uses()) {
      const auto* user = llvm::cast<llvm::Instruction>(use.getUser());
      if (llvm::isa<llvm::LoadInst>(user) || llvm::isa<llvm::ICmpInst>(user)) continue;
      bool derived = llvm::isa<llvm::GetElementPtrInst>(user) || llvm::isa<llvm::CastInst>(user) ||
                     llvm::isa<llvm::PHINode>(user) || llvm::isa<llvm::SelectInst>(user);
      if (!derived || llvm::isa<llvm::PtrToIntInst>(user)) return false;  // stored, passed on, written...
      if (seen.insert(user).second) work.push_back(user);
    }
  }
  return true;
}

void mark_read_only_arguments(llvm::Module& module) {
  for (llvm::Function& f : module) {
    if (f.isDeclaration() || f.getCallingConv() != llvm::CallingConv::PTX_Kernel) continue;
    for (llvm::Argument& arg : f.args())
      // (not one already `writeonly`: an unused argument can be both inferred, and the pair is invalid IR)
      if (arg.getType()->isPointerTy() && arg.hasNoAliasAttr() && !arg.onlyReadsMemory() &&
          !arg.hasAttribute(llvm::Attribute::WriteOnly) && only_read_through(arg))
        arg.addAttr(llvm::Attribute::ReadOnly);
  }
}

// Shared arrays leave the optimiser as module-level symbols with names of their
// own, as numba-cuda's PTX declares them (`.visible .shared`), rather than as
// local symbols the NVPTX AsmPrinter demotes into their function: its record of
// demoted variables (keyed by Function) outlives a run, so modules with demotions
// could not reuse the codegen pass manager.
void publish_shared_arrays(llvm::Module& module, const std::string& symbol) {
  std::string prefix = "_cudapy_smem_" + llvm::utohexstr(llvm::xxh3_64bits(symbol), /*LowerCase=*/true) + "_";
  int n = 0;
  for (llvm::GlobalVariable& g : module.globals()) {
    if (g.getAddressSpace() != 3 || !g.hasLocalLinkage()) continue;
    g.setLinkage(llvm::GlobalValue::ExternalLinkage);
    g.setName(prefix + std::to_string(n++));
  }
}

// What compiling for one target and option set needs: the TargetMachine and the
// codegen pass manager, both expensive to build and kept across compiles (see
// PipelinePool); the optimisation pipeline is cheap and built per module.
class Pipeline {
 public:
  Pipeline(const TargetArch& arch, const CompileOptions& options)
      : tm_(create_target_machine(arch, options)), opt_(options.opt) {}

  llvm::TargetMachine& target_machine() { return *tm_; }

  // O3's pipeline holds module state (inliner advice, caches), so it is rebuilt for each module. The shorter
  // pipelines (no inliner, no interprocedural passes) are built once and kept with their analysis managers, whose
  // cached results are cleared after each module: registering every analysis anew was a third of their time.
  void optimize(llvm::Module& module) {
    ModuleShape shape = std::getenv("CUJIT_FULL_PIPELINE") ? ModuleShape::kGeneral : shape_of(module);
    if (opt_ && shape == ModuleShape::kStraightLine)
      optimize_straight_line(module);
    else if (opt_ && shape == ModuleShape::kCallFree)
      optimize_call_free(module);
    else
      optimize_full(module);
  }

  // The analysis managers of a pass-builder pipeline at all four levels, cross-registered.
  struct Analyses {
    llvm::LoopAnalysisManager lam;
    llvm::FunctionAnalysisManager fam;
    llvm::CGSCCAnalysisManager cgam;
    llvm::ModuleAnalysisManager mam;
    explicit Analyses(llvm::PassBuilder& pb) {
      pb.registerModuleAnalyses(mam);
      pb.registerCGSCCAnalyses(cgam);
      pb.registerFunctionAnalyses(fam);
      pb.registerLoopAnalyses(lam);
      pb.crossRegisterProxies(lam, fam, cgam, mam);
    }
  };

  void optimize_full(llvm::Module& module) {
    // NVPTX has no vector units to fill: the loop and SLP vectorizers only cost time.
    llvm::PipelineTuningOptions tuning;
    tuning.LoopVectorization = false;
    tuning.SLPVectorization = false;
    llvm::PassBuilder pb(tm_.get(), tuning);
    Analyses analyses(pb);
    llvm::ModulePassManager mpm = opt_ ? pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3)
                                       : pb.buildO0DefaultPipeline(llvm::OptimizationLevel::O0);
    mpm.run(module, analyses.mam);
  }

  // A pass pipeline kept across modules, with its analysis managers.
  struct KeptPipeline {
    llvm::PassBuilder pb;
    Analyses analyses;
    llvm::ModulePassManager mpm;
    explicit KeptPipeline(llvm::TargetMachine* tm) : pb(tm), analyses(pb) {}
    void run(llvm::Module& module) {
      struct Clear {  // no result outlives its module, even when a pass throws
        Analyses& a;
        ~Clear() {
          a.lam.clear();
          a.fam.clear();
          a.cgam.clear();
          a.mam.clear();
        }
      } clear{analyses};
      mpm.run(module, analyses.mam);
    }
  };

  void optimize_straight_line(llvm::Module& module) {
    if (!straight_line_) {
      straight_line_ = std::make_unique<KeptPipeline>(tm_.get());
      llvm::FunctionPassManager fpm;
      fpm.addPass(llvm::SROAPass(llvm::SROAOptions::ModifyCFG));
      fpm.addPass(llvm::EarlyCSEPass(true));
      fpm.addPass(llvm::InstCombinePass());
      fpm.addPass(llvm::SimplifyCFGPass(llvm::SimplifyCFGOptions().convertSwitchRangeToICmp(true)));
      fpm.addPass(llvm::InstCombinePass());
      fpm.addPass(llvm::ADCEPass());
      straight_line_->mpm.addPass(llvm::createModuleToFunctionPassAdaptor(std::move(fpm)));
    }
    straight_line_->run(module);
  }

  // The function simplification passes of O3 that matter for a kernel without
  // calls, in O3's order: promotion to registers, the loop canonicalisation,
  // hoisting and full unrolling, GVN, then runtime unrolling and clean-up. The
  // PTX is the same as O3's for the typical kernels (and for all but 5 of the
  // 2,500 functions the test suite compiles, before the last InstCombine was
  // dropped) at a third of the time.
  void optimize_call_free(llvm::Module& module) {
    if (!call_free_) {
      call_free_ = std::make_unique<KeptPipeline>(tm_.get());
      build_call_free(call_free_->pb, call_free_->mpm);
    }
    call_free_->run(module);
  }

  static void build_call_free(llvm::PassBuilder& pb, llvm::ModulePassManager& mpm) {
    const auto level = llvm::OptimizationLevel::O3;
    pb.invokePipelineStartEPCallbacks(mpm, level);  // NVPTX's: value ranges of the special registers
    llvm::FunctionPassManager fpm;
    fpm.addPass(llvm::SROAPass(llvm::SROAOptions::ModifyCFG));
    fpm.addPass(llvm::EarlyCSEPass(/*UseMemorySSA=*/true));
    fpm.addPass(llvm::InstCombinePass());
    fpm.addPass(llvm::SimplifyCFGPass(llvm::SimplifyCFGOptions().convertSwitchRangeToICmp(true)));
    llvm::LoopPassManager hoist;
    hoist.addPass(llvm::LoopRotatePass());
    hoist.addPass(llvm::LICMPass(llvm::LICMOptions()));
    fpm.addPass(llvm::createFunctionToLoopPassAdaptor(std::move(hoist), /*UseMemorySSA=*/true));
    llvm::LoopPassManager unroll;
    unroll.addPass(llvm::IndVarSimplifyPass());
    unroll.addPass(llvm::LoopDeletionPass());
    unroll.addPass(llvm::LoopFullUnrollPass(level.getSpeedupLevel()));
    fpm.addPass(llvm::createFunctionToLoopPassAdaptor(std::move(unroll)));
    fpm.addPass(llvm::SROAPass(llvm::SROAOptions::ModifyCFG));
    // GVN without memory dependence analysis: EarlyCSE has already removed the
    // redundant loads its MemorySSA can prove, and in fully unrolled loop bodies
    // the analysis compares every load with every earlier one (a tenth of the
    // tiled matmul's compile). No PTX of the test suite's functions changed.
    fpm.addPass(llvm::GVNPass(llvm::GVNOptions().setMemDep(false)));
    fpm.addPass(llvm::InstCombinePass());
    fpm.addPass(llvm::LoopUnrollPass(llvm::LoopUnrollOptions(level.getSpeedupLevel())));
    fpm.addPass(llvm::DSEPass());
    fpm.addPass(llvm::ADCEPass());
    fpm.addPass(llvm::SimplifyCFGPass(
        llvm::SimplifyCFGOptions().convertSwitchRangeToICmp(true).hoistCommonInsts(true).sinkCommonInsts(true)));
    // No InstCombine after that (O3 has one): it cost 3% of the tiled matmul's
    // compile, and without it 10 of the test suite's functions have one more
    // scalar instruction outside their loops (in runtime unrolling's set-up).
    mpm.addPass(llvm::createModuleToFunctionPassAdaptor(std::move(fpm)));
  }

  // The NVPTX AsmPrinter keeps per-module state that outlives a run: the DWARF
  // writer's, and the shared variables it demotes into functions (keyed by
  // Function pointers of the previous module; see publish_shared_arrays). Such
  // modules get a fresh pass manager.
  static bool needs_fresh_codegen(const llvm::Module& module) {
    if (module.getNamedMetadata("llvm.dbg.cu") != nullptr) return true;
    for (const llvm::GlobalVariable& g : module.globals())
      if (g.getAddressSpace() == 3 && g.hasLocalLinkage()) return true;
    return false;
  }

  std::string emit(llvm::Module& module) {
    if (needs_fresh_codegen(module)) {
      llvm::SmallString<0> out;
      llvm::raw_svector_ostream os(out);
      make_codegen_passes(*tm_, os)->run(module);
      return std::string(out.str());
    }
    // The codegen pass manager writes through its AsmPrinter into `ptx_`, so it is
    // built on first use and kept with the buffer.
    if (!codegen_) {
      stream_ = std::make_unique<llvm::raw_svector_ostream>(ptx_);
      codegen_ = make_codegen_passes(*tm_, *stream_);
    }
    ptx_.clear();
    codegen_->run(module);
    return std::string(ptx_.str());
  }

 private:
  std::unique_ptr<llvm::TargetMachine> tm_;
  bool opt_;
  llvm::SmallString<0> ptx_;
  std::unique_ptr<llvm::raw_svector_ostream> stream_;
  std::unique_ptr<CodegenPasses> codegen_;
  std::unique_ptr<KeptPipeline> straight_line_, call_free_;
};

// Idle pipelines, shared by all threads: a compile leases one (or builds one)
// and gives it back, so a pipeline is never used by two threads at once and a
// warm-up thread can prepare one for the thread that compiles next.
class PipelinePool {
 public:
  using Key = std::tuple<std::string, bool, bool>;
  static Key key_for(const TargetArch& arch, const CompileOptions& o) { return {arch.name(), o.fastmath, o.opt}; }

  std::unique_ptr<Pipeline> acquire(const TargetArch& arch, const CompileOptions& options) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto& idle = idle_[key_for(arch, options)];
      if (!idle.empty()) {
        std::unique_ptr<Pipeline> p = std::move(idle.back());
        idle.pop_back();
        return p;
      }
    }
    return std::make_unique<Pipeline>(arch, options);
  }

  void release(const Key& key, std::unique_ptr<Pipeline> pipeline) {
    std::lock_guard<std::mutex> lock(mutex_);
    idle_[key].push_back(std::move(pipeline));
  }

 private:
  std::mutex mutex_;
  std::map<Key, std::vector<std::unique_ptr<Pipeline>>> idle_;
};

PipelinePool& pipeline_pool() {
  static PipelinePool* pool = new PipelinePool;  // leaked: pipelines must outlive every compiling thread
  return *pool;
}

// A pipeline leased for one compile.
class PipelineLease {
 public:
  PipelineLease(const TargetArch& arch, const CompileOptions& options)
      : key_(PipelinePool::key_for(arch, options)), pipeline_(pipeline_pool().acquire(arch, options)) {}
  ~PipelineLease() {
    if (pipeline_) pipeline_pool().release(key_, std::move(pipeline_));
  }
  Pipeline& operator*() { return *pipeline_; }
  // After a fatal error inside LLVM the pipeline's pass managers may be in the
  // middle of a run: it is leaked, never handed to the next compile.
  void abandon() { (void)pipeline_.release(); }

 private:
  PipelinePool::Key key_;
  std::unique_ptr<Pipeline> pipeline_;
};

}  // namespace

void start_warm_up(const ComputeCapability& cc) {
  static std::atomic<bool> started{false};
  auto arch_or_error = resolve_arch(cc);
  if (!arch_or_error || started.exchange(true)) return;
  TargetArch arch = *arch_or_error;
  background::start([arch] {
    try {
      llvm::LLVMContext ctx;
      llvm::Module module("cujit.warm_up", ctx);
      CompileOptions options;
      PipelineLease lease(arch, options);
      Pipeline& pipeline = *lease;
      module.setTargetTriple(llvm::Triple(kNvptxTriple));
      module.setDataLayout(pipeline.target_machine().createDataLayout());
      auto* i32 = llvm::Type::getInt32Ty(ctx);
      auto* fn = llvm::Function::Create(llvm::FunctionType::get(i32, {i32, i32}, false),
                                        llvm::GlobalValue::ExternalLinkage, "warm_up", module);
      llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", fn));
      b.CreateRet(b.CreateAdd(fn->getArg(0), fn->getArg(1)));
      pipeline.optimize_full(module);
      pipeline.emit(module);
    } catch (...) {
      // Warming up is an optimisation only: a failure here resurfaces on a real compile.
    }
  });
}

namespace {

// A module the lowering built must be valid LLVM IR: anything else is a bug of
// ours that the optimiser or the backend would turn into a crash.
void verify_lowered_module(const llvm::Module& module) {
  std::string problems;
  llvm::raw_string_ostream os(problems);
  if (llvm::verifyModule(module, &os)) {
    if (problems.size() > 2000) problems = problems.substr(0, 2000) + "...";
    fail(ErrorKind::Internal, "the lowered LLVM IR is invalid:\n" + problems);
  }
}

// Lowering, libdevice and optimisation of one module, in LLVM objects the
// caller owns (and leaks if LLVM fails fatally half-way).
void build_optimised_module(const ir::TypedFunction& fn, const CompileOptions& options, Pipeline& pipeline,
                            llvm::Module& module, bool keep_llvm_ir, CompiledCode& out, telemetry::StageClock& timer) {
  module.setTargetTriple(llvm::Triple(kNvptxTriple));
  module.setDataLayout(pipeline.target_machine().createDataLayout());
  module.addModuleFlag(llvm::Module::Override, "nvvm-reflect-ftz", options.fastmath ? 1 : 0);

  const lowering::LoweringOptions lo = lowering_options(options, target::nvptx());
  auto lowered = lowering::lower_module(fn, module, lo);
  if (!lowered) throw CompileError(lowered.error().kind, lowered.error().message, lowered.error().loc);
  plant_after_lowering(module);
  verify_lowered_module(module);

  timer.lap(telemetry::Stage::Lowering);
  if (const char* dump = std::getenv("CUJIT_DUMP_IR")) {  // developer aid: the module before optimisation
    std::error_code ec;
    llvm::raw_fd_ostream os(std::string(dump) + "/" + fn.symbol.substr(0, 60) + ".ll", ec);
    if (!ec) module.print(os, nullptr);
  }
  if (needs_libdevice(module)) link_libdevice(module);
  timer.lap(telemetry::Stage::Libdevice);
  const std::string channel_prefix = fn.symbol + "__";  // a debug kernel's exception globals
  llvm::internalizeModule(module, [&](const llvm::GlobalValue& gv) {
    return gv.getName() == fn.symbol || gv.getName() == fn.env_symbol ||
           (llvm::isa<llvm::GlobalVariable>(gv) && gv.getName().starts_with(channel_prefix));
  });
  pipeline.optimize(module);
  publish_shared_arrays(module, fn.symbol);
  mark_read_only_arguments(module);
  timer.lap(telemetry::Stage::Optimisation);

  out.symbol = fn.symbol;
  if (keep_llvm_ir) {
    llvm::raw_string_ostream os(out.llvm_ir);
    module.print(os, nullptr);
  }
}

Error internal_compiler_error(const ir::TypedFunction& fn, const std::string& what) {
  return Error{ErrorKind::Lowering,
               "cujit failed to compile '" + fn.fn->qualname + "' after typing it: " + what +
                   "\nThis is a bug in cujit, not in your code: please report it with this function and its "
                   "signature (" +
                   fn.sig.str() + ").",
               {}};
}

// Runs the stages up to an optimised module, then `emit` (PTX or LTO-IR),
// all inside one recovery point for LLVM's fatal errors.
template <typename Emit>
Expected<CompiledCode> run_stages(const ir::TypedFunction& fn, const CompileOptions& options, bool keep_llvm_ir,
                                  telemetry::Stage emit_stage, Emit emit) {
  auto arch = resolve_arch(options.cc);
  if (!arch) return arch.error();
  // Owned here, outside the guarded region: after a fatal error in LLVM they are
  // leaked rather than destroyed or reused.
  auto ctx = std::make_unique<llvm::LLVMContext>();
  auto module = std::make_unique<llvm::Module>(fn.fn->module + "." + fn.fn->qualname, *ctx);
  PipelineLease lease(*arch, options);
  CompiledCode out;
  std::optional<Error> error;
  std::optional<std::string> fatal = run_recovering_fatal_errors([&] {
    try {
      telemetry::StageClock timer;
      build_optimised_module(fn, options, *lease, *module, keep_llvm_ir, out, timer);
      emit(*lease, *module, *arch, out);
      timer.lap(emit_stage);
    } catch (CompileError& e) {
      error = e.error();
      if (error->kind == ErrorKind::Internal) *error = internal_compiler_error(fn, error->message);
    } catch (std::exception& e) {
      error = internal_compiler_error(fn, e.what());
    }
  });
  if (fatal) {
    lease.abandon();
    (void)module.release();
    (void)ctx.release();
    return internal_compiler_error(fn, "LLVM reported a fatal error: " + *fatal);
  }
  if (error) return *error;
  return out;
}

}  // namespace

Expected<CompiledCode> compile_to_ptx(const ir::TypedFunction& fn, const CompileOptions& options, bool keep_llvm_ir) {
  return run_stages(fn, options, keep_llvm_ir, telemetry::Stage::PtxEmission,
                    [](Pipeline& pipeline, llvm::Module& module, const TargetArch&, CompiledCode& out) {
                      plant_before_codegen(module);
                      // Launch bounds travel as nvvm.annotations, which both NVVM dialects
                      // read; LLVM 22's NVPTX reads them as function attributes.
                      llvm::UpgradeNVVMAnnotations(module);
                      out.kind = CompiledCode::Kind::Ptx;
                      out.code = pipeline.emit(module);
                    });
}

Expected<CompiledCode> compile_to_ltoir(const ir::TypedFunction& fn, const CompileOptions& options, bool keep_llvm_ir) {
  return run_stages(fn, options, keep_llvm_ir, telemetry::Stage::Nvvm,
                    [&](Pipeline&, llvm::Module& module, const TargetArch& arch, CompiledCode& out) {
                      out.kind = CompiledCode::Kind::LtoIr;
                      out.code = emit_ltoir(module, fn, options, arch);
                    });
}

}  // namespace cujit::codegen
