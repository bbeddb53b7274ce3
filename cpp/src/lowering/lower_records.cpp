// Records (numba's Record data model): a record value is the address of its
// bytes; a field lives at its byte offset. Fields of a packed record (numpy's
// align=False) are read and written without assuming any alignment; a nested
// record reads as its address and an array field as a C view of its bytes.
#include "function_lowering.h"

namespace cujit::lowering {

using ir::Expr;
using llvm::Value;

Value* FunctionLowering::record_field_address(Value* rec, TypeRef record, int field) {
  return b_.CreateInBoundsGEP(b_.getInt8Ty(), rec, b_.getInt64(record->field_offsets()[field]));
}

Value* FunctionLowering::load_field(const Expr& access) {
  TypeRef record = access.operands[0]->type;
  int field = access.field;
  TypeRef ft = record->element(static_cast<size_t>(field));
  Value* ptr = record_field_address(lower_expr(*access.operands[0]), record, field);
  if (ft->kind() == TypeKind::NestedArray) return make_c_array(access.type, ptr, ft->shape());
  return load_element(ptr, ft, record->aligned() ? 0 : 1);
}

void FunctionLowering::store_field(const Expr& target, Value* value, TypeRef type) {
  TypeRef record = target.operands[0]->type;
  int field = target.field;
  TypeRef ft = record->element(static_cast<size_t>(field));
  Value* ptr = record_field_address(lower_expr(*target.operands[0]), record, field);
  if (ft->kind() == TypeKind::NestedArray) {  // rec.arr = a: stored into the field's view, broadcast as numpy does
    assign_to_view(make_c_array(target.type, ptr, ft->shape()), target.type, value, type);
    return;
  }
  store_element(ptr, cast(value, type, ft), ft, record->aligned() ? 0 : 1);
}

// A tuple stored into or returned as a record: a new record written field by field.
Value* FunctionLowering::record_from_tuple(Value* tuple, TypeRef from, TypeRef record) {
  std::vector<Value*> fields;
  for (size_t i = 0; i < record->count(); ++i)
    fields.push_back(
        cast(b_.CreateExtractValue(tuple, static_cast<unsigned>(i)), from->element(i), record->element(i)));
  return record_from_values(fields, record);
}

// A new record (bytes of this frame) of its fields' values, each of its field's type.
Value* FunctionLowering::record_from_values(const std::vector<Value*>& fields, TypeRef record) {
  llvm::AllocaInst* bytes = entry_alloca(state_.model.storage_type(record), "record");
  bytes->setAlignment(llvm::Align(types::alignment(record)));
  for (size_t i = 0; i < record->count(); ++i) {
    TypeRef ft = record->element(i);
    store_element(record_field_address(bytes, record, static_cast<int>(i)), fields[i], ft, record->aligned() ? 0 : 1);
  }
  return bytes;
}

}  // namespace cujit::lowering
