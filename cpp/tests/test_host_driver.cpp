// The CPU target's host driver (cujit/host_driver.h) under the runtime's own
// C++ API: one device with a GPU's attributes, device memory that is host
// memory with real copies, synchronous streams, host-clock events, and a
// clear CUDA_ERROR_NOT_SUPPORTED for what needs a GPU. No libcuda needed.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "cujit/driver.h"
#include "cujit/events.h"
#include "cujit/host_driver.h"
#include "cujit/memory.h"

namespace cujit::driver {
namespace {

class HostDriver : public ::testing::Test {
 protected:
  void SetUp() override { hostrt::install_host_driver(); }
};

TEST_F(HostDriver, OneDeviceWithTheAttributesOfACc90Gpu) {
  EXPECT_TRUE(hostrt::host_driver_installed());
  ASSERT_EQ(device_count(), 1);
  const DeviceInfo& d = device_info(0);
  EXPECT_EQ(d.name, "cujit CPU target");
  EXPECT_EQ(d.cc_major, 9);
  EXPECT_EQ(d.cc_minor, 0);
  EXPECT_EQ(d.max_threads_per_block, 1024);
  EXPECT_EQ(d.warp_size, 32);
  EXPECT_EQ(d.max_shared_memory_per_block, 48 * 1024);
  EXPECT_GE(d.multiprocessor_count, 1);
  EXPECT_GT(d.total_memory, 0u);
  EXPECT_THROW(device_info(1), DriverError);
  auto [free_bytes, total] = current_context().memory_info();
  EXPECT_GT(free_bytes, 0u);
  EXPECT_LE(free_bytes, total);
}

TEST_F(HostDriver, DeviceMemoryIsHostMemoryWithRealCopies) {
  Context& ctx = current_context();
  std::vector<int> in(1000), out(1000, -1);
  for (int i = 0; i < 1000; ++i) in[i] = i * 7 - 3;
  auto a = DeviceAllocation::allocate(ctx, in.size() * sizeof(int));
  auto b = DeviceAllocation::allocate(ctx, in.size() * sizeof(int));
  EXPECT_EQ(a->ptr() % 256, 0u);
  copy_host_to_device(ctx, a->ptr(), in.data(), in.size() * sizeof(int), nullptr);
  in[0] = 12345;  // the device copy is its own memory
  copy_device_to_device(ctx, b->ptr(), a->ptr(), in.size() * sizeof(int), nullptr);
  copy_device_to_host(ctx, out.data(), b->ptr(), out.size() * sizeof(int), nullptr);
  EXPECT_EQ(out[0], -3);
  EXPECT_EQ(out[999], 999 * 7 - 3);
  memset_d8(ctx, b->ptr(), 0, 8, nullptr);
  copy_device_to_host(ctx, out.data(), b->ptr(), 3 * sizeof(int), nullptr);
  EXPECT_EQ(out[0], 0);
  EXPECT_EQ(out[1], 0);
  EXPECT_EQ(out[2], 11);
  auto [base, size] = address_range(ctx, a->ptr() + 40);
  EXPECT_EQ(base, a->ptr());
  EXPECT_EQ(size, in.size() * sizeof(int));
}

TEST_F(HostDriver, StreamsAreAlwaysDoneAndEventsTimeThem) {
  Context& ctx = current_context();
  auto s = Stream::create(ctx);
  auto start = Event::create(ctx, true), end = Event::create(ctx, true);
  start->record(s->handle());
  std::vector<double> host(1 << 16, 1.5), back(1 << 16);
  auto mem = DeviceAllocation::allocate(ctx, host.size() * sizeof(double));
  copy_host_to_device(ctx, mem->ptr(), host.data(), host.size() * sizeof(double), s.get());
  copy_device_to_host(ctx, back.data(), mem->ptr(), back.size() * sizeof(double), s.get());
  end->record(s->handle());
  EXPECT_TRUE(s->query());  // synchronous: the work is done when its call returns
  s->synchronize();
  EXPECT_EQ(back[12345], 1.5);
  EXPECT_GE(Event::elapsed_ms(*start, *end), 0.0f);
  auto untimed = Event::create(ctx, false);
  untimed->record(s->handle());
  EXPECT_THROW(Event::elapsed_ms(*start, *untimed), DriverError);
}

TEST_F(HostDriver, WhatNeedsAGpuIsNotSupportedNamingTheCpuTarget) {
  Context& ctx = current_context();
  auto mem = DeviceAllocation::allocate(ctx, 64);
  try {
    ipc_handle(ctx, mem->ptr());
    FAIL() << "IPC worked on the host driver";
  } catch (const DriverError& e) {
    EXPECT_EQ(e.code_name(), "CUDA_ERROR_NOT_SUPPORTED");
    EXPECT_NE(std::string(e.what()).find("CPU target"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace cujit::driver
