// The flags ABI tag (docs/numba_abi.md: Mangled names): the summary of non-default compile flags,
// raw-DEFLATE compressed against numba's preset dictionary and base64
// encoded, so that differently-compiled copies of a function get different
// symbols. Byte-exact with numba-cuda 0.30.4 (zlib level 9, wbits -15).
#include <zlib.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "cujit/error.h"
#include "cujit/mangle.h"

namespace cujit::mangle {
namespace {

// numba's zdict: "numba", the metaclass name "_MetaTargetConfig", "True",
// "False", then every flag option's name and str(default) in declaration
// order. Any change here changes every flags tag.
constexpr char kPresetDictionary[] =
    "numba_MetaTargetConfigTrueFalse"
    "enable_loopliftFalse"
    "enable_pyobjectFalse"
    "enable_pyobject_loopliftFalse"
    "enable_ssaTrue"
    "force_pyobjectFalse"
    "release_gilFalse"
    "no_compileFalse"
    "debuginfoFalse"
    "boundscheckFalse"
    "forceinlineFalse"
    "no_cpython_wrapperFalse"
    "no_cfunc_wrapperFalse"
    "auto_parallelParallelOptions(enabled=False, comprehension=False, reduction=False, "
    "inplace_binop=False, setitem=False, numpy=False, stencil=False, fusion=False, prange=False)"
    "nrtFalse"
    "no_rewritesFalse"
    "error_modelpython"
    "fastmathFastMathOptions(set())"
    "noaliasFalse"
    "inlineInlineOptions('never')"
    "dbg_extend_lifetimesFalse"
    "dbg_optnoneFalse"
    "dbg_directives_onlyFalse"
    "nvvm_optionsNone"
    "compute_capabilityNone"
    "max_registersNone"
    "ltoFalse";
constexpr size_t kPresetDictionarySize = sizeof(kPresetDictionary) - 1;
static_assert(kPresetDictionarySize == 666, "numba-cuda 0.30.4's flags dictionary is 666 bytes");

constexpr int kRawDeflateWindowBits = -15;  // raw stream: no zlib header or checksum
// Real summaries are a few hundred bytes; a tag inflating past this is not one.
constexpr size_t kMaxSummarySize = 1 << 20;

const Bytef* dictionary_bytes() { return reinterpret_cast<const Bytef*>(kPresetDictionary); }

[[noreturn]] void invalid_tag(const std::string& tag, const std::string& why) {
  fail(ErrorKind::ValueError, "invalid flags tag '" + tag + "': " + why);
}

std::string compress(const std::string& text) {
  z_stream stream{};
  if (deflateInit2(&stream, Z_BEST_COMPRESSION, Z_DEFLATED, kRawDeflateWindowBits, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    fail(ErrorKind::Internal, "zlib deflateInit2 failed");
  deflateSetDictionary(&stream, dictionary_bytes(), kPresetDictionarySize);
  std::string output(deflateBound(&stream, text.size()) + 16, '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  stream.avail_in = static_cast<uInt>(text.size());
  stream.next_out = reinterpret_cast<Bytef*>(&output[0]);
  stream.avail_out = static_cast<uInt>(output.size());
  // Python's compressobj().compress() then flush(): Z_NO_FLUSH, then Z_FINISH.
  deflate(&stream, Z_NO_FLUSH);
  const int status = deflate(&stream, Z_FINISH);
  const size_t produced = stream.total_out;
  deflateEnd(&stream);
  if (status != Z_STREAM_END) fail(ErrorKind::Internal, "zlib deflate did not finish");
  output.resize(produced);
  return output;
}

std::string decompress(const std::string& data, const std::string& tag) {
  z_stream stream{};
  if (inflateInit2(&stream, kRawDeflateWindowBits) != Z_OK) fail(ErrorKind::Internal, "zlib inflateInit2 failed");
  // A raw stream never asks for its dictionary (Z_NEED_DICT needs the zlib
  // header), so it must be set before inflating.
  inflateSetDictionary(&stream, dictionary_bytes(), kPresetDictionarySize);
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  stream.avail_in = static_cast<uInt>(data.size());
  std::string output;
  int status = Z_OK;
  while (status == Z_OK) {
    char chunk[4096];
    stream.next_out = reinterpret_cast<Bytef*>(chunk);
    stream.avail_out = sizeof chunk;
    status = inflate(&stream, Z_NO_FLUSH);
    output.append(chunk, sizeof chunk - stream.avail_out);
    if (output.size() > kMaxSummarySize) break;
    if (status == Z_BUF_ERROR && stream.avail_out == 0) status = Z_OK;  // output was full: go on
  }
  inflateEnd(&stream);
  if (status != Z_STREAM_END) invalid_tag(tag, "not a DEFLATE stream of numba's flags");
  return output;
}

constexpr char kBase64Alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

std::string base64_encode(const std::string& bytes) {
  std::string text;
  for (size_t i = 0; i < bytes.size(); i += 3) {
    const size_t available = bytes.size() - i < 3 ? bytes.size() - i : 3;
    uint32_t group = 0;
    for (size_t k = 0; k < 3; ++k)
      group = (group << 8) | (k < available ? static_cast<unsigned char>(bytes[i + k]) : 0u);
    for (size_t k = 0; k < 4; ++k) text += k <= available ? kBase64Alphabet[(group >> (18 - 6 * k)) & 63] : '=';
  }
  return text;
}

std::string base64_decode(const std::string& text, const std::string& tag) {
  if (text.size() % 4 != 0) invalid_tag(tag, "base64 text length is not a multiple of 4");
  std::string bytes;
  for (size_t i = 0; i < text.size(); i += 4) {
    uint32_t group = 0;
    size_t padding = 0;
    for (size_t k = 0; k < 4; ++k) {
      const char c = text[i + k];
      uint32_t sextet = 0;
      if (c == '=' && i + 4 == text.size() && k >= 2) {
        ++padding;
      } else {
        const char* found = c == '\0' || padding ? nullptr : std::strchr(kBase64Alphabet, c);
        if (!found) invalid_tag(tag, "not base64");
        sextet = static_cast<uint32_t>(found - kBase64Alphabet);
      }
      group = (group << 6) | sextet;
    }
    for (size_t k = 0; k < 3 - padding; ++k) bytes += static_cast<char>((group >> (16 - 8 * k)) & 0xff);
  }
  return bytes;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// Undoes escape_string: base64 text never contains '_', so every '_' in a
// tag starts an "_xx" escape.
std::string unescape(const std::string& text, const std::string& tag) {
  std::string raw;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '_') {
      raw += text[i];
      continue;
    }
    const int high = i + 2 < text.size() ? hex_digit(text[i + 1]) : -1;
    const int low = high >= 0 ? hex_digit(text[i + 2]) : -1;
    if (low < 0) invalid_tag(tag, "bad '_xx' escape");
    raw += static_cast<char>(high * 16 + low);
    i += 2;
  }
  return raw;
}

// Drops a "B<len>" prefix when the length matches the rest of the text: a
// plain base64 text is very unlikely to look like that by accident.
std::string without_abi_tag_prefix(const std::string& tag) {
  if (tag.size() < 2 || tag[0] != 'B') return tag;
  size_t digits_end = 1;
  while (digits_end < tag.size() && tag[digits_end] >= '0' && tag[digits_end] <= '9') ++digits_end;
  if (digits_end == 1 || digits_end - 1 > 9) return tag;
  const size_t length = std::stoul(tag.substr(1, digits_end - 1));
  return length == tag.size() - digits_end ? tag.substr(digits_end) : tag;
}

}  // namespace

std::string encode_flags(const std::string& summary) { return base64_encode(compress(summary)); }

std::string decode_flags(const std::string& tag) {
  return decompress(base64_decode(unescape(without_abi_tag_prefix(tag), tag), tag), tag);
}

}  // namespace cujit::mangle
