// The host runtime (cujit/hostrt.h) with hand-written kernels: every thread of
// the grid runs once with its ids, a barrier orders the threads of a block, and
// shared memory is per block.
#include <gtest/gtest.h>

#include <atomic>
#include <vector>

#include "cujit/hostrt.h"

namespace cujit::hostrt {
namespace {

using target::HostThreadContext;

struct Ids {
  std::vector<std::atomic<int>>* seen;
};

void count_ids(HostThreadContext* c, void** params) {
  auto* seen = *static_cast<std::vector<std::atomic<int>>**>(params[0]);
  const auto& r = c->registers;
  uint64_t block = r[1][0] + uint64_t{r[3][0]} * (r[1][1] + uint64_t{r[3][1]} * r[1][2]);
  uint64_t thread = r[0][0] + uint64_t{r[2][0]} * (r[0][1] + uint64_t{r[2][1]} * r[0][2]);
  (*seen)[block * (uint64_t{r[2][0]} * r[2][1] * r[2][2]) + thread]++;
}

TEST(HostRuntime, EveryThreadOfTheGridRunsOnce) {
  HostLaunch config{{3, 2, 2}, {4, 3, 2}, 0, 0};
  std::vector<std::atomic<int>> seen(config.grid.count() * config.block.count());
  auto* p = &seen;
  void* params[] = {&p};
  ASSERT_FALSE(launch(count_ids, params, config).has_value());
  for (auto& s : seen) EXPECT_EQ(s.load(), 1);
}

// out[block][t] = shared[blockDim - 1 - t] after each thread wrote shared[t] = t + 1000 * block.
void reverse_in_shared(HostThreadContext* c, void** params) {
  int* out = *static_cast<int**>(params[0]);
  auto* shared = reinterpret_cast<int*>(c->shared);
  uint32_t t = c->registers[0][0], n = c->registers[2][0], b = c->registers[1][0];
  shared[t] = static_cast<int>(t + 1000 * b);
  c->barrier(c);
  out[b * n + t] = shared[n - 1 - t];
}

TEST(HostRuntime, KernelsWithoutBarriersRunEveryThreadOnceWithoutFibers) {
  HostLaunch config{{5, 3, 1}, {7, 2, 3}, 0, 0, /*barriers=*/false};
  std::vector<std::atomic<int>> seen(config.grid.count() * config.block.count());
  auto* p = &seen;
  void* params[] = {&p};
  ASSERT_FALSE(launch(count_ids, params, config).has_value());
  for (auto& s : seen) EXPECT_EQ(s.load(), 1);
}

TEST(HostRuntime, BarrierOrdersTheThreadsOfABlockAndSharedMemoryIsPerBlock) {
  HostLaunch config{{16, 1, 1}, {256, 1, 1}, 256 * sizeof(int), 0};
  std::vector<int> out(16 * 256, -1);
  int* p = out.data();
  void* params[] = {&p};
  ASSERT_FALSE(launch(reverse_in_shared, params, config).has_value());
  for (int b = 0; b < 16; ++b)
    for (int t = 0; t < 256; ++t) EXPECT_EQ(out[b * 256 + t], 255 - t + 1000 * b);
}

TEST(HostRuntime, BadConfigurationsAreErrors) {
  void* params[] = {nullptr};
  auto too_big = launch(count_ids, params, HostLaunch{{1, 1, 1}, {1025, 1, 1}, 0, 0});
  ASSERT_TRUE(too_big.has_value());
  EXPECT_EQ(too_big->kind, ErrorKind::ValueError);
  EXPECT_NE(too_big->message.find("threads per block"), std::string::npos);
  EXPECT_TRUE(launch(count_ids, params, HostLaunch{{0, 1, 1}, {1, 1, 1}, 0, 0}).has_value());
}

}  // namespace
}  // namespace cujit::hostrt
