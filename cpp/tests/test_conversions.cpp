// numba's conversion rating and overload choice (cujit/conversions.h): the one definition that typing (calls
// of operators and builtins) and the dispatcher (a launch among a kernel's explicit signatures) both use.
#include <gtest/gtest.h>

#include "cujit/conversions.h"

namespace cujit {
namespace {

using types::float32;
using types::float64;
using types::int32;
using types::int64;

TEST(Conversions, Kinds) {
  EXPECT_EQ(can_convert(int32(), int32()), Conversion::Exact);
  EXPECT_EQ(can_convert(int32(), int64()), Conversion::Promote);
  EXPECT_EQ(can_convert(int64(), float64()), Conversion::Safe);
  EXPECT_EQ(can_convert(float64(), int32()), Conversion::Unsafe);
}

TEST(BestOverloads, FewestUnsafeThenSafeThenPromote) {
  // (int64, float64) against three candidates: the exact one wins over one unsafe and one promote step.
  EXPECT_EQ(best_overloads({{int32(), float64()}, {int64(), float32()}, {int64(), float64()}}, {int64(), float64()}),
            (std::vector<size_t>{2}));
  // One unsafe step each: a tie, in candidate order.
  EXPECT_EQ(best_overloads({{int32()}, {float32()}}, {int64()}), (std::vector<size_t>{0, 1}));
}

TEST(BestOverloads, NoneWhenNothingAccepts) {
  EXPECT_TRUE(best_overloads({{int32()}}, {int64(), int64()}).empty());
  EXPECT_TRUE(best_overloads({}, {int64()}).empty());
}

TEST(ChooseOverload, FirstOfTheBest) {
  auto chosen = choose_overload({{{int32()}, int32()}, {{float32()}, float32()}}, {int64()});
  ASSERT_TRUE(chosen.has_value());
  EXPECT_EQ(chosen->result, int32());
}

TEST(BestOverloads, LiteralsRateAsTheirValueType) {
  EXPECT_EQ(best_overloads({{int32()}, {int64()}}, {types::integer_literal(3)}), (std::vector<size_t>{1}));
}

}  // namespace
}  // namespace cujit
