// fp8's bit-level conversions, as cuda_fp8.hpp computes them where the hardware has no cvt instruction
// (integer arithmetic, the same bits on every architecture). fp8.cpp defines them and the scalar types'
// casts and functions; fp8_packed.cpp builds the packed types (fp8x2_e4m3...) and the pair functions on them.
#pragma once

#include "intrinsic_families.h"

namespace cujit::intrinsics::fp8 {

enum class Format { E4M3, E5M2 };

// cudaRoundMode's members the e8m0 conversions take (cudaRoundNearest is 0, cudaRoundMinInf 3).
constexpr int kRoundZero = 1;
constexpr int kRoundPosInf = 2;

// __nv_cvt_double_to_fp8: the i8 bits of the float64 `x`, rounded to nearest even; an overflow gives the
// largest finite value when `satfinite` (an i1), else inf (e5m2) or NaN (e4m3).
llvm::Value* from_double(Emitter& em, llvm::Value* x, Format format, llvm::Value* satfinite);
// The same with the format chosen at run time: `e5m2` an i1.
llvm::Value* from_double(Emitter& em, llvm::Value* x, llvm::Value* e5m2, llvm::Value* satfinite);
// The exact float32 value of the i8 bits of an fp8 scalar type `t` (NaN codes give NaN).
llvm::Value* to_float(Emitter& em, llvm::Value* byte, TypeRef t);

// __nv_cvt_bfloat16raw_to_e8m0: the i8 e8m0 code of the i16 bfloat16 bits. `rounding` is a cudaRoundMode
// integer (only cudaRoundPosInf rounds up), `satfinite` an i1.
llvm::Value* e8m0_from_bfloat16(Emitter& em, llvm::Value* bits, llvm::Value* satfinite, llvm::Value* rounding);
// __nv_cvt_float_to_e8m0: a float32 through a bfloat16 rounded toward zero (cudaRoundZero) or its magnitude
// rounded up (any other mode), then e8m0_from_bfloat16.
llvm::Value* e8m0_from_float(Emitter& em, llvm::Value* f, llvm::Value* satfinite, llvm::Value* rounding);
// __internal_double_to_float_with_sticky: the float32 nearest toward zero to a float64, its lowest bit set
// when inexact, so that one more rounding of it rounds as the float64 would (__nv_cvt_double_to_e8m0).
llvm::Value* float_with_sticky(Emitter& em, llvm::Value* d);
// __nv_cvt_e8m0_to_bf16raw: the i16 bfloat16 bits of an e8m0 code (0 is 2^-127, 0xFF a NaN).
llvm::Value* e8m0_to_bfloat16(Emitter& em, llvm::Value* byte);

}  // namespace cujit::intrinsics::fp8

namespace cujit::intrinsics {

// Why arguments (x..., saturate, <mode>) do not fit an fp8 storage function of `count` arguments, where <mode>
// is "fp8_interpretation" (fp8_interpretation_t) or "rounding" (cudaRoundMode: a constant must be cudaRoundZero
// or cudaRoundPosInf); "" when they fit.
std::string fp8_mode_problem(const std::vector<TypeRef>& args, size_t count, const std::string& mode);
// Adds "cuda.fp8.<...>"(x, saturate, <mode>) -> result, x converted to `x`, the modes to int32.
void add_fp8_function(Table& t, const std::string& name, TypeRef x, TypeRef result, const std::string& mode,
                      Lowerer lower);

}  // namespace cujit::intrinsics
