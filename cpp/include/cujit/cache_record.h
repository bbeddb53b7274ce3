// What a compile-cache entry holds, as typed data: the code (a cubin, PTX or
// LTO-IR), the kernel's symbol, a compile output's return type by its parseable
// name, launch facts, the link inputs it was linked with (kind and content hash)
// and a debug kernel's raise sites (the exception class by its importable name,
// its constant arguments). Entries are shared by every process that uses the
// cache directory, so reading one must only ever give data: the encoding is a
// versioned sequence of length-prefixed fields that decode() checks whole, and
// nothing in it names code to run (unlike the pickles it replaced).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cujit::cache {

// A constant argument of a raise site: a str, int, float, bool or None, as its kind and its text (an int in
// decimal, a float as Python's repr, a bool as "True"/"False", None as "").
struct RecordConstant {
  enum class Kind : std::uint8_t { Str, Int, Float, Bool, None };
  Kind kind = Kind::None;
  std::string text;
};

// A raise site of a debug kernel (its exception code is its index + 1).
struct RecordRaise {
  std::string exception;  // "module:qualname" of the exception class, resolved by the reader without importing
  std::vector<RecordConstant> args;
  std::string function, filename;
  std::int64_t line = 0;
};

struct CacheRecord {
  enum class Kind : std::uint8_t { Kernel, Compiled };
  Kind kind = Kind::Kernel;
  std::string code;         // cubin (kernels) or PTX / LTO-IR (compile outputs)
  std::string symbol;       // kernels: the entry
  std::string return_type;  // compile outputs: the return type's name (types::parse reads it back)
  std::string arch;         // kernels: what the cubin was linked for ("sm_90")
  bool cooperative = false;
  std::vector<std::pair<std::string, std::string>> links;  // (kind, content hash) of each link input, in order
  std::vector<RecordRaise> raises;
};

// The record as bytes (what DiskCache::put stores).
std::string encode(const CacheRecord& record);
// The record `bytes` hold, or nullopt for anything that is not one whole record of this format (another
// version, a truncated or extended field, an unknown kind, bytes after the last field).
std::optional<CacheRecord> decode(std::string_view bytes);

}  // namespace cujit::cache
