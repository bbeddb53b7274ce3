// CUDA vector types between registers (a struct of elements) and memory or
// parameters (CUDA's layout): see vector_abi.h.
#include "vector_abi.h"

#include "cujit/types.h"

namespace cujit::lowering {
namespace {

using llvm::Type;
using llvm::Value;

Type* element_type(llvm::LLVMContext& ctx, TypeRef vector) {
  TypeRef e = vector->element(0);
  if (e->is_float()) return e->bitwidth() == 32 ? Type::getFloatTy(ctx) : Type::getDoubleTy(ctx);
  return Type::getIntNTy(ctx, e->bitwidth());
}

Value* pack(llvm::IRBuilder<>& b, const std::vector<Value*>& elements, size_t first, unsigned n) {
  Value* out = llvm::PoisonValue::get(llvm::FixedVectorType::get(elements[first]->getType(), n));
  for (unsigned i = 0; i < n; ++i) out = b.CreateInsertElement(out, elements[first + i], b.getInt32(i));
  return out;
}

}  // namespace

Type* vector_value_type(llvm::LLVMContext& ctx, TypeRef vector) {
  return llvm::StructType::get(ctx, std::vector<Type*>(vector->count(), element_type(ctx, vector)));
}

Type* vector_data_type(llvm::LLVMContext& ctx, TypeRef vector) {
  Type* element = element_type(ctx, vector);
  unsigned n = static_cast<unsigned>(vector->count());
  int bits = vector->element(0)->bitwidth();
  if (n == 2 && bits == 8) return llvm::ArrayType::get(Type::getInt16Ty(ctx), 1);
  if (n == 4 && bits == 64) return llvm::ArrayType::get(llvm::FixedVectorType::get(element, 2), 2);
  if (n == 2 || n == 4) return llvm::FixedVectorType::get(element, n);
  return vector_value_type(ctx, vector);
}

Value* vector_to_data(llvm::IRBuilder<>& b, Value* value, TypeRef vector) {
  Type* data = vector_data_type(b.getContext(), vector);
  if (data == value->getType()) return value;
  std::vector<Value*> elements;
  for (unsigned i = 0; i < vector->count(); ++i) elements.push_back(b.CreateExtractValue(value, i));
  if (data->isVectorTy()) return pack(b, elements, 0, static_cast<unsigned>(elements.size()));
  Value* out = llvm::PoisonValue::get(data);
  if (elements.size() == 4)  // [2 x <2 x T>]
    return b.CreateInsertValue(b.CreateInsertValue(out, pack(b, elements, 0, 2), 0), pack(b, elements, 2, 2), 1);
  // [1 x i16]: x in the low byte, y in the high byte (little endian, as the bytes lie in memory).
  Value* x = b.CreateZExt(elements[0], b.getInt16Ty());
  Value* y = b.CreateShl(b.CreateZExt(elements[1], b.getInt16Ty()), 8);
  return b.CreateInsertValue(out, b.CreateOr(x, y), 0);
}

Value* vector_from_data(llvm::IRBuilder<>& b, Value* data, TypeRef vector) {
  Type* value_type = vector_value_type(b.getContext(), vector);
  if (data->getType() == value_type) return data;
  std::vector<Value*> elements;
  unsigned n = static_cast<unsigned>(vector->count());
  if (data->getType()->isVectorTy()) {
    for (unsigned i = 0; i < n; ++i) elements.push_back(b.CreateExtractElement(data, b.getInt32(i)));
  } else if (n == 4) {  // [2 x <2 x T>]
    for (unsigned i = 0; i < n; ++i)
      elements.push_back(b.CreateExtractElement(b.CreateExtractValue(data, i / 2), b.getInt32(i % 2)));
  } else {  // [1 x i16]
    Value* bits = b.CreateExtractValue(data, 0);
    elements.push_back(b.CreateTrunc(bits, b.getInt8Ty()));
    elements.push_back(b.CreateTrunc(b.CreateLShr(bits, 8), b.getInt8Ty()));
  }
  Value* out = llvm::PoisonValue::get(value_type);
  for (unsigned i = 0; i < n; ++i) out = b.CreateInsertValue(out, elements[i], i);
  return out;
}

}  // namespace cujit::lowering
