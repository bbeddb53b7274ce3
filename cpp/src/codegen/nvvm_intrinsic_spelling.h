// Internal to codegen: intrinsics LLVM 22 spells in ways neither NVVM IR dialect
// of libNVVM knows (the legacy LLVM 7 one below compute_100, the modern LLVM 20.1
// one from it), rewritten into the older spelling both read before the module is
// written as NVVM IR for LTO-IR.
#pragma once

namespace llvm {
class Module;
}

namespace cujit::codegen {

// In place: bar.sync 0 and its reductions (LLVM 22's llvm.nvvm.barrier.cta.*
// family) become llvm.nvvm.barrier0(.popc/.and/.or); with `legacy`, relaxed
// 32-bit atomicrmw uinc_wrap/udec_wrap (atom.inc/dec) become LLVM 7's
// llvm.nvvm.atomic.load.inc/dec.32 rather than a compare-and-swap loop, and
// llvm.nvvm.fabs and ex2.approx (.ftz), overloaded in LLVM 22, LLVM 7's .f/.d names. The
// older names are declared as plain functions (LLVM 22 knows no intrinsic by
// them), so the module is for printing only afterwards. Atomics in the device
// scope (cujit's) take the default one, which libNVVM reads as device-wide.
void spell_intrinsics_for_nvvm(llvm::Module& module, bool legacy);

}  // namespace cujit::codegen
