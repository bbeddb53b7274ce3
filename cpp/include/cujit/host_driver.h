// The CPU target's driver: an implementation of the Driver API table cujit's
// runtime calls (driver/driver_api.h) on the host, installed in place of libcuda
// when the process-wide target is the CPU. Device memory is host memory (copies
// are real copies), streams run their work in order at once (synchronously),
// events record the host's steady clock, and there is one device, "cujit CPU
// target", with the attributes of a compute capability 9.0 GPU (host_driver.cpp
// lists them; docs/cpu_target.md documents them). Loading GPU modules and
// cuLaunchKernel return CUDA_ERROR_NOT_SUPPORTED naming the CPU target: kernels
// run through the CPU target's dispatcher and the host runtime instead.
#pragma once

namespace cujit::hostrt {

// Installs the host driver for the rest of the process (idempotent). Device
// arrays, streams and events made before it were the real driver's.
void install_host_driver();

// Whether the host driver is installed.
bool host_driver_installed();

}  // namespace cujit::hostrt
