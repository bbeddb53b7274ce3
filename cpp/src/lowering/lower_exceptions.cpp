// Exceptions (numba's status codes, docs/numba_abi.md: Exceptions): `raise` leaves the function
// with the raise site's code, callers pass a non-zero code on, and a kernel
// compiled with debug=True records the first code and the thread that raised it
// in globals the host reads after the launch. Without debug a raise just ends
// the thread's kernel, as in numba-cuda.
#include <llvm/IR/Constants.h>

#include "function_lowering.h"

namespace cujit::lowering {

using llvm::Value;

namespace {

const char* const kExceptionGlobals[] = {"errcode", "tidx", "ctaidx", "tidy", "ctaidy", "tidz", "ctaidz"};

}  // namespace

void declare_exception_globals(ModuleState& state, const std::string& kernel) {
  auto* i32 = llvm::Type::getInt32Ty(state.module.getContext());
  for (const char* name : kExceptionGlobals) {
    auto* g = new llvm::GlobalVariable(state.module, i32, false, llvm::GlobalValue::ExternalLinkage,
                                       llvm::ConstantInt::get(i32, 0), kernel + "__" + name + "__", nullptr,
                                       llvm::GlobalValue::NotThreadLocal,
                                       /*AddressSpace=*/state.options.target->has_context() ? 0 : 1);
    g->setAlignment(llvm::Align(4));
    state.exception_globals.push_back(g);
  }
}

void FunctionLowering::lower_raise(const ir::Stmt& s) {
  return_status(b_.getInt32(state_.exception_codes.at(&s)));
  // Statements after the raise are unreachable; they still need a block to be lowered into.
  b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "after.raise", llfn_));
}

void FunctionLowering::return_status(Value* code) {
  if (tf_.c_abi) {
    emit_return(nullptr, types::none());
    return;
  }
  if (!tf_.kernel) {
    b_.CreateRet(code);
    return;
  }
  const auto& globals = state_.exception_globals;
  if (globals.empty()) {
    b_.CreateRetVoid();
    return;
  }
  // The first error wins: 0 -> code, then this thread's position.
  auto* first = b_.CreateAtomicCmpXchg(globals[0], b_.getInt32(0), code, llvm::MaybeAlign(4),
                                       llvm::AtomicOrdering::Monotonic, llvm::AtomicOrdering::Monotonic);
  llvm::BasicBlock* record = llvm::BasicBlock::Create(ctx_, "exc.record", llfn_);
  llvm::BasicBlock* done = llvm::BasicBlock::Create(ctx_, "exc.done", llfn_);
  b_.CreateCondBr(b_.CreateExtractValue(first, 1), record, done);
  b_.SetInsertPoint(record);
  for (int i = 0; i < 6; ++i) {  // tid.x, ctaid.x, tid.y, ...
    using cujit::target::SpecialRegister;
    auto reg = i % 2 == 0 ? SpecialRegister::ThreadIdx : SpecialRegister::BlockIdx;
    b_.CreateAlignedStore(target().special_register(b_, context_, reg, i / 2), globals[i + 1], llvm::Align(4));
  }
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
  b_.CreateRetVoid();
}

}  // namespace cujit::lowering
