// The compile cache's on-disk store: entry format, atomic writes, checked
// reads and LRU eviction by modification time.
#include "cujit/disk_cache.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <functional>
#include <system_error>
#include <thread>
#include <vector>

namespace cujit::cache {
namespace {

// An entry: magic, u32 key length, key, u64 payload length, u64 checksum of key + payload, payload. The key
// is stored so that a file copied or renamed to another key's path is caught, not served.
constexpr char kMagic[8] = {'C', 'U', 'J', 'I', 'T', 'C', 'E', '1'};
constexpr std::size_t kKeyLengthAt = sizeof kMagic;
constexpr std::size_t kKeyAt = kKeyLengthAt + 4;
constexpr std::size_t kLengthAndChecksumSize = 8 + 8;
constexpr std::size_t kMaxNameLength = 200;  // well inside NAME_MAX, with room for the temp suffix
constexpr int kRescanInterval = 64;          // other processes write too: our own tally drifts
constexpr std::time_t kStaleTempSeconds = 10 * 60;

std::uint64_t load_le(const char* p, int bytes) {
  std::uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

void append_le(std::string& out, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
}

// A 64-bit checksum over a stream of pieces (xxHash64's round and avalanche on one lane, with the length
// folded in), so the key and a multi-megabyte payload are summed without being concatenated.
class Checksum {
 public:
  void update(std::string_view data) {
    length_ += data.size();
    while (!data.empty()) {
      if (pending_ == 0 && data.size() >= 8) {
        mix(load_le(data.data(), 8));
        data.remove_prefix(8);
        continue;
      }
      std::size_t take = std::min<std::size_t>(8 - pending_, data.size());
      std::memcpy(buffer_ + pending_, data.data(), take);
      pending_ += take;
      data.remove_prefix(take);
      if (pending_ == 8) {
        mix(load_le(buffer_, 8));
        pending_ = 0;
      }
    }
  }

  std::uint64_t value() const {
    Checksum tail = *this;
    if (tail.pending_ != 0) tail.mix(load_le(tail.buffer_, static_cast<int>(tail.pending_)));
    std::uint64_t h = tail.state_ ^ (length_ * kPrime5);
    h ^= h >> 33;
    h *= kPrime2;
    h ^= h >> 29;
    h *= kPrime3;
    return h ^ (h >> 32);
  }

 private:
  static constexpr std::uint64_t kPrime1 = 0x9E3779B185EBCA87ULL, kPrime2 = 0xC2B2AE3D27D4EB4FULL,
                                 kPrime3 = 0x165667B19E3779F9ULL, kPrime4 = 0x85EBCA77C2B2AE63ULL,
                                 kPrime5 = 0x27D4EB2F165667C5ULL;
  static std::uint64_t rotl(std::uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

  void mix(std::uint64_t word) {
    state_ ^= rotl(word * kPrime2, 31) * kPrime1;
    state_ = rotl(state_, 27) * kPrime1 + kPrime4;
  }

  std::uint64_t state_ = kPrime5;
  std::uint64_t length_ = 0;
  char buffer_[8] = {};
  std::size_t pending_ = 0;
};

std::uint64_t checksum(std::string_view key, std::string_view payload) {
  Checksum sum;
  sum.update(key);
  sum.update(payload);
  return sum.value();
}

std::string entry_header(std::string_view key, std::string_view payload) {
  std::string header(kMagic, sizeof kMagic);
  append_le(header, key.size(), 4);
  header.append(key);
  append_le(header, payload.size(), 8);
  append_le(header, checksum(key, payload), 8);
  return header;
}

std::string describe(const char* what, const std::string& path, int err) {
  return std::string("cujit cache: ") + what + " '" + path + "': " + std::generic_category().message(err);
}

bool is_temp_name(std::string_view name) { return name.substr(0, 4) == ".tmp"; }

// Names become path components: a restricted alphabet and no leading '.' ("..", and keys that would pass for
// temp files) rule out escapes and clashes.
bool valid_name(std::string_view name, std::size_t min_length) {
  if (name.size() < min_length || name.size() > kMaxNameLength || name.front() == '.') return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
           c == '-';
  });
}

// Why (dir, section, key) names no entry, or "" when it names one.
std::string name_problem(const std::string& dir, const std::string& section, const std::string& key) {
  if (dir.empty()) return "cujit cache: no cache directory given";
  if (!valid_name(section, 1))
    return "cujit cache: invalid section name '" + section + "' (expected [A-Za-z0-9_.-]+, not starting with '.')";
  if (!valid_name(key, 3))
    return "cujit cache: invalid key '" + key + "' (expected 3 to 200 of [A-Za-z0-9_.-], not starting with '.')";
  return {};
}

std::string entry_dir(const std::string& dir, const std::string& section, const std::string& key) {
  return dir + "/" + section + "/" + key.substr(0, 2);
}

// Reads exactly `size` bytes at `offset`; false on an error or an early end of file.
bool read_at(int fd, char* out, std::size_t size, std::uint64_t offset) {
  while (size > 0) {
    ssize_t n = ::pread(fd, out, size, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    out += n;
    size -= static_cast<std::size_t>(n);
    offset += static_cast<std::uint64_t>(n);
  }
  return true;
}

bool write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = EIO;
      return false;
    }
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

enum class ReadOutcome { Missing, Corrupt, Hit };

// The payload of the entry file `fd` (of `size` bytes) if it is a whole, checked entry for `key`; `why` says
// what is wrong otherwise. Entries are never modified after their rename, so what the descriptor reads is
// one writer's complete file or a damaged one, never a mix.
ReadOutcome read_entry(int fd, std::uint64_t size, const std::string& key, std::string& payload, const char*& why) {
  std::string head(kKeyAt + key.size() + kLengthAndChecksumSize, '\0');
  why = "shorter than its header";
  if (size < head.size() || !read_at(fd, head.data(), head.size(), 0)) return ReadOutcome::Corrupt;
  why = "not a cache entry of this format";
  if (std::memcmp(head.data(), kMagic, sizeof kMagic) != 0) return ReadOutcome::Corrupt;
  why = "an entry for another key";
  if (load_le(head.data() + kKeyLengthAt, 4) != key.size() || head.compare(kKeyAt, key.size(), key) != 0)
    return ReadOutcome::Corrupt;
  const char* lengths = head.data() + kKeyAt + key.size();
  std::uint64_t payload_size = load_le(lengths, 8);
  why = "truncated or extended (its size does not match its header)";
  if (payload_size != size - head.size()) return ReadOutcome::Corrupt;
  payload.resize(payload_size);
  why = "unreadable";
  if (!read_at(fd, payload.data(), payload.size(), head.size())) return ReadOutcome::Corrupt;
  why = "checksum mismatch";
  if (checksum(key, payload) != load_le(lengths + 8, 8)) return ReadOutcome::Corrupt;
  return ReadOutcome::Hit;
}

// mkdir -p; "" or the failure, naming the directory it could not make.
std::string make_dirs(const std::string& path) {
  for (std::size_t slash = path.find('/', 1);; slash = path.find('/', slash + 1)) {
    std::string prefix = path.substr(0, slash);
    if (::mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST)
      return describe("cannot create directory", prefix, errno);
    if (slash == std::string::npos) return {};
  }
}

// Unique among this host's writers: pid (processes), thread, and a counter (one thread's successive puts).
std::string temp_name() {
  static std::atomic<std::uint64_t> counter{0};
  char name[96];
  std::snprintf(name, sizeof name, ".tmp.%ld.%zx.%llx", static_cast<long>(::getpid()),
                std::hash<std::thread::id>{}(std::this_thread::get_id()),
                static_cast<unsigned long long>(counter.fetch_add(1)));
  return name;
}

// Writes the entry through a temp file renamed over `path`; "" or the failure (the temp file removed).
std::string write_entry(const std::string& dir, const std::string& path, std::string_view key,
                        std::string_view payload) {
  std::string temp = dir + "/" + temp_name();
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0 && errno == ENOENT) {
    if (std::string problem = make_dirs(dir); !problem.empty()) return problem;
    fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  }
  if (fd < 0) return describe("cannot create", temp, errno);
  bool written = write_all(fd, entry_header(key, payload)) && write_all(fd, payload);
  int err = errno;
  if (::close(fd) != 0 && written) {  // a delayed write error (NFS, quota) shows up here
    written = false;
    err = errno;
  }
  if (written && ::rename(temp.c_str(), path.c_str()) == 0) return {};
  if (written) err = errno;
  ::unlink(temp.c_str());
  return describe(written ? "cannot rename a temp file to" : "cannot write", written ? path : temp, err);
}

std::vector<std::string> list_dir(const std::string& path) {
  std::vector<std::string> names;
  DIR* d = ::opendir(path.c_str());
  if (d == nullptr) return names;
  while (const dirent* e = ::readdir(d))
    if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) names.emplace_back(e->d_name);
  ::closedir(d);
  return names;
}

struct TreeFile {
  std::string path;
  std::uint64_t bytes;
  timespec mtime;
  bool temp;
};

// Every entry and temp file under <root>/<section>/<prefix>/.
std::vector<TreeFile> scan_tree(const std::string& root) {
  std::vector<TreeFile> files;
  for (const std::string& section : list_dir(root)) {
    if (section.front() == '.') continue;
    std::string section_dir = root + "/" + section;
    for (const std::string& prefix : list_dir(section_dir)) {
      if (prefix.front() == '.') continue;
      std::string prefix_dir = section_dir + "/" + prefix;
      for (const std::string& name : list_dir(prefix_dir)) {
        bool temp = is_temp_name(name);
        if (name.front() == '.' && !temp) continue;
        std::string path = prefix_dir + "/" + name;
        struct stat st;
        if (::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
        files.push_back({std::move(path), static_cast<std::uint64_t>(st.st_size), st.st_mtim, temp});
      }
    }
  }
  return files;
}

// Why a file or directory of the tree cannot be trusted ("" when it can): another owner than this user or root,
// or write permission for group or others.
std::string untrusted_because(const struct stat& st, const std::string& path) {
  const uid_t me = ::geteuid();
  if (st.st_uid != me && st.st_uid != 0)
    return "cujit cache: '" + path + "' belongs to another user (uid " + std::to_string(st.st_uid) + ")";
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return "cujit cache: '" + path + "' is writable by " + ((st.st_mode & S_IWOTH) ? "others" : "its group") +
           " (mode " + mode + ")";
  }
  return {};
}

std::string without_trailing_slashes(std::string dir) {
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return dir;
}

}  // namespace

DiskCache::DiskCache(std::string dir, std::uint64_t max_bytes, bool shared)
    : dir_(without_trailing_slashes(std::move(dir))), max_bytes_(max_bytes), shared_(shared) {}

std::string DiskCache::open_root() noexcept {
  try {
    if (dir_.empty()) return "cujit cache: no cache directory given";
    if (::mkdir(dir_.c_str(), 0700) != 0 && errno == ENOENT) {
      std::string::size_type slash = dir_.rfind('/');
      if (slash != std::string::npos && slash > 0)
        if (std::string problem = make_dirs(dir_.substr(0, slash)); !problem.empty()) return problem;
      ::mkdir(dir_.c_str(), 0700);
    }
    struct stat st;
    if (::stat(dir_.c_str(), &st) != 0) return describe("cannot use the cache directory", dir_, errno);
    if (!S_ISDIR(st.st_mode)) return "cujit cache: '" + dir_ + "' is not a directory";
    return {};
  } catch (...) {
    return "cujit cache: cannot create the cache directory (out of memory)";
  }
}

std::string path_trust_problem(const std::string& path) noexcept {
  try {
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) return describe("cannot check", path, errno);
    return untrusted_because(st, path);
  } catch (...) {
    return "cujit cache: cannot check '" + path + "' (out of memory)";
  }
}

std::string DiskCache::trust_problem() const noexcept { return shared_ ? std::string() : path_trust_problem(dir_); }

void DiskCache::record(std::int64_t DiskCacheStats::* counter, std::string message) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++(stats_.*counter);
  if (!message.empty()) last_error_ = std::move(message);
}

std::optional<std::string> DiskCache::get(const std::string& section, const std::string& key) noexcept {
  try {
    if (std::string problem = name_problem(dir_, section, key); !problem.empty()) {
      record(&DiskCacheStats::misses, std::move(problem));
      return std::nullopt;
    }
    std::string path = entry_dir(dir_, section, key) + "/" + key;
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);  // a FIFO planted there must not block
    struct stat st;
    if (fd >= 0 && (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))) {
      ::close(fd);
      fd = -1;
    }
    if (fd < 0) {
      record(&DiskCacheStats::misses);
      return std::nullopt;
    }
    if (!shared_) {
      if (std::string problem = untrusted_because(st, path); !problem.empty()) {
        ::close(fd);
        record(&DiskCacheStats::untrusted, std::move(problem));
        record(&DiskCacheStats::misses);
        return std::nullopt;
      }
    }
    std::string payload;
    const char* why = "";
    ReadOutcome outcome = read_entry(fd, static_cast<std::uint64_t>(st.st_size), key, payload, why);
    ::close(fd);
    if (outcome == ReadOutcome::Hit) {
      ::utimensat(AT_FDCWD, path.c_str(), nullptr, 0);  // the LRU clock; a read-only tree just stays unordered
      record(&DiskCacheStats::hits);
      return payload;
    }
    // Only the file read is removed: a writer may have renamed a good entry over it since.
    struct stat now;
    if (::lstat(path.c_str(), &now) == 0 && now.st_ino == st.st_ino && now.st_dev == st.st_dev) ::unlink(path.c_str());
    record(&DiskCacheStats::corrupt, "cujit cache: removed corrupt entry '" + path + "': " + why);
    record(&DiskCacheStats::misses);
  } catch (...) {  // out of memory for a huge payload: a miss
    try {
      record(&DiskCacheStats::misses, "cujit cache: cannot read an entry (out of memory)");
    } catch (...) {
    }
  }
  return std::nullopt;
}

bool DiskCache::put(const std::string& section, const std::string& key, std::string_view payload) noexcept {
  try {
    if (std::string problem = name_problem(dir_, section, key); !problem.empty()) {
      record(&DiskCacheStats::write_failures, std::move(problem));
      return false;
    }
    std::string dir = entry_dir(dir_, section, key);
    std::string path = dir + "/" + key;
    struct stat old;
    std::uint64_t replaced = max_bytes_ > 0 && ::stat(path.c_str(), &old) == 0 ? old.st_size : 0;
    if (std::string problem = write_entry(dir, path, key, payload); !problem.empty()) {
      record(&DiskCacheStats::write_failures, std::move(problem));
      return false;
    }
    std::uint64_t written = kKeyAt + key.size() + kLengthAndChecksumSize + payload.size();
    bool scan = false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ++stats_.writes;
      if (max_bytes_ == 0) return true;
      known_bytes_ = known_bytes_ + written - std::min(replaced, known_bytes_ + written);
      scan = !size_known_ || ++puts_since_scan_ >= kRescanInterval || known_bytes_ > max_bytes_;
    }
    std::unique_lock<std::mutex> evicting(evict_mutex_, std::try_to_lock);
    if (scan && evicting) trim(max_bytes_, max_bytes_ - max_bytes_ / 10);
    return true;
  } catch (...) {
    try {
      record(&DiskCacheStats::write_failures, "cujit cache: cannot write an entry (out of memory)");
    } catch (...) {
    }
    return false;
  }
}

std::size_t DiskCache::trim(std::uint64_t threshold, std::uint64_t target) {
  std::vector<TreeFile> files = scan_tree(dir_);
  std::uint64_t total = 0;
  std::time_t stale_before = std::time(nullptr) - kStaleTempSeconds;
  for (const TreeFile& f : files) {
    if (!f.temp)
      total += f.bytes;
    else if (f.mtime.tv_sec < stale_before)
      ::unlink(f.path.c_str());  // a writer that died mid-put
  }
  std::size_t removed = 0;
  if (total > threshold) {
    files.erase(std::remove_if(files.begin(), files.end(), [](const TreeFile& f) { return f.temp; }), files.end());
    std::sort(files.begin(), files.end(), [](const TreeFile& a, const TreeFile& b) {
      if (a.mtime.tv_sec != b.mtime.tv_sec) return a.mtime.tv_sec < b.mtime.tv_sec;
      if (a.mtime.tv_nsec != b.mtime.tv_nsec) return a.mtime.tv_nsec < b.mtime.tv_nsec;
      return a.path < b.path;
    });
    for (auto f = files.begin(); f != files.end() && total > target; ++f) {
      bool unlinked = ::unlink(f->path.c_str()) == 0;
      if (!unlinked && errno != ENOENT) continue;  // not ours to remove: it stays in the total
      total -= f->bytes;
      removed += unlinked;
    }
  }
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.evictions += static_cast<std::int64_t>(removed);
  known_bytes_ = total;
  size_known_ = true;
  puts_since_scan_ = 0;
  return removed;
}

std::size_t DiskCache::evict(std::uint64_t target_bytes) noexcept {
  try {
    std::lock_guard<std::mutex> evicting(evict_mutex_);
    return trim(target_bytes, target_bytes);
  } catch (...) {
    return 0;
  }
}

std::uint64_t DiskCache::total_bytes() noexcept {
  try {
    std::uint64_t total = 0;
    for (const TreeFile& f : scan_tree(dir_))
      if (!f.temp) total += f.bytes;
    return total;
  } catch (...) {
    return 0;
  }
}

DiskCacheStats DiskCache::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

std::string DiskCache::last_error() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return last_error_;
}

}  // namespace cujit::cache
