// numpy's fixed-width strings in kernels (numba's CharSeq, S<n>, and UnicodeCharSeq, U<n>): a value is the address
// of its NUL-padded characters (bytes, or UCS-4 code points). len() is the position after the last non-NUL
// character (numpy strips trailing NULs) and an empty one is false; isascii(); comparisons are numpy's, the shorter one
// read as padded with NULs; a store into another width copies what fits and pads with NULs; `in` finds a substring.
// A str or bytes constant used as a value is one too, its characters in constant memory. Typed in typing
// (operator_rules, builtin_calls, infer_types).
#include "function_lowering.h"

namespace cujit::lowering {

using ir::Op;
using llvm::Value;

Value* FunctionLowering::char_at(Value* s, TypeRef t, int64_t i) {
  llvm::Type* ct = b_.getIntNTy(static_cast<unsigned>(8 * types::char_width(t)));
  if (i >= types::char_count(t)) return llvm::ConstantInt::get(ct, 0);  // past its end: the padding
  Value* at = b_.CreateInBoundsGEP(ct, s, b_.getInt64(i));
  return b_.CreateAlignedLoad(ct, at, llvm::Align(types::char_width(t)));
}

Value* FunctionLowering::charseq_length(Value* s, TypeRef t) {
  Value* length = b_.getInt64(0);
  for (int64_t i = 0; i < types::char_count(t); ++i) {
    Value* c = char_at(s, t, i);
    length = b_.CreateSelect(b_.CreateICmpNE(c, llvm::ConstantInt::get(c->getType(), 0)), b_.getInt64(i + 1), length);
  }
  return length;
}

Value* FunctionLowering::charseq_isascii(Value* s, TypeRef t) {
  Value* ascii = b_.getTrue();
  for (int64_t i = 0; i < types::char_count(t); ++i) {
    Value* c = char_at(s, t, i);
    ascii = b_.CreateAnd(ascii, b_.CreateICmpULT(c, llvm::ConstantInt::get(c->getType(), 128)));
  }
  return ascii;
}

Value* FunctionLowering::charseq_compare(Op op, Value* a, Value* b, TypeRef ta, TypeRef tb) {
  const int64_t n = std::max(types::char_count(ta), types::char_count(tb));
  // From the last character to the first: equal so far, and the ordering the first difference decides.
  Value* equal = b_.getTrue();
  Value* less = b_.getFalse();
  for (int64_t i = n - 1; i >= 0; --i) {
    Value* x = char_at(a, ta, i);
    Value* y = char_at(b, tb, i);
    Value* same = b_.CreateICmpEQ(x, y);
    less = b_.CreateSelect(same, less, b_.CreateICmpULT(x, y));
    equal = b_.CreateAnd(equal, same);
  }
  switch (op) {
    case Op::Eq:
      return equal;
    case Op::NotEq:
      return b_.CreateNot(equal);
    case Op::Lt:
      return less;
    case Op::LtE:
      return b_.CreateOr(less, equal);
    case Op::Gt:
      return b_.CreateNot(b_.CreateOr(less, equal));
    default:
      return b_.CreateNot(less);
  }
}

Value* FunctionLowering::charseq_resize(Value* s, TypeRef from, TypeRef to) {
  llvm::AllocaInst* out = entry_alloca(state_.model.storage_type(to), "charseq");
  llvm::Align align(types::char_width(to));
  out->setAlignment(align);
  const int64_t size = types::itemsize(to);
  const int64_t kept = std::min(types::itemsize(from), size);
  b_.CreateMemSet(out, b_.getInt8(0), size, align);
  b_.CreateMemCpy(out, align, s, llvm::Align(types::char_width(from)), kept);
  return out;
}

Value* FunctionLowering::charseq_constant(const ir::GlobalValue& g, TypeRef t) {
  std::vector<uint32_t> chars = ir::string_constant_chars(g);
  chars.resize(static_cast<size_t>(types::char_count(t)), 0);
  llvm::Constant* init;
  if (types::char_width(t) == 1) {
    std::vector<uint8_t> bytes(chars.begin(), chars.end());
    init = llvm::ConstantDataArray::get(ctx_, bytes);
  } else {
    init = llvm::ConstantDataArray::get(ctx_, chars);
  }
  return constant_memory(init, "_cujit_str", types::char_width(t), /*mergeable=*/true);
}

// `needle in haystack`: a loop over the haystack's starting positions (up to its length less the needle's), the
// needle's characters compared at each one (unrolled: a character past the needle's length matches).
Value* FunctionLowering::charseq_contains(Value* needle, Value* haystack, TypeRef tn, TypeRef th) {
  llvm::Type* ct = b_.getIntNTy(static_cast<unsigned>(8 * types::char_width(th)));
  llvm::Align align(types::char_width(th));
  Value* needle_length = charseq_length(needle, tn);
  Value* last = b_.CreateSub(charseq_length(haystack, th), needle_length);
  llvm::BasicBlock* entry = b_.GetInsertBlock();
  llvm::BasicBlock* loop = llvm::BasicBlock::Create(ctx_, "contains.loop", llfn_);
  llvm::BasicBlock* next = llvm::BasicBlock::Create(ctx_, "contains.next", llfn_);
  llvm::BasicBlock* done = llvm::BasicBlock::Create(ctx_, "contains.done", llfn_);
  b_.CreateCondBr(b_.CreateICmpSGE(last, b_.getInt64(0)), loop, done);

  b_.SetInsertPoint(loop);
  llvm::PHINode* start = b_.CreatePHI(b_.getInt64Ty(), 2, "start");
  start->addIncoming(b_.getInt64(0), entry);
  Value* match = b_.getTrue();
  const int64_t limit = types::char_count(th) - 1;
  for (int64_t j = 0; j < std::min(types::char_count(tn), types::char_count(th)); ++j) {
    Value* at = b_.CreateAdd(start, b_.getInt64(j));
    at = b_.CreateSelect(b_.CreateICmpSLT(at, b_.getInt64(limit)), at, b_.getInt64(limit));  // stays inside
    Value* c = b_.CreateAlignedLoad(ct, b_.CreateInBoundsGEP(ct, haystack, at), align);
    Value* same = b_.CreateICmpEQ(c, b_.CreateZExt(char_at(needle, tn, j), ct));
    match = b_.CreateAnd(match, b_.CreateOr(b_.CreateICmpSGE(b_.getInt64(j), needle_length), same));
  }
  llvm::BasicBlock* body_end = b_.GetInsertBlock();
  b_.CreateCondBr(match, done, next);

  b_.SetInsertPoint(next);
  Value* following = b_.CreateAdd(start, b_.getInt64(1));
  start->addIncoming(following, next);
  b_.CreateCondBr(b_.CreateICmpSGT(following, last), done, loop);

  b_.SetInsertPoint(done);
  llvm::PHINode* found = b_.CreatePHI(b_.getInt1Ty(), 3, "contains");
  found->addIncoming(b_.getFalse(), entry);
  found->addIncoming(b_.getTrue(), body_end);
  found->addIncoming(b_.getFalse(), next);
  return found;
}

}  // namespace cujit::lowering
