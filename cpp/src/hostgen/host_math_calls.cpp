// What the CPU target's optimiser may assume about a module's calls of the host's
// libdevice (host_math.h), and the tests' nudge of their results.
//
// On the GPU, libdevice is inlined and ptxas optimises what is left as C++ is:
// a loop that has no effect and never ends is removed (the forward progress every
// CUDA thread is assumed to make). The host's libdevice functions are calls LLVM
// cannot see into; declared as what they are (no memory touched but through
// their pointer arguments, they return, they throw nothing) and with every
// function of the module marked `mustprogress`, the host's O3 pipeline removes
// the same loops, and a kernel that finishes on the GPU finishes on the CPU.
//
// The nudge (set_host_math_nudge, for tests) moves each transcendental function's
// result by a few ulps: the CPU-vs-GPU differential runs a program nudged both
// ways to tell results that an ulp of a math function carries far (fmod of a
// large exp) from results that differ for another reason.
#include <atomic>
#include <string>
#include <string_view>
#include <unordered_set>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Module.h>

#include "cujit/hostgen.h"
#include "host_math.h"

namespace cujit::hostgen {
namespace {

std::atomic<int> g_nudge_ulps{0};

bool has_pointer_parameter(const llvm::Function& f) {
  for (const llvm::Argument& a : f.args())
    if (a.getType()->isPointerTy()) return true;
  return false;
}

// The functions whose GPU and host results may differ by their documented ulps (docs/cpu_target.md): the
// transcendental ones. Rounding, remainders, scaling and the like are exact on both.
bool inexact(llvm::StringRef name) {
  static const std::unordered_set<std::string_view> names = {
      "sin",   "cos",   "tan", "asin", "acos",   "atan",    "atan2",  "sinh",   "cosh",    "tanh",      "asinh",
      "acosh", "atanh", "exp", "exp2", "exp10",  "expm1",   "log",    "log2",   "log10",   "log1p",     "pow",
      "powi",  "hypot", "erf", "erfc", "erfinv", "erfcinv", "tgamma", "lgamma", "cbrt",    "rcbrt",     "sinpi",
      "cospi", "rsqrt", "j0",  "j1",   "y0",     "y1",      "jn",     "yn",     "normcdf", "normcdfinv"};
  if (!name.consume_front("__nv_")) return false;
  name.consume_front("fast_");
  if (names.count(std::string_view(name))) return true;
  return name.consume_back("f") && names.count(std::string_view(name));
}

// r moved by `ulps` units in its last place, away from zero (toward it when negative); zeros, infinities and
// NaNs stay as they are.
llvm::Value* nudged(llvm::IRBuilder<>& b, llvm::Value* r, int ulps) {
  llvm::Type* t = r->getType();
  auto* bits_type = b.getIntNTy(t->getPrimitiveSizeInBits());
  llvm::Value* bits = b.CreateAdd(b.CreateBitCast(r, bits_type), llvm::ConstantInt::getSigned(bits_type, ulps));
  llvm::Value* magnitude = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, r);
  llvm::Value* movable = b.CreateAnd(b.CreateFCmpONE(magnitude, llvm::ConstantFP::getInfinity(t)),
                                     b.CreateFCmpONE(magnitude, llvm::ConstantFP::get(t, 0.0)));
  return b.CreateSelect(movable, b.CreateBitCast(bits, t), r);
}

void nudge_results(llvm::Function& callee, int ulps) {
  llvm::Type* t = callee.getReturnType();
  if (!t->isHalfTy() && !t->isFloatTy() && !t->isDoubleTy()) return;
  for (llvm::User* user : llvm::SmallVector<llvm::User*, 8>(callee.users())) {
    auto* call = llvm::dyn_cast<llvm::CallInst>(user);
    if (!call || call->getCalledFunction() != &callee) continue;
    llvm::SmallVector<llvm::Use*, 4> uses;  // the result's uses before the nudge adds its own
    for (llvm::Use& u : call->uses()) uses.push_back(&u);
    llvm::IRBuilder<> b(call->getNextNode());
    llvm::Value* moved = nudged(b, call, ulps);
    for (llvm::Use* u : uses) u->set(moved);
  }
}

}  // namespace

void set_host_math_nudge(int ulps) { g_nudge_ulps = ulps; }

void describe_host_math_calls(llvm::Module& module) {
  const int ulps = g_nudge_ulps;
  for (llvm::Function& f : module) {
    if (!f.isDeclaration()) {
      f.addFnAttr(llvm::Attribute::MustProgress);
      continue;
    }
    if (!is_host_math(f.getName())) continue;
    f.addFnAttr(llvm::Attribute::NoUnwind);
    f.addFnAttr(llvm::Attribute::WillReturn);
    f.addFnAttr(llvm::Attribute::NoSync);
    f.setMemoryEffects(has_pointer_parameter(f) ? llvm::MemoryEffects::argMemOnly() : llvm::MemoryEffects::none());
    if (ulps != 0 && inexact(f.getName())) nudge_results(f, ulps);
  }
}

}  // namespace cujit::hostgen
