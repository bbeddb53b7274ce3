#include "cujit/bytecode_units.h"

namespace cujit::frontend::bytecode {

std::vector<CodeUnit> code_units(std::string_view raw, const CacheSizes& caches, uint8_t extended_arg) {
  std::vector<CodeUnit> out;
  out.reserve(raw.size() / 2);
  uint32_t arg_high = 0;
  bool prefixed = false;
  uint32_t start = 0;
  const auto* bytes = reinterpret_cast<const uint8_t*>(raw.data());
  for (size_t offset = 0; offset + 1 < raw.size();) {
    uint8_t opcode = bytes[offset];
    uint32_t arg = bytes[offset + 1] | arg_high;
    size_t after = offset + 2 + 2 * size_t{caches[opcode]};
    if (opcode == extended_arg) {
      arg_high = arg << 8;
      if (!prefixed) start = static_cast<uint32_t>(offset);
      prefixed = true;
    } else {
      out.push_back({prefixed ? start : static_cast<uint32_t>(offset), static_cast<uint32_t>(offset),
                     static_cast<uint32_t>(after), arg, opcode});
      arg_high = 0;
      prefixed = false;
    }
    offset = after;
  }
  return out;
}

uint32_t jump_target(const CodeUnit& unit, bool absolute, bool backward) {
  if (absolute) return 2 * unit.arg;
  return backward ? unit.after - 2 * unit.arg : unit.after + 2 * unit.arg;
}

}  // namespace cujit::frontend::bytecode
