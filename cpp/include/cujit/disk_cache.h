// The on-disk store of the compile cache: payloads (cubins, PTX, metadata) kept
// as one file per (section, key) under a root shared by every process of a
// user, so a later run skips compiles. Several processes read and write one
// tree with no lock between them, so every write is a rename of a complete
// temp file and every read checks a checksum: a crash or a torn copy can only
// ever cost a miss, never a wrong cubin. The tree is bounded by evicting the
// least recently used entries, with the file modification time as the clock
// (a hit touches it), because that is the one clock all processes share.
// No error is thrown or fatal: a cache that cannot write degrades to
// compiling, so failures are counted and described, and reported as values.
// Whoever can write the tree decides what every reader loads, so it is trusted
// as ssh trusts ~/.ssh: the root must belong to this user (or root) and be
// writable by nobody else, and so must each entry read, unless the user opted
// in to a cache shared by several users (`shared`).
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

namespace cujit::cache {

struct DiskCacheStats {
  std::int64_t hits = 0;
  std::int64_t misses = 0;          // includes corrupt entries and invalid names
  std::int64_t writes = 0;
  std::int64_t corrupt = 0;         // entries found damaged (and removed)
  std::int64_t evictions = 0;       // entries removed to stay under the bound
  std::int64_t write_failures = 0;
  std::int64_t untrusted = 0;       // entries refused: owned by another user or writable by others
};

// "" when the file or directory `path` may be trusted with what it makes a process load (this user's or root's,
// writable by nobody else: ssh's rule for ~/.ssh), else why not. (Cache roots, and AOT bundles.)
std::string path_trust_problem(const std::string& path) noexcept;

class DiskCache {
 public:
  // `dir`: the root (created by open_root() or the first write, with parents); `max_bytes`: the size bound
  // (0: unbounded); `shared`: entries and the root may belong to other users (a fleet's cache).
  DiskCache(std::string dir, std::uint64_t max_bytes, bool shared = false);
  // Creates the root if missing (mode 0700; its parents 0755): "" or why it cannot be (not a directory...).
  std::string open_root() noexcept;
  // "" when the root may be trusted, else why not (another user's, writable by group or others); "" for a
  // shared cache.
  std::string trust_problem() const noexcept;
  DiskCache(const DiskCache&) = delete;
  DiskCache& operator=(const DiskCache&) = delete;

  // The payload stored under (section, key), or nullopt when missing. An entry that is torn, truncated, of
  // another format or whose checksum or key does not match is counted as corrupt, removed, and reported
  // missing. An entry owned by another user than this one or root, or writable by group or others, is refused
  // (a miss counted as untrusted, left in place) unless the cache is shared. A hit refreshes the entry's modification
  // time (the LRU clock). Names: [A-Za-z0-9_.-]+, not starting with '.', at most 200 characters, keys at least 3; any
  // other name is a miss.
  std::optional<std::string> get(const std::string& section, const std::string& key) noexcept;
  // Stores atomically (a uniquely named temp file beside the entry, written fully, then renamed over it):
  // readers never see a partial entry, and concurrent writers of one key all succeed (the last rename wins).
  // On any failure removes its temp file, counts a write failure, records in last_error() the path and the
  // system's reason, and returns false.
  bool put(const std::string& section, const std::string& key, std::string_view payload) noexcept;
  // Removes least-recently-used entries (oldest modification time first) until the total is at most
  // `target_bytes`, and temp files that writers left more than 10 minutes ago. Returns the entries removed.
  // put() calls it with 90% of max_bytes when the total it knows of exceeds max_bytes.
  std::size_t evict(std::uint64_t target_bytes) noexcept;
  // The bytes of all entries now, by scanning the tree (temp files are not counted).
  std::uint64_t total_bytes() noexcept;

  DiskCacheStats stats() const;
  std::string last_error() const;
  const std::string& dir() const { return dir_; }
  std::uint64_t max_bytes() const { return max_bytes_; }

 private:
  // With evict_mutex_ held: scans the tree, removes stale temp files and, when the entries exceed
  // `threshold` bytes, the least recently used until they are at most `target`; returns the entries removed.
  std::size_t trim(std::uint64_t threshold, std::uint64_t target);
  void record(std::int64_t DiskCacheStats::* counter, std::string message = {});

  const std::string dir_;
  const std::uint64_t max_bytes_;
  const bool shared_;

  mutable std::mutex mutex_;  // guards everything below
  DiskCacheStats stats_;
  std::string last_error_;
  // This process's idea of the tree's size: scanned on the first bounded put, then kept up to date by our
  // own writes and removals and scanned again every kRescanInterval puts for other processes' writes.
  bool size_known_ = false;
  std::uint64_t known_bytes_ = 0;
  int puts_since_scan_ = 0;

  std::mutex evict_mutex_;  // one scan or eviction at a time; puts skip eviction while another runs
};

}  // namespace cujit::cache
