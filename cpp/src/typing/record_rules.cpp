// Records (numpy structured dtypes, numba's Record): which field `rec.name`,
// `rec['name']` and `rec[i]` name, and the type a field reads as (an array
// field is a C-contiguous view of the record's bytes, as numba's NestedArray).
#include "typing_internal.h"

namespace cujit::typing {

TypeRef record_field_value_type(TypeRef record, int index) {
  TypeRef field = record->element(static_cast<size_t>(index));
  if (field->kind() != TypeKind::NestedArray) return field;
  // An array field of a packed record may sit at any byte: its view is an unaligned array.
  return types::array(field->element(0), static_cast<int>(field->shape().size()), 'C', false, record->aligned());
}

int record_field_index(TypeRef record, const ir::Expr& key, std::string& error) {
  std::string fields;
  for (const std::string& name : record->field_names()) fields += (fields.empty() ? "'" : ", '") + name + "'";
  if (ir::is_string_constant(key)) {
    int index = record->field_index(key.global.name);
    if (index < 0) error = "Record has no field '" + key.global.name + "' (its fields: " + fields + ")";
    return index;
  }
  if (key.type != nullptr && key.type->kind() == TypeKind::IntegerLiteral) {
    int64_t n = static_cast<int64_t>(record->field_names().size());
    int64_t i = key.type->literal_value();
    if (i < 0) i += n;
    if (i < 0 || i >= n) {
      error = "Record field index " + std::to_string(key.type->literal_value()) + " out of range (" +
              std::to_string(n) + " fields)";
      return -1;
    }
    return static_cast<int>(i);
  }
  error = "a record is indexed by a constant field name or a constant integer, not by " +
          (key.type ? key.type->name() : std::string("this expression"));
  return -1;
}

}  // namespace cujit::typing
