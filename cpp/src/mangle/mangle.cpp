// numba's Itanium-extended mangling (docs/numba_abi.md: Mangled names): escaped, length-prefixed
// identifiers, dotted names as nested N...E names, builtin codes for the
// scalar types and "templated identifiers" for everything else.
#include <charconv>
#include <cmath>
#include <string>
#include <vector>

#include "cujit/mangle.h"

namespace cujit::mangle {
namespace {

bool is_identifier_char(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// "<len><text>" after escaping; a leading digit would be read as part of the
// length, so it gets a "_" in front (counted in the length).
std::string length_encoded(const std::string& raw_text) {
  std::string text = escape_string(raw_text);
  if (!text.empty() && text[0] >= '0' && text[0] <= '9') text.insert(0, 1, '_');
  return std::to_string(text.size()) + text;
}

// A dotted name: one component is "<len><text>", several are nested as
// "N<len><text>...E". Template parameters and ABI tags follow the last
// component (inside the N...E).
std::string encode_name(const std::string& dotted_name, const std::string& suffix) {
  std::string components;
  size_t count = 0;
  size_t start = 0;
  for (;;) {
    const size_t dot = dotted_name.find('.', start);
    components += length_encoded(dotted_name.substr(start, dot - start));
    ++count;
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return count > 1 ? "N" + components + suffix + "E" : components + suffix;
}

// The builtin code of a scalar type (§4.4), or "" when it has none.
std::string builtin_code(TypeRef type) {
  switch (type->kind()) {
    case TypeKind::None:
      return "v";
    case TypeKind::Boolean:
      return "b";
    case TypeKind::Float:
      return type->bitwidth() == 16 ? "Dh" : type->bitwidth() == 32 ? "f" : "d";
    case TypeKind::Integer: {
      // Itanium's codes: a/h 8, s/t 16, i/j 32, x/y 64 bits (signed/unsigned).
      const int bits = type->bitwidth();
      const int index = bits == 8 ? 0 : bits == 16 ? 1 : bits == 32 ? 2 : 3;
      return std::string(1, (type->is_signed() ? "asix" : "htjy")[index]);
    }
    default:
      return "";
  }
}

// "I<param>...E", or nothing for an empty parameter list.
std::string template_parameters(const std::vector<std::string>& mangled_parameters) {
  if (mangled_parameters.empty()) return "";
  std::string text = "I";
  for (const std::string& parameter : mangled_parameters) text += parameter;
  return text + "E";
}

}  // namespace

std::string escape_string(const std::string& text) {
  static const char* hex = "0123456789abcdef";
  std::string escaped;
  escaped.reserve(text.size());
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (is_identifier_char(byte)) {
      escaped += c;
    } else {
      escaped += '_';
      escaped += hex[byte >> 4];
      escaped += hex[byte & 15];
    }
  }
  return escaped;
}

std::string mangle_identifier(const std::string& text) { return encode_name(text, ""); }

std::string mangle_value(int64_t value) { return "Li" + std::to_string(value) + "E"; }

std::string mangle_float_value(double value) {
  // Python's repr(float): the shortest round-tripping digits, in fixed
  // notation when the decimal exponent is in [-4, 16), else "d.ddde+XX".
  std::string repr;
  if (std::isnan(value)) {
    repr = "nan";
  } else if (std::isinf(value)) {
    repr = value < 0 ? "-inf" : "inf";
  } else {
    char buffer[64];
    const auto result = std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::scientific);
    const std::string scientific(buffer, result.ptr);  // "-1.2345e+01"
    const size_t e = scientific.find('e');
    const bool negative = scientific[0] == '-';
    std::string digits;
    for (size_t i = negative ? 1 : 0; i < e; ++i)
      if (scientific[i] != '.') digits += scientific[i];
    const int exponent = std::stoi(scientific.substr(e + 1));
    if (negative) repr = "-";
    if (exponent < -4 || exponent >= 16) {
      repr += digits.substr(0, 1);
      if (digits.size() > 1) repr += "." + digits.substr(1);
      const std::string magnitude = std::to_string(std::abs(exponent));
      repr += std::string(exponent < 0 ? "e-" : "e+") + (magnitude.size() < 2 ? "0" : "") + magnitude;
    } else if (exponent < 0) {
      repr += "0." + std::string(static_cast<size_t>(-exponent - 1), '0') + digits;
    } else {
      const size_t integer_digits = static_cast<size_t>(exponent) + 1;
      if (digits.size() <= integer_digits) {
        repr += digits + std::string(integer_digits - digits.size(), '0') + ".0";
      } else {
        repr += digits.substr(0, integer_digits) + "." + digits.substr(integer_digits);
      }
    }
  }
  return length_encoded(repr);
}

std::string mangle_abi_tag(const std::string& tag) { return "B" + length_encoded(tag); }

std::string mangle_type(TypeRef type) {
  const std::string code = builtin_code(type);
  if (!code.empty()) return code;
  // Types with "mangling args" (numba's class name plus parameters); every
  // other type is its plain name.
  switch (type->kind()) {
    case TypeKind::Array:
      return encode_name("Array", template_parameters({mangle_type(type->element()), mangle_value(type->ndim()),
                                                       mangle_identifier(std::string(1, type->layout())),
                                                       mangle_identifier(type->readonly() ? "readonly" : "mutable"),
                                                       mangle_identifier(type->aligned() ? "aligned" : "unaligned")}));
    case TypeKind::UniTuple:
      return encode_name("UniTuple", template_parameters({mangle_type(type->element()),
                                                          mangle_value(static_cast<int64_t>(type->count()))}));
    case TypeKind::Tuple: {
      std::vector<std::string> elements;
      for (TypeRef element : type->elements()) elements.push_back(mangle_type(element));
      return encode_name("Tuple", template_parameters(elements));
    }
    case TypeKind::Record: {
      // numba mangles a record by a process-local interning counter; a hash of its layout gives the same shape
      // of name and the same name in every process (docs/numba_abi.md: Mangled names).
      uint64_t hash = 1469598103934665603ull;  // FNV-1a
      for (unsigned char c : type->name()) hash = (hash ^ c) * 1099511628211ull;
      return encode_name("Record", template_parameters({mangle_value(static_cast<int64_t>(hash >> 33))}));
    }
    default:
      return encode_name(type->name(), "");
  }
}

std::string mangle(const std::string& dotted_name, const std::vector<TypeRef>& args,
                   const std::vector<std::string>& abi_tags, int64_t uid) {
  std::string tags;
  if (uid >= 0) tags += mangle_abi_tag("v" + std::to_string(uid));
  for (const std::string& tag : abi_tags) tags += mangle_abi_tag(tag);
  std::string name = "_Z" + encode_name(dotted_name, tags);
  for (TypeRef arg : args) name += mangle_type(arg);
  return name;
}

}  // namespace cujit::mangle
