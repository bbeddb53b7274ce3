// The instructions of a CPython code object's co_code, for the bytecode frontend's decoder (the binding
// cpp/bindings/py_bytecode.cpp, with the version's table of python/cujit/bytecode/_ops.py): each instruction's
// opcode and whole argument (its EXTENDED_ARG prefixes folded in), where it starts (its first prefix), and
// where the next one starts (after its inline caches, 3.11 on). No Python here: the bytes and the version's
// cache sizes are all it reads.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

namespace cujit::frontend::bytecode {

struct CodeUnit {
  uint32_t start;   // the offset of its first EXTENDED_ARG, or its own
  uint32_t offset;  // its own offset
  uint32_t after;   // the offset after it and its caches
  uint32_t arg;
  uint8_t opcode;
};

// The inline cache entries (code units) after each opcode; all zero before 3.11.
using CacheSizes = std::array<uint8_t, 256>;

// Every instruction of `raw` but EXTENDED_ARG, in order. A truncated last instruction (an odd length, or caches
// running past the end) ends the list where the bytes end.
std::vector<CodeUnit> code_units(std::string_view raw, const CacheSizes& caches, uint8_t extended_arg);

// The offset a jump at `unit` goes to: `2 * arg` for a version's absolute jumps (3.10), else `arg` code units
// after (or, backward, before) the end of its caches.
uint32_t jump_target(const CodeUnit& unit, bool absolute, bool backward);

}  // namespace cujit::frontend::bytecode
