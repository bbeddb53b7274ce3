// Internal to the intrinsic table: each family file adds its entries through
// one of these functions, and shares the small typing and lowering helpers.
#pragma once

#include <map>
#include <string>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>

#include "cujit/intrinsics.h"

namespace cujit::intrinsics {

using Table = std::map<std::string, Intrinsic>;

void add_thread_indexing(Table& t);     // thread_indexing.cpp
void add_synchronization(Table& t);     // synchronization.cpp
void add_atomics(Table& t);             // atomics.cpp
void add_warp_functions(Table& t);      // warp_functions.cpp
void add_bit_functions(Table& t);       // bit_functions.cpp
void add_memory_arrays(Table& t);       // memory_arrays.cpp
void add_raw_arrays(Table& t);          // raw_arrays.cpp (cuda.carray, cuda.farray)
void add_half_precision(Table& t);      // half_precision.cpp
void add_bfloat16(Table& t);            // bfloat16.cpp (cuda.bf16)
void add_libdevice(Table& t);           // libdevice_functions.cpp
void add_cooperative_groups(Table& t);  // cooperative_groups.cpp
void add_complex_math(Table& t);        // complex_math.cpp (cmath)
void add_cache_hints(Table& t);         // cache_hints.cpp (cuda.ldcs, cuda.stcs, ...)
void add_warp_match(Table& t);          // warp_match.cpp (activemask, match_*_sync, ffs, cbrt)
void add_literal_unroll(Table& t);      // literal_unroll.cpp (the identity outside for loops)
void add_fp8(Table& t);                 // fp8.cpp (cuda.fp8.cvt_float_to_fp8, ...)
void add_vector_types(Table& t);        // vector_types.cpp (cuda.float32x4..., their .x .y .z .w, Dim3)
void add_fp8_packed(Table& t);          // fp8_packed.cpp (cuda.fp8.fp8x2_e4m3...; after add_vector_types: it
                                // lets float32x2(p) and float32x4(p) unpack them)

// Adds a function entry.
void add(Table& t, const std::string& name, Typer type, Lowerer lower, std::vector<std::string> params = {});

// The signature (params) -> result if every argument converts to its parameter.
std::optional<OpSignature> fixed(std::vector<TypeRef> params, TypeRef result, const std::vector<TypeRef>& args);
// A typer for exactly that signature.
Typer fixed_typer(std::vector<TypeRef> params, TypeRef result);

// Calls an LLVM intrinsic without overloaded types.
llvm::Value* call_intrinsic(Emitter& em, llvm::Intrinsic::ID id, std::vector<llvm::Value*> args = {});
// A lowering that calls `id` for its effect and returns None.
Lowerer statement(llvm::Intrinsic::ID id);

}  // namespace cujit::intrinsics
