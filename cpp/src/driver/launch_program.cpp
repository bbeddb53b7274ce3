// Launch programs (cujit/launch_program.h): argument leaves to launcher slots and what reads each.
#include "cujit/launch_program.h"

namespace cujit::driver {
namespace {

using Role = types::ArgumentLeaf::Role;

bool is_pointer(TypeRef t) { return t->kind() == TypeKind::CPointer || t->kind() == TypeKind::VoidPtr; }

}  // namespace

std::variant<ArgumentProgram, UnpassableArgument> argument_program(const std::vector<TypeRef>& params) {
  ArgumentProgram program;
  for (std::uint32_t argument = 0; argument < params.size(); ++argument) {
    for (types::ArgumentLeaf& leaf : types::argument_leaves(params[argument])) {
      std::optional<ArgSlot> slot = slot_for(leaf.type);
      if (!slot || leaf.role == Role::OptionalFlag) return UnpassableArgument{argument, params[argument]};
      const auto at = static_cast<std::uint32_t>(program.slots.size());
      program.slots.push_back(*slot);
      if (leaf.role == Role::ComplexImag) continue;  // the Complex op of its real part fills it
      LeafOp op;
      op.argument = argument;
      op.slot = at;
      op.type = leaf.type;
      op.path = std::move(leaf.path);
      if (leaf.role == Role::ComplexReal) {
        op.kind = LeafOp::Kind::Complex;
        op.path.pop_back();  // the part's index: the value is the complex number
      } else if (leaf.type->kind() == TypeKind::Array) {
        op.kind = LeafOp::Kind::Array;
      } else if (is_pointer(leaf.type)) {
        op.kind = LeafOp::Kind::Pointer;
      } else if (leaf.type->kind() == TypeKind::Record) {
        op.kind = LeafOp::Kind::Record;
      }
      program.ops.push_back(std::move(op));
    }
  }
  return program;
}

namespace {

TypeRef key_type(const std::vector<KeyWord>& key, std::size_t& at) {
  if (key[at] != kTupleOpen) return reinterpret_cast<TypeRef>(key[at++]);
  ++at;
  std::vector<TypeRef> elements;
  while (key[at] != kTupleClose) elements.push_back(key_type(key, at));
  ++at;
  return types::tuple(elements);
}

}  // namespace

std::vector<TypeRef> key_types(const std::vector<KeyWord>& key) {
  std::vector<TypeRef> out;
  for (std::size_t at = 0; at < key.size();) out.push_back(key_type(key, at));
  return out;
}

std::optional<ArgumentProgram> fast_program(const std::vector<TypeRef>& params, const std::vector<KeyWord>& key) {
  auto made = argument_program(params);
  auto* program = std::get_if<ArgumentProgram>(&made);
  if (program == nullptr) return std::nullopt;
  std::vector<TypeRef> read;  // the key's leaf types, in order
  for (KeyWord w : key)
    if (w != kTupleOpen && w != kTupleClose) read.push_back(reinterpret_cast<TypeRef>(w));
  if (read.size() != program->ops.size()) return std::nullopt;
  for (std::size_t i = 0; i < read.size(); ++i) {
    const LeafOp& op = program->ops[i];
    const bool array = op.kind == LeafOp::Kind::Array;
    if (op.kind == LeafOp::Kind::Pointer || op.kind == LeafOp::Kind::Record) return std::nullopt;
    if (!array && !op.type->is_number()) return std::nullopt;  // bfloat16 and other scalars Python converts
    if (array != (read[i]->kind() == TypeKind::Array)) return std::nullopt;
    if (array && read[i]->ndim() != op.type->ndim()) return std::nullopt;
  }
  return std::move(*program);
}

}  // namespace cujit::driver
