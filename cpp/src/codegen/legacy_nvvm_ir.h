// Internal to codegen: an optimised LLVM 22 module written in the legacy NVVM IR
// dialect (LLVM 7.0.1 text syntax, typed pointers), the only IR that CUDA 13's
// libNVVM reads for targets below compute_100. With it, the module cujit
// optimised for PTX becomes LTO-IR for compute_75..compute_90 (libNVVM -gen-lto).
#pragma once

#include <string>

#include "cujit/error.h"

namespace llvm {
class Module;
}

namespace cujit::codegen {

// The module as legacy NVVM IR text: its `!nvvm.annotations` and `@llvm.used`
// as they are (the caller annotates each kernel and lists it in `@llvm.used`:
// nvJitLink -lto keeps nothing else), NVVM's datalayout and `!nvvmir.version`,
// debug info dropped. Kernels (the ptx_kernel calling convention) are printed
// with the default one. Rewrites `module` in place first
// (expansions of constructs LLVM 7 lacks), so the caller must not need it
// unchanged afterwards. A construct without an LLVM 7 form is an Internal error
// naming it.
//
// What libNVVM takes as compile options rather than IR is not in the text: for a
// fastmath module (`denormal-fp-math-f32`, `fast` divisions) the caller passes
// -ftz=1 -prec-div=0 -prec-sqrt=0 to libNVVM / nvJitLink, as numba-cuda does;
// libNVVM ignores the function attributes and the flags on fdiv.
Expected<std::string> write_legacy_nvvm_ir(llvm::Module& module);

}  // namespace cujit::codegen
