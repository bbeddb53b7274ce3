// Typed cache records (cujit/cache_record.h): a magic with the format's version,
// then the fields in a fixed order, each a u8 or a little-endian u64 length
// followed by that many bytes. The reader checks every length against what is
// left, so a forged entry can at worst decode to other data, never to more.
#include "cujit/cache_record.h"

namespace cujit::cache {
namespace {

constexpr std::string_view kMagic{"CUJITREC2", 9};

class Writer {
 public:
  void byte(std::uint8_t v) { out_.push_back(static_cast<char>(v)); }
  void count(std::uint64_t v) {
    for (int i = 0; i < 8; ++i) out_.push_back(static_cast<char>(v >> (8 * i)));
  }
  void text(std::string_view s) {
    count(s.size());
    out_.append(s);
  }
  std::string take() { return std::move(out_); }

 private:
  std::string out_{kMagic};
};

class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  bool magic() { return take(kMagic.size()) == kMagic; }
  std::optional<std::uint8_t> byte() {
    if (!ok_ || in_.empty()) return fail<std::uint8_t>();
    std::uint8_t v = static_cast<std::uint8_t>(in_.front());
    in_.remove_prefix(1);
    return v;
  }
  std::optional<std::uint64_t> count() {
    if (!ok_ || in_.size() < 8) return fail<std::uint64_t>();
    std::uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(in_[static_cast<std::size_t>(i)]);
    in_.remove_prefix(8);
    return v;
  }
  // A length-prefixed string; an element count is read with count() and checked with fits().
  bool text(std::string& out) {
    std::optional<std::uint64_t> n = count();
    if (!n || *n > in_.size()) return ok_ = false;
    out.assign(take(static_cast<std::size_t>(*n)));
    return true;
  }
  // Whether `n` elements of at least `smallest` bytes each can follow (a forged count cannot make us allocate).
  bool fits(std::uint64_t n, std::size_t smallest) { return ok_ && n <= in_.size() / smallest; }
  bool finished() const { return ok_ && in_.empty(); }

 private:
  template <typename T>
  std::optional<T> fail() {
    ok_ = false;
    return std::nullopt;
  }
  std::string_view take(std::size_t n) {
    if (n > in_.size()) {
      ok_ = false;
      return {};
    }
    std::string_view out = in_.substr(0, n);
    in_.remove_prefix(n);
    return out;
  }

  std::string_view in_;
  bool ok_ = true;
};

}  // namespace

std::string encode(const CacheRecord& r) {
  Writer w;
  w.byte(static_cast<std::uint8_t>(r.kind));
  w.text(r.code);
  w.text(r.symbol);
  w.text(r.return_type);
  w.text(r.arch);
  w.byte(r.cooperative ? 1 : 0);
  w.count(r.links.size());
  for (const auto& [kind, hash] : r.links) {
    w.text(kind);
    w.text(hash);
  }
  w.count(r.raises.size());
  for (const RecordRaise& raise : r.raises) {
    w.text(raise.exception);
    w.count(raise.args.size());
    for (const RecordConstant& c : raise.args) {
      w.byte(static_cast<std::uint8_t>(c.kind));
      w.text(c.text);
    }
    w.text(raise.function);
    w.text(raise.filename);
    w.count(static_cast<std::uint64_t>(raise.line));
  }
  return w.take();
}

std::optional<CacheRecord> decode(std::string_view bytes) {
  Reader in(bytes);
  if (!in.magic()) return std::nullopt;
  CacheRecord r;
  std::optional<std::uint8_t> kind = in.byte();
  if (!kind || *kind > static_cast<std::uint8_t>(CacheRecord::Kind::Compiled)) return std::nullopt;
  r.kind = static_cast<CacheRecord::Kind>(*kind);
  if (!in.text(r.code) || !in.text(r.symbol) || !in.text(r.return_type) || !in.text(r.arch)) return std::nullopt;
  std::optional<std::uint8_t> cooperative = in.byte();
  if (!cooperative || *cooperative > 1) return std::nullopt;
  r.cooperative = *cooperative == 1;
  std::optional<std::uint64_t> links = in.count();
  if (!links || !in.fits(*links, 16)) return std::nullopt;
  r.links.resize(static_cast<std::size_t>(*links));
  for (auto& [kind_name, hash] : r.links)
    if (!in.text(kind_name) || !in.text(hash)) return std::nullopt;
  std::optional<std::uint64_t> raises = in.count();
  if (!raises || !in.fits(*raises, 40)) return std::nullopt;
  r.raises.resize(static_cast<std::size_t>(*raises));
  for (RecordRaise& raise : r.raises) {
    std::optional<std::uint64_t> args;
    if (!in.text(raise.exception) || !(args = in.count()) || !in.fits(*args, 9)) return std::nullopt;
    raise.args.resize(static_cast<std::size_t>(*args));
    for (RecordConstant& c : raise.args) {
      std::optional<std::uint8_t> k = in.byte();
      if (!k || *k > static_cast<std::uint8_t>(RecordConstant::Kind::None) || !in.text(c.text)) return std::nullopt;
      c.kind = static_cast<RecordConstant::Kind>(*k);
    }
    std::optional<std::uint64_t> line;
    if (!in.text(raise.function) || !in.text(raise.filename) || !(line = in.count())) return std::nullopt;
    raise.line = static_cast<std::int64_t>(*line);
  }
  if (!in.finished()) return std::nullopt;
  return r;
}

}  // namespace cujit::cache
