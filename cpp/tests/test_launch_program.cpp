// Launch programs (cujit/launch_program.h): the one reading of a kernel's arguments that the launch fast path, the
// Python launch path and the CPU target follow, and the fast path's table by type key.
#include <gtest/gtest.h>

#include "cujit/launch_program.h"
#include "cujit/signature_parser.h"

namespace cujit::driver {
namespace {

using Kind = LeafOp::Kind;

TypeRef parse(const char* type) {
  Expected<TypeRef> t = parse_type(type);
  EXPECT_TRUE(static_cast<bool>(t)) << type;
  return *t;
}

std::vector<TypeRef> parse_all(std::initializer_list<const char*> types) {
  std::vector<TypeRef> out;
  for (const char* t : types) out.push_back(parse(t));
  return out;
}

ArgumentProgram program(std::initializer_list<const char*> types) {
  auto made = argument_program(parse_all(types));
  EXPECT_TRUE(std::holds_alternative<ArgumentProgram>(made));
  return std::get<ArgumentProgram>(made);
}

std::vector<KeyWord> key(std::initializer_list<const char*> leaves) {
  std::vector<KeyWord> out;
  for (const char* leaf : leaves) {
    if (std::string(leaf) == "(")
      out.push_back(kTupleOpen);
    else if (std::string(leaf) == ")")
      out.push_back(kTupleClose);
    else
      out.push_back(reinterpret_cast<KeyWord>(parse(leaf)));
  }
  return out;
}

TEST(LaunchProgram, OneOpPerValueReadInSlotOrder) {
  ArgumentProgram p = program({"float32[::1]", "complex64", "UniTuple(int32, 2)", "voidptr"});
  // array, complex (two slots), two tuple elements, pointer
  ASSERT_EQ(p.slots.size(), 6u);
  ASSERT_EQ(p.ops.size(), 5u);
  EXPECT_EQ(p.ops[0].kind, Kind::Array);
  EXPECT_EQ(p.ops[0].type->ndim(), 1);
  EXPECT_EQ(p.ops[1].kind, Kind::Complex);
  EXPECT_EQ(p.ops[1].slot, 1u);  // the imaginary part in slot 2
  EXPECT_TRUE(p.ops[1].path.empty());
  EXPECT_EQ(p.ops[2].kind, Kind::Scalar);
  EXPECT_EQ(p.ops[2].argument, 2u);
  EXPECT_EQ(p.ops[2].path, std::vector<unsigned>{0});
  EXPECT_EQ(p.ops[3].path, std::vector<unsigned>{1});
  EXPECT_EQ(p.ops[3].slot, 4u);
  EXPECT_EQ(p.ops[4].kind, Kind::Pointer);
  EXPECT_EQ(p.ops[4].argument, 3u);
}

TEST(LaunchProgram, AComplexInATupleIsReadAtTheComplex) {
  ArgumentProgram p = program({"Tuple((int32, complex128))"});
  ASSERT_EQ(p.ops.size(), 2u);
  EXPECT_EQ(p.ops[1].kind, Kind::Complex);
  EXPECT_EQ(p.ops[1].path, std::vector<unsigned>{1});
}

TEST(LaunchProgram, WhatNoLaunchPassesNamesItsArgument) {
  auto made = argument_program(parse_all({"int32", "bfloat16"}));
  ASSERT_TRUE(std::holds_alternative<UnpassableArgument>(made));
  EXPECT_EQ(std::get<UnpassableArgument>(made).argument, 1u);
}

TEST(LaunchProgram, FastProgramWhenWhatWasReadMatches) {
  auto params = parse_all({"float32[::1]", "float64", "UniTuple(int32, 2)"});
  EXPECT_TRUE(fast_program(params, key({"float32[::1]", "float64", "(", "int64", "int64", ")"})).has_value());
  // an array of another ndim, a scalar where an array was read, a count that differs: the Python path
  EXPECT_FALSE(fast_program(params, key({"float32[:, ::1]", "float64", "(", "int64", "int64", ")"})).has_value());
  EXPECT_FALSE(fast_program(params, key({"float32", "float64", "(", "int64", "int64", ")"})).has_value());
  EXPECT_FALSE(fast_program(params, key({"float32[::1]", "float64"})).has_value());
}

TEST(LaunchProgram, PointersTakeThePythonPath) {
  EXPECT_FALSE(fast_program(parse_all({"voidptr"}), key({"int64"})).has_value());
}

TEST(LaunchProgram, KeyTypesRebuildTuples) {
  std::vector<TypeRef> types = key_types(key({"int64", "(", "float32", "float64[::1]", ")"}));
  ASSERT_EQ(types.size(), 2u);
  EXPECT_EQ(types[0], parse("int64"));
  EXPECT_EQ(types[1]->kind(), TypeKind::Tuple);
  EXPECT_EQ(types[1]->name(), parse("Tuple((float32, float64[::1]))")->name());
}

TEST(LaunchTable, FindsWhatWasAddedUntilCleared) {
  LaunchTable<int> table;
  auto a = key({"int64"}), b = key({"float64"});
  EXPECT_EQ(table.find(a), nullptr);
  table.add(a, std::make_shared<int>(1));
  table.add(b, std::make_shared<int>(2));
  EXPECT_EQ(*table.find(a), 1);
  EXPECT_EQ(*table.find(a), 1);  // the last one found, again
  EXPECT_EQ(*table.find(b), 2);
  EXPECT_EQ(table.size(), 2u);
  table.clear();
  EXPECT_EQ(table.find(a), nullptr);
  EXPECT_EQ(table.size(), 0u);
}

TEST(LaunchProgram, ARecordScalarIsTheAddressOfACopyThePythonPathMakes) {
  TypeRef pair = types::record({{"v", types::float32(), 0, ""}, {"i", types::int32(), 4, ""}}, 8, true);
  auto made = argument_program({types::int32(), pair});
  ASSERT_TRUE(std::holds_alternative<ArgumentProgram>(made));
  const ArgumentProgram& p = std::get<ArgumentProgram>(made);
  ASSERT_EQ(p.ops.size(), 2u);
  EXPECT_EQ(p.ops[1].kind, Kind::Record);
  EXPECT_EQ(p.slots[1].size, 8);  // an address
  std::vector<KeyWord> read{reinterpret_cast<KeyWord>(types::int32()), reinterpret_cast<KeyWord>(pair)};
  EXPECT_FALSE(fast_program({types::int32(), pair}, read).has_value());
}

}  // namespace
}  // namespace cujit::driver
