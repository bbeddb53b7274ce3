// CUDA's vector types as numba-cuda names them: <base>x<N> for the ten base
// types int8..uint64, float32, float64 and N = 1..4 (float32x4), the C names
// users port from (float4, uchar2, long3...), and Dim3, the type of
// cuda.threadIdx / blockIdx / blockDim / gridDim. A vector type is an
// immutable value of N elements read as .x .y .z .w; in memory and across
// calls it is laid out as CUDA's struct of that name (float4: 16 bytes,
// 16-byte aligned; float3: 12 bytes, 4-byte aligned).
#pragma once

#include <string>
#include <vector>

#include "cujit/types.h"

namespace cujit::types {

// The vector type of `count` (1..4) elements of `base` (one of the ten base types), named "<base>x<count>";
// nullptr for any other base or count.
TypeRef vector(TypeRef base, int count);
// numba-cuda's Dim3: three int32 read as x, y, z.
TypeRef dim3();

// Every vector type numba-cuda defines, in its order (int8x1..int8x4, int16x1, ..., float64x4).
const std::vector<TypeRef>& vector_types();
// The CUDA C names of a vector type as numba-cuda aliases them on a 64-bit Linux host ("float4" for
// float32x4; "long2" and "longlong2" for int64x2); empty for Dim3.
std::vector<std::string> vector_aliases(TypeRef vector);
// A vector type by its name or one of its aliases ("float32x4", "float4", "Dim3", "dim3"); nullptr if none.
TypeRef lookup_vector(const std::string& name);

// The component names of a vector type: "x", "y", "z", "w" (as many as it has).
std::vector<std::string> vector_fields(TypeRef vector);
// The byte alignment of CUDA's struct of that name: N x element size for N = 2 and 4 (at most 16),
// the element size otherwise (float3, int1, Dim3).
int64_t vector_alignment(TypeRef vector);

}  // namespace cujit::types
