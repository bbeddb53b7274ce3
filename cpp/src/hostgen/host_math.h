// Internal to codegen: libdevice's functions on the CPU target. Each __nv_*
// function cujit's lowering can call (cuda.libdevice.*, the math module, the
// fp16/bf16 functions, fast-math variants, integer intrinsics) has a host
// implementation compiled into cujit (host_math.cpp: the one table; libm where
// it has the function, host_math_special.cpp for what it lacks, and
// host_math_rounding.cpp for the rounding-mode variants). The ORC JIT links a
// module's calls to them by name.
#pragma once

#include <cstddef>
#include <string_view>

namespace llvm {
class Error;
class Module;
namespace orc {
class LLJIT;
}  // namespace orc
}  // namespace llvm

namespace cujit::hostgen {

struct HostMathFunction {
  const char* name;  // the libdevice symbol (__nv_sinf) or a compiler runtime helper (__truncsfhf2)
  void* address;     // its host implementation (C calling convention, libdevice's signature)
};

// The table: every entry, in one array.
const HostMathFunction* host_math_functions(std::size_t* count);
// True if `name` has a host implementation.
bool is_host_math(std::string_view name);
// Defines every entry as an absolute symbol in the JIT's main library.
llvm::Error add_host_math(llvm::orc::LLJIT& jit);
// Gives the module's declarations of the functions that are one LLVM instruction or intrinsic (sqrt, fma, popc,
// min, bit casts...) internal always-inline bodies (host_math_inline.cpp); the others stay calls of the table's.
void define_inline_math(llvm::Module& module);
// Marks the module's functions `mustprogress` and its remaining calls of the table as pure (or touching only their
// pointer arguments), returning and not throwing, so O3 treats them as the GPU's toolchain treats libdevice; moves
// the transcendental ones' results by set_host_math_nudge's ulps (host_math_calls.cpp).
void describe_host_math_calls(llvm::Module& module);

// The table's parts, each beside its implementations: what libm lacks (host_math_special.cpp) and the
// rounding-mode variants and conversions (host_math_rounding.cpp). host_math.cpp joins them to its own.
const HostMathFunction* host_math_special(std::size_t* count);
const HostMathFunction* host_math_rounding(std::size_t* count);

}  // namespace cujit::hostgen
