// Signature strings without Python: numba evaluates "int32(int32, float32[::1])"
// with eval() in the namespace of numba.cuda.types; we parse the same subset of
// Python expressions into a small syntax tree, then evaluate it with the same
// semantics and the same error kinds and messages numba users see.
//
// Parsing and evaluation are separate passes on purpose: Python reports a
// SyntaxError anywhere in the text before any NameError/TypeError.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "cujit/error.h"
#include "cujit/signature_parser.h"
#include "cujit/vector_types.h"

namespace cujit {
namespace {

// ---------------------------------------------------------------------------
// Lexing

enum class TokenKind { Name, Int, Float, String, Punct, End };

struct Token {
  TokenKind kind = TokenKind::End;
  std::string text;  // String: the contents without quotes; others: the source text
  size_t pos = 0;    // byte offset in the input
};

// Python's repr() of a str: single quotes unless the text holds one and no double quote.
std::string python_string_repr(const std::string& text) {
  const bool use_double = text.find('\'') != std::string::npos && text.find('"') == std::string::npos;
  const char quote = use_double ? '"' : '\'';
  std::string out(1, quote);
  static const char* hex = "0123456789abcdef";
  for (char c : text) {
    const unsigned char byte = static_cast<unsigned char>(c);
    if (c == '\\' || c == quote) {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (byte < 0x20 || byte == 0x7f) {
      out += std::string("\\x") + hex[byte >> 4] + hex[byte & 15];
    } else {
      out += c;
    }
  }
  return out + quote;
}

[[noreturn]] void syntax_error(const std::string& input, size_t pos, const std::string& what) {
  fail(ErrorKind::SyntaxError, "invalid syntax in signature " + python_string_repr(input) + " at column " +
                                   std::to_string(pos + 1) + ": " + what);
}

bool is_name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

class Lexer {
 public:
  explicit Lexer(const std::string& input) : input_(input) {}

  std::vector<Token> tokenize() {
    std::vector<Token> tokens;
    for (;;) {
      while (at_ < input_.size() && is_space(input_[at_])) ++at_;
      if (at_ == input_.size()) break;
      tokens.push_back(next_token());
    }
    tokens.push_back(Token{TokenKind::End, "", input_.size()});
    return tokens;
  }

 private:
  Token next_token() {
    const size_t start = at_;
    const char c = input_[at_];
    if (is_name_start(c)) {
      while (at_ < input_.size() && (is_name_start(input_[at_]) || is_digit(input_[at_]))) ++at_;
      return {TokenKind::Name, input_.substr(start, at_ - start), start};
    }
    if (is_digit(c) || (c == '.' && at_ + 1 < input_.size() && is_digit(input_[at_ + 1]))) return number(start);
    if (c == '\'' || c == '"') return string_literal(start, c);
    if (std::strchr("()[],:=-+", c) != nullptr) {
      ++at_;
      return {TokenKind::Punct, std::string(1, c), start};
    }
    syntax_error(input_, start, "unexpected character '" + printable_char(start) + "'");
  }

  Token number(size_t start) {
    bool is_float = false;
    while (at_ < input_.size() && is_digit(input_[at_])) ++at_;
    if (at_ < input_.size() && input_[at_] == '.') {
      is_float = true;
      ++at_;
      while (at_ < input_.size() && is_digit(input_[at_])) ++at_;
    }
    if (at_ < input_.size() && (input_[at_] == 'e' || input_[at_] == 'E')) {
      size_t exponent = at_ + 1;
      if (exponent < input_.size() && (input_[exponent] == '+' || input_[exponent] == '-')) ++exponent;
      if (exponent < input_.size() && is_digit(input_[exponent])) {
        is_float = true;
        at_ = exponent;
        while (at_ < input_.size() && is_digit(input_[at_])) ++at_;
      }
    }
    std::string text = input_.substr(start, at_ - start);
    if (at_ < input_.size() && (is_name_start(input_[at_]) || is_digit(input_[at_])))
      syntax_error(input_, start, "invalid number literal '" + text + input_[at_] + "'");
    if (!is_float && text.size() > 1 && text[0] == '0' && text.find_first_not_of('0') != std::string::npos)
      syntax_error(input_, start, "leading zeros in decimal integer literals are not permitted");
    return {is_float ? TokenKind::Float : TokenKind::Int, text, start};
  }

  Token string_literal(size_t start, char quote) {
    ++at_;
    std::string contents;
    while (at_ < input_.size() && input_[at_] != quote) {
      if (input_[at_] == '\\') syntax_error(input_, at_, "escape sequences in strings are not supported");
      if (input_[at_] == '\n') break;
      contents += input_[at_++];
    }
    if (at_ >= input_.size() || input_[at_] != quote) syntax_error(input_, start, "unterminated string literal");
    ++at_;
    return {TokenKind::String, contents, start};
  }

  // The character at `pos` for an error message: a whole UTF-8 sequence, or
  // an escape for control bytes.
  std::string printable_char(size_t pos) const {
    const unsigned char lead = static_cast<unsigned char>(input_[pos]);
    if (lead < 0x20 || lead == 0x7f) {
      static const char* hex = "0123456789abcdef";
      return std::string("\\x") + hex[lead >> 4] + hex[lead & 15];
    }
    size_t length = lead < 0x80 ? 1 : lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
    return input_.substr(pos, length);
  }

  const std::string& input_;
  size_t at_ = 0;
};

// ---------------------------------------------------------------------------
// Syntax tree

enum class NodeKind { Name, Int, Float, String, Tuple, List, Call, Subscript, Slice, Negate, Absent };

struct Node {
  Node(NodeKind node_kind, size_t node_pos, std::string node_text = {})
      : kind(node_kind), pos(node_pos), text(std::move(node_text)) {}

  NodeKind kind = NodeKind::Absent;
  size_t pos = 0;
  std::string text;                // Name / literal text
  std::vector<Node> children;      // Call: callee then arguments; Subscript: target, index;
                                   // Slice: start, stop, step (Absent when omitted)
  std::vector<std::string> keywords;  // Call: one per argument, "" for positional ones
};

// Python's reserved words cannot be names; eval() rejects them as syntax.
bool is_python_keyword(const std::string& name) {
  static const char* const keywords[] = {
      "and",      "as",     "assert",  "async", "await", "break",  "class", "continue", "def",  "del",  "elif",
      "else",     "except", "finally", "for",   "from",  "global", "if",    "import",   "in",   "is",   "lambda",
      "nonlocal", "not",    "or",      "pass",  "raise", "return", "try",   "while",    "with", "yield"};
  for (const char* keyword : keywords)
    if (name == keyword) return true;
  return false;
}

class Parser {
 public:
  Parser(const std::string& input, std::vector<Token> tokens) : input_(input), tokens_(std::move(tokens)) {}

  // The whole text: an expression, or a comma-separated list making a tuple
  // (eval("int32, int32") is a tuple, as is "(int32, int32)").
  Node parse_input() {
    if (peek().kind == TokenKind::End) unexpected(peek());
    Node first = parse_expression();
    if (!is_punct(",")) {
      expect_end();
      return first;
    }
    Node tuple{NodeKind::Tuple, first.pos};
    tuple.children.push_back(std::move(first));
    while (accept(",")) {
      if (peek().kind == TokenKind::End) break;
      tuple.children.push_back(parse_expression());
    }
    expect_end();
    return tuple;
  }

 private:
  // Python refuses deeper nesting too ("too many nested parentheses"); the
  // limit also bounds our recursion.
  static constexpr int kMaxDepth = 100;

  Node parse_expression() {
    if (++depth_ > kMaxDepth) syntax_error(input_, peek().pos, "too many nested parentheses");
    Node node = parse_unary();
    --depth_;
    return node;
  }

  Node parse_unary() {
    const Token& token = peek();
    if (accept("-")) {
      Node negate{NodeKind::Negate, token.pos};
      negate.children.push_back(parse_expression());
      return negate;
    }
    if (accept("+")) return parse_expression();
    return parse_postfix(parse_primary());
  }

  Node parse_primary() {
    const Token token = peek();
    switch (token.kind) {
      case TokenKind::Name:
        if (is_python_keyword(token.text))
          syntax_error(input_, token.pos, "keyword '" + token.text + "' in a type expression");
        ++next_;
        return Node{NodeKind::Name, token.pos, token.text};
      case TokenKind::Int:
        ++next_;
        return Node{NodeKind::Int, token.pos, token.text};
      case TokenKind::Float:
        ++next_;
        return Node{NodeKind::Float, token.pos, token.text};
      case TokenKind::String:
        ++next_;
        return Node{NodeKind::String, token.pos, token.text};
      case TokenKind::Punct:
        if (accept("(")) return parse_parenthesized(token.pos);
        if (accept("[")) return parse_list(token.pos);
        break;
      case TokenKind::End:
        break;
    }
    unexpected(token);
  }

  // "(x)" is x; "()", "(x,)" and "(x, y)" are tuples.
  Node parse_parenthesized(size_t pos) {
    Node tuple{NodeKind::Tuple, pos};
    if (accept(")")) return tuple;
    Node first = parse_expression();
    if (accept(")")) return first;
    tuple.children.push_back(std::move(first));
    parse_rest_of_sequence(tuple, ")");
    return tuple;
  }

  Node parse_list(size_t pos) {
    Node list{NodeKind::List, pos};
    if (accept("]")) return list;
    list.children.push_back(parse_expression());
    parse_rest_of_sequence(list, "]");
    return list;
  }

  // After a first element: (',' element)* [','] close.
  void parse_rest_of_sequence(Node& sequence, const char* close) {
    for (;;) {
      if (accept(close)) return;
      expect(",");
      if (accept(close)) return;
      sequence.children.push_back(parse_expression());
    }
  }

  // Each call or subscript nests the tree one level deeper ("T[:][:]..."),
  // so it counts against the depth limit like a parenthesis.
  Node parse_postfix(Node node) {
    const int entry_depth = depth_;
    for (;;) {
      const size_t pos = peek().pos;
      const bool is_call = is_punct("(");
      if (!is_call && !is_punct("[")) break;
      if (++depth_ > kMaxDepth) syntax_error(input_, pos, "too many nested parentheses");
      ++next_;
      node = is_call ? parse_call(std::move(node), pos) : parse_subscript(std::move(node), pos);
    }
    depth_ = entry_depth;
    return node;
  }

  Node parse_call(Node callee, size_t pos) {
    Node call{NodeKind::Call, pos};
    call.children.push_back(std::move(callee));
    bool seen_keyword = false;
    while (!accept(")")) {
      if (call.children.size() > 1) {
        expect(",");
        if (accept(")")) break;
      }
      std::string keyword;
      if (peek().kind == TokenKind::Name && is_punct_at(next_ + 1, "=")) {
        keyword = peek().text;
        next_ += 2;
        seen_keyword = true;
      } else if (seen_keyword) {
        syntax_error(input_, peek().pos, "positional argument follows keyword argument");
      }
      call.children.push_back(parse_expression());
      call.keywords.push_back(keyword);
    }
    return call;
  }

  // "T[...]": the index is one item, or a tuple of items when there is a comma.
  Node parse_subscript(Node target, size_t pos) {
    Node subscript{NodeKind::Subscript, pos};
    subscript.children.push_back(std::move(target));
    Node first = parse_subscript_item();
    if (accept("]")) {
      subscript.children.push_back(std::move(first));
      return subscript;
    }
    Node index{NodeKind::Tuple, first.pos};
    index.children.push_back(std::move(first));
    for (;;) {
      expect(",");
      if (accept("]")) break;
      index.children.push_back(parse_subscript_item());
      if (accept("]")) break;
    }
    subscript.children.push_back(std::move(index));
    return subscript;
  }

  // An expression, or a slice "[start]:[stop][:[step]]".
  Node parse_subscript_item() {
    const size_t pos = peek().pos;
    Node start = starts_slice_part() ? parse_expression() : Node{NodeKind::Absent, pos};
    if (!accept(":")) {
      if (start.kind == NodeKind::Absent) unexpected(peek());
      return start;
    }
    Node slice{NodeKind::Slice, pos};
    slice.children.push_back(std::move(start));
    slice.children.push_back(starts_slice_part() ? parse_expression() : Node{NodeKind::Absent, peek().pos});
    Node step{NodeKind::Absent, peek().pos};
    if (accept(":") && starts_slice_part()) step = parse_expression();
    slice.children.push_back(std::move(step));
    return slice;
  }

  bool starts_slice_part() const { return !is_punct(":") && !is_punct(",") && !is_punct("]"); }

  const Token& peek() const { return tokens_[next_]; }
  bool is_punct_at(size_t index, const char* text) const {
    return index < tokens_.size() && tokens_[index].kind == TokenKind::Punct && tokens_[index].text == text;
  }
  bool is_punct(const char* text) const { return is_punct_at(next_, text); }
  bool accept(const char* text) {
    if (!is_punct(text)) return false;
    ++next_;
    return true;
  }
  void expect(const char* text) {
    if (!accept(text)) unexpected(peek());
  }
  void expect_end() {
    if (peek().kind != TokenKind::End) unexpected(peek());
  }

  [[noreturn]] void unexpected(const Token& token) const {
    switch (token.kind) {
      case TokenKind::End:
        syntax_error(input_, token.pos, "unexpected end of input");
      case TokenKind::Name:
        syntax_error(input_, token.pos, "unexpected name '" + token.text + "'");
      case TokenKind::String:
        syntax_error(input_, token.pos, "unexpected string '" + token.text + "'");
      default:
        syntax_error(input_, token.pos, "unexpected '" + token.text + "'");
    }
  }

  const std::string& input_;
  std::vector<Token> tokens_;
  size_t next_ = 0;
  int depth_ = 0;
};

// ---------------------------------------------------------------------------
// Evaluation

// A Python value the subset can produce.
struct Value {
  enum class Kind { Type, Signature, Int, Float, String, Bool, None, Tuple, List, Slice, TypeClass };
  Kind kind = Kind::None;
  TypeRef type = nullptr;     // Type; Signature: its return type
  bool truth = false;         // Bool
  std::string text;           // Int: canonical decimal (Python ints are unbounded);
                              // Float: source text; String: contents; TypeClass: class name
  std::vector<Value> items;   // Tuple/List elements; Signature arguments; Slice start/stop/step
};

// numba's class names, as type(value).__name__ shows them.
const char* numba_class_name(TypeRef type) {
  switch (type->kind()) {
    case TypeKind::None:
      return "NoneType";
    case TypeKind::Boolean:
      return "Boolean";
    case TypeKind::Integer:
      return "Integer";
    case TypeKind::Float:
      return "Float";
    case TypeKind::Complex:
      return "Complex";
    case TypeKind::IntegerLiteral:
      return "IntegerLiteral";
    case TypeKind::BooleanLiteral:
      return "BooleanLiteral";
    case TypeKind::UniTuple:
      return "UniTuple";
    case TypeKind::Tuple:
      return "Tuple";
    case TypeKind::CPointer:
      return "CPointer";
    case TypeKind::VoidPtr:
      return "RawPointer";
    case TypeKind::Array:
      return "Array";
    case TypeKind::Range:
      return "RangeType";
    case TypeKind::Opaque:
      return "Opaque";
    case TypeKind::CharSeq:
      return "CharSeq";
    case TypeKind::UnicodeCharSeq:
      return "UnicodeCharSeq";
    case TypeKind::Datetime:
      return "NPDatetime";
    case TypeKind::Timedelta:
      return "NPTimedelta";
    case TypeKind::Record:
      return "Record";
    case TypeKind::NestedArray:
      return "NestedArray";
    case TypeKind::Optional:
      return "Optional";
    case TypeKind::BFloat16:
      break;  // cujit's own class; no numba name to show
    case TypeKind::FP8:
      break;
    case TypeKind::FP8Packed:
      break;
    case TypeKind::Vector:
      return type->name() == "Dim3" ? "Dim3" : "_VectorType";
    case TypeKind::NumberClass:
      return "NumberClass";
    case TypeKind::Function:
      return "Function";
    case TypeKind::Dispatcher:
      return "Dispatcher";
  }
  return "Type";
}

std::string python_class_name(const Value& value) {
  switch (value.kind) {
    case Value::Kind::Type:
      return numba_class_name(value.type);
    case Value::Kind::Signature:
      return "Signature";
    case Value::Kind::Int:
      return "int";
    case Value::Kind::Float:
      return "float";
    case Value::Kind::String:
      return "str";
    case Value::Kind::Bool:
      return "bool";
    case Value::Kind::None:
      return "NoneType";
    case Value::Kind::Tuple:
      return "tuple";
    case Value::Kind::List:
      return "list";
    case Value::Kind::Slice:
      return "slice";
    case Value::Kind::TypeClass:
      return "_TypeMetaclass";  // the metaclass of numba's type classes
  }
  return "object";
}

std::string python_repr(const Value& value);

std::string python_sequence_repr(const std::vector<Value>& items, char open, char close) {
  std::string out(1, open);
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += ", ";
    out += python_repr(items[i]);
  }
  if (open == '(' && items.size() == 1) out += ',';
  return out + close;
}

std::string python_repr(const Value& value) {
  switch (value.kind) {
    case Value::Kind::Type:
      return value.type->name();
    case Value::Kind::Signature:  // numba's Signature.__repr__: "<args tuple> -> <return type>"
      return python_sequence_repr(value.items, '(', ')') + " -> " + value.type->name();
    case Value::Kind::Int:
    case Value::Kind::Float:
      return value.text;
    case Value::Kind::String:
      return python_string_repr(value.text);
    case Value::Kind::Bool:
      return value.truth ? "True" : "False";
    case Value::Kind::None:
      return "None";
    case Value::Kind::Tuple:
      return python_sequence_repr(value.items, '(', ')');
    case Value::Kind::List:
      return python_sequence_repr(value.items, '[', ']');
    case Value::Kind::Slice:
      return "slice" + python_sequence_repr(value.items, '(', ')');
    case Value::Kind::TypeClass:
      return "<class '" + value.text + "'>";
  }
  return "?";
}

Value make_type(TypeRef type) {
  Value value;
  value.kind = Value::Kind::Type;
  value.type = type;
  return value;
}

// The value of a Python int or bool when int64 holds it.
bool to_int64(const Value& value, int64_t* out) {
  if (value.kind == Value::Kind::Bool) {
    *out = value.truth ? 1 : 0;
    return true;
  }
  if (value.kind != Value::Kind::Int) return false;
  const bool negative = value.text[0] == '-';
  uint64_t magnitude = 0;
  for (size_t i = negative ? 1 : 0; i < value.text.size(); ++i) {
    const unsigned digit = static_cast<unsigned>(value.text[i] - '0');
    if (magnitude > (UINT64_MAX - digit) / 10) return false;
    magnitude = magnitude * 10 + digit;
  }
  const uint64_t limit = static_cast<uint64_t>(INT64_MAX) + (negative ? 1 : 0);
  if (magnitude > limit) return false;
  *out = negative ? static_cast<int64_t>(0 - magnitude) : static_cast<int64_t>(magnitude);
  return true;
}

// numba's sigutils check: every argument and the return type must be a type.
TypeRef require_type_in_signature(const Value& value) {
  if (value.kind != Value::Kind::Type)
    fail(ErrorKind::TypeError, "invalid type in signature: expected a type instance, got " + python_repr(value));
  return value.type;
}

// Names numba.cuda.types defines that cujit's type system does not model.
bool is_unsupported_numba_name(const std::string& name) {
  static const char* const names[] = {"Record",
                                      "NestedArray",
                                      "Optional",
                                      "optional",
                                      "grid_group",
                                      "pyobject",
                                      "ffi",
                                      "ffi_forced_object",
                                      "deferred_type",
                                      "NamedTuple",
                                      "NamedUniTuple",
                                      "Literal",
                                      "IntegerLiteral",
                                      "BooleanLiteral",
                                      "unicode_type",
                                      "string",
                                      "slice2_type",
                                      "slice3_type",
                                      "ellipsis",
                                      "Any",
                                      "Omitted",
                                      "EnumMember",
                                      "IntEnumMember",
                                      "Boolean",
                                      "Integer",
                                      "Float",
                                      "Complex",
                                      "RawPointer",
                                      "NoneType",
                                      "Opaque",
                                      "RangeType",
                                      "range_iter32_type",
                                      "range_iter64_type",
                                      "unsigned_range_iter64_type",
                                      "undefined",
                                      "unknown",
                                      "Dispatcher",
                                      "ExternalFunction",
                                      "FunctionType",
                                      "DType",
                                      "NumberClass"};
  for (const char* unsupported : names)
    if (name == unsupported) return true;
  return false;
}

// The arguments of a call matched to a callee's parameters, as Python binds them.
class BoundArguments {
 public:
  BoundArguments(const std::string& callee, const std::vector<std::string>& parameters, size_t required,
                 const std::vector<Value>& arguments, const std::vector<std::string>& keywords)
      : callee_(callee), parameters_(parameters), bound_(parameters.size(), nullptr) {
    size_t positional = 0;
    for (size_t i = 0; i < arguments.size(); ++i) {
      size_t slot = 0;
      if (keywords[i].empty()) {
        if (positional >= parameters.size())
          fail(ErrorKind::TypeError, callee + "() takes at most " + std::to_string(parameters.size()) + " arguments (" +
                                         std::to_string(arguments.size()) + " given)");
        slot = positional++;
      } else {
        slot = index_of(keywords[i]);
      }
      if (bound_[slot])
        fail(ErrorKind::TypeError, callee + "() got multiple values for argument '" + parameters[slot] + "'");
      bound_[slot] = &arguments[i];
    }
    for (size_t slot = 0; slot < required; ++slot)
      if (!bound_[slot]) fail(ErrorKind::TypeError, callee + "() missing required argument '" + parameters[slot] + "'");
  }

  const Value* get(size_t slot) const { return bound_[slot]; }

  TypeRef type(size_t slot) const {
    const Value& value = *bound_[slot];
    if (value.kind != Value::Kind::Type) wrong_argument(slot, "a type");
    return value.type;
  }

  int non_negative_int(size_t slot) const {
    const Value& value = *bound_[slot];
    if (value.kind != Value::Kind::Int) wrong_argument(slot, "an integer");
    int64_t number = 0;
    if (!to_int64(value, &number) || number < 0 || number > 0x7fffffff)
      fail(ErrorKind::ValueError, callee_ + "() got an out-of-range '" + parameters_[slot] + "': " + value.text);
    return static_cast<int>(number);
  }

  bool flag(size_t slot, bool absent) const {
    if (!bound_[slot]) return absent;
    const Value& value = *bound_[slot];
    if (value.kind == Value::Kind::Bool) return value.truth;
    if (value.kind == Value::Kind::Int) return value.text != "0";
    wrong_argument(slot, "True or False");
  }

 private:
  [[noreturn]] void wrong_argument(size_t slot, const std::string& expected) const {
    fail(ErrorKind::TypeError,
         callee_ + "() expects " + expected + " for '" + parameters_[slot] + "', got " + python_repr(*bound_[slot]));
  }

  size_t index_of(const std::string& keyword) const {
    for (size_t slot = 0; slot < parameters_.size(); ++slot)
      if (parameters_[slot] == keyword) return slot;
    fail(ErrorKind::TypeError, callee_ + "() got an unexpected keyword argument '" + keyword + "'");
  }

  const std::string& callee_;
  const std::vector<std::string>& parameters_;
  std::vector<const Value*> bound_;
};

class Evaluator {
 public:
  Value evaluate(const Node& node) {
    switch (node.kind) {
      case NodeKind::Name:
        return lookup(node.text);
      case NodeKind::Int:
        return integer_literal(node.text);
      case NodeKind::Float: {
        Value value;
        value.kind = Value::Kind::Float;
        value.text = node.text;
        return value;
      }
      case NodeKind::String: {
        Value value;
        value.kind = Value::Kind::String;
        value.text = node.text;
        return value;
      }
      case NodeKind::Tuple:
      case NodeKind::List:
      case NodeKind::Slice: {
        Value value;
        value.kind = node.kind == NodeKind::Tuple  ? Value::Kind::Tuple
                     : node.kind == NodeKind::List ? Value::Kind::List
                                                   : Value::Kind::Slice;
        for (const Node& child : node.children) value.items.push_back(evaluate(child));
        return value;
      }
      case NodeKind::Absent:
        return Value{};  // an omitted slice part is None
      case NodeKind::Negate:
        return negate(evaluate(node.children[0]));
      case NodeKind::Call: {
        Value callee = evaluate(node.children[0]);
        std::vector<Value> arguments;
        for (size_t i = 1; i < node.children.size(); ++i) arguments.push_back(evaluate(node.children[i]));
        return call(callee, arguments, node.keywords);
      }
      case NodeKind::Subscript: {
        Value target = evaluate(node.children[0]);
        return subscript(target, evaluate(node.children[1]));
      }
    }
    fail(ErrorKind::Internal, "unknown syntax node");
  }

 private:
  static Value lookup(const std::string& name) {
    if (name == "None") return Value{};
    if (name == "True" || name == "False") {
      Value value;
      value.kind = Value::Kind::Bool;
      value.truth = name == "True";
      return value;
    }
    if (TypeRef scalar = types::lookup_scalar(name)) return make_type(scalar);
    if (TypeRef vector = types::lookup_vector(name)) return make_type(vector);  // float32x4, float4, dim3
    if (name == "range_state32_type") return make_type(types::range(types::int32()));
    if (name == "range_state64_type") return make_type(types::range(types::int64()));
    if (name == "unsigned_range_state64_type") return make_type(types::range(types::uint64()));
    if (name == "UniTuple" || name == "Tuple" || name == "CPointer" || name == "Array") {
      Value value;
      value.kind = Value::Kind::TypeClass;
      value.text = name;
      return value;
    }
    if (is_unsupported_numba_name(name))
      fail(ErrorKind::TypeError, "'" + name + "' is a numba type that cujit does not support in signatures");
    fail(ErrorKind::NameError, "name '" + name + "' is not defined" + suggestion(name));
  }

  // "; did you mean 'float32'?" for a name within a few edits of known ones (at most three, closest first).
  static std::string suggestion(const std::string& name) {
    std::vector<std::string> known = types::scalar_names();
    for (const char* extra : {"UniTuple", "Tuple", "CPointer", "Array", "None", "True", "False"})
      known.push_back(extra);
    const size_t allowed = std::max<size_t>(1, name.size() / 3);
    std::vector<std::pair<size_t, std::string>> close;
    for (const std::string& candidate : known) {
      size_t distance = edit_distance(name, candidate);
      if (distance <= allowed) close.emplace_back(distance, candidate);
    }
    if (close.empty()) return "";
    std::stable_sort(close.begin(), close.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::string text = "; did you mean ";
    for (size_t i = 0; i < close.size() && i < 3; ++i) text += (i ? " or '" : "'") + close[i].second + "'";
    return text + "?";
  }

  // Levenshtein distance, with a swap of two neighbours counted as one edit ("flaot" -> "float").
  static size_t edit_distance(const std::string& a, const std::string& b) {
    std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
    for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
    for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
      for (size_t j = 1; j <= b.size(); ++j) {
        size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
        d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
        if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
          d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
    return d[a.size()][b.size()];
  }

  // Kept as canonical decimal text ("007" is refused by the lexer, "000" is 0).
  static Value integer_literal(const std::string& digits) {
    Value value;
    value.kind = Value::Kind::Int;
    const size_t first_significant = digits.find_first_not_of('0');
    value.text = first_significant == std::string::npos ? "0" : digits.substr(first_significant);
    return value;
  }

  static Value negate(Value operand) {
    const bool is_number = operand.kind == Value::Kind::Int || operand.kind == Value::Kind::Float;
    if (is_number) {
      if (operand.text[0] == '-') {
        operand.text.erase(0, 1);
      } else if (operand.text != "0") {
        operand.text.insert(0, 1, '-');
      }
      return operand;
    }
    fail(ErrorKind::TypeError, "bad operand type for unary -: '" + python_class_name(operand) + "'");
  }

  Value call(const Value& callee, const std::vector<Value>& arguments, const std::vector<std::string>& keywords) {
    if (callee.kind == Value::Kind::Type) {
      // Calling a type makes a signature; numba checks the argument types
      // only once the whole string is evaluated.
      for (const std::string& keyword : keywords)
        if (!keyword.empty())
          fail(ErrorKind::TypeError,
               "calling type " + callee.type->name() + "() got an unexpected keyword argument '" + keyword + "'");
      Value signature;
      signature.kind = Value::Kind::Signature;
      signature.type = callee.type;
      signature.items = arguments;
      return signature;
    }
    if (callee.kind == Value::Kind::TypeClass) return construct(callee.text, arguments, keywords);
    fail(ErrorKind::TypeError, "'" + python_class_name(callee) + "' object is not callable");
  }

  static Value construct(const std::string& class_name, const std::vector<Value>& arguments,
                         const std::vector<std::string>& keywords) {
    if (class_name == "UniTuple") {
      static const std::vector<std::string> parameters{"dtype", "count"};
      BoundArguments bound(class_name, parameters, 2, arguments, keywords);
      return make_type(types::uni_tuple(bound.type(0), bound.non_negative_int(1)));
    }
    if (class_name == "Tuple") return make_type(construct_tuple(arguments, keywords));
    if (class_name == "CPointer") {
      static const std::vector<std::string> parameters{"dtype", "addrspace"};
      BoundArguments bound(class_name, parameters, 1, arguments, keywords);
      if (bound.get(1) && bound.get(1)->kind != Value::Kind::None)
        fail(ErrorKind::TypeError, "CPointer() with an address space is not supported in signatures");
      return make_type(types::cpointer(bound.type(0)));
    }
    // Array(dtype, ndim, layout, readonly=False, name=None, aligned=True)
    static const std::vector<std::string> parameters{"dtype", "ndim", "layout", "readonly", "name", "aligned"};
    BoundArguments bound(class_name, parameters, 3, arguments, keywords);
    if (bound.get(4) && bound.get(4)->kind != Value::Kind::None)
      fail(ErrorKind::TypeError, "Array() with a custom name is not supported in signatures");
    const Value& layout = *bound.get(2);
    if (layout.kind != Value::Kind::String || (layout.text != "C" && layout.text != "F" && layout.text != "A"))
      fail(ErrorKind::ValueError, "Invalid layout " + python_repr(layout) + " (expected 'C', 'F' or 'A')");
    return make_type(types::array(bound.type(0), bound.non_negative_int(1), layout.text[0], bound.flag(3, false),
                                  bound.flag(5, true)));
  }

  // numba's Tuple takes one iterable of types: Tuple((int32, float64)).
  static TypeRef construct_tuple(const std::vector<Value>& arguments, const std::vector<std::string>& keywords) {
    static const std::vector<std::string> parameters{"types"};
    if (arguments.size() > 1 && keywords[1].empty())
      fail(ErrorKind::TypeError, "Tuple() takes a single tuple of types, e.g. Tuple((int32, float64)); got " +
                                     std::to_string(arguments.size()) + " arguments");
    BoundArguments bound("Tuple", parameters, 1, arguments, keywords);
    const Value& elements = *bound.get(0);
    if (elements.kind != Value::Kind::Tuple && elements.kind != Value::Kind::List)
      fail(ErrorKind::TypeError, "Tuple() expects a tuple of types, got " + python_repr(elements));
    std::vector<TypeRef> element_types;
    for (const Value& element : elements.items) {
      if (element.kind != Value::Kind::Type)
        fail(ErrorKind::TypeError, "Tuple() expects a tuple of types, got " + python_repr(elements));
      element_types.push_back(element.type);
    }
    return types::tuple(element_types);
  }

  // numba's Type.__getitem__: only start/stop-less slices; a step of 1 on the
  // first of several dimensions means F, on the last (or only) one C.
  static Value subscript(const Value& target, const Value& index) {
    if (target.kind != Value::Kind::Type)
      fail(ErrorKind::TypeError, "'" + python_class_name(target) + "' object is not subscriptable");
    const bool is_sequence = index.kind == Value::Kind::Tuple || index.kind == Value::Kind::List;
    std::vector<const Value*> dimensions;
    if (is_sequence) {
      for (const Value& item : index.items) dimensions.push_back(&item);
    } else {
      dimensions.push_back(&index);
    }
    for (const Value* dimension : dimensions)
      if (!is_open_slice(*dimension))
        fail(ErrorKind::TypeError,
             "Can only index numba types with slices with no start or stop, got " + python_repr(index) + ".");
    char layout = 'A';
    if (is_sequence && !dimensions.empty() && has_unit_step(*dimensions.front())) {
      layout = 'F';
    } else if (!dimensions.empty() && has_unit_step(*dimensions.back())) {
      layout = 'C';
    }
    return make_type(types::array(target.type, static_cast<int>(dimensions.size()), layout));
  }

  static bool is_open_slice(const Value& value) {
    return value.kind == Value::Kind::Slice && value.items[0].kind == Value::Kind::None &&
           value.items[1].kind == Value::Kind::None;
  }

  // Python's `step == 1` (True == 1 holds too).
  static bool has_unit_step(const Value& slice) {
    int64_t step = 0;
    return to_int64(slice.items[2], &step) && step == 1;
  }
};

// Evaluates the text, turning every failure into an Error value.
template <typename Result, typename Convert>
Expected<Result> evaluate_text(const std::string& text, Convert convert) {
  try {
    Parser parser(text, Lexer(text).tokenize());
    Node tree = parser.parse_input();
    Value value = Evaluator().evaluate(tree);
    return convert(value);
  } catch (const CompileError& error) {
    Error located = error.error();
    if (located.kind == ErrorKind::NameError) located.message += " (in the signature " + python_string_repr(text) + ")";
    return located;
  } catch (const std::exception& error) {
    return Error{ErrorKind::Internal, std::string("signature parser failed: ") + error.what(), {}};
  }
}

}  // namespace

Expected<Signature> parse_signature(const std::string& text) {
  return evaluate_text<Signature>(text, [&text](const Value& value) {
    Signature signature;
    if (value.kind == Value::Kind::Signature) {
      signature.return_type = value.type;
    } else if (value.kind != Value::Kind::Tuple) {
      fail(ErrorKind::TypeError, "invalid signature: " + python_string_repr(text) + " (type: 'str') evaluates to '" +
                                     python_class_name(value) + "' instead of tuple or Signature");
    }
    for (const Value& argument : value.items) signature.args.push_back(require_type_in_signature(argument));
    return signature;
  });
}

Expected<TypeRef> parse_type(const std::string& text) {
  return evaluate_text<TypeRef>(text, [&text](const Value& value) {
    if (value.kind != Value::Kind::Type)
      fail(ErrorKind::TypeError, "invalid type: " + python_string_repr(text) + " (type: 'str') evaluates to '" +
                                     python_class_name(value) + "' instead of a type instance");
    return value.type;
  });
}

}  // namespace cujit
