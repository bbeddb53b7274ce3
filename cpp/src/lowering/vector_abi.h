// Internal to lowering: how CUDA vector types (float32x4, uchar2, Dim3...) are
// held. In registers a vector is a struct of its elements (numba-cuda's data
// model); in memory and across calls it takes an LLVM type that NVPTX lays out
// as CUDA's struct of that name (float4: `.param .align 16 .b8 [16]`), so a
// `cuda.declare_device` function written in CUDA C++ takes and returns it by
// value as nvcc compiled it.
#pragma once

#include <llvm/IR/IRBuilder.h>

#include "cujit/types.h"

namespace cujit::lowering {

llvm::Type* vector_value_type(llvm::LLVMContext& ctx, TypeRef vector);
// The memory and parameter type: the struct itself for 1 and 3 elements; <2 x T> and <4 x T> for 2 and 4
// (8-byte and 16-byte aligned as CUDA's float2 and float4); [2 x <2 x T>] for 4 elements of 8 bytes (16, not
// 32, bytes aligned); [1 x i16] for 2 elements of one byte (NVPTX cannot pass <2 x i8>).
llvm::Type* vector_data_type(llvm::LLVMContext& ctx, TypeRef vector);
llvm::Value* vector_to_data(llvm::IRBuilder<>& b, llvm::Value* value, TypeRef vector);
llvm::Value* vector_from_data(llvm::IRBuilder<>& b, llvm::Value* data, TypeRef vector);

}  // namespace cujit::lowering
