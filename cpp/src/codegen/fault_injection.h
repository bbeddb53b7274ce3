// Internal to codegen: where the faults of inject_fault() are planted.
#pragma once

#include <llvm/IR/Module.h>

#include "cujit/codegen.h"

namespace cujit::codegen {

void plant_after_lowering(llvm::Module& module);
void plant_before_codegen(llvm::Module& module);

}  // namespace cujit::codegen
