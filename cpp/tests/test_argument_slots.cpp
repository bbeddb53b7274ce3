// The launcher slots of argument leaves (cujit/argument_slots.h): the one rule
// the fast path, the Python launch path and the CPU target share, with the
// parameter layout it gives a launcher.
#include <gtest/gtest.h>

#include "cujit/argument_slots.h"
#include "cujit/signature_parser.h"

namespace cujit::driver {
namespace {

TypeRef parse(const char* type) {
  Expected<TypeRef> t = parse_type(type);
  EXPECT_TRUE(static_cast<bool>(t)) << type;
  return *t;
}

ArgSlot slot(const char* type) {
  std::optional<ArgSlot> s = slot_for(parse(type));
  EXPECT_TRUE(s.has_value()) << type;
  return s.value_or(ArgSlot{});
}

TEST(ArgumentSlots, ScalarsArePassedAtTheirWidth) {
  for (auto [type, kind, size] : {std::tuple{"int8", ScalarKind::Signed, 1},
                                  {"uint16", ScalarKind::Unsigned, 2},
                                  {"int64", ScalarKind::Signed, 8},
                                  {"float16", ScalarKind::Float, 2},
                                  {"float32", ScalarKind::Float, 4},
                                  {"float64", ScalarKind::Float, 8},
                                  {"boolean", ScalarKind::Bool, 1},
                                  {"voidptr", ScalarKind::Unsigned, 8}}) {
    ArgSlot s = slot(type);
    EXPECT_EQ(s.kind, ArgSlot::Kind::Scalar) << type;
    EXPECT_EQ(s.scalar, kind) << type;
    EXPECT_EQ(s.size, size) << type;
    EXPECT_EQ(s.param_count(), 1) << type;
  }
}

TEST(ArgumentSlots, AnArrayIsItsStructsFields) {
  ArgSlot s = slot("float32[:, :, ::1]");
  EXPECT_EQ(s.kind, ArgSlot::Kind::Array);
  EXPECT_EQ(s.ndim, 3);
  EXPECT_EQ(s.param_count(), 5 + 2 * 3);  // meminfo, parent, nitems, itemsize, data, shape x3, strides x3
}

TEST(ArgumentSlots, WhatNoLaunchPassesHasNoSlot) {
  EXPECT_FALSE(slot_for(parse("complex64")).has_value());  // argument_leaves splits it into two floats
  EXPECT_FALSE(slot_for(parse("bfloat16")).has_value());
}

TEST(ArgumentSlots, EveryLeafOfAnArgumentHasOne) {
  for (const char* type : {"Tuple((int32, float64[:], complex128))", "UniTuple(float32, 3)", "complex64"}) {
    for (const types::ArgumentLeaf& leaf : types::argument_leaves(parse(type)))
      EXPECT_TRUE(slot_for(leaf.type).has_value()) << type << ": " << leaf.type->name();
  }
}

}  // namespace
}  // namespace cujit::driver
