// The compile cache's on-disk store: round trips, every kind of damaged entry,
// names that must not become paths, writes that cannot happen, LRU eviction,
// and many threads and processes on one tree.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>
#include <vector>

#include "cujit/disk_cache.h"

namespace cujit::cache {
namespace {

namespace fs = std::filesystem;

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void write_file(const std::string& path, const std::string& data) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << data;
}

bool exists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }

void set_mtime(const std::string& path, std::time_t seconds) {
  timespec times[2] = {{seconds, 0}, {seconds, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0) << path;
}

// A payload that says which one it is: its first 8 bytes are its seed and the rest follow from the seed, so a
// reader can tell a whole payload from a torn or mixed one.
std::string make_payload(std::uint64_t seed, std::size_t size) {
  std::string out(size, '\0');
  std::uint64_t x = seed;
  for (std::size_t i = 0; i < size; ++i) {
    if (i < 8) {
      out[i] = static_cast<char>(seed >> (8 * i));
      continue;
    }
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    out[i] = static_cast<char>(x >> 56);
  }
  return out;
}

std::size_t size_for(std::uint64_t seed) { return 1000 + seed % 20000; }

bool is_whole_payload(const std::string& p) {
  if (p.size() < 8) return false;
  std::uint64_t seed = 0;
  for (int i = 7; i >= 0; --i) seed = (seed << 8) | static_cast<unsigned char>(p[i]);
  return p.size() == size_for(seed) && p == make_payload(seed, p.size());
}

class DiskCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/cujit-cache-test-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    tmp_ = tmpl;
    root_ = tmp_ + "/cache";
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(tmp_, ec);
  }

  std::string entry(const std::string& section, const std::string& key) const {
    return root_ + "/" + section + "/" + key.substr(0, 2) + "/" + key;
  }

  std::vector<std::string> temp_files() const {
    std::vector<std::string> out;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(tmp_, ec); it != fs::recursive_directory_iterator();
         it.increment(ec))
      if (it->path().filename().string().rfind(".tmp", 0) == 0) out.push_back(it->path());
    return out;
  }

  // Stores `payload`, damages the file with `damage`, and expects a counted, removed corrupt entry.
  template <typename Damage>
  void expect_corrupt_after(Damage damage) {
    DiskCache cache(root_, 0);
    ASSERT_TRUE(cache.put("cubin", "abcdef", make_payload(7, 4000)));
    damage(entry("cubin", "abcdef"));
    EXPECT_EQ(cache.get("cubin", "abcdef"), std::nullopt);
    EXPECT_EQ(cache.stats().corrupt, 1);
    EXPECT_EQ(cache.stats().misses, 1);
    EXPECT_FALSE(exists(entry("cubin", "abcdef")));
    EXPECT_NE(cache.last_error().find(entry("cubin", "abcdef")), std::string::npos) << cache.last_error();
    ASSERT_TRUE(cache.put("cubin", "abcdef", "again"));  // the key is usable again
    EXPECT_EQ(cache.get("cubin", "abcdef"), "again");
  }

  std::string tmp_, root_;
};

TEST_F(DiskCacheTest, RoundTripsPayloadsOfEverySize) {
  DiskCache cache(root_ + "/", 0);
  EXPECT_EQ(cache.dir(), root_);
  const std::size_t sizes[] = {0, 1, 7, 8, 9, 1000, 5 * 1024 * 1024};
  for (std::size_t size : sizes) {
    std::string key = "key" + std::to_string(size);
    std::string payload = make_payload(size, size);
    ASSERT_TRUE(cache.put("cubin", key, payload)) << cache.last_error();
    std::optional<std::string> back = cache.get("cubin", key);
    ASSERT_TRUE(back.has_value()) << size;
    EXPECT_EQ(*back, payload) << size;
  }
  ASSERT_TRUE(cache.put("cubin", "key0", "replaced"));
  EXPECT_EQ(cache.get("cubin", "key0"), "replaced");
  EXPECT_EQ(cache.get("ptx", "key0"), std::nullopt);  // sections are separate
  DiskCacheStats s = cache.stats();
  EXPECT_EQ(s.writes, 8);
  EXPECT_EQ(s.hits, 8);
  EXPECT_EQ(s.misses, 1);
  EXPECT_EQ(s.corrupt, 0);
  EXPECT_TRUE(temp_files().empty());
}

TEST_F(DiskCacheTest, MissingKeyIsAMiss) {
  DiskCache cache(root_, 0);
  EXPECT_EQ(cache.get("cubin", "nothing-here"), std::nullopt);
  ASSERT_TRUE(cache.put("cubin", "something", "x"));
  EXPECT_EQ(cache.get("cubin", "somewhere"), std::nullopt);  // same prefix directory, other key
  EXPECT_EQ(cache.stats().misses, 2);
  EXPECT_EQ(cache.stats().corrupt, 0);
}

TEST_F(DiskCacheTest, FlippedPayloadByteIsCorrupt) {
  expect_corrupt_after([](const std::string& path) {
    std::string data = read_file(path);
    data[data.size() - 100] ^= 0x01;
    write_file(path, data);
  });
}

TEST_F(DiskCacheTest, TruncatedFileIsCorrupt) {
  expect_corrupt_after([](const std::string& path) { ASSERT_EQ(::truncate(path.c_str(), 3000), 0); });
}

TEST_F(DiskCacheTest, FileShorterThanItsHeaderIsCorrupt) {
  expect_corrupt_after([](const std::string& path) { ASSERT_EQ(::truncate(path.c_str(), 20), 0); });
}

TEST_F(DiskCacheTest, ExtendedFileIsCorrupt) {
  expect_corrupt_after([](const std::string& path) { write_file(path, read_file(path) + "tail"); });
}

TEST_F(DiskCacheTest, AnotherKeysEntryAtThisPathIsCorrupt) {
  const std::string other = entry("cubin", "abcxyz");  // same prefix and length: only the key bytes differ
  expect_corrupt_after([&](const std::string& path) {
    DiskCache(root_, 0).put("cubin", "abcxyz", make_payload(8, 4000));
    fs::copy_file(other, path, fs::copy_options::overwrite_existing);
  });
  EXPECT_EQ(DiskCache(root_, 0).get("cubin", "abcxyz"), make_payload(8, 4000));
}

TEST_F(DiskCacheTest, GarbageFilesAreCorrupt) {
  expect_corrupt_after([](const std::string& path) { write_file(path, "this is not a cache entry at all, no"); });
  expect_corrupt_after([](const std::string& path) { write_file(path, ""); });
  expect_corrupt_after([](const std::string& path) {  // the right magic, nonsense after it
    write_file(path, "CUJITCE1" + std::string(64, '\xff'));
  });
}

TEST_F(DiskCacheTest, InvalidNamesNeverBecomePaths) {
  DiskCache cache(root_, 0);
  const std::pair<std::string, std::string> bad[] = {
      {"", "abcdef"},
      {"..", "abcdef"},
      {".", "abcdef"},
      {"a/b", "abcdef"},
      {"cubin", "ab"},
      {"cubin", ""},
      {"cubin", "../../x"},
      {"cubin", "ab/cdef"},
      {"cubin", "..abc"},
      {"cubin", ".tmpabc"},
      {"cu bin", "abcdef"},
      {"cubin", "abc\ndef"},
      {"cubin", std::string("abc\0def", 7)},
      {"cubin", std::string(201, 'k')},
      {std::string(201, 's'), "abcdef"},
      {"/etc", "abcdef"},
  };
  for (const auto& [section, key] : bad) {
    EXPECT_FALSE(cache.put(section, key, "payload")) << section << " / " << key;
    EXPECT_NE(cache.last_error().find("invalid"), std::string::npos) << cache.last_error();
    EXPECT_EQ(cache.get(section, key), std::nullopt);
  }
  EXPECT_EQ(cache.stats().write_failures, static_cast<std::int64_t>(std::size(bad)));
  EXPECT_FALSE(exists(root_));
  EXPECT_EQ(std::distance(fs::directory_iterator(tmp_), fs::directory_iterator()), 0);
  EXPECT_TRUE(cache.put("sec_1.x-y", "a.b-c_D9", "ok")) << cache.last_error();
  EXPECT_EQ(DiskCache("", 0).put("cubin", "abcdef", "x"), false);
}

// Regular files where directories should be: ENOTDIR stops even root, unlike chmod.
TEST_F(DiskCacheTest, WriteUnderARegularFileFailsCleanly) {
  write_file(tmp_ + "/file", "I am a file");
  DiskCache under_file(tmp_ + "/file", 0);
  EXPECT_FALSE(under_file.put("cubin", "abcdef", "payload"));
  EXPECT_NE(under_file.last_error().find(tmp_ + "/file"), std::string::npos) << under_file.last_error();
  EXPECT_NE(under_file.last_error().find("Not a directory"), std::string::npos) << under_file.last_error();
  EXPECT_EQ(under_file.stats().write_failures, 1);
  EXPECT_EQ(under_file.get("cubin", "abcdef"), std::nullopt);

  fs::create_directories(root_);
  write_file(root_ + "/cubin", "a section that is a file");
  DiskCache cache(root_, 1000);
  EXPECT_FALSE(cache.put("cubin", "abcdef", "payload"));
  EXPECT_NE(cache.last_error().find(root_ + "/cubin"), std::string::npos) << cache.last_error();
  EXPECT_EQ(cache.stats().writes, 0);
  EXPECT_EQ(cache.total_bytes(), 0u);
  EXPECT_EQ(cache.evict(0), 0u);

  fs::create_directories(entry("ptx", "abcdef"));  // a directory at the entry's own path
  EXPECT_EQ(cache.get("ptx", "abcdef"), std::nullopt);
  EXPECT_FALSE(cache.put("ptx", "abcdef", "payload"));
  EXPECT_NE(cache.last_error().find(entry("ptx", "abcdef")), std::string::npos) << cache.last_error();
  EXPECT_TRUE(temp_files().empty());
}

TEST_F(DiskCacheTest, EvictsLeastRecentlyUsedFirst) {
  DiskCache unbounded(root_, 0);
  auto key = [](int i) { return "key" + std::to_string(100 + i); };
  const std::time_t long_ago = std::time(nullptr) - 100000;
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(unbounded.put("cubin", key(i), make_payload(i, 10 * 1024)));
    set_mtime(entry("cubin", key(i)), long_ago + 10 * i);
  }
  const std::uint64_t entry_bytes = fs::file_size(entry("cubin", key(0)));
  EXPECT_EQ(unbounded.total_bytes(), 20 * entry_bytes);
  ASSERT_TRUE(unbounded.get("cubin", key(0)).has_value());  // the oldest, now the most recent

  // Another process's cache, bounded at 12 entries: its first put finds 21 and trims to 90% (10 entries).
  const std::uint64_t bound = 12 * entry_bytes;
  DiskCache bounded(root_, bound);
  ASSERT_TRUE(bounded.put("cubin", key(20), make_payload(20, 10 * 1024)));
  EXPECT_LE(bounded.total_bytes(), bound);
  EXPECT_EQ(bounded.stats().evictions, 11);
  EXPECT_TRUE(exists(entry("cubin", key(0))));
  for (int i = 1; i <= 11; ++i) EXPECT_FALSE(exists(entry("cubin", key(i)))) << i;
  for (int i = 12; i <= 20; ++i) EXPECT_TRUE(exists(entry("cubin", key(i)))) << i;

  EXPECT_EQ(bounded.evict(3 * entry_bytes), 7u);  // explicitly: 10 entries down to 3, oldest first
  for (int i = 12; i <= 18; ++i) EXPECT_FALSE(exists(entry("cubin", key(i)))) << i;
  EXPECT_TRUE(exists(entry("cubin", key(0))));
  EXPECT_EQ(bounded.stats().evictions, 18);
}

TEST_F(DiskCacheTest, PutsStayUnderTheBound) {
  DiskCache cache(root_, 100 * 1024);
  const std::time_t long_ago = std::time(nullptr) - 100000;
  for (int i = 0; i < 40; ++i) {
    std::string key = "entry" + std::to_string(i);
    ASSERT_TRUE(cache.put("cubin", key, make_payload(i, 10 * 1024))) << cache.last_error();
    set_mtime(entry("cubin", key), long_ago + i);
    EXPECT_LE(cache.total_bytes(), 100u * 1024) << i;
  }
  EXPECT_GT(cache.stats().evictions, 0);
  EXPECT_TRUE(cache.get("cubin", "entry39").has_value());
  EXPECT_FALSE(cache.get("cubin", "entry0").has_value());
}

TEST_F(DiskCacheTest, EvictionClearsStaleTempFilesOnly) {
  DiskCache cache(root_, 0);
  ASSERT_TRUE(cache.put("cubin", "abcdef", "payload"));
  const std::string stale = root_ + "/cubin/ab/.tmp.1.2.3", fresh = root_ + "/cubin/ab/.tmp.4.5.6";
  write_file(stale, "half an entry from a writer that died");
  write_file(fresh, "a writer still writing");
  set_mtime(stale, std::time(nullptr) - 20 * 60);
  EXPECT_EQ(cache.total_bytes(), fs::file_size(entry("cubin", "abcdef")));
  EXPECT_EQ(cache.evict(0), 1u);
  EXPECT_FALSE(exists(stale));
  EXPECT_TRUE(exists(fresh));
  EXPECT_EQ(cache.total_bytes(), 0u);
  EXPECT_EQ(cache.get("cubin", "abcdef"), std::nullopt);
}

// Every thread writes one shared key and its own, and reads both back, while (when bounded) puts evict.
void hammer_from_threads(const std::string& root, std::uint64_t max_bytes) {
  DiskCache cache(root, max_bytes);
  std::atomic<int> torn{0}, wrong{0}, failed{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      const std::string own = "own" + std::to_string(t);
      for (int i = 0; i < 150; ++i) {
        std::uint64_t seed = static_cast<std::uint64_t>(t) * 1000 + i;
        std::string mine = make_payload(seed, size_for(seed));
        failed += !cache.put("cubin", "shared", mine);
        failed += !cache.put("cubin", own, mine);
        std::optional<std::string> shared = cache.get("cubin", "shared");
        torn += shared && !is_whole_payload(*shared);
        std::optional<std::string> back = cache.get("cubin", own);
        wrong += back ? *back != mine : max_bytes == 0;  // only eviction may take it away
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(torn, 0);
  EXPECT_EQ(wrong, 0);
  EXPECT_EQ(failed, 0) << cache.last_error();
  EXPECT_EQ(cache.stats().corrupt, 0);
  EXPECT_EQ(cache.stats().writes, 8 * 150 * 2);
}

TEST_F(DiskCacheTest, ThreadsShareOneCache) {
  hammer_from_threads(root_, 0);
  EXPECT_EQ(temp_files().size(), 0u);
}

TEST_F(DiskCacheTest, ThreadsShareOneBoundedCache) {
  hammer_from_threads(root_, 64 * 1024);
  DiskCache cache(root_, 64 * 1024);
  cache.evict(64 * 1024);  // a put that lost the race for the eviction lock may have left it over
  EXPECT_LE(cache.total_bytes(), 64u * 1024);
}

TEST_F(DiskCacheTest, ProcessesWritingOneKeyNeverTearIt) {
  const std::string a = make_payload(1, 300 * 1024), b = make_payload(2, 200 * 1024);
  pid_t writers[2];
  for (int w = 0; w < 2; ++w) {
    writers[w] = ::fork();
    ASSERT_GE(writers[w], 0);
    if (writers[w] == 0) {
      DiskCache cache(root_, 0);
      int failures = 0;
      for (int i = 0; i < 200; ++i) failures += !cache.put("cubin", "contested", w == 0 ? a : b);
      ::_exit(failures == 0 ? 0 : 1);
    }
  }
  DiskCache reader(root_, 0);
  int reads = 0, bad = 0, running = 2;
  int status[2] = {0, 0};
  bool done[2] = {false, false};
  while (running > 0) {
    std::optional<std::string> got = reader.get("cubin", "contested");
    ++reads;
    bad += got && *got != a && *got != b;
    for (int w = 0; w < 2; ++w)
      if (!done[w] && ::waitpid(writers[w], &status[w], WNOHANG) == writers[w]) done[w] = true, --running;
  }
  for (int w = 0; w < 2; ++w) EXPECT_TRUE(WIFEXITED(status[w]) && WEXITSTATUS(status[w]) == 0) << w;
  EXPECT_EQ(bad, 0) << "of " << reads << " reads";
  EXPECT_EQ(reader.stats().corrupt, 0);
  std::optional<std::string> last = reader.get("cubin", "contested");
  ASSERT_TRUE(last.has_value());
  EXPECT_TRUE(*last == a || *last == b);
  EXPECT_TRUE(temp_files().empty());
}

}  // namespace
}  // namespace cujit::cache
