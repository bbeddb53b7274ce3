// Lowering of a function body: variables bound once as SSA values, the others
// as entry-block allocas (SROA turns them into SSA), structured control flow,
// range loops with a trip count (no overflow, no division for constant steps),
// and debug locations.
#include <functional>

#include <llvm/BinaryFormat/Dwarf.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include "function_lowering.h"

namespace cujit::lowering {

namespace {

void visit_exprs(const ir::Expr* e, const std::function<void(const ir::Expr&)>& f) {
  if (e == nullptr) return;
  f(*e);
  for (const auto& o : e->operands) visit_exprs(o.get(), f);
  for (const auto& kw : e->keywords) visit_exprs(kw.second.get(), f);
}

void visit_stmts(const std::vector<ir::StmtPtr>& block, const std::function<void(const ir::Stmt&)>& f) {
  for (const auto& s : block) {
    f(*s);
    visit_stmts(s->body, f);
    visit_stmts(s->orelse, f);
  }
}

// Every expression of a statement (its nested statements excluded).
void visit_stmt_exprs(const ir::Stmt& s, const std::function<void(const ir::Expr&)>& f) {
  visit_exprs(s.target.get(), f);
  visit_exprs(s.value.get(), f);
  for (const auto& a : s.range_args) visit_exprs(a.get(), f);
}

void count_targets(const ir::Expr* target, std::vector<int>& writes) {
  if (target == nullptr) return;
  if (target->kind == ir::ExprKind::Var) ++writes[target->var];
  if (target->kind == ir::ExprKind::Tuple)
    for (const auto& o : target->operands) count_targets(o.get(), writes);
}

}  // namespace

// The variables that hold one value throughout: parameters never assigned, and
// variables assigned once, by a statement at the top level of the body (so the
// assignment dominates everything after it), that nothing before it reads.
std::vector<bool> single_assignment_variables(const ir::Function& fn) {
  std::vector<int> writes(fn.vars.size(), 0);
  visit_stmts(fn.body, [&](const ir::Stmt& s) {
    if (s.kind == ir::StmtKind::Assign || s.kind == ir::StmtKind::ForRange) count_targets(s.target.get(), writes);
  });
  std::vector<bool> single(fn.vars.size(), false);
  for (size_t v = 0; v < fn.vars.size(); ++v) single[v] = fn.vars[v].is_param && writes[v] == 0;
  std::vector<bool> read(fn.vars.size(), false);  // read by a statement seen so far
  auto mark_read = [&](const ir::Expr& e) {
    if (e.kind == ir::ExprKind::Var) read[e.var] = true;
  };
  auto note_reads = [&](const ir::Stmt& s) { visit_stmt_exprs(s, mark_read); };
  for (const auto& top : fn.body) {
    // The value is read before the target is bound (`x = x + 1` reads an x from before).
    visit_exprs(top->value.get(), mark_read);
    if (top->kind == ir::StmtKind::Assign) {
      std::vector<int> mine(fn.vars.size(), 0);
      count_targets(top->target.get(), mine);
      for (size_t v = 0; v < fn.vars.size(); ++v)
        if (mine[v] == 1 && writes[v] == 1 && !fn.vars[v].is_param && !read[v]) single[v] = true;
    }
    note_reads(*top);
    visit_stmts(top->body, note_reads);
    visit_stmts(top->orelse, note_reads);
  }
  return single;
}

using llvm::BasicBlock;
using llvm::Value;

FunctionLowering::FunctionLowering(ModuleState& state, const ir::TypedFunction& fn, bool is_top)
    : state_(state),
      tf_(fn),
      fn_(*fn.fn),
      is_top_(is_top),
      ctx_(state.module.getContext()),
      b_(ctx_),
      non_negative_(*fn.fn) {
  llvm::FastMathFlags fmf;
  if (state.options.fastmath)
    fmf.setFast();
  else
    fmf.setAllowContract(true);  // fuse a*b+c into fma, as nvcc does
  b_.setFastMathFlags(fmf);
}

llvm::Function* FunctionLowering::get_or_lower(ModuleState& state, const ir::TypedFunction& fn, bool is_top) {
  auto it = state.lowered.find(fn.symbol);
  if (it != state.lowered.end()) return it->second;
  return FunctionLowering(state, fn, is_top).lower();
}

void FunctionLowering::unsupported(const std::string& what, const SourceLoc& loc) {
  fail(ErrorKind::Unsupported, "Unsupported: " + what, loc);
}

llvm::AllocaInst* FunctionLowering::entry_alloca(llvm::Type* t, const llvm::Twine& name) {
  BasicBlock& entry = llfn_->getEntryBlock();
  llvm::IRBuilder<> eb(&entry, entry.begin());
  return eb.CreateAlloca(t, nullptr, name);
}

void FunctionLowering::set_location(const SourceLoc& loc) {
  if (subprogram_ == nullptr || !loc.known()) return;
  b_.SetCurrentDebugLocation(llvm::DILocation::get(ctx_, loc.line, loc.col + 1, subprogram_));
}

// Code after return/break/continue is unreachable but still lowered.
void FunctionLowering::ensure_insertion_point() {
  if (b_.GetInsertBlock()->getTerminator() != nullptr) b_.SetInsertPoint(BasicBlock::Create(ctx_, "dead", llfn_));
}

llvm::Function* FunctionLowering::lower() {
  llfn_ = declare();
  state_.lowered[tf_.symbol] = llfn_;
  if (tf_.external) return llfn_;  // defined by linked code
  if (state_.dib) {
    llvm::DIFile* file = state_.dib->createFile(fn_.filename, "");
    auto* sty = state_.dib->createSubroutineType(state_.dib->getOrCreateTypeArray({}));
    subprogram_ = state_.dib->createFunction(file, fn_.qualname, tf_.symbol, file, fn_.first_line, sty, fn_.first_line,
                                             llvm::DINode::FlagZero, llvm::DISubprogram::SPFlagDefinition);
    llfn_->setSubprogram(subprogram_);
  }
  BasicBlock* entry = BasicBlock::Create(ctx_, "entry", llfn_);
  b_.SetInsertPoint(entry);
  var_slots_.assign(fn_.vars.size(), nullptr);
  var_values_.assign(fn_.vars.size(), nullptr);
  std::vector<bool> single = single_assignment_variables(fn_);
  for (size_t v = 0; v < fn_.vars.size(); ++v) {
    if (fn_.vars[v].type == nullptr || single[v]) continue;
    llvm::Type* t = state_.model.value_type(fn_.vars[v].type);
    var_slots_[v] = b_.CreateAlloca(t, nullptr, fn_.vars[v].name);
    // Zero first, as numba's variable slots are: a variable some path leaves unassigned reads as zero on every
    // target, not as LLVM's undef (which the CPU target and the GPU resolve differently).
    b_.CreateStore(llvm::Constant::getNullValue(t), var_slots_[v]);
  }
  if (!fn_.body.empty()) set_location(fn_.body.front()->loc);
  bind_parameters();
  lower_block(fn_.body);
  if (b_.GetInsertBlock()->getTerminator() == nullptr) emit_return(nullptr, types::none());
  return llfn_;
}

void FunctionLowering::lower_block(const std::vector<ir::StmtPtr>& block) {
  for (auto& s : block) {
    ensure_insertion_point();
    lower_stmt(*s);
  }
}

void FunctionLowering::write_variable(int var, Value* value, TypeRef type) {
  Value* v = cast(value, type, fn_.vars[var].type);
  if (var_slots_[var])
    b_.CreateStore(v, var_slots_[var]);
  else
    var_values_[var] = v;
}

void FunctionLowering::store_target(const ir::Expr& target, Value* value, TypeRef type) {
  if (target.kind == ir::ExprKind::Var) {
    write_variable(target.var, value, type);
    return;
  }
  if (target.kind == ir::ExprKind::Tuple) {
    for (size_t i = 0; i < target.operands.size(); ++i)
      store_target(*target.operands[i], b_.CreateExtractValue(value, i), type->element(i));
    return;
  }
  if ((target.kind == ir::ExprKind::Attribute || target.kind == ir::ExprKind::Subscript) &&
      target.operands[0]->type->kind() == TypeKind::Record) {
    store_field(target, value, type);
    return;
  }
  if (target.kind == ir::ExprKind::Subscript) {
    array_setitem(target, value, type);
    return;
  }
  unsupported("assignment to this target", target.loc);
}

void FunctionLowering::lower_stmt(const ir::Stmt& s) {
  set_location(s.loc);
  switch (s.kind) {
    case ir::StmtKind::Assign:
      store_target(*s.target, lower_expr(*s.value), s.value->type);
      break;
    case ir::StmtKind::ExprStmt:
      lower_expr(*s.value);
      break;
    case ir::StmtKind::If: {
      BasicBlock* end_bb = BasicBlock::Create(ctx_, "if.end", llfn_);
      lower_if(s, end_bb);
      b_.SetInsertPoint(end_bb);
      break;
    }
    case ir::StmtKind::While: {
      BasicBlock* cond_bb = BasicBlock::Create(ctx_, "while.cond", llfn_);
      BasicBlock* body_bb = BasicBlock::Create(ctx_, "while.body", llfn_);
      BasicBlock* end_bb = BasicBlock::Create(ctx_, "while.end", llfn_);
      BasicBlock* exit_bb = loop_exit(s, end_bb);
      b_.CreateBr(cond_bb);
      b_.SetInsertPoint(cond_bb);
      set_location(s.value->loc);
      b_.CreateCondBr(truth(lower_expr(*s.value), s.value->type), body_bb, exit_bb);
      b_.SetInsertPoint(body_bb);
      loops_.push_back({cond_bb, end_bb});
      lower_block(s.body);
      loops_.pop_back();
      if (!b_.GetInsertBlock()->getTerminator()) b_.CreateBr(cond_bb);
      lower_loop_else(s, exit_bb, end_bb);
      break;
    }
    case ir::StmtKind::ForRange:
      lower_for_range(s);
      break;
    case ir::StmtKind::Break:
      b_.CreateBr(loops_.back().break_to);
      break;
    case ir::StmtKind::Continue:
      b_.CreateBr(loops_.back().continue_to);
      break;
    case ir::StmtKind::Return:
      if (s.value)
        emit_return(lower_expr(*s.value), s.value->type);
      else
        emit_return(nullptr, types::none());
      break;
    case ir::StmtKind::Pass:
      break;
    case ir::StmtKind::Raise:
      lower_raise(s);
      break;
  }
}

BasicBlock* FunctionLowering::loop_exit(const ir::Stmt& s, BasicBlock* end) {
  return s.orelse.empty() ? end : BasicBlock::Create(ctx_, "loop.else", llfn_);
}

// Lowers the else block at `else_bb` (reached only when the loop's test fails, not by break), then
// continues at `end`.
void FunctionLowering::lower_loop_else(const ir::Stmt& s, BasicBlock* else_bb, BasicBlock* end) {
  if (else_bb != end) {
    b_.SetInsertPoint(else_bb);
    lower_block(s.orelse);
    if (!b_.GetInsertBlock()->getTerminator()) b_.CreateBr(end);
  }
  b_.SetInsertPoint(end);
}

// ceil((stop - start) / step) values, computed without overflow.
Value* FunctionLowering::range_length(Value* start, Value* stop, Value* step, TypeRef it, const SourceLoc& step_loc) {
  llvm::Type* ity = state_.model.value_type(it);
  bool is_signed = it->is_signed();
  auto* cstep = llvm::dyn_cast<llvm::ConstantInt>(step);
  auto zero = llvm::ConstantInt::get(ity, 0);
  auto one = llvm::ConstantInt::get(ity, 1);
  // A step known only at run time divides as 1 where it is 0 (a count then not used): a division by zero traps on
  // the CPU target.
  Value* divisor = cstep ? step : b_.CreateSelect(b_.CreateICmpEQ(step, zero), one, step);
  // Number of iterations for a positive (up) or negative (down) step.
  auto up_count = [&]() -> Value* {
    Value* nonempty = is_signed ? b_.CreateICmpSLT(start, stop) : b_.CreateICmpULT(start, stop);
    Value* diff = b_.CreateSub(stop, start);
    Value* n = (cstep && cstep->isOne()) ? diff : b_.CreateAdd(b_.CreateUDiv(b_.CreateSub(diff, one), divisor), one);
    return b_.CreateSelect(nonempty, n, zero);
  };
  auto down_count = [&]() -> Value* {
    Value* nonempty = b_.CreateICmpSGT(start, stop);
    Value* diff = b_.CreateSub(start, stop);
    Value* neg = b_.CreateNeg(divisor);
    Value* n = (cstep && cstep->isMinusOne()) ? diff : b_.CreateAdd(b_.CreateUDiv(b_.CreateSub(diff, one), neg), one);
    return b_.CreateSelect(nonempty, n, zero);
  };
  Value* count;
  if (cstep && (cstep->isZero())) {
    fail(ErrorKind::ValueError, "range() arg 3 must not be zero", step_loc);
  } else if (cstep && (!is_signed || !cstep->isNegative())) {
    count = up_count();
  } else if (cstep) {
    count = down_count();
  } else if (!is_signed) {
    count = b_.CreateSelect(b_.CreateICmpEQ(step, zero), zero, up_count());
  } else {
    Value* positive = b_.CreateICmpSGT(step, zero);
    Value* c = b_.CreateSelect(positive, up_count(), down_count());
    count = b_.CreateSelect(b_.CreateICmpEQ(step, zero), zero, c);
  }
  return count;
}

// for i in range(start, stop, step): iterate `count` times with i = start + k*step.
void FunctionLowering::lower_for_range(const ir::Stmt& s) {
  TypeRef it = s.range_type;
  llvm::Type* ity = state_.model.value_type(it);
  Value* start = llvm::ConstantInt::get(ity, 0);
  Value* step = llvm::ConstantInt::get(ity, 1);
  Value* stop;
  const auto& a = s.range_args;
  if (a.size() == 1) {
    stop = lower_as(*a[0], it);
  } else {
    start = lower_as(*a[0], it);
    stop = lower_as(*a[1], it);
    if (a.size() == 3) step = lower_as(*a[2], it);
  }
  Value* count = range_length(start, stop, step, it, a.size() == 3 ? a[2]->loc : s.loc);
  auto zero = llvm::ConstantInt::get(ity, 0);
  auto one = llvm::ConstantInt::get(ity, 1);

  BasicBlock* pre = b_.GetInsertBlock();
  BasicBlock* cond_bb = BasicBlock::Create(ctx_, "for.cond", llfn_);
  BasicBlock* body_bb = BasicBlock::Create(ctx_, "for.body", llfn_);
  BasicBlock* latch_bb = BasicBlock::Create(ctx_, "for.latch", llfn_);
  BasicBlock* end_bb = BasicBlock::Create(ctx_, "for.end", llfn_);
  BasicBlock* exit_bb = loop_exit(s, end_bb);
  b_.CreateBr(cond_bb);
  b_.SetInsertPoint(cond_bb);
  llvm::PHINode* k = b_.CreatePHI(ity, 2, "for.k");
  k->addIncoming(zero, pre);
  b_.CreateCondBr(b_.CreateICmpULT(k, count), body_bb, exit_bb);
  b_.SetInsertPoint(body_bb);
  Value* index = b_.CreateAdd(start, b_.CreateMul(k, step));
  write_variable(s.target->var, index, it);
  loops_.push_back({latch_bb, end_bb});
  lower_block(s.body);
  loops_.pop_back();
  if (!b_.GetInsertBlock()->getTerminator()) b_.CreateBr(latch_bb);
  b_.SetInsertPoint(latch_bb);
  Value* next = b_.CreateAdd(k, one, "for.next", /*HasNUW=*/true);
  k->addIncoming(next, latch_bb);
  b_.CreateBr(cond_bb);
  lower_loop_else(s, exit_bb, end_bb);
}

Expected<llvm::Function*> lower_module(const ir::TypedFunction& fn, llvm::Module& module,
                                       const LoweringOptions& options) {
  if (options.target == nullptr) return Error{ErrorKind::Internal, "lowering was given no target", {}};
  try {
    ModuleState state(module, options);
    if (options.debug != DebugLevel::None) {
      state.dib = std::make_unique<llvm::DIBuilder>(module);
      auto kind =
          options.debug == DebugLevel::Full ? llvm::DICompileUnit::FullDebug : llvm::DICompileUnit::DebugDirectivesOnly;
      state.cu =
          state.dib->createCompileUnit(llvm::dwarf::DW_LANG_Python, state.dib->createFile(fn.fn->filename, ""), "cujit",
                                       /*isOptimized=*/true, "", 0, "", kind);
      module.addModuleFlag(llvm::Module::Warning, "Debug Info Version", llvm::DEBUG_METADATA_VERSION);
      module.addModuleFlag(llvm::Module::Warning, "Dwarf Version", 4);
    }
    std::vector<ir::ExceptionSite> sites = ir::exception_sites(fn);
    for (size_t i = 0; i < sites.size(); ++i) state.exception_codes[sites[i].stmt] = static_cast<int>(i) + 1;
    if (options.exception_channel && fn.kernel) declare_exception_globals(state, fn.symbol);
    llvm::Function* f = FunctionLowering::get_or_lower(state, fn, true);
    if (state.dib) state.dib->finalize();
    std::string msg;
    llvm::raw_string_ostream os(msg);
    if (llvm::verifyModule(module, &os))
      return Error{ErrorKind::Internal, "cujit produced invalid LLVM IR (a bug in cujit): " + os.str(), {}};
    return f;
  } catch (CompileError& e) {
    return e.error();
  }
}

}  // namespace cujit::lowering
