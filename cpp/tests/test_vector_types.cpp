// CUDA vector types without Python: their names and numba-cuda's aliases, CUDA's layout of each, and the
// intrinsic table's rows for them (the constructors' typing rule and its explanations, the component reads).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cujit/intrinsics.h"
#include "cujit/signature_parser.h"
#include "cujit/vector_types.h"

namespace cujit {
namespace {

TypeRef parsed(const std::string& text) {
  Expected<TypeRef> t = parse_type(text);
  EXPECT_TRUE(static_cast<bool>(t)) << text;
  return t ? *t : nullptr;
}

TEST(VectorTypes, NamesAndAliases) {
  EXPECT_EQ(types::vector_types().size(), 40u);
  TypeRef f4 = types::vector(types::float32(), 4);
  EXPECT_EQ(f4->name(), "float32x4");
  EXPECT_EQ(f4->kind(), TypeKind::Vector);
  EXPECT_EQ(f4->count(), 4u);
  EXPECT_EQ(parsed("float32x4"), f4);
  EXPECT_EQ(parsed("float4"), f4);
  EXPECT_EQ(parsed("long2"), types::vector(types::int64(), 2));
  EXPECT_EQ(parsed("longlong2"), types::vector(types::int64(), 2));
  EXPECT_EQ(parsed("char3"), types::vector(types::int8(), 3));
  EXPECT_EQ(parsed("uchar1"), types::vector(types::uint8(), 1));
  EXPECT_EQ(parsed("double2"), types::vector(types::float64(), 2));
  EXPECT_EQ(parsed("dim3"), types::dim3());
  EXPECT_EQ(types::vector_aliases(types::vector(types::int64(), 3)), (std::vector<std::string>{"long3", "longlong3"}));
  EXPECT_TRUE(types::vector_aliases(types::dim3()).empty());
  EXPECT_EQ(types::vector(types::float16(), 2), nullptr);  // numba-cuda has no half vectors
  EXPECT_EQ(types::vector(types::float32(), 5), nullptr);
  EXPECT_NE(types::dim3(), types::vector(types::int32(), 3));  // same elements, another type
}

TEST(VectorTypes, CudaLayout) {
  auto layout = [](TypeRef base, int n) {
    TypeRef v = types::vector(base, n);
    return std::make_pair(types::itemsize(v), types::alignment(v));
  };
  EXPECT_EQ(layout(types::float32(), 4), std::make_pair(int64_t{16}, int64_t{16}));
  EXPECT_EQ(layout(types::float32(), 3), std::make_pair(int64_t{12}, int64_t{4}));
  EXPECT_EQ(layout(types::float32(), 2), std::make_pair(int64_t{8}, int64_t{8}));
  EXPECT_EQ(layout(types::int8(), 2), std::make_pair(int64_t{2}, int64_t{2}));
  EXPECT_EQ(layout(types::int16(), 4), std::make_pair(int64_t{8}, int64_t{8}));
  EXPECT_EQ(layout(types::float64(), 4), std::make_pair(int64_t{32}, int64_t{16}));  // CUDA 12's double4
  EXPECT_EQ(layout(types::uint64(), 1), std::make_pair(int64_t{8}, int64_t{8}));
  EXPECT_EQ(types::alignment(types::dim3()), 4);
}

TEST(VectorTypes, ConstructorsTakeComponentsThatAddUp) {
  const intrinsics::Intrinsic* ctor = intrinsics::find("cuda.float32x4");
  ASSERT_NE(ctor, nullptr);
  TypeRef f = types::float32(), f1 = types::vector(f, 1), f2 = types::vector(f, 2), f3 = types::vector(f, 3);
  TypeRef f4 = types::vector(f, 4);
  for (const std::vector<TypeRef>& args : std::vector<std::vector<TypeRef>>{
           {f, f, f, f}, {f2, f2}, {f3, f}, {f, f3}, {f4}, {f1, f2, f}, {types::int32(), f, types::float64(), f1}}) {
    auto sig = ctor->type(args);
    ASSERT_TRUE(sig.has_value());
    EXPECT_EQ(sig->result, f4);
    for (size_t i = 0; i < args.size(); ++i)  // scalars convert to float32, vectors stay themselves
      EXPECT_EQ(sig->params[i], args[i]->kind() == TypeKind::Vector ? args[i] : f);
  }
  EXPECT_FALSE(ctor->type({f, f, f}).has_value());
  EXPECT_FALSE(ctor->type({f4, f}).has_value());
  EXPECT_FALSE(ctor->type({types::vector(types::int32(), 2), f2}).has_value());
  EXPECT_FALSE(ctor->type({types::complex64(), f3}).has_value());
  EXPECT_FALSE(ctor->type({types::dim3(), f}).has_value());
  EXPECT_EQ(ctor->explain({f, f, f}), "float32x4 has 4 components; the arguments give 3");
  EXPECT_EQ(ctor->explain({types::vector(types::int32(), 2), f2}),
            "int32x2 is not a vector of float32 (a float32x4 is built from scalars and float32 vectors)");
  EXPECT_EQ(ctor->explain({types::complex64(), f3}), "a complex64 does not convert to float32");
}

TEST(VectorTypes, ComponentsAreAttributeRows) {
  const intrinsics::Intrinsic* w = intrinsics::find("uint16x4.w");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->kind, intrinsics::Intrinsic::Kind::Attribute);
  EXPECT_EQ(w->type({types::vector(types::uint16(), 4)})->result, types::uint16());
  EXPECT_EQ(intrinsics::find("uint16x3.w"), nullptr);
  EXPECT_NE(intrinsics::find("Dim3.z"), nullptr);
  EXPECT_EQ(intrinsics::find("cuda.threadIdx")->type({})->result, types::dim3());
  for (const std::string& path : intrinsics::paths()) EXPECT_EQ(path.find("float32x4."), std::string::npos);
}

}  // namespace
}  // namespace cujit
