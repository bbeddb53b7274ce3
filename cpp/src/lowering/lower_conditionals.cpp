// Lowering of `if` / `elif` / `else`. Every branch of a chain joins at one block, and a chain that tests one
// integer variable against integer constants (`if op == 0: ... elif op == 1: ...`) becomes one `switch`:
// lowered as nested conditional branches, a chain of n tests costs LLVM's CFG simplification O(n^2) to fold
// into the switch it would make anyway.
#include <set>

#include <llvm/IR/Constants.h>

#include "function_lowering.h"

namespace cujit::lowering {

namespace {

// The variable and the comparison type of `var == <integer constant>`, or (-1, nullptr).
std::pair<int, TypeRef> integer_case_test(const ir::Expr& test) {
  if (test.kind != ir::ExprKind::Compare || test.ops.size() != 1 || test.ops[0] != ir::Op::Eq) return {-1, nullptr};
  const ir::Expr& lhs = *test.operands[0];
  const ir::Expr& rhs = *test.operands[1];
  if (lhs.kind != ir::ExprKind::Var || rhs.kind != ir::ExprKind::Const || rhs.global.kind != ir::GlobalValue::Kind::Int)
    return {-1, nullptr};
  if (test.operand_types.size() != 2 || test.operand_types[0] != test.operand_types[1]) return {-1, nullptr};
  TypeRef t = test.operand_types[0];
  if (!t->is_integer() || t->is_literal()) return {-1, nullptr};
  return {lhs.var, t};
}

// The `if` statements of an elif chain that test the same variable as `s` does, in order.
std::vector<const ir::Stmt*> switch_chain(const ir::Stmt& s) {
  std::vector<const ir::Stmt*> chain;
  auto [var, type] = integer_case_test(*s.value);
  if (type == nullptr) return chain;
  for (const ir::Stmt* link = &s;;) {
    chain.push_back(link);
    if (link->orelse.size() != 1 || link->orelse.front()->kind != ir::StmtKind::If) break;
    const ir::Stmt* next = link->orelse.front().get();
    auto [next_var, next_type] = integer_case_test(*next->value);
    if (next_var != var || next_type != type) break;
    link = next;
  }
  return chain;
}

constexpr size_t kMinSwitchCases = 3;

}  // namespace

void FunctionLowering::lower_if(const ir::Stmt& s, llvm::BasicBlock* end_bb) {
  std::vector<const ir::Stmt*> chain = switch_chain(s);
  if (chain.size() >= kMinSwitchCases) {
    lower_switch(chain, end_bb);
    return;
  }
  llvm::Value* cond = truth(lower_expr(*s.value), s.value->type);
  auto* then_bb = llvm::BasicBlock::Create(ctx_, "if.then", llfn_);
  auto* else_bb = s.orelse.empty() ? nullptr : llvm::BasicBlock::Create(ctx_, "if.else", llfn_);
  b_.CreateCondBr(cond, then_bb, else_bb ? else_bb : end_bb);
  b_.SetInsertPoint(then_bb);
  lower_block(s.body);
  if (!b_.GetInsertBlock()->getTerminator()) b_.CreateBr(end_bb);
  if (else_bb == nullptr) return;
  b_.SetInsertPoint(else_bb);
  lower_else(s, end_bb);
}

// What follows a test that failed: an `elif` shares the chain's join block instead of nesting its own.
void FunctionLowering::lower_else(const ir::Stmt& s, llvm::BasicBlock* end_bb) {
  if (s.orelse.size() == 1 && s.orelse.front()->kind == ir::StmtKind::If) {
    set_location(s.orelse.front()->loc);
    lower_if(*s.orelse.front(), end_bb);
    return;
  }
  lower_block(s.orelse);
  if (!b_.GetInsertBlock()->getTerminator()) b_.CreateBr(end_bb);
}

void FunctionLowering::lower_switch(const std::vector<const ir::Stmt*>& chain, llvm::BasicBlock* end_bb) {
  const ir::Expr& first = *chain.front()->value;
  TypeRef type = first.operand_types[0];
  llvm::Value* value = lower_as(*first.operands[0], type);
  auto* default_bb = llvm::BasicBlock::Create(ctx_, "switch.default", llfn_);
  llvm::SwitchInst* sw = b_.CreateSwitch(value, default_bb, static_cast<unsigned>(chain.size()));
  std::set<uint64_t> seen;  // a repeated constant's branch is never taken: the first test that holds wins
  for (const ir::Stmt* link : chain) {
    auto* key = llvm::cast<llvm::ConstantInt>(lower_as(*link->value->operands[1], type));
    if (!seen.insert(key->getZExtValue()).second) continue;
    auto* case_bb = llvm::BasicBlock::Create(ctx_, "if.then", llfn_);
    sw->addCase(key, case_bb);
    b_.SetInsertPoint(case_bb);
    set_location(link->loc);
    lower_block(link->body);
    if (!b_.GetInsertBlock()->getTerminator()) b_.CreateBr(end_bb);
  }
  b_.SetInsertPoint(default_bb);
  lower_else(*chain.back(), end_bb);
}

}  // namespace cujit::lowering
