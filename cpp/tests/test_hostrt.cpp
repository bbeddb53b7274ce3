// The host runtime (cujit/hostrt.h) with hand-written kernels: every thread of
// the grid runs once with its ids, a barrier orders the threads of a block,
// shared memory is per block, collectives exchange values, a deadlock is an
// error, a cooperative launch runs every block at once, and several threads may
// launch at once.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
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

// ---- Collectives (the context's collective hook), deadlock reports, cooperative launches, the worker pool ----

uint64_t collective(HostThreadContext* c, target::HostCollective kind, uint32_t mask, uint64_t value,
                    uint32_t operand = 0, const char* where = "test.py:1") {
  return c->collective(c, static_cast<uint32_t>(kind), mask, value, operand, where);
}

uint32_t linear_thread(const HostThreadContext* c) {
  const auto& r = c->registers;
  return r[0][0] + r[2][0] * (r[0][1] + r[2][1] * r[0][2]);
}

// out[block * n + t] = the value of lane (t + 1) % 32 of t's warp, then the block's count of odd threads.
void rotate_and_count(HostThreadContext* c, void** params) {
  int64_t* out = *static_cast<int64_t**>(params[0]);
  uint32_t t = linear_thread(c), n = c->registers[2][0], b = c->registers[1][0];
  uint64_t v = collective(c, target::HostCollective::ShuffleIdx, ~0u, t * 10 + b, (t + 1) % 32);
  uint64_t odd = collective(c, target::HostCollective::BarrierCount, 0, t % 2);
  out[2 * (b * n + t)] = static_cast<int64_t>(v);
  out[2 * (b * n + t) + 1] = static_cast<int64_t>(odd);
}

TEST(HostRuntime, WarpShufflesAndBarrierReductionsExchangeValues) {
  HostLaunch config{{5, 1, 1}, {64, 1, 1}, 0, 0};
  std::vector<int64_t> out(5 * 64 * 2, -1);
  int64_t* p = out.data();
  void* params[] = {&p};
  ASSERT_FALSE(launch(rotate_and_count, params, config).has_value());
  for (int b = 0; b < 5; ++b)
    for (int t = 0; t < 64; ++t) {
      int source = t / 32 * 32 + (t + 1) % 32;
      EXPECT_EQ(out[2 * (b * 64 + t)], source * 10 + b);
      EXPECT_EQ(out[2 * (b * 64 + t) + 1], 32);
    }
}

// Thread 0 waits at a barrier while the rest of its warp waits at a full-mask syncwarp.
void split_warp(HostThreadContext* c, void**) {
  if (linear_thread(c) == 0)
    collective(c, target::HostCollective::Barrier, 0, 0, 0, "k.py:7");
  else
    collective(c, target::HostCollective::SyncWarp, ~0u, 0, 0, "k.py:9");
}

TEST(HostRuntime, ADeadlockIsAnErrorNamingTheCallsAndThreads) {
  HostLaunch config{{3, 1, 1}, {32, 1, 1}, 0, 0};
  config.kernel_name = "split_warp";
  void* params[] = {nullptr};
  auto error = launch(split_warp, params, config);
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->kind, ErrorKind::Runtime);
  EXPECT_NE(error->message.find("kernel 'split_warp' deadlocked"), std::string::npos) << error->message;
  EXPECT_NE(error->message.find("thread (0, 0, 0) wait at cuda.syncthreads() at k.py:7"), std::string::npos)
      << error->message;
  EXPECT_NE(error->message.find("31 threads (1, 0, 0)..(31, 0, 0) wait at cuda.syncwarp() with mask 0xffffffff "
                                "at k.py:9"),
            std::string::npos)
      << error->message;
  // The workers are not stuck: the next launch runs.
  std::vector<std::atomic<int>> seen(4 * 8);
  auto* s = &seen;
  void* ids[] = {&s};
  ASSERT_FALSE(launch(count_ids, ids, HostLaunch{{4, 1, 1}, {8, 1, 1}, 0, 0}).has_value());
  for (auto& v : seen) EXPECT_EQ(v.load(), 1);
}

// Every thread writes its slot, waits at the grid barrier, then reads the mirrored slot (another block's).
void mirror(HostThreadContext* c, void** params) {
  int* data = *static_cast<int**>(params[0]);
  int* out = *static_cast<int**>(params[1]);
  uint32_t n = c->registers[2][0] * c->registers[3][0];
  uint32_t i = c->registers[1][0] * c->registers[2][0] + c->registers[0][0];
  data[i] = static_cast<int>(i * 3);
  collective(c, target::HostCollective::GridSync, 0, 0);
  out[i] = data[n - 1 - i];
}

TEST(HostRuntime, ACooperativeLaunchRunsEveryBlockAtOnce) {
  HostLaunch config{{6, 1, 1}, {32, 1, 1}, 0, 0};
  config.cooperative = true;
  std::vector<int> data(6 * 32, -1), out(6 * 32, -1);
  int *d = data.data(), *o = out.data();
  void* params[] = {&d, &o};
  ASSERT_FALSE(launch(mirror, params, config).has_value());
  for (int i = 0; i < 6 * 32; ++i) EXPECT_EQ(out[i], (6 * 32 - 1 - i) * 3);
  config.grid.x = static_cast<uint32_t>(max_cooperative_blocks(32) + 1);
  auto too_many = launch(mirror, params, config);
  ASSERT_TRUE(too_many.has_value());
  EXPECT_EQ(too_many->kind, ErrorKind::ValueError);
  config.grid.x = 2;
  config.cooperative = false;  // a grid sync needs a cooperative launch: an error, not a hang
  auto not_cooperative = launch(mirror, params, config);
  ASSERT_TRUE(not_cooperative.has_value());
  EXPECT_NE(not_cooperative->message.find("cooperative launch"), std::string::npos);
}

TEST(HostRuntime, MemoryTheRuntimeCannotAllocateIsAnError) {
  HostLaunch config{{4, 1, 1}, {32, 1, 1}, 0, uint64_t{1} << 52};  // 4 PiB of dynamic shared memory per block
  std::vector<int> out(4 * 32);
  int* p = out.data();
  void* params[] = {&p};
  for (bool cooperative : {false, true}) {
    config.cooperative = cooperative;
    auto error = launch(reverse_in_shared, params, config);
    ASSERT_TRUE(error.has_value());
    EXPECT_NE(error->message.find("ran out of memory"), std::string::npos) << error->message;
  }
}

TEST(HostRuntime, SeveralThreadsLaunchAtOnce) {
  std::vector<std::thread> launchers;
  std::atomic<int> failures{0};
  for (int k = 0; k < 4; ++k)
    launchers.emplace_back([&failures] {
      for (int round = 0; round < 5; ++round) {
        HostLaunch config{{16, 1, 1}, {256, 1, 1}, 256 * sizeof(int), 0};
        std::vector<int> out(16 * 256, -1);
        int* p = out.data();
        void* params[] = {&p};
        if (launch(reverse_in_shared, params, config).has_value()) ++failures;
        for (int b = 0; b < 16; ++b)
          for (int t = 0; t < 256; ++t)
            if (out[b * 256 + t] != 255 - t + 1000 * b) ++failures;
      }
    });
  for (auto& t : launchers) t.join();
  EXPECT_EQ(failures.load(), 0);
}

}  // namespace
}  // namespace cujit::hostrt
