// Internal to codegen: the LTO-IR stage (see compile_to_ltoir in cujit/codegen.h).
#pragma once

#include <string>

#include <llvm/IR/Module.h>

#include "cujit/codegen.h"
#include "cujit/ir.h"

namespace cujit::codegen {

// The optimised module as NVVM LTO-IR for `arch`; throws CompileError or NvvmError.
std::string emit_ltoir(llvm::Module& module, const ir::TypedFunction& fn, const CompileOptions& options,
                       const TargetArch& arch);

}  // namespace cujit::codegen
