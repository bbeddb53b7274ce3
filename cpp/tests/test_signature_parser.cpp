// The type system (names as numba prints them, interning, aliases) and the
// signature-string parser (docs/numba_abi.md: Signature strings): every accepted form, and the
// errors numba raises for bad strings, with their kinds and messages.
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "cujit/signature_parser.h"
#include "cujit/types.h"

namespace cujit {
namespace {

// ---------------------------------------------------------------------------
// Types

TEST(TypeNames, Scalars) {
  EXPECT_EQ(types::boolean()->name(), "bool");
  EXPECT_EQ(types::none()->name(), "none");
  EXPECT_EQ(types::int32()->name(), "int32");
  EXPECT_EQ(types::uint8()->name(), "uint8");
  EXPECT_EQ(types::int64()->name(), "int64");
  EXPECT_EQ(types::float16()->name(), "float16");
  EXPECT_EQ(types::float32()->name(), "float32");
  EXPECT_EQ(types::complex128()->name(), "complex128");
  EXPECT_EQ(types::voidptr()->name(), "void*");
}

TEST(TypeNames, Literals) {
  EXPECT_EQ(types::integer_literal(3)->name(), "Literal[int](3)");
  EXPECT_EQ(types::integer_literal(-7)->name(), "Literal[int](-7)");
  EXPECT_EQ(types::boolean_literal(true)->name(), "Literal[bool](True)");
  EXPECT_EQ(types::boolean_literal(false)->name(), "Literal[bool](False)");
}

TEST(TypeNames, Containers) {
  EXPECT_EQ(types::uni_tuple(types::int32(), 2)->name(), "UniTuple(int32 x 2)");
  EXPECT_EQ(types::tuple({types::int32(), types::float64()})->name(), "Tuple(int32, float64)");
  EXPECT_EQ(types::tuple({})->name(), "Tuple()");
  EXPECT_EQ(types::cpointer(types::float32())->name(), "float32*");
  EXPECT_EQ(types::cpointer(types::cpointer(types::int8()))->name(), "int8**");
}

TEST(TypeNames, ArraysFollowNumbaPrefixOrder) {
  EXPECT_EQ(types::array(types::float32(), 1, 'C')->name(), "array(float32, 1d, C)");
  EXPECT_EQ(types::array(types::float32(), 2, 'F', true)->name(), "readonly array(float32, 2d, F)");
  EXPECT_EQ(types::array(types::int8(), 3, 'A', false, false)->name(), "unaligned array(int8, 3d, A)");
  EXPECT_EQ(types::array(types::float64(), 2, 'C', true, false)->name(), "unaligned readonly array(float64, 2d, C)");
  EXPECT_EQ(types::array(types::boolean(), 0, 'C')->name(), "array(bool, 0d, C)");
}

TEST(TypeNames, Ranges) {
  // numba's RangeType is named "range_state_<index type>".
  EXPECT_EQ(types::range(types::int32())->name(), "range_state_int32");
  EXPECT_EQ(types::range(types::int64())->name(), "range_state_int64");
  EXPECT_EQ(types::range(types::uint64())->name(), "range_state_uint64");
}

TEST(TypeProperties, WidthsAndSignedness) {
  EXPECT_EQ(types::boolean()->bitwidth(), 1);
  EXPECT_EQ(types::complex64()->bitwidth(), 64);
  EXPECT_EQ(types::complex128()->bitwidth(), 128);
  EXPECT_EQ(types::float16()->bitwidth(), 16);
  EXPECT_TRUE(types::int16()->is_signed());
  EXPECT_FALSE(types::uint16()->is_signed());
  const TypeRef three = types::integer_literal(3);
  EXPECT_EQ(three->bitwidth(), 64);
  EXPECT_TRUE(three->is_signed());
  EXPECT_TRUE(three->is_integer());
  EXPECT_TRUE(three->is_literal());
  EXPECT_EQ(three->literal_value(), 3);
}

TEST(TypeProperties, Unliteral) {
  EXPECT_EQ(types::integer_literal(3)->unliteral(), types::int64());
  EXPECT_EQ(types::boolean_literal(true)->unliteral(), types::boolean());
  EXPECT_EQ(types::int32()->unliteral(), types::int32());
  const TypeRef array = types::array(types::float32(), 1, 'C');
  EXPECT_EQ(array->unliteral(), array);
  // Arrays hold the literal's underlying type, as numba's do.
  EXPECT_EQ(types::array(types::integer_literal(1), 1, 'C'), types::array(types::int64(), 1, 'C'));
}

TEST(TypeProperties, Components) {
  const TypeRef pair = types::uni_tuple(types::int16(), 2);
  EXPECT_EQ(pair->count(), 2u);
  EXPECT_EQ(pair->element(1), types::int16());
  const TypeRef mixed = types::tuple({types::int32(), types::float64(), types::boolean()});
  EXPECT_EQ(mixed->kind(), TypeKind::Tuple);
  EXPECT_EQ(mixed->count(), 3u);
  EXPECT_EQ(mixed->element(2), types::boolean());
  const TypeRef array = types::array(types::float32(), 2, 'F', true, false);
  EXPECT_EQ(array->element(), types::float32());
  EXPECT_EQ(array->ndim(), 2);
  EXPECT_EQ(array->layout(), 'F');
  EXPECT_TRUE(array->readonly());
  EXPECT_FALSE(array->aligned());
  EXPECT_EQ(types::cpointer(types::float32())->element(), types::float32());
  EXPECT_EQ(types::range(types::int32())->element(), types::int32());
}

TEST(Interning, EqualTypesAreOneObject) {
  EXPECT_EQ(types::integer(32, true), types::int32());
  EXPECT_EQ(types::float_(32), types::float32());
  EXPECT_EQ(types::complex_(64), types::complex64());
  EXPECT_EQ(types::array(types::float32(), 1, 'C'), types::array(types::float32(), 1, 'C'));
  EXPECT_NE(types::array(types::float32(), 1, 'C'), types::array(types::float32(), 1, 'A'));
  EXPECT_NE(types::array(types::float32(), 1, 'C'), types::array(types::float32(), 1, 'C', true));
  EXPECT_EQ(types::integer_literal(5), types::integer_literal(5));
  EXPECT_NE(types::integer_literal(5), types::integer_literal(6));
  EXPECT_EQ(types::opaque("m"), types::opaque("m"));
  EXPECT_NE(types::opaque("int32"), types::int32());
}

TEST(Interning, HomogeneousTupleIsUniTuple) {
  EXPECT_EQ(types::tuple({types::int32(), types::int32()}), types::uni_tuple(types::int32(), 2));
  EXPECT_EQ(types::tuple({types::int32()})->kind(), TypeKind::UniTuple);
  EXPECT_EQ(types::tuple({})->kind(), TypeKind::Tuple);
  EXPECT_EQ(types::tuple({})->count(), 0u);
}

TEST(Interning, ThreadsGetTheSameObjects) {
  constexpr int kThreads = 8;
  std::vector<std::vector<TypeRef>> seen(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&seen, t] {
      for (int n = 0; n < 200; ++n) {
        seen[t].push_back(types::array(types::uni_tuple(types::int16(), n % 7), n % 4, 'A'));
        seen[t].push_back(types::integer_literal(n));
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 1; t < kThreads; ++t) EXPECT_EQ(seen[t], seen[0]);
}

TEST(LookupScalar, NumbaNamesAndAliases) {
  const std::vector<std::pair<const char*, TypeRef>> names = {{"int8", types::int8()},
                                                              {"int16", types::int16()},
                                                              {"int32", types::int32()},
                                                              {"int64", types::int64()},
                                                              {"uint8", types::uint8()},
                                                              {"uint16", types::uint16()},
                                                              {"uint32", types::uint32()},
                                                              {"uint64", types::uint64()},
                                                              {"float16", types::float16()},
                                                              {"float32", types::float32()},
                                                              {"float64", types::float64()},
                                                              {"complex64", types::complex64()},
                                                              {"complex128", types::complex128()},
                                                              {"boolean", types::boolean()},
                                                              {"bool_", types::boolean()},
                                                              {"bool", types::boolean()},
                                                              {"b1", types::boolean()},
                                                              {"i1", types::int8()},
                                                              {"i2", types::int16()},
                                                              {"i4", types::int32()},
                                                              {"i8", types::int64()},
                                                              {"u1", types::uint8()},
                                                              {"u2", types::uint16()},
                                                              {"u4", types::uint32()},
                                                              {"u8", types::uint64()},
                                                              {"f2", types::float16()},
                                                              {"f4", types::float32()},
                                                              {"f8", types::float64()},
                                                              {"c8", types::complex64()},
                                                              {"c16", types::complex128()},
                                                              {"intp", types::int64()},
                                                              {"uintp", types::uint64()},
                                                              {"intc", types::int32()},
                                                              {"uintc", types::uint32()},
                                                              {"ssize_t", types::int64()},
                                                              {"size_t", types::uint64()},
                                                              {"byte", types::uint8()},
                                                              {"char", types::int8()},
                                                              {"uchar", types::uint8()},
                                                              {"short", types::int16()},
                                                              {"ushort", types::uint16()},
                                                              {"int_", types::int64()},
                                                              {"uint", types::uint64()},
                                                              {"long_", types::int64()},
                                                              {"ulong", types::uint64()},
                                                              {"longlong", types::int64()},
                                                              {"ulonglong", types::uint64()},
                                                              {"float_", types::float32()},
                                                              {"double", types::float64()},
                                                              {"void", types::none()},
                                                              {"none", types::none()},
                                                              {"voidptr", types::voidptr()},
                                                              {"np_float32", types::float32()},
                                                              {"py_int", types::int64()},
                                                              {"c_uint16", types::uint16()}};
  for (const auto& [name, type] : names) EXPECT_EQ(types::lookup_scalar(name), type) << name;
}

TEST(LookupScalar, UnknownNames) {
  EXPECT_EQ(types::lookup_scalar("int33"), nullptr);
  EXPECT_EQ(types::lookup_scalar("half"), nullptr);  // not a numba.cuda.types name
  EXPECT_EQ(types::lookup_scalar("Int32"), nullptr);
  EXPECT_EQ(types::lookup_scalar(""), nullptr);
}

TEST(SignatureStr, WithAndWithoutReturnType) {
  Signature signature{types::int32(), {types::int32(), types::int32()}};
  EXPECT_EQ(signature.str(), "int32(int32, int32)");
  signature.return_type = nullptr;
  EXPECT_EQ(signature.str(), "(int32, int32)");
  EXPECT_EQ((Signature{types::none(), {}}).str(), "none()");
}

// ---------------------------------------------------------------------------
// Parser: accepted forms

Signature parsed(const std::string& text) {
  Expected<Signature> result = parse_signature(text);
  EXPECT_TRUE(result) << text << ": " << (result ? "" : result.error().message);
  return result ? *result : Signature{};
}

TypeRef parsed_type(const std::string& text) {
  Expected<TypeRef> result = parse_type(text);
  EXPECT_TRUE(result) << text << ": " << (result ? "" : result.error().message);
  return result ? *result : nullptr;
}

TEST(ParseSignature, CallMakesReturnTypeAndArguments) {
  const Signature signature = parsed("int32(int32, float32)");
  EXPECT_EQ(signature.return_type, types::int32());
  EXPECT_EQ(signature.args, (std::vector<TypeRef>{types::int32(), types::float32()}));
  EXPECT_EQ(parsed("void()").return_type, types::none());
  EXPECT_TRUE(parsed("void()").args.empty());
  EXPECT_EQ(parsed("none(int8)").return_type, types::none());
  EXPECT_EQ(parsed("float32[:](int32)").return_type, types::array(types::float32(), 1, 'A'));
}

TEST(ParseSignature, TupleHasNoReturnType) {
  const Signature signature = parsed("(i4[::1], i4, i4)");
  EXPECT_EQ(signature.return_type, nullptr);
  EXPECT_EQ(signature.args,
            (std::vector<TypeRef>{types::array(types::int32(), 1, 'C'), types::int32(), types::int32()}));
  EXPECT_EQ(parsed("(int32,)").args, std::vector<TypeRef>{types::int32()});
  EXPECT_TRUE(parsed("()").args.empty());
  EXPECT_EQ(parsed("()").return_type, nullptr);
  // eval("int32, float32") is a tuple too.
  EXPECT_EQ(parsed("int32, float32").args, (std::vector<TypeRef>{types::int32(), types::float32()}));
  EXPECT_EQ(parsed("int32,").args, std::vector<TypeRef>{types::int32()});
}

TEST(ParseSignature, Aliases) {
  EXPECT_EQ(parsed("f8(f4, i8, u4, b1, c16)").str(), "float64(float32, int64, uint32, bool, complex128)");
  EXPECT_EQ(parsed("double(float_, intp, uintp, byte, char)").str(), "float64(float32, int64, uint64, uint8, int8)");
  EXPECT_EQ(parsed("void(voidptr, bool_, boolean, bool)").str(), "none(void*, bool, bool, bool)");
}

TEST(ParseSignature, ArrayLayouts) {
  struct Case {
    const char* text;
    int ndim;
    char layout;
  };
  const Case cases[] = {
      {"float32[:]", 1, 'A'},
      {"float32[::1]", 1, 'C'},
      {"float32[:, ::1]", 2, 'C'},
      {"float32[::1, :]", 2, 'F'},
      {"float32[:, :, :]", 3, 'A'},
      {"float32[:,:,::1]", 3, 'C'},
      {"float32[::1, :, :]", 3, 'F'},
      {"float32[::1, ::1]", 2, 'F'},
      {"float32[:, :]", 2, 'A'},
      // numba's rule looks at the first slice of a tuple first, even a 1-tuple.
      {"float32[::1,]", 1, 'F'},
      {"float32[:,]", 1, 'A'},
      {"float32[::2]", 1, 'A'},
      {"float32[::True]", 1, 'C'},
      {"float32[None:None:1]", 1, 'C'},
      {"float32[::None]", 1, 'A'},
  };
  for (const Case& c : cases) {
    const TypeRef type = parsed_type(c.text);
    ASSERT_NE(type, nullptr) << c.text;
    EXPECT_EQ(type, types::array(types::float32(), c.ndim, c.layout)) << c.text << " -> " << type->name();
  }
}

TEST(ParseSignature, Constructors) {
  EXPECT_EQ(parsed_type("UniTuple(int32, 2)"), types::uni_tuple(types::int32(), 2));
  EXPECT_EQ(parsed_type("UniTuple(dtype=int8, count=3)"), types::uni_tuple(types::int8(), 3));
  EXPECT_EQ(parsed_type("Tuple((int32, float64))"), types::tuple({types::int32(), types::float64()}));
  EXPECT_EQ(parsed_type("Tuple([int32, float64])"), types::tuple({types::int32(), types::float64()}));
  EXPECT_EQ(parsed_type("Tuple((int32, int32))"), types::uni_tuple(types::int32(), 2));
  EXPECT_EQ(parsed_type("Tuple(())"), types::tuple({}));
  EXPECT_EQ(parsed_type("CPointer(float32)"), types::cpointer(types::float32()));
  EXPECT_EQ(parsed_type("CPointer(CPointer(int8))"), types::cpointer(types::cpointer(types::int8())));
  EXPECT_EQ(parsed_type("Array(float32, 2, 'F')"), types::array(types::float32(), 2, 'F'));
  EXPECT_EQ(parsed_type("Array(float32, 1, \"C\", readonly=True)"), types::array(types::float32(), 1, 'C', true));
  EXPECT_EQ(parsed_type("Array(int8, 3, 'A', aligned=False)"), types::array(types::int8(), 3, 'A', false, false));
  EXPECT_EQ(parsed_type("UniTuple(float32[::1], 2)"), types::uni_tuple(types::array(types::float32(), 1, 'C'), 2));
  EXPECT_EQ(parsed_type("Tuple((UniTuple(i4, 2), f8[:, ::1]))"),
            types::tuple({types::uni_tuple(types::int32(), 2), types::array(types::float64(), 2, 'C')}));
}

TEST(ParseSignature, FullSignaturesFromTheSpec) {
  EXPECT_EQ(parsed("void(UniTuple(int32, 2), CPointer(float32))").str(), "none(UniTuple(int32 x 2), float32*)");
  EXPECT_EQ(parsed("int32(float32[:])").str(), "int32(array(float32, 1d, A))");
  EXPECT_EQ(parsed("int32(int32, float32[::1])").str(), "int32(int32, array(float32, 1d, C))");
  EXPECT_EQ(parsed("float64(Tuple((int32, float64)), voidptr)").str(), "float64(Tuple(int32, float64), void*)");
}

TEST(ParseSignature, WhitespaceAnywhere) {
  EXPECT_EQ(parsed("  int32 ( int32 ,\tfloat32 [ : ,  :: 1 ] )  ").str(), "int32(int32, array(float32, 2d, C))");
  EXPECT_EQ(parsed("\n( i4 ,\n )\n").args, std::vector<TypeRef>{types::int32()});
  EXPECT_EQ(parsed("UniTuple( int32 ,2 )( )").return_type, types::uni_tuple(types::int32(), 2));
}

TEST(ParseSignature, RangeStateNames) {
  EXPECT_EQ(parsed_type("range_state64_type"), types::range(types::int64()));
  EXPECT_EQ(parsed_type("unsigned_range_state64_type"), types::range(types::uint64()));
}

// ---------------------------------------------------------------------------
// Parser: errors

Error signature_error(const std::string& text) {
  Expected<Signature> result = parse_signature(text);
  EXPECT_FALSE(result) << text << " parsed as " << (result ? result->str() : "");
  return result ? Error{} : result.error();
}

TEST(ParseSignatureErrors, UnknownName) {
  const Error error = signature_error("int33(int32)");
  EXPECT_EQ(error.kind, ErrorKind::NameError);
  EXPECT_EQ(error.message, "name 'int33' is not defined; did you mean 'int32'? (in the signature 'int33(int32)')");
  EXPECT_EQ(signature_error("void(half)").message, "name 'half' is not defined (in the signature 'void(half)')");
  EXPECT_EQ(signature_error("void(flaot32)").message,
            "name 'flaot32' is not defined; did you mean 'float32'? (in the signature 'void(flaot32)')");
}

TEST(ParseSignatureErrors, SingleTypeIsNotASignature) {
  Error error = signature_error("int32");
  EXPECT_EQ(error.kind, ErrorKind::TypeError);
  EXPECT_EQ(error.message,
            "invalid signature: 'int32' (type: 'str') evaluates to 'Integer' instead of tuple or Signature");
  const std::vector<std::pair<const char*, const char*>> class_names = {{"float32", "Float"},
                                                                        {"complex64", "Complex"},
                                                                        {"bool", "Boolean"},
                                                                        {"void", "NoneType"},
                                                                        {"UniTuple(i4, 2)", "UniTuple"},
                                                                        {"Tuple((i4, f4))", "Tuple"},
                                                                        {"CPointer(i4)", "CPointer"},
                                                                        {"voidptr", "RawPointer"},
                                                                        {"float32[:]", "Array"},
                                                                        {"3", "int"},
                                                                        {"'C'", "str"},
                                                                        {"None", "NoneType"},
                                                                        {"[int32]", "list"},
                                                                        {"1.5", "float"},
                                                                        {"True", "bool"}};
  for (const auto& [text, class_name] : class_names) {
    error = signature_error(text);
    EXPECT_EQ(error.kind, ErrorKind::TypeError) << text;
    EXPECT_NE(error.message.find(std::string("evaluates to '") + class_name + "' instead of tuple or Signature"),
              std::string::npos)
        << text << ": " << error.message;
  }
  EXPECT_EQ(signature_error("'C'").message,
            "invalid signature: \"'C'\" (type: 'str') evaluates to 'str' instead of tuple or Signature");
}

TEST(ParseSignatureErrors, NonTypeArguments) {
  Error error = signature_error("(int32, 3)");
  EXPECT_EQ(error.kind, ErrorKind::TypeError);
  EXPECT_EQ(error.message, "invalid type in signature: expected a type instance, got 3");
  EXPECT_EQ(signature_error("void(int32, 3)").message, "invalid type in signature: expected a type instance, got 3");
  EXPECT_EQ(signature_error("void(-2)").message, "invalid type in signature: expected a type instance, got -2");
  EXPECT_EQ(signature_error("void('x')").message, "invalid type in signature: expected a type instance, got 'x'");
  EXPECT_EQ(signature_error("(None,)").message, "invalid type in signature: expected a type instance, got None");
  EXPECT_EQ(signature_error("((int32, int32), int32)").message,
            "invalid type in signature: expected a type instance, got (int32, int32)");
}

TEST(ParseSignatureErrors, NestedSignatureArgument) {
  const Error error = signature_error("void(int32(int32))");
  EXPECT_EQ(error.kind, ErrorKind::TypeError);
  EXPECT_EQ(error.message, "invalid type in signature: expected a type instance, got (int32,) -> int32");
  EXPECT_EQ(signature_error("(f4(), i4)").kind, ErrorKind::TypeError);
}

TEST(ParseSignatureErrors, SyntaxErrorsNamePositionAndText) {
  Error error = signature_error("int32(int32");
  EXPECT_EQ(error.kind, ErrorKind::SyntaxError);
  EXPECT_EQ(error.message, "invalid syntax in signature 'int32(int32' at column 12: unexpected end of input");
  error = signature_error("int32(int32))");
  EXPECT_EQ(error.kind, ErrorKind::SyntaxError);
  EXPECT_EQ(error.message, "invalid syntax in signature 'int32(int32))' at column 13: unexpected ')'");
  error = signature_error("int32 $ int32");
  EXPECT_EQ(error.message, "invalid syntax in signature 'int32 $ int32' at column 7: unexpected character '$'");
  // Syntax is checked before names are looked up, as Python compiles before it evaluates.
  EXPECT_EQ(signature_error("int33(int32").kind, ErrorKind::SyntaxError);
}

TEST(ParseSignatureErrors, BadSubscripts) {
  Error error = signature_error("void(float32[1:])");
  EXPECT_EQ(error.kind, ErrorKind::TypeError);
  EXPECT_EQ(error.message, "Can only index numba types with slices with no start or stop, got slice(1, None, None).");
  EXPECT_EQ(signature_error("void(float32[3])").message,
            "Can only index numba types with slices with no start or stop, got 3.");
  EXPECT_EQ(signature_error("void(float32[:, 2])").message,
            "Can only index numba types with slices with no start or stop, got (slice(None, None, None), 2).");
  EXPECT_EQ(signature_error("void(float32[:][:])").kind, ErrorKind::TypeError);  // array of arrays
}

TEST(ParseSignatureErrors, BadConstructorCalls) {
  EXPECT_EQ(signature_error("void(Tuple(int32, float64))").kind, ErrorKind::TypeError);
  EXPECT_EQ(signature_error("void(Tuple(int32))").message, "Tuple() expects a tuple of types, got int32");
  EXPECT_EQ(signature_error("void(UniTuple(int32))").message, "UniTuple() missing required argument 'count'");
  EXPECT_EQ(signature_error("void(UniTuple(int32, 2, 3))").message, "UniTuple() takes at most 2 arguments (3 given)");
  EXPECT_EQ(signature_error("void(UniTuple(int32, float32))").message,
            "UniTuple() expects an integer for 'count', got float32");
  EXPECT_EQ(signature_error("void(UniTuple(3, 2))").message, "UniTuple() expects a type for 'dtype', got 3");
  EXPECT_EQ(signature_error("void(UniTuple(int32, -1))").kind, ErrorKind::ValueError);
  EXPECT_EQ(signature_error("void(UniTuple(int32, 99999999999999999999999))").kind, ErrorKind::ValueError);
  EXPECT_EQ(signature_error("void(UniTuple(int32, count=2, dtype=int8))").message,
            "UniTuple() got multiple values for argument 'dtype'");
  EXPECT_EQ(signature_error("void(CPointer(int32, size=2))").message,
            "CPointer() got an unexpected keyword argument 'size'");
  EXPECT_EQ(signature_error("void(Array(int32, 1, 'X'))").kind, ErrorKind::ValueError);
  EXPECT_EQ(signature_error("3(int32)").message, "'int' object is not callable");
  EXPECT_EQ(signature_error("int32(int32)(int32)").message, "'Signature' object is not callable");
  EXPECT_EQ(signature_error("int32(x=int32)").kind, ErrorKind::TypeError);
}

TEST(ParseSignatureErrors, UnsupportedNumbaNames) {
  const Error error = signature_error("void(grid_group)");
  EXPECT_EQ(error.kind, ErrorKind::TypeError);
  EXPECT_NE(error.message.find("grid_group"), std::string::npos);
}

TEST(ParseSignature, Bfloat16) {
  EXPECT_EQ(parsed_type("bfloat16"), types::bfloat16());
  EXPECT_EQ(types::bfloat16()->name(), "__nv_bfloat16");
}

TEST(ParseSignatureErrors, MalformedStringsNeverCrash) {
  const char* malformed[] = {
      "",
      "   ",
      "(",
      ")",
      "[",
      "int32(",
      "int32)",
      "int32((int32)",
      "int32(int32,,)",
      "int32(,int32)",
      "(,)",
      "int32[",
      "int32[]",
      "int32[:",
      "int32[:::]",
      "int32[::1::]",
      "int32[:, :",
      "int32 int32",
      "int32(int32) int32",
      "int32.int32",
      "int32 + int32",
      "int32 | float32",
      "lambda: int32",
      "int32(int32, float32[:, ::1]",
      "'unterminated",
      "int32('a\\'b')",
      "007",
      "1x",
      "int32(x=)",
      "int32(x=int32, int32)",
      "UniTuple(int32, 2",
      "UniTuple[int32]",
      "float32[:](",
      "-int32",
      "if(int32)",
      "int32\x01",
      "f\xe2\x88\x82(int32)",
      "int32(int32)[:]",
      "void(\"C\"[:])",
      "Tuple",
      "None(int32)",
      "((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((("
      "((((((((((((((((int32))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))"
      "))))))))))))))))))))))))))))))))",
  };
  for (const char* text : malformed) {
    Expected<Signature> result = parse_signature(text);
    EXPECT_FALSE(result) << "accepted: " << text;
    if (!result) {
      EXPECT_FALSE(result.error().message.empty()) << text;
    }
  }
}

TEST(ParseSignatureErrors, DeepNestingIsASyntaxError) {
  const std::string deep = std::string(5000, '(') + "int32" + std::string(5000, ')');
  EXPECT_EQ(signature_error(deep).kind, ErrorKind::SyntaxError);
  std::string chained = "float32";
  for (int i = 0; i < 5000; ++i) chained += "[:]";
  EXPECT_EQ(signature_error(chained).kind, ErrorKind::SyntaxError);
  std::string negated = std::string(5000, '-') + "1";
  EXPECT_EQ(signature_error(negated).kind, ErrorKind::SyntaxError);
}

TEST(ParseType, SingleTypes) {
  EXPECT_EQ(parsed_type("float32[:, ::1]"), types::array(types::float32(), 2, 'C'));
  EXPECT_EQ(parsed_type("UniTuple(i4, 3)"), types::uni_tuple(types::int32(), 3));
  EXPECT_EQ(parsed_type("(int32)"), types::int32());
  EXPECT_EQ(parsed_type(" void "), types::none());
}

TEST(ParseType, NonTypesAreErrors) {
  Expected<TypeRef> result = parse_type("int32(int32)");
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().kind, ErrorKind::TypeError);
  EXPECT_EQ(result.error().message,
            "invalid type: 'int32(int32)' (type: 'str') evaluates to 'Signature' instead of a type instance");
  EXPECT_FALSE(parse_type("(int32, int32)"));
  EXPECT_EQ(parse_type("int33").error().kind, ErrorKind::NameError);
  EXPECT_EQ(parse_type("int32[").error().kind, ErrorKind::SyntaxError);
}

}  // namespace
}  // namespace cujit
