// LLVM 22 module -> legacy NVVM IR text (LLVM 7.0.1 syntax, typed pointers), the
// dialect CUDA 13's libNVVM reads for compute_75..compute_90.
//
// Two steps. The module is first rewritten in place, with LLVM 22's own API, into
// instructions LLVM 7 has: constant expressions used by instructions become
// instructions, intrinsics and atomics LLVM 7 lacks are expanded, and debug info
// goes (kernels are in @llvm.used and annotated already: emit_ltoir.cpp's
// keep_kernel does that for both dialects). It is then printed by hand. Typed pointers follow
// one rule: every pointer value is an `i8 addrspace(N)*`, and each memory access,
// address computation or pointer argument of an intrinsic casts it to the type it
// needs right before the use (globals and allocas, typed at birth, are used
// directly when the types agree). Whatever LLVM 7 lacks and can do without -- the
// flags nneg, disjoint, samesign, trunc and GEP nuw/nusw, most attributes, all
// instruction metadata, poison -- is dropped by not being printed.
#include "legacy_nvvm_ir.h"

#include <map>
#include <vector>

#include <llvm/ADT/SmallPtrSet.h>
#include <llvm/ADT/StringExtras.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/DebugInfo.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Operator.h>
#include <llvm/IR/ReplaceConstant.h>
#include <llvm/Support/Format.h>
#include <llvm/Support/raw_ostream.h>

namespace cujit::codegen {
namespace {

using llvm::Constant;
using llvm::Function;
using llvm::Instruction;
using llvm::Type;
using llvm::Value;
namespace Intrinsic = llvm::Intrinsic;

// NVVM IR's 64-bit datalayout, and the IR version CUDA 13's libNVVM reports
// (nvvmIRVersion: 2.0; no debug info is written, so no debug version).
constexpr const char* kDataLayout =
    "e-p:64:64:64-i1:8:8-i8:8:8-i16:16:16-i32:32:32-i64:64:64-i128:128:128-f32:32:32-f64:64:64-"
    "v16:16:16-v32:32:32-v64:64:64-v128:128:128-n16:32:64";
constexpr int kIRVersionMajor = 2;
constexpr int kIRVersionMinor = 0;

template <typename T>
std::string llvm_text(const T& x) {
  std::string s;
  llvm::raw_string_ostream os(s);
  x.print(os);
  os.flush();
  s = llvm::StringRef(s).trim().str();
  return s.size() > 240 ? s.substr(0, 240) + "..." : s;
}

[[noreturn]] void unsupported(const std::string& what) {
  fail(ErrorKind::Internal,
       "LTO-IR for compute_75..compute_90 (the LLVM 7 dialect of libNVVM) has no form for " + what);
}

std::string hex(uint64_t bits, unsigned digits) {
  std::string s;
  llvm::raw_string_ostream(s) << llvm::format_hex_no_prefix(bits, digits, /*Upper=*/true);
  return s;
}

std::string escaped(llvm::StringRef text) {
  std::string s;
  llvm::raw_string_ostream os(s);
  llvm::printEscapedString(text, os);
  os.flush();
  return s;
}

// A name as LLVM's lexer reads it after `@` or `%`: bare when it can be, else quoted.
std::string quoted(llvm::StringRef name) {
  auto plain = [](char c) { return llvm::isAlnum(c) || c == '-' || c == '$' || c == '.' || c == '_'; };
  if (!name.empty() && !llvm::isDigit(name[0]) && llvm::all_of(name, plain)) return name.str();
  return "\"" + escaped(name) + "\"";
}

// ---- 1. In place: what LLVM 7 cannot say, in what it can ---------------------------------------

// Constant expressions used by instructions (addrspacecasts and GEPs of globals)
// become instructions, nested ones too; those in initializers stay (printed typed).
void expand_constant_expressions(llvm::Module& module) {
  std::vector<Constant*> work, exprs;
  for (Function& f : module)
    for (Instruction& inst : llvm::instructions(f))
      for (Value* op : inst.operands())
        if (auto* ce = llvm::dyn_cast<llvm::ConstantExpr>(op)) work.push_back(ce);
  llvm::SmallPtrSet<Constant*, 32> seen;
  while (!work.empty()) {
    Constant* c = work.back();
    work.pop_back();
    if (!seen.insert(c).second) continue;
    exprs.push_back(c);
    for (Value* op : c->operands())
      if (auto* ce = llvm::dyn_cast<llvm::ConstantExpr>(op)) work.push_back(ce);
  }
  if (!exprs.empty()) llvm::convertUsersOfConstantsToInstructions(exprs, nullptr, true, /*IncludeSelf=*/true);
}

// Hints LLVM 7 either lacks or needs no more after optimisation.
bool droppable(Intrinsic::ID id) {
  switch (id) {
    case Intrinsic::lifetime_start:
    case Intrinsic::lifetime_end:
    case Intrinsic::assume:
    case Intrinsic::experimental_noalias_scope_decl:
    case Intrinsic::donothing:
    case Intrinsic::sideeffect:
    case Intrinsic::var_annotation:
    case Intrinsic::pseudoprobe:
      return true;
    default:
      return false;
  }
}

// An integer type as wide as the (vector of) floating-point type `t`.
Type* integer_like(Type* t) {
  Type* i = Type::getIntNTy(t->getContext(), t->getScalarSizeInBits());
  if (auto* v = llvm::dyn_cast<llvm::VectorType>(t)) return llvm::VectorType::get(i, v->getElementCount());
  return i;
}

// LLVM 7's instructions for an intrinsic added after it; nullptr when it stays.
Value* expand_intrinsic(llvm::IntrinsicInst& call, llvm::IRBuilder<>& b) {
  Value* x = call.arg_size() > 0 ? call.getArgOperand(0) : nullptr;
  Value* y = call.arg_size() > 1 ? call.getArgOperand(1) : nullptr;
  Intrinsic::ID id = call.getIntrinsicID();
  Type* t = call.getType();
  auto zero = [&] { return Constant::getNullValue(t); };
  switch (id) {
    case Intrinsic::smax:
      return b.CreateSelect(b.CreateICmpSGT(x, y), x, y);
    case Intrinsic::smin:
      return b.CreateSelect(b.CreateICmpSLT(x, y), x, y);
    case Intrinsic::umax:
      return b.CreateSelect(b.CreateICmpUGT(x, y), x, y);
    case Intrinsic::umin:
      return b.CreateSelect(b.CreateICmpULT(x, y), x, y);
    case Intrinsic::abs:
      return b.CreateSelect(b.CreateICmpSLT(x, zero()), b.CreateNeg(x), x);
    case Intrinsic::uadd_sat: {
      Value* sum = b.CreateAdd(x, y);
      return b.CreateSelect(b.CreateICmpULT(sum, x), Constant::getAllOnesValue(t), sum);
    }
    case Intrinsic::usub_sat:
      return b.CreateSelect(b.CreateICmpUGT(x, y), b.CreateSub(x, y), zero());
    case Intrinsic::sadd_sat:
    case Intrinsic::ssub_sat: {
      // Overflow iff the wrapped result's sign differs from both addends' (x and -y
      // for a difference); with.overflow would do, but LLVM 7 has it for scalars only.
      bool add = id == Intrinsic::sadd_sat;
      Value* r = add ? b.CreateAdd(x, y) : b.CreateSub(x, y);
      Value* overflow =
          b.CreateICmpSLT(b.CreateAnd(b.CreateXor(x, r), add ? b.CreateXor(y, r) : b.CreateXor(x, y)), zero());
      unsigned bits = t->getScalarSizeInBits();
      Value* bound =
          b.CreateSelect(b.CreateICmpSLT(x, zero()), Constant::getIntegerValue(t, llvm::APInt::getSignedMinValue(bits)),
                         Constant::getIntegerValue(t, llvm::APInt::getSignedMaxValue(bits)));
      return b.CreateSelect(overflow, bound, r);
    }
    case Intrinsic::roundeven:
      return b.CreateUnaryIntrinsic(Intrinsic::rint, x);  // default rounding mode
    case Intrinsic::minimum:
    case Intrinsic::maximum: {
      // minnum/maxnum, made NaN-propagating, with -0 < +0: equal operands may be
      // zeros of opposite signs, whose bits OR (minimum) or AND (maximum) right.
      bool min = id == Intrinsic::minimum;
      Value* r = b.CreateBinaryIntrinsic(min ? Intrinsic::minnum : Intrinsic::maxnum, x, y);
      Type* it = integer_like(t);
      Value* xi = b.CreateBitCast(x, it);
      Value* yi = b.CreateBitCast(y, it);
      Value* zeros = b.CreateBitCast(min ? b.CreateOr(xi, yi) : b.CreateAnd(xi, yi), t);
      r = b.CreateSelect(b.CreateFCmpOEQ(x, y), zeros, r);
      return b.CreateSelect(b.CreateFCmpUNO(x, y), b.CreateFAdd(x, y), r);
    }
    case Intrinsic::expect:
      return x;
    case Intrinsic::nvvm_nanosleep: {  // newer than NVVM's LLVM 7: the PTX instruction itself
      auto* fty = llvm::FunctionType::get(b.getVoidTy(), {b.getInt32Ty()}, false);
      return b.CreateCall(llvm::InlineAsm::get(fty, "nanosleep.u32 $0;", "r", /*hasSideEffects=*/true), {x});
    }
    default:
      return nullptr;
  }
}

// The value an atomicrmw stores, from the value it found (`old`).
Value* updated_value(llvm::IRBuilder<>& b, llvm::AtomicRMWInst& rmw, Value* old) {
  using Op = llvm::AtomicRMWInst::BinOp;
  Value* v = rmw.getValOperand();
  Constant* one = llvm::ConstantInt::get(v->getType(), 1);
  Constant* zero = Constant::getNullValue(v->getType());
  switch (rmw.getOperation()) {
    case Op::FAdd:
      return b.CreateFAdd(old, v);
    case Op::FSub:
      return b.CreateFSub(old, v);
    case Op::FMax:
      return b.CreateBinaryIntrinsic(Intrinsic::maxnum, old, v);
    case Op::FMin:
      return b.CreateBinaryIntrinsic(Intrinsic::minnum, old, v);
    case Op::UIncWrap:
      return b.CreateSelect(b.CreateICmpUGE(old, v), zero, b.CreateAdd(old, one));
    case Op::UDecWrap:
      return b.CreateSelect(b.CreateOr(b.CreateICmpEQ(old, zero), b.CreateICmpUGT(old, v)), v, b.CreateSub(old, one));
    case Op::Nand:
      return b.CreateNot(b.CreateAnd(old, v));
    default:
      unsupported(llvm_text(rmw));
  }
}

// atomicrmw -> a compare-and-swap loop on the integer of the value's width, as
// LLVM's AtomicExpand writes it (the first guess is a plain load).
void expand_to_cas_loop(llvm::AtomicRMWInst& rmw) {
  Type* t = rmw.getType();
  if (!t->isIntegerTy() && !t->isFloatingPointTy()) unsupported(llvm_text(rmw));
  llvm::BasicBlock* entry = rmw.getParent();
  llvm::BasicBlock* done = entry->splitBasicBlock(rmw.getIterator(), "atomic.done");
  auto* loop = llvm::BasicBlock::Create(rmw.getContext(), "atomic.loop", entry->getParent(), done);
  entry->getTerminator()->setSuccessor(0, loop);
  llvm::IRBuilder<> b(entry->getTerminator());
  Type* it = b.getIntNTy(t->getPrimitiveSizeInBits());
  Value* ptr = rmw.getPointerOperand();
  Value* first = b.CreateAlignedLoad(it, ptr, rmw.getAlign());
  b.SetInsertPoint(loop);
  llvm::PHINode* seen = b.CreatePHI(it, 2);
  Value* old = b.CreateBitCast(seen, t);
  Value* desired = b.CreateBitCast(updated_value(b, rmw, old), it);
  llvm::AtomicCmpXchgInst* cas = b.CreateAtomicCmpXchg(
      ptr, seen, desired, rmw.getAlign(), rmw.getOrdering(),
      llvm::AtomicCmpXchgInst::getStrongestFailureOrdering(rmw.getOrdering()), rmw.getSyncScopeID());
  cas->setVolatile(rmw.isVolatile());
  seen->addIncoming(first, entry);
  seen->addIncoming(b.CreateExtractValue(cas, 0), loop);
  b.CreateCondBr(b.CreateExtractValue(cas, 1), done, loop);
  rmw.replaceAllUsesWith(old);
  rmw.eraseFromParent();
}

// LLVM 7's atomicrmw takes integers only, and no fadd: float fadd becomes an NVVM
// intrinsic when printed (relaxed, default scope, as NVPTX emits it), float xchg
// goes through an integer, and the other floating-point operations, fadd with
// other orderings, scopes or volatility, uinc/udec_wrap and nand (which libNVVM
// rejects) become CAS loops.
void rewrite_atomic(llvm::AtomicRMWInst& rmw) {
  using Op = llvm::AtomicRMWInst::BinOp;
  Type* t = rmw.getType();
  if (rmw.getOperation() == Op::FAdd && (t->isFloatTy() || t->isDoubleTy()) && !rmw.isVolatile() &&
      rmw.getOrdering() == llvm::AtomicOrdering::Monotonic && rmw.getSyncScopeID() == llvm::SyncScope::System)
    return;
  if (rmw.getOperation() == Op::Xchg && t->isFloatingPointTy()) {
    llvm::IRBuilder<> b(&rmw);
    Type* it = integer_like(t);
    Value* v = b.CreateBitCast(rmw.getValOperand(), it);
    llvm::AtomicRMWInst* x = b.CreateAtomicRMW(Op::Xchg, rmw.getPointerOperand(), v, rmw.getAlign(), rmw.getOrdering(),
                                               rmw.getSyncScopeID());
    x->setVolatile(rmw.isVolatile());
    rmw.replaceAllUsesWith(b.CreateBitCast(x, t));
    rmw.eraseFromParent();
    return;
  }
  Op op = rmw.getOperation();
  if (t->isIntegerTy() && op != Op::UIncWrap && op != Op::UDecWrap && op != Op::Nand) return;
  expand_to_cas_loop(rmw);
}

// NVVM's membar for a sync scope (a membar is a fence.sc); none for singlethread.
void insert_membar(Instruction* before, llvm::SyncScope::ID id) {
  if (id == llvm::SyncScope::SingleThread) return;
  llvm::SmallVector<llvm::StringRef, 8> names;
  before->getContext().getSyncScopeNames(names);
  llvm::StringRef name = id < names.size() ? names[id] : "";
  Intrinsic::ID membar = name.empty()      ? Intrinsic::nvvm_membar_sys
                         : name == "block" ? Intrinsic::nvvm_membar_cta
                                           : Intrinsic::nvvm_membar_gl;  // device, cluster
  llvm::IRBuilder<>(before).CreateIntrinsic(llvm::Type::getVoidTy(before->getContext()), membar, {});
}

// libNVVM takes no fence instruction and no load or store stronger than
// monotonic: fences become membars, and ordered loads and stores monotonic ones
// between membars, as LLVM's fence-based atomic expansion places them.
void rewrite_ordering(Instruction& inst) {
  using llvm::AtomicOrdering;
  if (auto* fence = llvm::dyn_cast<llvm::FenceInst>(&inst)) {
    insert_membar(fence, fence->getSyncScopeID());
    fence->eraseFromParent();
    return;
  }
  auto* load = llvm::dyn_cast<llvm::LoadInst>(&inst);
  auto* store = llvm::dyn_cast<llvm::StoreInst>(&inst);
  AtomicOrdering o = load ? load->getOrdering() : store->getOrdering();
  llvm::SyncScope::ID id = load ? load->getSyncScopeID() : store->getSyncScopeID();
  if (o == AtomicOrdering::NotAtomic || o == AtomicOrdering::Monotonic) return;
  bool seq_cst = o == AtomicOrdering::SequentiallyConsistent;
  if (store ? llvm::isReleaseOrStronger(o) : seq_cst) insert_membar(&inst, id);
  if (load ? llvm::isAcquireOrStronger(o) : seq_cst) insert_membar(inst.getNextNode(), id);
  if (load)
    load->setOrdering(AtomicOrdering::Monotonic);
  else
    store->setOrdering(AtomicOrdering::Monotonic);
}

void rewrite_instructions(llvm::Module& module) {
  std::vector<Instruction*> work;
  for (Function& f : module)
    for (Instruction& inst : llvm::instructions(f))
      if (llvm::isa<llvm::IntrinsicInst, llvm::AtomicRMWInst, llvm::FreezeInst, llvm::FenceInst>(inst) ||
          (llvm::isa<llvm::LoadInst, llvm::StoreInst>(inst) && inst.isAtomic()))
        work.push_back(&inst);
  for (Instruction* inst : work) {
    if (auto* rmw = llvm::dyn_cast<llvm::AtomicRMWInst>(inst)) {
      rewrite_atomic(*rmw);
      continue;
    }
    if (llvm::isa<llvm::FenceInst, llvm::LoadInst, llvm::StoreInst>(inst)) {
      rewrite_ordering(*inst);
      continue;
    }
    Value* replacement = nullptr;
    if (auto* freeze = llvm::dyn_cast<llvm::FreezeInst>(inst)) {
      replacement = freeze->getOperand(0);
    } else {
      auto* call = llvm::cast<llvm::IntrinsicInst>(inst);
      llvm::IRBuilder<> b(call);
      if (!droppable(call->getIntrinsicID()) && (replacement = expand_intrinsic(*call, b)) == nullptr) continue;
    }
    if (replacement != nullptr) inst->replaceAllUsesWith(replacement);
    inst->eraseFromParent();
  }
}

void rewrite_for_llvm7(llvm::Module& module) {
  llvm::StripDebugInfo(module);
  for (llvm::GlobalValue& g : module.global_values())
    if (!g.hasName()) g.setName("__unnamed");
  expand_constant_expressions(module);
  rewrite_instructions(module);
}

// ---- 2. Printing in LLVM 7 syntax ------------------------------------------------------------

// An intrinsic's LLVM 7 name and the pointee type of its pointer parameters: the
// overloaded ones (`.p1` in the name) point to the value they return (atomics,
// ldg: `.p1i32`), all else to i8 (`llvm.memcpy.p0i8.p1i8.i64`).
struct LegacyIntrinsic {
  std::string name;
  Type* pointee;
};

// Generic intrinsics LLVM 7 has with the same operands and libNVVM compiles (all
// llvm.nvvm.* pass: libNVVM knows its own). Not sin, cos, pow, powi, exp*, log*
// or canonicalize: libNVVM 13 rejects some and crashes on others.
bool in_llvm7(Intrinsic::ID id) {
  switch (id) {
    case Intrinsic::memcpy:
    case Intrinsic::memmove:
    case Intrinsic::memset:
    case Intrinsic::sqrt:
    case Intrinsic::fma:
    case Intrinsic::fabs:
    case Intrinsic::minnum:
    case Intrinsic::maxnum:
    case Intrinsic::copysign:
    case Intrinsic::floor:
    case Intrinsic::ceil:
    case Intrinsic::trunc:
    case Intrinsic::rint:
    case Intrinsic::nearbyint:
    case Intrinsic::round:
    case Intrinsic::fmuladd:
    case Intrinsic::bitreverse:
    case Intrinsic::bswap:
    case Intrinsic::ctpop:
    case Intrinsic::ctlz:
    case Intrinsic::cttz:
    case Intrinsic::fshl:
    case Intrinsic::fshr:
    case Intrinsic::sadd_with_overflow:
    case Intrinsic::uadd_with_overflow:
    case Intrinsic::ssub_with_overflow:
    case Intrinsic::usub_with_overflow:
    case Intrinsic::smul_with_overflow:
    case Intrinsic::umul_with_overflow:
    case Intrinsic::trap:
    case Intrinsic::debugtrap:
    case Intrinsic::readcyclecounter:
      return true;
    default:
      return false;
  }
}

std::string mangled(Type* t) {
  if (t->isFloatTy()) return "f32";
  if (t->isDoubleTy()) return "f64";
  if (t->isHalfTy()) return "f16";
  return "i" + std::to_string(t->getIntegerBitWidth());
}

LegacyIntrinsic legacy_intrinsic(Function& f) {
  llvm::StringRef name = f.getName();
  Intrinsic::ID id = f.getIntrinsicID();
  auto is_pointer = [](llvm::StringRef s) {
    return s.size() > 1 && s[0] == 'p' && llvm::all_of(s.drop_front(), llvm::isDigit);
  };
  // An NVVM intrinsic LLVM 22 no longer has (nvvm_intrinsic_spelling.cpp) is its
  // name, up to a pointer suffix.
  llvm::StringRef base;
  if (id == Intrinsic::not_intrinsic) {
    if (!name.starts_with("llvm.nvvm.")) unsupported("the intrinsic " + name.str() + ", unknown to LLVM 22");
    auto [head, last] = name.rsplit('.');
    base = is_pointer(last) ? head : name;
  } else {
    if (!name.starts_with("llvm.nvvm.") && !in_llvm7(id)) unsupported("the intrinsic " + name.str());
    base = Intrinsic::getBaseName(id);
  }
  llvm::SmallVector<llvm::StringRef, 4> suffix;
  name.substr(base.size()).split(suffix, '.', -1, /*KeepEmpty=*/false);
  Type* ret = f.getReturnType();
  Type* pointee = Type::getInt8Ty(f.getContext());
  if (llvm::any_of(suffix, is_pointer) && (ret->isIntegerTy() || ret->isFloatingPointTy())) pointee = ret;
  std::string legacy = base.str();
  for (llvm::StringRef s : suffix) legacy += "." + s.str() + (is_pointer(s) ? mangled(pointee) : "");
  return {legacy, pointee};
}

std::string linkage(llvm::GlobalValue::LinkageTypes l) {
  using G = llvm::GlobalValue;
  switch (l) {
    case G::ExternalLinkage:
      return "";
    case G::PrivateLinkage:
      return "private ";
    case G::InternalLinkage:
      return "internal ";
    case G::AvailableExternallyLinkage:
      return "available_externally ";
    case G::LinkOnceAnyLinkage:
      return "linkonce ";
    case G::LinkOnceODRLinkage:
      return "linkonce_odr ";
    case G::WeakAnyLinkage:
      return "weak ";
    case G::WeakODRLinkage:
      return "weak_odr ";
    case G::CommonLinkage:
      return "common ";
    case G::AppendingLinkage:
      return "appending ";
    case G::ExternalWeakLinkage:
      return "extern_weak ";
  }
  return "";
}

// Linkage and visibility, as the head of a global or function.
std::string global_head(const llvm::GlobalValue& g) {
  std::string s = linkage(g.getLinkage());
  if (g.hasHiddenVisibility()) s += "hidden ";
  if (g.hasProtectedVisibility()) s += "protected ";
  return s;
}

std::string unnamed_addr(const llvm::GlobalValue& g) {
  if (g.hasGlobalUnnamedAddr()) return "unnamed_addr";
  return g.hasAtLeastLocalUnnamedAddr() ? "local_unnamed_addr" : "";
}

std::string fast_math_flags(llvm::FastMathFlags f) {
  if (f.isFast()) return "fast ";
  std::string s;
  if (f.noNaNs()) s += "nnan ";
  if (f.noInfs()) s += "ninf ";
  if (f.noSignedZeros()) s += "nsz ";
  if (f.allowReciprocal()) s += "arcp ";
  if (f.allowContract()) s += "contract ";
  if (f.approxFunc()) s += "afn ";
  if (f.allowReassoc()) s += "reassoc ";
  return s;
}

// Parameter (or return) attributes LLVM 7 has with the same meaning. Those that
// name a pointee type (byval, sret...) would need the typed pointer they describe.
std::string parameter_attributes(llvm::AttributeSet attrs, bool is_return) {
  using A = llvm::Attribute;
  for (A::AttrKind k : {A::ByVal, A::StructRet, A::InAlloca, A::Preallocated, A::ByRef})
    if (attrs.hasAttribute(k)) unsupported("a parameter attribute " + A::getNameFromAttrKind(k).str());
  std::string s;
  for (A::AttrKind k : {A::NoAlias, A::NonNull, A::ZExt, A::SExt})
    if (attrs.hasAttribute(k)) s += A::getNameFromAttrKind(k).str() + " ";
  if (is_return) return s;
  if (llvm::capturesNothing(attrs.getCaptureInfo())) s += "nocapture ";
  // LLVM 22 lets readonly and writeonly meet (no access at all); LLVM 7 says readnone.
  bool reads = !attrs.hasAttribute(A::WriteOnly), writes = !attrs.hasAttribute(A::ReadOnly);
  if (attrs.hasAttribute(A::ReadNone) || (!reads && !writes))
    s += "readnone ";
  else if (!writes)
    s += "readonly ";
  else if (!reads)
    s += "writeonly ";
  if (llvm::MaybeAlign a = attrs.getAlignment()) s += "align " + std::to_string(a->value()) + " ";
  if (uint64_t n = attrs.getDereferenceableBytes()) s += "dereferenceable(" + std::to_string(n) + ") ";
  return s;
}

std::string function_attributes(const Function& f) {
  using A = llvm::Attribute;
  std::string s;
  for (A::AttrKind k : {A::NoUnwind, A::AlwaysInline, A::NoInline, A::Convergent, A::NoReturn})
    if (f.hasFnAttribute(k)) s += " " + A::getNameFromAttrKind(k).str();
  if (f.doesNotAccessMemory())
    s += " readnone";
  else if (f.onlyReadsMemory())
    s += " readonly";
  return s;
}

class LegacyWriter {
 public:
  explicit LegacyWriter(llvm::Module& module) : module_(module), i8_(Type::getInt8Ty(module.getContext())) {}
  std::string write();

 private:
  std::string type(Type* t);
  std::string struct_body(llvm::StructType* t);
  std::string pointer_to(Type* pointee, unsigned space) {
    return type(pointee) + (space ? " addrspace(" + std::to_string(space) + ")" : "") + "*";
  }
  // Constants, pointers as i8 pointers; constant_pointer_to: as pointers to `pointee`.
  std::string constant(Constant* c);
  std::string typed(Constant* c) { return type(c->getType()) + " " + constant(c); }
  std::string float_constant(const llvm::ConstantFP& c);
  std::string constant_expression(llvm::ConstantExpr& ce);
  std::string constant_pointer_to(Constant* c, Type* pointee);
  // Values inside a function. pointer_value casts the i8 pointer `p` to a `pointee`
  // pointer first (a bitcast emitted before the instruction being printed).
  std::string value(Value* v);
  std::string operand(Value* v) { return type(v->getType()) + " " + value(v); }
  std::string pointer_value(Value* p, Type* pointee);
  std::string pointer_operand(Value* p, Type* pointee) {
    std::string v = pointer_value(p, pointee);  // checks that p is a pointer
    return pointer_to(pointee, p->getType()->getPointerAddressSpace()) + " " + v;
  }
  std::string scope(llvm::SyncScope::ID id);
  void emit(const std::string& line) { body_ += "  " + line + "\n"; }
  std::string fresh() { return "%t" + std::to_string(next_temp_++); }

  void global(llvm::GlobalVariable& g);
  void function(Function& f);
  void instruction(Instruction& i);
  std::string instruction_text(Instruction& i);
  std::string memory_instruction_text(Instruction& i);
  std::string call_text(llvm::CallInst& call);
  const LegacyIntrinsic& intrinsic(Function& f);
  std::string metadata();
  std::string metadata_operand(const llvm::Metadata* md);

  llvm::Module& module_;
  Type* i8_;
  std::string body_;
  std::map<const Value*, std::string> names_;
  std::map<const Function*, LegacyIntrinsic> intrinsics_;
  std::map<std::string, std::string> extra_declarations_;  // intrinsics the printer introduces
  unsigned next_temp_ = 0;
};

std::string LegacyWriter::type(Type* t) {
  switch (t->getTypeID()) {
    case Type::VoidTyID:
      return "void";
    case Type::HalfTyID:
      return "half";
    case Type::FloatTyID:
      return "float";
    case Type::DoubleTyID:
      return "double";
    case Type::LabelTyID:
      return "label";
    case Type::IntegerTyID:
      return "i" + std::to_string(t->getIntegerBitWidth());
    case Type::PointerTyID:
      return pointer_to(i8_, t->getPointerAddressSpace());
    case Type::ArrayTyID:
      return "[" + std::to_string(t->getArrayNumElements()) + " x " + type(t->getArrayElementType()) + "]";
    case Type::FixedVectorTyID: {
      auto* v = llvm::cast<llvm::FixedVectorType>(t);
      return "<" + std::to_string(v->getNumElements()) + " x " + type(v->getElementType()) + ">";
    }
    case Type::StructTyID: {
      auto* s = llvm::cast<llvm::StructType>(t);
      if (s->isLiteral()) return struct_body(s);
      if (!s->hasName()) unsupported("an unnamed identified struct type");
      return "%" + quoted(s->getName());
    }
    case Type::FunctionTyID: {
      auto* f = llvm::cast<llvm::FunctionType>(t);
      std::string s = type(f->getReturnType()) + " (";
      for (unsigned k = 0; k < f->getNumParams(); ++k) s += (k ? ", " : "") + type(f->getParamType(k));
      if (f->isVarArg()) s += f->getNumParams() ? ", ..." : "...";
      return s + ")";
    }
    default:
      unsupported("the type " + llvm_text(*t));
  }
}

std::string LegacyWriter::struct_body(llvm::StructType* t) {
  if (t->isOpaque()) return "opaque";
  std::string s = t->isPacked() ? "<{" : "{";
  for (unsigned k = 0; k < t->getNumElements(); ++k) s += (k ? ", " : " ") + type(t->getElementType(k));
  s += t->getNumElements() ? " }" : "}";
  return t->isPacked() ? s + ">" : s;
}

// Floats in hex: doubles' bits; floats widened to double (a NaN keeps its payload
// in the top mantissa bits, as LLVM's own printer writes it); halves as 0xH.
std::string LegacyWriter::float_constant(const llvm::ConstantFP& c) {
  llvm::APFloat v = c.getValueAPF();
  uint64_t bits = v.bitcastToAPInt().getZExtValue();
  Type* t = c.getType();
  if (t->isHalfTy()) return "0xH" + hex(bits, 4);
  if (t->isDoubleTy()) return "0x" + hex(bits, 16);
  if (!t->isFloatTy()) unsupported("the constant " + llvm_text(c));
  if (v.isNaN()) return "0x" + hex((bits >> 31) << 63 | uint64_t{0x7FF} << 52 | (bits & 0x7FFFFF) << 29, 16);
  bool lost = false;
  v.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven, &lost);
  return "0x" + hex(v.bitcastToAPInt().getZExtValue(), 16);
}

std::string LegacyWriter::constant(Constant* c) {
  Type* t = c->getType();
  if (llvm::isa<llvm::UndefValue>(c)) return "undef";  // poison too
  if (llvm::isa<llvm::ConstantAggregateZero>(c)) return "zeroinitializer";
  if (llvm::isa<llvm::ConstantPointerNull>(c)) return "null";
  if (auto* ce = llvm::dyn_cast<llvm::ConstantExpr>(c)) return constant_expression(*ce);
  if (auto* g = llvm::dyn_cast<llvm::GlobalValue>(c)) {
    if (!llvm::isa<llvm::GlobalVariable, Function>(g)) unsupported("the global " + llvm_text(*g));
    std::string name = "@" + quoted(g->getName());
    if (g->getValueType() == i8_) return name;
    return "bitcast (" + pointer_to(g->getValueType(), g->getAddressSpace()) + " " + name + " to " + type(t) + ")";
  }
  if (!t->isVectorTy()) {
    if (auto* ci = llvm::dyn_cast<llvm::ConstantInt>(c))
      return t->isIntegerTy(1) ? (ci->isZero() ? "false" : "true") : llvm::toString(ci->getValue(), 10, true);
    if (auto* fp = llvm::dyn_cast<llvm::ConstantFP>(c)) return float_constant(*fp);
  }
  if (auto* data = llvm::dyn_cast<llvm::ConstantDataSequential>(c); data && data->isString())
    return "c\"" + escaped(data->getAsString()) + "\"";
  unsigned n = 0;
  std::string open = "[", close = "]";
  if (auto* s = llvm::dyn_cast<llvm::StructType>(t)) {
    n = s->getNumElements();
    open = s->isPacked() ? "<{ " : "{ ", close = s->isPacked() ? " }>" : " }";
    if (n == 0) return s->isPacked() ? "<{}>" : "{}";
  } else if (auto* v = llvm::dyn_cast<llvm::FixedVectorType>(t)) {
    n = v->getNumElements(), open = "<", close = ">";
  } else if (t->isArrayTy()) {
    n = t->getArrayNumElements();
  } else {
    unsupported("the constant " + llvm_text(*c));
  }
  std::string s = open;
  for (unsigned k = 0; k < n; ++k) {
    Constant* e = c->getAggregateElement(k);
    if (e == nullptr) unsupported("the constant " + llvm_text(*c));
    s += (k ? ", " : "") + typed(e);
  }
  return s + close;
}

std::string LegacyWriter::constant_expression(llvm::ConstantExpr& ce) {
  Type* t = ce.getType();
  if (auto* gep = llvm::dyn_cast<llvm::GEPOperator>(&ce)) {
    if (t->isVectorTy()) unsupported("the vector GEP " + llvm_text(ce));
    Type* source = gep->getSourceElementType();
    unsigned space = gep->getPointerAddressSpace();
    std::string s = std::string("getelementptr ") + (gep->isInBounds() ? "inbounds " : "") + "(" + type(source) + ", " +
                    pointer_to(source, space) + " " +
                    constant_pointer_to(llvm::cast<Constant>(gep->getPointerOperand()), source);
    for (Value* index : gep->indices()) s += ", " + typed(llvm::cast<Constant>(index));
    s += ")";
    Type* result = gep->getResultElementType();
    return result == i8_ ? s : "bitcast (" + pointer_to(result, space) + " " + s + " to " + type(t) + ")";
  }
  Constant* x = ce.getOperand(0);
  if (ce.getOpcode() == Instruction::BitCast && t->isPointerTy()) return constant(x);  // i8* to i8*
  if (ce.isCast()) return std::string(ce.getOpcodeName()) + " (" + typed(x) + " to " + type(t) + ")";
  if (Instruction::isBinaryOp(ce.getOpcode()))
    return std::string(ce.getOpcodeName()) + " (" + typed(x) + ", " + typed(ce.getOperand(1)) + ")";
  unsupported("the constant expression " + llvm_text(ce));
}

std::string LegacyWriter::constant_pointer_to(Constant* c, Type* pointee) {
  auto* g = llvm::dyn_cast<llvm::GlobalValue>(c);
  if (g != nullptr && g->getValueType() == pointee) return "@" + quoted(g->getName());
  if (llvm::isa<llvm::ConstantPointerNull, llvm::UndefValue>(c) || pointee == i8_) return constant(c);
  unsigned space = c->getType()->getPointerAddressSpace();
  std::string from = g ? pointer_to(g->getValueType(), space) + " @" + quoted(g->getName()) : typed(c);
  return "bitcast (" + from + " to " + pointer_to(pointee, space) + ")";
}

std::string LegacyWriter::value(Value* v) {
  if (auto* c = llvm::dyn_cast<Constant>(v)) return constant(c);
  auto it = names_.find(v);
  if (it == names_.end()) unsupported("the operand " + llvm_text(*v));
  return it->second;
}

std::string LegacyWriter::pointer_value(Value* p, Type* pointee) {
  if (!p->getType()->isPointerTy()) unsupported("the pointer operand " + llvm_text(*p));
  if (auto* c = llvm::dyn_cast<Constant>(p)) return constant_pointer_to(c, pointee);
  auto* alloca = llvm::dyn_cast<llvm::AllocaInst>(p);
  if (alloca != nullptr && alloca->getAllocatedType() == pointee) return value(p) + ".a";
  if (pointee == i8_) return value(p);
  std::string cast = fresh();
  emit(cast + " = bitcast " + operand(p) + " to " + pointer_to(pointee, p->getType()->getPointerAddressSpace()));
  return cast;
}

std::string LegacyWriter::scope(llvm::SyncScope::ID id) {
  if (id == llvm::SyncScope::System) return "";
  llvm::SmallVector<llvm::StringRef, 8> names;
  module_.getContext().getSyncScopeNames(names);
  return " syncscope(\"" + escaped(names[id]) + "\")";
}

void LegacyWriter::global(llvm::GlobalVariable& g) {
  if (g.isThreadLocal()) unsupported("the thread-local global " + g.getName().str());
  std::string s = "@" + quoted(g.getName()) + " = ";
  s += g.isDeclaration() && g.hasExternalLinkage() ? "external " : global_head(g);
  if (g.hasAtLeastLocalUnnamedAddr()) s += unnamed_addr(g) + " ";
  if (unsigned space = g.getAddressSpace()) s += "addrspace(" + std::to_string(space) + ") ";
  if (g.isExternallyInitialized()) s += "externally_initialized ";
  s += (g.isConstant() ? "constant " : "global ") + type(g.getValueType());
  if (g.hasInitializer()) s += " " + constant(g.getInitializer());
  if (g.getSection() == "llvm.metadata") s += ", section \"llvm.metadata\"";
  if (llvm::MaybeAlign a = g.getAlign()) s += ", align " + std::to_string(a->value());
  body_ += s + "\n";
}

const LegacyIntrinsic& LegacyWriter::intrinsic(Function& f) {
  auto it = intrinsics_.find(&f);
  if (it == intrinsics_.end()) it = intrinsics_.emplace(&f, legacy_intrinsic(f)).first;
  return it->second;
}

void LegacyWriter::function(Function& f) {
  if (f.isDeclaration() && f.use_empty()) return;  // e.g. intrinsics expanded above
  if (f.hasPersonalityFn() || f.hasPrefixData() || f.hasPrologueData() || f.hasGC())
    unsupported("the function attachments of " + f.getName().str());
  // Calls are printed without a calling convention, so functions are too (the
  // optimiser's fastcc on internal functions means nothing to NVPTX).
  namespace CC = llvm::CallingConv;
  CC::ID cc = f.getCallingConv();
  if (cc != CC::C && cc != CC::Fast && cc != CC::Cold && cc != CC::PTX_Kernel && cc != CC::PTX_Device)
    unsupported("the calling convention of " + f.getName().str());
  Type* pointee = f.isIntrinsic() ? intrinsic(f).pointee : i8_;
  std::string name = f.isIntrinsic() ? intrinsic(f).name : f.getName().str();
  llvm::AttributeList attrs = f.getAttributes();
  std::string s = (f.isDeclaration() ? "declare " : "define ") + global_head(f) +
                  parameter_attributes(attrs.getRetAttrs(), true) + type(f.getReturnType()) + " @" + quoted(name) + "(";
  unsigned k = 0;
  for (llvm::Argument& a : f.args()) {
    names_[&a] = "%arg" + std::to_string(k);
    Type* t = a.getType();
    std::string rest = f.isIntrinsic() ? "" : parameter_attributes(attrs.getParamAttrs(k), false);
    if (!f.isDeclaration()) rest += names_[&a];
    s += (k++ ? ", " : "") + (t->isPointerTy() ? pointer_to(pointee, t->getPointerAddressSpace()) : type(t)) +
         (rest.empty() ? "" : " " + llvm::StringRef(rest).rtrim().str());
  }
  if (f.isVarArg()) s += k ? ", ..." : "...";
  s += ")";
  if (!f.isIntrinsic() && f.hasAtLeastLocalUnnamedAddr()) s += " " + unnamed_addr(f);
  if (!f.isIntrinsic()) s += function_attributes(f);
  if (f.isDeclaration()) {
    body_ += s + "\n\n";
    return;
  }
  body_ += s + " {\n";
  unsigned n = 0;
  for (llvm::BasicBlock& bb : f) names_[&bb] = "%bb" + std::to_string(n++);
  n = 0;
  for (Instruction& i : llvm::instructions(f))
    if (!i.getType()->isVoidTy()) names_[&i] = "%v" + std::to_string(n++);
  next_temp_ = 0;
  for (llvm::BasicBlock& bb : f) {
    body_ += names_[&bb].substr(1) + ":\n";
    for (Instruction& i : bb) instruction(i);
  }
  body_ += "}\n\n";
}

void LegacyWriter::instruction(Instruction& i) {
  std::string name = i.getType()->isVoidTy() ? "" : names_[&i];
  if (auto* a = llvm::dyn_cast<llvm::AllocaInst>(&i)) {
    if (a->getAddressSpace() != 0 || a->isUsedWithInAlloca()) unsupported(llvm_text(i));
    std::string s = name + ".a = alloca " + type(a->getAllocatedType());
    if (a->isArrayAllocation()) s += ", " + operand(a->getArraySize());
    emit(s + ", align " + std::to_string(a->getAlign().value()));
    emit(name + " = bitcast " + pointer_to(a->getAllocatedType(), 0) + " " + name + ".a to i8*");
    return;
  }
  if (auto* gep = llvm::dyn_cast<llvm::GetElementPtrInst>(&i)) {
    if (gep->getType()->isVectorTy()) unsupported("the vector GEP " + llvm_text(i));
    Type* source = gep->getSourceElementType();
    Type* result = gep->getResultElementType();
    std::string s = std::string("getelementptr ") + (gep->isInBounds() ? "inbounds " : "") + type(source) + ", " +
                    pointer_operand(gep->getPointerOperand(), source);
    for (Value* index : gep->indices()) s += ", " + operand(index);
    if (result == i8_) return emit(name + " = " + s);
    emit(name + ".g = " + s);
    emit(name + " = bitcast " + pointer_to(result, gep->getAddressSpace()) + " " + name + ".g to " +
         type(gep->getType()));
    return;
  }
  std::string text = instruction_text(i);
  emit(name.empty() ? text : name + " = " + text);
}

std::string LegacyWriter::instruction_text(Instruction& i) {
  auto label = [&](llvm::BasicBlock* bb) { return "label " + names_[bb]; };
  if (auto* b = llvm::dyn_cast<llvm::BinaryOperator>(&i)) {
    std::string s = std::string(b->getOpcodeName()) + " ";
    if (llvm::isa<llvm::OverflowingBinaryOperator>(b)) {
      if (b->hasNoUnsignedWrap()) s += "nuw ";
      if (b->hasNoSignedWrap()) s += "nsw ";
    }
    if (llvm::isa<llvm::PossiblyExactOperator>(b) && b->isExact()) s += "exact ";
    if (llvm::isa<llvm::FPMathOperator>(b)) s += fast_math_flags(b->getFastMathFlags());
    return s + operand(b->getOperand(0)) + ", " + value(b->getOperand(1));
  }
  if (i.getOpcode() == Instruction::FNeg)  // LLVM 7 negates by subtraction from -0.0
    return "fsub " + fast_math_flags(i.getFastMathFlags()) + type(i.getType()) + " " +
           constant(llvm::ConstantFP::getNegativeZero(i.getType())) + ", " + value(i.getOperand(0));
  if (auto* cast = llvm::dyn_cast<llvm::CastInst>(&i))
    return std::string(cast->getOpcodeName()) + " " + operand(cast->getOperand(0)) + " to " + type(cast->getType());
  if (auto* cmp = llvm::dyn_cast<llvm::CmpInst>(&i)) {
    std::string s = llvm::isa<llvm::FCmpInst>(cmp) ? "fcmp " + fast_math_flags(cmp->getFastMathFlags()) : "icmp ";
    return s + llvm::CmpInst::getPredicateName(cmp->getPredicate()).str() + " " + operand(cmp->getOperand(0)) + ", " +
           value(cmp->getOperand(1));
  }
  if (auto* sel = llvm::dyn_cast<llvm::SelectInst>(&i))
    return "select " + operand(sel->getCondition()) + ", " + operand(sel->getTrueValue()) + ", " +
           operand(sel->getFalseValue());
  if (auto* phi = llvm::dyn_cast<llvm::PHINode>(&i)) {
    std::string s = "phi " + type(phi->getType());
    for (unsigned k = 0; k < phi->getNumIncomingValues(); ++k)
      s += std::string(k ? "," : "") + " [ " + value(phi->getIncomingValue(k)) + ", " +
           names_[phi->getIncomingBlock(k)] + " ]";
    return s;
  }
  if (auto* call = llvm::dyn_cast<llvm::CallInst>(&i)) return call_text(*call);
  if (auto* ev = llvm::dyn_cast<llvm::ExtractValueInst>(&i)) {
    std::string s = "extractvalue " + operand(ev->getAggregateOperand());
    for (unsigned index : ev->indices()) s += ", " + std::to_string(index);
    return s;
  }
  if (auto* iv = llvm::dyn_cast<llvm::InsertValueInst>(&i)) {
    std::string s = "insertvalue " + operand(iv->getAggregateOperand()) + ", " + operand(iv->getInsertedValueOperand());
    for (unsigned index : iv->indices()) s += ", " + std::to_string(index);
    return s;
  }
  if (auto* ee = llvm::dyn_cast<llvm::ExtractElementInst>(&i))
    return "extractelement " + operand(ee->getVectorOperand()) + ", " + operand(ee->getIndexOperand());
  if (auto* ie = llvm::dyn_cast<llvm::InsertElementInst>(&i))
    return "insertelement " + operand(ie->getOperand(0)) + ", " + operand(ie->getOperand(1)) + ", " +
           operand(ie->getOperand(2));
  if (auto* sv = llvm::dyn_cast<llvm::ShuffleVectorInst>(&i)) {
    std::string mask;
    for (int m : sv->getShuffleMask())
      mask += (mask.empty() ? "i32 " : ", i32 ") + (m < 0 ? "undef" : std::to_string(m));
    return "shufflevector " + operand(sv->getOperand(0)) + ", " + operand(sv->getOperand(1)) + ", <" +
           std::to_string(sv->getShuffleMask().size()) + " x i32> <" + mask + ">";
  }
  if (auto* ret = llvm::dyn_cast<llvm::ReturnInst>(&i))
    return ret->getReturnValue() ? "ret " + operand(ret->getReturnValue()) : "ret void";
  if (auto* br = llvm::dyn_cast<llvm::BranchInst>(&i)) {
    if (br->isUnconditional()) return "br " + label(br->getSuccessor(0));
    return "br " + operand(br->getCondition()) + ", " + label(br->getSuccessor(0)) + ", " + label(br->getSuccessor(1));
  }
  if (auto* sw = llvm::dyn_cast<llvm::SwitchInst>(&i)) {
    std::string s = "switch " + operand(sw->getCondition()) + ", " + label(sw->getDefaultDest()) + " [";
    for (auto& c : sw->cases()) s += " " + typed(c.getCaseValue()) + ", " + label(c.getCaseSuccessor());
    return s + " ]";
  }
  if (llvm::isa<llvm::UnreachableInst>(i)) return "unreachable";
  return memory_instruction_text(i);  // fences became membars above
}

// Loads, stores and atomics: LLVM 7 writes no alignment on atomicrmw and cmpxchg,
// and has no atomicrmw fadd (the NVVM intrinsic does it). Loads and stores are
// at most monotonic here (see rewrite_ordering).
std::string LegacyWriter::memory_instruction_text(Instruction& i) {
  auto align = [](llvm::Align a) { return ", align " + std::to_string(a.value()); };
  auto ordering = [&](llvm::AtomicOrdering o, llvm::SyncScope::ID id) { return scope(id) + " " + llvm::toIRString(o); };
  if (auto* ld = llvm::dyn_cast<llvm::LoadInst>(&i)) {
    std::string s = std::string("load ") + (ld->isAtomic() ? "atomic " : "") + (ld->isVolatile() ? "volatile " : "") +
                    type(ld->getType()) + ", " + pointer_operand(ld->getPointerOperand(), ld->getType());
    if (ld->isAtomic()) s += ordering(ld->getOrdering(), ld->getSyncScopeID());
    return s + align(ld->getAlign());
  }
  if (auto* st = llvm::dyn_cast<llvm::StoreInst>(&i)) {
    Value* v = st->getValueOperand();
    std::string s = std::string("store ") + (st->isAtomic() ? "atomic " : "") + (st->isVolatile() ? "volatile " : "") +
                    operand(v) + ", " + pointer_operand(st->getPointerOperand(), v->getType());
    if (st->isAtomic()) s += ordering(st->getOrdering(), st->getSyncScopeID());
    return s + align(st->getAlign());
  }
  if (auto* rmw = llvm::dyn_cast<llvm::AtomicRMWInst>(&i)) {
    Type* t = rmw->getType();
    std::string p = pointer_operand(rmw->getPointerOperand(), t);
    if (rmw->getOperation() == llvm::AtomicRMWInst::FAdd) {
      unsigned space = rmw->getPointerAddressSpace();
      std::string name = "llvm.nvvm.atomic.load.add." + mangled(t) + ".p" + std::to_string(space) + mangled(t);
      extra_declarations_[name] =
          "declare " + type(t) + " @" + name + "(" + pointer_to(t, space) + ", " + type(t) + ")";
      return "call " + type(t) + " @" + name + "(" + p + ", " + operand(rmw->getValOperand()) + ")";
    }
    if (!t->isIntegerTy()) unsupported(llvm_text(i));
    return std::string("atomicrmw ") + (rmw->isVolatile() ? "volatile " : "") +
           llvm::AtomicRMWInst::getOperationName(rmw->getOperation()).str() + " " + p + ", " +
           operand(rmw->getValOperand()) + ordering(rmw->getOrdering(), rmw->getSyncScopeID());
  }
  if (auto* cas = llvm::dyn_cast<llvm::AtomicCmpXchgInst>(&i)) {
    Type* t = cas->getCompareOperand()->getType();
    if (!t->isIntegerTy()) unsupported(llvm_text(i));
    return std::string("cmpxchg ") + (cas->isWeak() ? "weak " : "") + (cas->isVolatile() ? "volatile " : "") +
           pointer_operand(cas->getPointerOperand(), t) + ", " + operand(cas->getCompareOperand()) + ", " +
           operand(cas->getNewValOperand()) + ordering(cas->getSuccessOrdering(), cas->getSyncScopeID()) + " " +
           llvm::toIRString(cas->getFailureOrdering());
  }
  unsupported("the instruction " + llvm_text(i));
}

// Calls: intrinsics get their LLVM 7 names and typed pointer arguments; inline asm
// keeps its text; an indirect callee is cast to the function pointer type.
std::string LegacyWriter::call_text(llvm::CallInst& call) {
  if (call.hasOperandBundles()) unsupported("the operand bundles of " + llvm_text(call));
  llvm::FunctionType* fty = call.getFunctionType();
  Value* target = call.getCalledOperand();
  Type* pointee = i8_;
  std::string callee;
  if (auto* asm_ = llvm::dyn_cast<llvm::InlineAsm>(target)) {
    if (asm_->getDialect() != llvm::InlineAsm::AD_ATT || asm_->canThrow()) unsupported(llvm_text(call));
    callee = std::string("asm ") + (asm_->hasSideEffects() ? "sideeffect " : "") +
             (asm_->isAlignStack() ? "alignstack " : "") + "\"" + escaped(asm_->getAsmString()) + "\", \"" +
             escaped(asm_->getConstraintString()) + "\"";
  } else if (auto* f = llvm::dyn_cast<Function>(target); f && f->getFunctionType() == fty) {
    callee = "@" + quoted(f->isIntrinsic() ? intrinsic(*f).name : f->getName().str());
    if (f->isIntrinsic()) pointee = intrinsic(*f).pointee;
  } else {
    callee = pointer_value(target, fty);
  }
  std::string s = "call ";
  // LLVM 7 takes fast-math flags on calls that return a floating-point scalar or vector only (not a struct of them:
  // a C-ABI record of floats returned by value)
  if (llvm::isa<llvm::FPMathOperator>(call) && call.getType()->isFPOrFPVectorTy())
    s += fast_math_flags(call.getFastMathFlags());
  s += (fty->isVarArg() ? type(fty) : type(fty->getReturnType())) + " " + callee + "(";
  for (unsigned k = 0; k < call.arg_size(); ++k) {
    Value* arg = call.getArgOperand(k);
    Type* element = call.getParamElementType(k);  // indirect inline asm operands
    s += k ? ", " : "";
    s += arg->getType()->isPointerTy() ? pointer_operand(arg, element ? element : pointee) : operand(arg);
  }
  return s + ")";
}

std::string LegacyWriter::metadata_operand(const llvm::Metadata* md) {
  if (md == nullptr) return "null";
  if (auto* str = llvm::dyn_cast<llvm::MDString>(md)) return "!\"" + escaped(str->getString()) + "\"";
  if (auto* c = llvm::dyn_cast<llvm::ConstantAsMetadata>(md)) {
    if (auto* g = llvm::dyn_cast<llvm::GlobalValue>(c->getValue()))
      return pointer_to(g->getValueType(), g->getAddressSpace()) + " @" + quoted(g->getName());
    return typed(c->getValue());
  }
  unsupported("a metadata operand of !nvvm.annotations");
}

// The module's !nvvm.annotations (emit_ltoir.cpp has annotated each kernel) and
// !nvvmir.version; other named metadata is not for libNVVM.
std::string LegacyWriter::metadata() {
  std::vector<std::string> nodes;
  if (llvm::NamedMDNode* named = module_.getNamedMetadata("nvvm.annotations")) {
    for (llvm::MDNode* node : named->operands()) {
      std::string s = "!{";
      for (unsigned k = 0; k < node->getNumOperands(); ++k)
        s += (k ? ", " : "") + metadata_operand(node->getOperand(k));
      nodes.push_back(s + "}");
    }
  }
  std::string s;
  if (!nodes.empty()) {
    s += "!nvvm.annotations = !{";
    for (size_t k = 0; k < nodes.size(); ++k) s += (k ? ", !" : "!") + std::to_string(k);
    s += "}\n";
  }
  s += "!nvvmir.version = !{!" + std::to_string(nodes.size()) + "}\n";
  for (size_t k = 0; k < nodes.size(); ++k) s += "!" + std::to_string(k) + " = " + nodes[k] + "\n";
  return s + "!" + std::to_string(nodes.size()) + " = !{i32 " + std::to_string(kIRVersionMajor) + ", i32 " +
         std::to_string(kIRVersionMinor) + "}\n";
}

std::string LegacyWriter::write() {
  if (!module_.aliases().empty() || !module_.ifuncs().empty()) unsupported("global aliases and ifuncs");
  std::string head =
      std::string("target datalayout = \"") + kDataLayout + "\"\ntarget triple = \"nvptx64-nvidia-cuda\"\n\n";
  for (llvm::StructType* t : module_.getIdentifiedStructTypes()) head += type(t) + " = type " + struct_body(t) + "\n";
  for (llvm::GlobalVariable& g : module_.globals()) global(g);
  body_ += "\n";
  for (Function& f : module_) function(f);
  for (auto& [name, declaration] : extra_declarations_) body_ += declaration + "\n";
  return head + "\n" + body_ + "\n" + metadata();
}

}  // namespace

Expected<std::string> write_legacy_nvvm_ir(llvm::Module& module) {
  try {
    rewrite_for_llvm7(module);
    return LegacyWriter(module).write();
  } catch (const CompileError& e) {
    return e.error();
  }
}

}  // namespace cujit::codegen
