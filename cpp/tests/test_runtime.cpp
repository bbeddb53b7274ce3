// The runtime's pieces that need no GPU: the kernel argument layout, binary16
// conversion, launch-configuration checks, the no-driver story, and the
// nvJitLink option rules.
#include <gtest/gtest.h>

#include <cstring>

#include "cujit/driver.h"
#include "cujit/link.h"

namespace cujit {
namespace {

using driver::ArgSlot;
using driver::ScalarKind;

TEST(ArgumentPlan, AlignsEachParameterToItsSize) {
  driver::ArgumentPlan plan({ArgSlot::make_scalar(ScalarKind::Bool, 1), ArgSlot::make_scalar(ScalarKind::Signed, 4),
                             ArgSlot::make_array(2), ArgSlot::make_scalar(ScalarKind::Float, 2),
                             ArgSlot::make_scalar(ScalarKind::Float, 8)});
  EXPECT_EQ(plan.param_count(), 1u + 1u + 9u + 1u + 1u);
  EXPECT_EQ(plan.param_offsets()[0], 0u);
  EXPECT_EQ(plan.param_offsets()[1], 4u);
  EXPECT_EQ(plan.param_offsets()[2], 8u);    // the array's meminfo
  EXPECT_EQ(plan.param_offsets()[10], 72u);  // its last stride
  EXPECT_EQ(plan.param_offsets()[11], 80u);  // float16
  EXPECT_EQ(plan.param_offsets()[12], 88u);  // float64
  EXPECT_EQ(plan.buffer_size(), 96u);
  EXPECT_EQ(plan.params_end(), 96u);
  EXPECT_EQ(plan.first_param(2), 2u);
  EXPECT_EQ(plan.first_param(3), 11u);
}

TEST(ArgumentPlan, EndsWhereItsLastParameterEnds) {
  // cuLaunchKernel's parameter buffer is as long as the parameters: a trailing float32 ends it at 60, not 64.
  driver::ArgumentPlan plan({ArgSlot::make_array(1), ArgSlot::make_scalar(ScalarKind::Float, 4)});
  EXPECT_EQ(plan.params_end(), 60u);
  EXPECT_EQ(plan.buffer_size(), 64u);
  EXPECT_EQ(driver::ArgumentPlan(std::vector<ArgSlot>{}).params_end(), 0u);
}

TEST(ArgumentPlan, PacksArraysInNumbaOrder) {
  driver::ArgumentPlan plan({ArgSlot::make_array(2), ArgSlot::make_scalar(ScalarKind::Unsigned, 1)});
  driver::ArgumentBuffer buf(plan);
  std::int64_t shape[2] = {3, 4}, strides[2] = {16, 4};
  buf.set_array(0, driver::ArrayArg{0xABCD00, 12, 4, shape, strides});
  buf.set_scalar(1, 0x1FF);  // only the low byte is a uint8
  std::int64_t words[9];
  std::memcpy(words, buf.data(), sizeof words);
  const std::int64_t expected[9] = {0, 0, 12, 4, 0xABCD00, 3, 4, 16, 4};
  for (int i = 0; i < 9; ++i) EXPECT_EQ(words[i], expected[i]) << i;
  EXPECT_EQ(buf.data()[72], 0xFF);
  EXPECT_EQ(buf.params()[9], static_cast<const void*>(buf.data() + 72));
  driver::ArgumentBuffer moved = std::move(buf);
  EXPECT_EQ(moved.params()[9], static_cast<const void*>(moved.data() + 72));
}

TEST(ArgumentPlan, RejectsBadSlots) {
  EXPECT_THROW(driver::ArgumentPlan({ArgSlot::make_scalar(ScalarKind::Signed, 3)}), driver::DriverError);
  EXPECT_THROW(driver::ArgumentPlan({ArgSlot::make_scalar(ScalarKind::Float, 1)}), driver::DriverError);
  EXPECT_THROW(driver::ArgumentPlan({ArgSlot::make_array(-1)}), driver::DriverError);
  driver::ArgumentPlan plan({ArgSlot::make_array(1)});
  driver::ArgumentBuffer buf(plan);
  EXPECT_THROW(buf.set_scalar(0, 1), driver::DriverError);
}

TEST(HalfBits, RoundsToNearestEven) {
  EXPECT_EQ(driver::half_bits(1.0), 0x3C00);
  EXPECT_EQ(driver::half_bits(-2.0), 0xC000);
  EXPECT_EQ(driver::half_bits(65504.0), 0x7BFF);
  EXPECT_EQ(driver::half_bits(65520.0), 0x7C00);  // rounds up to infinity
  EXPECT_EQ(driver::half_bits(1.0 + 1.0 / 2048), 0x3C00);  // tie to even (down)
  EXPECT_EQ(driver::half_bits(1.0 + 3.0 / 2048), 0x3C02);  // tie to even (up)
  EXPECT_EQ(driver::half_bits(5.960464477539063e-08), 0x0001);  // smallest subnormal
  EXPECT_EQ(driver::half_bits(2.9802322387695312e-08), 0x0000);  // half of it: tie to even zero
  EXPECT_EQ(driver::half_bits(-0.0), 0x8000);
}

TEST(LaunchConfig, NamesTheProblem) {
  driver::LaunchConfig c;
  driver::LaunchLimits limits;
  c.grid = {1, 1, 1};
  c.block = {1024, 1, 1};
  EXPECT_NO_THROW(driver::validate_launch_config(c, limits));
  c.block = {32, 33, 1};
  try {
    driver::validate_launch_config(c, limits, "k");
    FAIL();
  } catch (const driver::DriverError& e) {
    EXPECT_EQ(e.kind(), driver::DriverErrorKind::LaunchConfig);
    EXPECT_EQ(e.code_name(), "CUDA_ERROR_INVALID_VALUE");
    EXPECT_NE(std::string(e.what()).find("1056 threads per block"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("kernel 'k'"), std::string::npos) << e.what();
  }
  c.block = {1, 1, 1};
  c.grid = {1, 0, 1};
  EXPECT_THROW(driver::validate_launch_config(c, limits), driver::DriverError);
  c.grid = {1, 1, 1};
  c.shared_mem = 48 * 1024 + 1;
  EXPECT_THROW(driver::validate_launch_config(c, limits), driver::DriverError);
}

TEST(Driver, AbsentDriverIsASupportError) {
  const driver::DriverStatus& status = driver::driver_status();
  if (status.available) GTEST_SKIP() << "a CUDA driver is installed here";
  EXPECT_FALSE(status.reason.empty());
  try {
    driver::current_context();
    FAIL();
  } catch (const driver::DriverError& e) {
    EXPECT_EQ(e.kind(), driver::DriverErrorKind::Support);
  }
  EXPECT_EQ(driver::current_context_or_null(), nullptr);
  EXPECT_EQ(driver::error_name(2), "CUDA_ERROR_OUT_OF_MEMORY");
}

TEST(Link, LtoOnlyWithLtoIr) {
  link::LinkOptions o;
  o.arch = "sm_90a";
  std::vector<link::LinkInput> inputs(2);
  inputs[1].kind = link::InputKind::Cubin;
  EXPECT_EQ(link::link_options(inputs, o), std::vector<std::string>{"-arch=sm_90a"});
  inputs[1].kind = link::InputKind::LtoIr;
  o.max_registers = 32;
  EXPECT_EQ(link::link_options(inputs, o), (std::vector<std::string>{"-arch=sm_90a", "-maxrregcount=32", "-lto"}));
  link::InputKind k;
  EXPECT_TRUE(link::parse_input_kind("fatbin", k));
  EXPECT_EQ(k, link::InputKind::Fatbin);
  EXPECT_TRUE(link::parse_input_kind("cu", k));  // CUDA C++, compiled by NVRTC before the link
  EXPECT_EQ(k, link::InputKind::Cu);
  EXPECT_FALSE(link::parse_input_kind("cuh", k));
  EXPECT_THROW(link::link({}, o), link::LinkError);
}

}  // namespace
}  // namespace cujit
