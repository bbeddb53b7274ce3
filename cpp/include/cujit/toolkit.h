// The one place that finds the CUDA toolkit's parts: the libraries cujit
// opens with dlopen on first use (libnvrtc, libnvJitLink, libnvvm, libcuda),
// libdevice and the CUDA include directory. Each is looked for in
// $CUDA_HOME / $CUDA_PATH, then in NVIDIA's pip wheels (the Python package
// hands in their roots, e.g. site-packages/nvidia/cu13), then in
// /usr/local/cuda, then (libraries) on the loader's path. A part that is not
// found is reported with every place looked and a hint naming CUDA_HOME.
#pragma once

#include <string>
#include <vector>

namespace cujit::toolkit {

enum class Library { Nvrtc, NvJitLink, Nvvm, Driver };

struct Located {
  void* handle = nullptr;              // dlopen handle; nullptr when not found
  std::string path;                    // the file the loader picked
  std::string reason;                  // when not found: what, where looked, how to fix
  std::vector<std::string> searched;   // every path tried, in order
};

// The toolkit roots looked in, in the search order: $CUDA_HOME, $CUDA_PATH, the
// wheels' roots, /usr/local/cuda.
std::vector<std::string> search_roots();

// Roots of NVIDIA's pip wheels (folders holding lib/, include/, nvvm/), in
// priority order. Only effective before the first lookup of each part.
void set_wheel_roots(std::vector<std::string> roots);

// The library, opened once per process (thread-safe; never throws).
// Environment overrides name the file and are then the only place looked:
// CUJIT_NVRTC, CUJIT_NVJITLINK, CUJIT_NVVM, CUJIT_CUDA_DRIVER (or
// NUMBA_CUDA_DRIVER). The driver is otherwise taken from the loader's path.
const Located& library(Library which);
const char* library_name(Library which);  // "NVRTC", "nvJitLink", "libNVVM", "the CUDA driver"

// A symbol of a loaded library, trying each name in turn (nvJitLink's
// symbols are versioned: __nvJitLinkCreate_13_0 before nvJitLinkCreate).
void* symbol(const Located& lib, std::initializer_list<const char*> names);

// libdevice.10.bc: the path, or "" with `reason` filled.
std::string libdevice_path(std::string* reason = nullptr);

// libcudadevrt.a (the device runtime, linked by cooperative kernels): the path, or "" with `reason`.
std::string cudadevrt_path(std::string* reason = nullptr);

// The CUDA include directories that exist (toolkit include, the wheels'),
// in the search order; CUJIT_CUDA_INCLUDE_PATH / NUMBA_CUDA_INCLUDE_PATH
// (':'-separated) come first when set.
std::vector<std::string> include_dirs();

}  // namespace cujit::toolkit
