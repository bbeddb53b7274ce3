// Internal to lowering: how a record crosses a C-ABI call by value. In the function a record is the address of its
// bytes (numba's data model); as a C-ABI parameter or result it is an LLVM struct that NVPTX lays out as nvcc lays
// out the C struct of the same fields (`struct {float v; int i;}`: `.param .align 4 .b8 [8]`), so that a
// `cuda.declare_device` function written in CUDA C++, or CUDA C++ calling a `cuda.compile(abi="c")` function,
// passes and returns it as nvcc does. A packed record (numpy's align=False) is a packed struct (alignment 1).
#pragma once

#include <llvm/IR/DerivedTypes.h>

#include "cujit/types.h"

namespace cujit::lowering {

llvm::Type* record_by_value_type(llvm::LLVMContext& ctx, TypeRef record);

}  // namespace cujit::lowering
