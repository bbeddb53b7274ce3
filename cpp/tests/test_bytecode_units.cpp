// Reading co_code's instructions for the bytecode frontend (cujit/bytecode_units.h): EXTENDED_ARG prefixes,
// inline caches, jump targets.
#include <gtest/gtest.h>

#include <string>

#include "cujit/bytecode_units.h"

namespace cujit::frontend::bytecode {
namespace {

constexpr uint8_t kExtendedArg = 144;

std::string bytes(std::initializer_list<int> values) {
  std::string out;
  for (int v : values) out.push_back(static_cast<char>(v));
  return out;
}

TEST(CodeUnits, PlainInstructions) {
  CacheSizes caches{};
  auto units = code_units(bytes({100, 1, 83, 0}), caches, kExtendedArg);
  ASSERT_EQ(units.size(), 2u);
  EXPECT_EQ(units[0].opcode, 100);
  EXPECT_EQ(units[0].arg, 1u);
  EXPECT_EQ(units[0].start, 0u);
  EXPECT_EQ(units[0].after, 2u);
  EXPECT_EQ(units[1].offset, 2u);
}

TEST(CodeUnits, ExtendedArgumentsFoldIntoTheNextInstruction) {
  CacheSizes caches{};
  auto units = code_units(bytes({kExtendedArg, 1, kExtendedArg, 2, 100, 3, 83, 0}), caches, kExtendedArg);
  ASSERT_EQ(units.size(), 2u);
  EXPECT_EQ(units[0].arg, (1u << 16) | (2u << 8) | 3u);
  EXPECT_EQ(units[0].start, 0u);  // where its first prefix is: a jump there lands on it
  EXPECT_EQ(units[0].offset, 4u);
  EXPECT_EQ(units[1].arg, 0u);
  EXPECT_EQ(units[1].start, 6u);
}

TEST(CodeUnits, CachesAreSkipped) {
  CacheSizes caches{};
  caches[116] = 4;  // LOAD_GLOBAL's four cache entries (3.11)
  auto units = code_units(bytes({116, 1, 0, 0, 0, 0, 0, 0, 0, 0, 83, 0}), caches, kExtendedArg);
  ASSERT_EQ(units.size(), 2u);
  EXPECT_EQ(units[0].after, 10u);
  EXPECT_EQ(units[1].offset, 10u);
}

TEST(CodeUnits, TruncatedCodeEndsTheList) {
  CacheSizes caches{};
  caches[116] = 4;
  auto units = code_units(bytes({100, 0, 116, 1, 0, 0}), caches, kExtendedArg);
  ASSERT_EQ(units.size(), 2u);  // the caches run past the end: the instruction is kept, nothing after it
  EXPECT_TRUE(code_units(bytes({100}), caches, kExtendedArg).empty());
}

TEST(JumpTarget, RelativeAbsoluteAndBackward) {
  CodeUnit unit{10, 10, 14, 3, 0};
  EXPECT_EQ(jump_target(unit, false, false), 20u);
  EXPECT_EQ(jump_target(unit, false, true), 8u);
  EXPECT_EQ(jump_target(unit, true, false), 6u);
}

}  // namespace
}  // namespace cujit::frontend::bytecode
