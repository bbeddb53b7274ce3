// The cache's trust rules and typed records (cujit/disk_cache.h,
// cujit/cache_record.h): the root is created private, a root or entry that
// others may write is refused unless the cache is shared, and a record decodes
// whole or not at all.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "cujit/cache_record.h"
#include "cujit/disk_cache.h"

namespace cujit::cache {
namespace {

namespace fs = std::filesystem;

class CacheTrustTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/cujit-trust-test-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    tmp_ = tmpl;
    root_ = tmp_ + "/a/b/cache";
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(tmp_, ec);
  }
  std::string tmp_, root_;
};

TEST_F(CacheTrustTest, TheRootIsCreatedPrivateAndTrusted) {
  DiskCache cache(root_, 0);
  EXPECT_EQ(cache.open_root(), "");
  struct stat st;
  ASSERT_EQ(::stat(root_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  EXPECT_EQ(cache.trust_problem(), "");
}

TEST_F(CacheTrustTest, ARootOthersMayWriteIsNotTrustedUnlessShared) {
  DiskCache cache(root_, 0);
  ASSERT_EQ(cache.open_root(), "");
  ::chmod(root_.c_str(), 0777);
  EXPECT_NE(cache.trust_problem().find("is writable by others (mode 0777)"), std::string::npos)
      << cache.trust_problem();
  ::chmod(root_.c_str(), 0770);
  EXPECT_NE(cache.trust_problem().find("is writable by its group"), std::string::npos) << cache.trust_problem();
  EXPECT_EQ(DiskCache(root_, 0, /*shared=*/true).trust_problem(), "");
}

TEST_F(CacheTrustTest, AnEntryOthersMayWriteIsRefusedAndKept) {
  DiskCache cache(root_, 0);
  ASSERT_TRUE(cache.put("kernel", "abcdef", "payload"));
  const std::string entry = root_ + "/kernel/ab/abcdef";
  ::chmod(entry.c_str(), 0666);
  EXPECT_EQ(cache.get("kernel", "abcdef"), std::nullopt);
  EXPECT_EQ(cache.stats().untrusted, 1);
  EXPECT_EQ(cache.stats().corrupt, 0);
  EXPECT_TRUE(fs::exists(entry));  // not ours to judge damaged: written over by the next put
  EXPECT_NE(cache.last_error().find(entry), std::string::npos);
  EXPECT_EQ(DiskCache(root_, 0, /*shared=*/true).get("kernel", "abcdef"), "payload");
  ASSERT_TRUE(cache.put("kernel", "abcdef", "mine"));
  EXPECT_EQ(cache.get("kernel", "abcdef"), "mine");
}

TEST_F(CacheTrustTest, AnotherUsersEntryIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "giving a file to another user needs root";
  DiskCache cache(root_, 0);
  ASSERT_TRUE(cache.put("kernel", "abcdef", "payload"));
  const std::string entry = root_ + "/kernel/ab/abcdef";
  ASSERT_EQ(::chown(entry.c_str(), 54321, 54321), 0);
  EXPECT_EQ(cache.get("kernel", "abcdef"), std::nullopt);
  EXPECT_NE(cache.last_error().find("belongs to another user (uid 54321)"), std::string::npos);
}

CacheRecord sample() {
  CacheRecord r;
  r.kind = CacheRecord::Kind::Kernel;
  r.code = std::string(
      "\x7f"
      "ELF\0with nul",
      13);
  r.symbol = "_Z1k";
  r.arch = "sm_90";
  r.cooperative = true;
  r.links = {{"cu", "0123"}, {"ptx", "4567"}};
  r.raises = {
      {"builtins:ValueError", {{RecordConstant::Kind::Str, "bad"}, {RecordConstant::Kind::None, ""}}, "k", "k.py", 12}};
  return r;
}

TEST(CacheRecord, RoundTrips) {
  std::optional<CacheRecord> back = decode(encode(sample()));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->code, sample().code);
  EXPECT_EQ(back->symbol, "_Z1k");
  EXPECT_TRUE(back->cooperative);
  EXPECT_EQ(back->links, sample().links);
  ASSERT_EQ(back->raises.size(), 1u);
  EXPECT_EQ(back->raises[0].exception, "builtins:ValueError");
  EXPECT_EQ(back->raises[0].args[1].kind, RecordConstant::Kind::None);
  EXPECT_EQ(back->raises[0].line, 12);
}

TEST(CacheRecord, EveryPrefixAndEveryExtensionDecodesToNothing) {
  const std::string good = encode(sample());
  for (std::size_t n = 0; n < good.size(); ++n) EXPECT_FALSE(decode(good.substr(0, n)).has_value()) << n;
  EXPECT_FALSE(decode(good + '\0').has_value());
  std::string other_version = good;
  other_version[8] = '1';
  EXPECT_FALSE(decode(other_version).has_value());
}

}  // namespace
}  // namespace cujit::cache
