// Launcher slots of argument leaves (cujit/argument_slots.h).
#include "cujit/argument_slots.h"

#include <algorithm>

namespace cujit::driver {

std::optional<ArgSlot> slot_for(TypeRef t) {
  if (t->kind() == TypeKind::Array) return ArgSlot::make_array(t->ndim());
  if (t->is_boolean()) return ArgSlot::make_scalar(ScalarKind::Bool, 1);
  if (t->is_integer()) {
    TypeRef u = t->unliteral();
    return ArgSlot::make_scalar(u->is_signed() ? ScalarKind::Signed : ScalarKind::Unsigned,
                                std::max(u->bitwidth(), 8) / 8);
  }
  if (t->is_float()) return ArgSlot::make_scalar(ScalarKind::Float, t->bitwidth() / 8);
  if (t->kind() == TypeKind::Datetime || t->kind() == TypeKind::Timedelta)
    return ArgSlot::make_scalar(ScalarKind::Signed, 8);  // its count of units
  if (t->kind() == TypeKind::CPointer || t->kind() == TypeKind::VoidPtr || t->kind() == TypeKind::Record)
    return ArgSlot::make_scalar(ScalarKind::Unsigned, 8);  // an address (a record's: of its copy)
  return std::nullopt;
}

}  // namespace cujit::driver
