// Name mangling and the flags ABI tag against the verified vectors of spec
// §4.3-4.6 and the scenarios of §8.3 (items 47-55).
#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

#include "cujit/error.h"
#include "cujit/mangle.h"
#include "cujit/types.h"

namespace cujit {
namespace {

using mangle::decode_flags;
using mangle::encode_flags;
using mangle::escape_string;
using mangle::mangle_abi_tag;
using mangle::mangle_identifier;
using mangle::mangle_type;

// §8.3 item 47.
TEST(EscapeString, KeepsIdentifierCharacters) {
  EXPECT_EQ(escape_string("hello"), "hello");
  EXPECT_EQ(escape_string("my_func_2"), "my_func_2");
  EXPECT_EQ(escape_string(""), "");
}

TEST(EscapeString, EscapesEveryOtherByte) {
  EXPECT_EQ(escape_string("<lambda>"), "_3clambda_3e");
  EXPECT_EQ(escape_string("a.b"), "a_2eb");
  EXPECT_EQ(escape_string("<>.*[]()=+/- ,"), "_3c_3e_2e_2a_5b_5d_28_29_3d_2b_2f_2d_20_2c");
  EXPECT_EQ(escape_string("\xc3\xa9"), "_c3_a9");  // é
}

TEST(EscapeString, NonAsciiBecomesOneEscapePerUtf8Byte) {
  const std::string escaped = escape_string("f\xe2\x88\x82\xc6\x92\xc2\xa9z");  // "f∂ƒ©z"
  EXPECT_EQ(escaped, "f_e2_88_82_c6_92_c2_a9z");
  const std::string mangled = mangle_identifier("f\xe2\x88\x82\xc6\x92\xc2\xa9z");
  EXPECT_TRUE(std::regex_match(mangled, std::regex("^\\d+f(_[a-z0-9][a-z0-9])+z$"))) << mangled;
}

// §8.3 item 48.
TEST(MangleIdentifier, LengthPrefixed) {
  EXPECT_EQ(mangle_identifier("apple"), "5apple");
  EXPECT_EQ(mangle_identifier("ap_ple"), "6ap_ple");
  EXPECT_EQ(mangle_identifier("apple213"), "8apple213");
}

TEST(MangleIdentifier, LeadingDigitGetsUnderscore) {
  EXPECT_EQ(mangle_identifier("9abc"), "5_9abc");
  EXPECT_EQ(mangle_identifier(""), "0");
}

TEST(MangleIdentifier, DottedNameIsNested) {
  EXPECT_EQ(mangle_identifier("a.b"), "N1a1bE");
  EXPECT_EQ(mangle_identifier(".NumbaEnv.m"), "N08NumbaEnv1mE");
}

// §8.3 item 49: every code of §4.4.
TEST(MangleType, BuiltinCodes) {
  const std::vector<std::pair<TypeRef, std::string>> codes = {{types::none(), "v"},
                                                              {types::boolean(), "b"},
                                                              {types::uint8(), "h"},
                                                              {types::int8(), "a"},
                                                              {types::uint16(), "t"},
                                                              {types::int16(), "s"},
                                                              {types::uint32(), "j"},
                                                              {types::int32(), "i"},
                                                              {types::uint64(), "y"},
                                                              {types::int64(), "x"},
                                                              {types::float16(), "Dh"},
                                                              {types::float32(), "f"},
                                                              {types::float64(), "d"},
                                                              {types::lookup_scalar("intp"), "x"},
                                                              {types::lookup_scalar("uintp"), "y"},
                                                              {types::lookup_scalar("void"), "v"}};
  for (const auto& [type, code] : codes) EXPECT_EQ(mangle_type(type), code) << type->name();
}

// §8.3 item 50.
TEST(Mangle, FunctionsWithBuiltinArguments) {
  EXPECT_EQ(mangle::mangle("what", {types::int32(), types::float32()}), "_Z4whatif");
  EXPECT_EQ(mangle::mangle("a_little_brown_fox", {types::uint64(), types::uint32(), types::float64()}),
            "_Z18a_little_brown_foxyjd");
}

// §8.3 item 51.
TEST(MangleType, TypeWithoutManglingArgsUsesItsName) {
  EXPECT_EQ(mangle_type(types::opaque("mytype")), "6mytype");
  EXPECT_EQ(mangle_type(types::opaque("dotted.type")), "N6dotted4typeE");
}

// §8.3 item 52.
TEST(MangleValue, Integers) {
  EXPECT_EQ(mangle::mangle_value(123), "Li123E");
  EXPECT_EQ(mangle::mangle_value(-3), "Li-3E");
  EXPECT_EQ(mangle::mangle_value(0), "Li0E");
}

TEST(MangleValue, FloatsUsePythonRepr) {
  const std::string mangled = mangle::mangle_float_value(12.3);
  EXPECT_EQ(mangled, "7_12_2e3");
  EXPECT_TRUE(std::regex_match(mangled, std::regex("^\\d+_12_[0-9a-z][0-9a-z]3$")));
  EXPECT_EQ(mangle::mangle_float_value(1.0), "6_1_2e0");            // "1.0"
  EXPECT_EQ(mangle::mangle_float_value(-0.5), "8_2d0_2e5");         // "-0.5"
  EXPECT_EQ(mangle::mangle_float_value(1e16), "8_1e_2b16");         // "1e+16"
  EXPECT_EQ(mangle::mangle_float_value(1e15), "21_1000000000000000_2e0");  // "1000000000000000.0"
  EXPECT_EQ(mangle::mangle_float_value(0.0001), "9_0_2e0001");     // "0.0001"
  EXPECT_EQ(mangle::mangle_float_value(1.5e-05), "12_1_2e5e_2d05");  // "1.5e-05"
  EXPECT_EQ(mangle::mangle_float_value(0.1), "6_0_2e1");           // "0.1"
}

// §8.3 item 53 and the table of §4.4.
TEST(MangleType, Arrays) {
  EXPECT_EQ(mangle_type(types::array(types::float32(), 1, 'C')), "5ArrayIfLi1E1C7mutable7alignedE");
  EXPECT_EQ(mangle_type(types::array(types::float32(), 1, 'A')), "5ArrayIfLi1E1A7mutable7alignedE");
  EXPECT_EQ(mangle_type(types::array(types::float32(), 2, 'F', /*readonly=*/true, /*aligned=*/false)),
            "5ArrayIfLi2E1F8readonly9unalignedE");
  EXPECT_EQ(mangle_type(types::array(types::int64(), 3, 'A')), "5ArrayIxLi3E1A7mutable7alignedE");
}

TEST(MangleType, Tuples) {
  EXPECT_EQ(mangle_type(types::uni_tuple(types::int8(), 3)), "8UniTupleIaLi3EE");
  EXPECT_EQ(mangle_type(types::uni_tuple(types::int32(), 2)), "8UniTupleIiLi2EE");
  EXPECT_EQ(mangle_type(types::tuple({types::int32(), types::float64()})), "5TupleIidE");
  EXPECT_EQ(mangle_type(types::tuple({})), "5Tuple");  // empty parameter list: no I...E
  EXPECT_EQ(mangle_type(types::tuple({types::uni_tuple(types::int8(), 2), types::boolean()})),
            "5TupleI8UniTupleIaLi2EEbE");
}

TEST(MangleType, PlainNames) {
  EXPECT_EQ(mangle_type(types::cpointer(types::float32())), "10float32_2a");
  EXPECT_EQ(mangle_type(types::voidptr()), "7void_2a");
  EXPECT_EQ(mangle_type(types::complex64()), "9complex64");
  EXPECT_EQ(mangle_type(types::complex128()), "10complex128");
  EXPECT_EQ(mangle_type(types::integer_literal(3)), "23Literal_5bint_5d_283_29");
  EXPECT_EQ(mangle_type(types::boolean_literal(true)), "27Literal_5bbool_5d_28True_29");
  EXPECT_EQ(mangle_type(types::range(types::int64())), "17range_state_int64");
}

// §8.3 item 54: the §4.6 vector, Record argument left out.
TEST(Mangle, FullWorkedExample) {
  const std::vector<TypeRef> args = {types::int32(),
                                     types::array(types::float32(), 1, 'C'),
                                     types::uni_tuple(types::int8(), 3),
                                     types::tuple({types::int32(), types::float64()}),
                                     types::cpointer(types::float32()),
                                     types::voidptr(),
                                     types::complex64(),
                                     types::boolean(),
                                     types::float16(),
                                     types::uint64()};
  EXPECT_EQ(mangle::mangle("a.b.c", args, {"xyz"}, 7),
            "_ZN1a1b1cB2v7B3xyzEi5ArrayIfLi1E1C7mutable7alignedE8UniTupleIaLi3EE5TupleIidE"
            "10float32_2a7void_2a9complex64bDhy");
}

TEST(Mangle, ShortForms) {
  EXPECT_EQ(mangle::mangle("f", {}), "_Z1f");
  EXPECT_EQ(mangle::mangle("<lambda>", {}), "_Z12_3clambda_3e");
  EXPECT_EQ(mangle::mangle("x.<locals>.f", {types::lookup_scalar("intp")}), "_ZN1x12_3clocals_3e1fEx");
  EXPECT_EQ(mangle::mangle("f", {}, {}, 3), "_Z1fB2v3");  // unscoped: tags follow the identifier
}

TEST(Mangle, AbiTags) {
  EXPECT_EQ(mangle_abi_tag("v1"), "B2v1");
  EXPECT_EQ(mangle_abi_tag("v12"), "B3v12");
  EXPECT_EQ(mangle_abi_tag("v109"), "B4v109");
  EXPECT_EQ(mangle_abi_tag("9x"), "B3_9x");  // leading-digit rule applies to tags too
  EXPECT_EQ(mangle_abi_tag("a=b"), "B5a_3db");
}

struct FlagsVector {
  const char* summary;
  const char* mangled_tag;  // "B<len><escaped base64>", as it appears in symbols
};

// §4.5, all verified against numba-cuda 0.30.4.
const FlagsVector kFlagsVectors[] = {
    {"CUDAFlags(compute_capability=(7, 5), error_model=numpy, no_cfunc_wrapper=True, no_compile=True, "
     "no_cpython_wrapper=True, nvvm_options={'fastmath': False, 'opt': 3})",
     "B92cw51cXTLSUwv1sDUaKthrqNgqqmjgOR3W3CwAkMXLaJtQYkOIgxJU0gCqOkEJoHkbttqdVhoqlspQGNFHSgJ5BnXagIA"},
    {"CUDAFlags(compute_capability=(7, 5), error_model=numpy, no_cfunc_wrapper=True, no_compile=True, "
     "no_cpython_wrapper=True, nvvm_options={'opt': 3, 'fastmath': False})",
     "B100cw51cXTLSUwv1sDUaKthrqNgqqmjgOR3W3CwAkMXLaJtQYkOIgxJU0gCqOkEJoHkbttqdSBL3UrBWEdBHRauQC7YhbWaAA_3d_3d"},
    {"CUDAFlags(compute_capability=(9, 0), error_model=numpy, lto=True, no_cfunc_wrapper=True, no_compile=True, "
     "no_cpython_wrapper=True, nvvm_options={'fastmath': False, 'opt': 3})",
     "B104cw51cXTLSUwv1sDUaKthqaNgoKmjgOR3W3Cw6igA9duC0hkwnNGiHEkYkrqQBFBTDEwCyQe21eqwcFW3UoDGjzpQEsgzrtUEAA_3d_3d"},
    {"CUDAFlags(compute_capability=(7, 5), dbg_extend_lifetimes=True, debuginfo=True, no_cfunc_wrapper=True, "
     "no_compile=True, no_cpython_wrapper=True, nvvm_options={'opt': 0, 'fastmath': False, 'g': None})",
     "B108cw51cXTLSUwv1sDUaKthrqNgqqmjgM2RtqBUBpSCpRooHz0BIAlD0hqSAGr6gUkg_2bce2Wh3IUrdSMNBRUIeFN5ALjTf1dCAb5JlaTQA_"
     "3d"},
    {"CUDAFlags(compute_capability=(7, 5), error_model=numpy, fastmath=FastMathOptions({'fast'}), "
     "no_cfunc_wrapper=True, no_compile=True, no_cpython_wrapper=True, nvvm_options={'opt': 3, 'fastmath': True})",
     "B114cw51cXTLSUwv1sDUaKthrqNgqqmjgOR3W3CwAkMQ6ntbdO9Xq4Ok1GuB2tATgy0oYUKEIekOSQA1LcEkkPxmW60OZKlbKRjrKKjDbAdyQSprN"
     "QE_3d"},
    {"CUDAFlags(compute_capability=(7, 5), dbg_directives_only=True, debuginfo=True, error_model=numpy, "
     "no_cfunc_wrapper=True, no_compile=True, no_cpython_wrapper=True, nvvm_options={'opt': 3, 'fastmath': False})",
     "B112cw51cXTLSUwv1sDUaKthrqNgqqmjgMVuW1AiA8rAEg2UjxRKtuAIAMYDWpKAqkSkPiQB1BQFk0DyoW21OpClbqVgrKOgDosBIBfsl1pNAA_"
     "3d_3d"},
    {"CUDAFlags(compute_capability=(7, 5), error_model=numpy, no_cfunc_wrapper=True, no_compile=True, "
     "no_cpython_wrapper=True)",
     "B72cw51cXTLSUwv1sDUaKthrqNgqqmjgOR3W3CwAkMXLaJtQYkOIgxJU0gCqOkELKEJAA_3d_3d"},
    {"CUDAFlags()", "B24cw51cXTLSUwv1tAEAA_3d_3d"},
};

// §8.3 item 55, encoding direction.
TEST(FlagsTag, EncodesEveryVector) {
  for (const FlagsVector& vector : kFlagsVectors)
    EXPECT_EQ(mangle_abi_tag(encode_flags(vector.summary)), vector.mangled_tag) << vector.summary;
}

TEST(FlagsTag, EncodedTextIsUnescapedBase64) { EXPECT_EQ(encode_flags("CUDAFlags()"), "cw51cXTLSUwv1tAEAA=="); }

// §8.3 item 55, decoding direction, from each form a caller may hold.
TEST(FlagsTag, DecodesEveryVector) {
  for (const FlagsVector& vector : kFlagsVectors) {
    const std::string mangled = vector.mangled_tag;
    const std::string escaped = mangled.substr(mangled.find_first_not_of("0123456789", 1));
    EXPECT_EQ(decode_flags(mangled), vector.summary);
    EXPECT_EQ(decode_flags(escaped), vector.summary);
    EXPECT_EQ(decode_flags(encode_flags(vector.summary)), vector.summary);
  }
}

TEST(FlagsTag, RoundTripsArbitraryText) {
  const std::string texts[] = {"", "x", "CUDAFlags(inline=InlineOptions('always'))",
                               std::string(5000, 'a') + "numba\xc3\xa9"};
  for (const std::string& text : texts) EXPECT_EQ(decode_flags(encode_flags(text)), text);
}

TEST(FlagsTag, MalformedTagsThrowValueError) {
  const char* bad_tags[] = {"cw51c", "!!!!", "cw51cXTLSUwv1tAEAA=A", "_zz", "_3", "AAAA", "cw51cXTL"};
  for (const char* tag : bad_tags) {
    try {
      decode_flags(tag);
      ADD_FAILURE() << "no error for " << tag;
    } catch (const CompileError& error) {
      EXPECT_EQ(error.error().kind, ErrorKind::ValueError) << tag;
    }
  }
}

// §4.6 "real function names": a kernel, its environment, a device function.
TEST(Mangle, RealFunctionNames) {
  const std::string flags = encode_flags(kFlagsVectors[0].summary);
  const TypeRef array = types::array(types::float32(), 1, 'A');
  const std::string arrays = "5ArrayIfLi1E1A7mutable7alignedE";
  const std::string tags = std::string("B2v1") + kFlagsVectors[0].mangled_tag;
  EXPECT_EQ(mangle::mangle("__main__.kern", {array, array, array}, {flags}, 1),
            "_ZN8__main__4kern" + tags + "E" + arrays + arrays + arrays);
  EXPECT_EQ(mangle::mangle(".NumbaEnv.__main__.kern", {array, array, array}, {flags}, 1),
            "_ZN08NumbaEnv8__main__4kern" + tags + "E" + arrays + arrays + arrays);
  EXPECT_EQ(mangle::mangle("__main__._k2.<locals>.<lambda>", {}, {flags}, 2),
            std::string("_ZN8__main__3_k212_3clocals_3e12_3clambda_3eB2v2") + kFlagsVectors[0].mangled_tag + "E");
  EXPECT_EQ(mangle::mangle("__main__.add", {types::int32(), types::int32()}, {flags}, 4),
            std::string("_ZN8__main__3addB2v4") + kFlagsVectors[0].mangled_tag + "Eii");
}

}  // namespace
}  // namespace cujit
