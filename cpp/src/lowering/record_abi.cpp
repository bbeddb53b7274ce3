// How a record crosses a C-ABI call by value (record_abi.h).
#include "record_abi.h"

#include <algorithm>

#include "vector_abi.h"

namespace cujit::lowering {
namespace {

int64_t align_to(int64_t n, int64_t a) { return (n + a - 1) / a * a; }

llvm::Type* field_type(llvm::LLVMContext& ctx, TypeRef t) {
  switch (t->kind()) {
    case TypeKind::Record:
      return record_by_value_type(ctx, t);
    case TypeKind::NestedArray: {
      uint64_t count = 1;
      for (int64_t d : t->shape()) count *= static_cast<uint64_t>(d);
      return llvm::ArrayType::get(field_type(ctx, t->element(0)), count);
    }
    case TypeKind::Complex: {
      llvm::Type* part = t->bitwidth() == 64 ? llvm::Type::getFloatTy(ctx) : llvm::Type::getDoubleTy(ctx);
      return llvm::StructType::get(ctx, {part, part});
    }
    case TypeKind::Vector:
      return vector_data_type(ctx, t);
    case TypeKind::Float:
      return t->bitwidth() == 16   ? llvm::Type::getInt16Ty(ctx)
             : t->bitwidth() == 32 ? llvm::Type::getFloatTy(ctx)
                                   : llvm::Type::getDoubleTy(ctx);
    default:  // integers, booleans (a byte), pointers' 8 bytes
      return llvm::Type::getIntNTy(ctx, static_cast<unsigned>(types::itemsize(t) * 8));
  }
}

}  // namespace

llvm::Type* record_by_value_type(llvm::LLVMContext& ctx, TypeRef record) {
  const bool packed = !record->aligned();
  const int64_t size = types::itemsize(record);
  std::vector<size_t> order(record->count());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  const auto& offsets = record->field_offsets();
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return offsets[a] < offsets[b]; });
  std::vector<llvm::Type*> elements;
  auto pad = [&](int64_t bytes) {
    if (bytes > 0) elements.push_back(llvm::ArrayType::get(llvm::Type::getInt8Ty(ctx), static_cast<uint64_t>(bytes)));
  };
  int64_t cursor = 0;
  for (size_t i : order) {
    TypeRef ft = record->element(i);
    const int64_t offset = offsets[i];
    if (offset < cursor) continue;  // a field over another (a title's alias, a union): its bytes are there already
    const int64_t natural = packed ? cursor : align_to(cursor, types::alignment(ft));
    if (offset < natural || (!packed && offset % types::alignment(ft) != 0))  // not C's layout: its bytes
      return llvm::ArrayType::get(llvm::Type::getInt8Ty(ctx), static_cast<uint64_t>(size));
    pad(offset - cursor);
    elements.push_back(field_type(ctx, ft));
    cursor = offset + types::itemsize(ft);
  }
  pad(size - cursor);
  return llvm::StructType::get(ctx, elements, packed);
}

}  // namespace cujit::lowering
