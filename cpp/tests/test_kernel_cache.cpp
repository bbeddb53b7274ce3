// The KernelCache's compile gate without a GPU: one compile per key however many threads ask, other keys
// compiling meanwhile, a failed compile retried by the next caller, a thread re-entering its own key refused,
// and the listing in compile order.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <stdexcept>
#include <thread>
#include <vector>

#include "cujit/kernel_cache.h"

namespace cujit {
namespace {

using driver::KernelCache;

KernelCache::Code code_named(const std::string& entry) {
  KernelCache::Code code;
  code.entry = entry;
  return code;
}

TEST(KernelCache, OneCompilePerKeyOtherKeysMeanwhile) {
  KernelCache cache;
  std::atomic<int> compiles_a{0}, compiles_b{0};
  std::promise<void> a_started, b_done;
  std::shared_future<void> a_running = a_started.get_future().share(), b_finished = b_done.get_future().share();
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i)
    threads.emplace_back([&, i] {
      auto k = cache.specialise("a", [&] {
        ++compiles_a;
        a_started.set_value();
        // "b" compiles and finishes while "a" holds its gate
        EXPECT_EQ(b_finished.wait_for(std::chrono::seconds(10)), std::future_status::ready);
        return code_named("kernel_a");
      });
      EXPECT_EQ(k->code().entry, "kernel_a") << i;
    });
  a_running.wait();
  cache.specialise("b", [&] {
    ++compiles_b;
    return code_named("kernel_b");
  });
  b_done.set_value();
  for (auto& t : threads) t.join();
  EXPECT_EQ(compiles_a, 1);
  EXPECT_EQ(compiles_b, 1);
  auto listed = cache.specialisations();
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_EQ(listed[0].first, "b");  // compile order
  EXPECT_EQ(listed[1].first, "a");
}

TEST(KernelCache, AFailedCompileIsRetriedAndReentryRefused) {
  KernelCache cache;
  EXPECT_THROW(cache.specialise("k", []() -> KernelCache::Code { throw std::runtime_error("no"); }),
               std::runtime_error);
  EXPECT_EQ(cache.find("k"), nullptr);
  EXPECT_FALSE(cache.compiling_on_this_thread());
  EXPECT_EQ(cache.specialise("k", [] { return code_named("second"); })->code().entry, "second");
  EXPECT_NE(cache.find("k"), nullptr);

  bool inside = false;
  EXPECT_THROW(cache.specialise("r",
                                [&] {
                                  inside = cache.compiling_on_this_thread();
                                  cache.specialise("r", [] { return code_named("inner"); });
                                  return code_named("outer");
                                }),
               KernelCache::Reentered);
  EXPECT_TRUE(inside);
  EXPECT_FALSE(cache.compiling_on_this_thread());
}

TEST(KernelCache, ADeviceFunctionHasNoImageToLoad) {
  KernelCache cache;
  auto k = cache.specialise("typed", [] { return code_named(""); });
  EXPECT_EQ(k->loaded_in(nullptr), nullptr);
  cache.clear();
  EXPECT_EQ(cache.find("typed"), nullptr);
  EXPECT_TRUE(cache.specialisations().empty());
}

}  // namespace
}  // namespace cujit
