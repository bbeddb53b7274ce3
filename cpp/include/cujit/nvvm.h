// libNVVM: NVVM IR text compiled to LTO-IR (-gen-lto) or PTX. libnvvm is
// opened on first use (cujit/toolkit.h). CUDA 13's libNVVM reads the legacy
// dialect (LLVM 7 syntax, typed pointers) below compute_100 and LLVM 20's
// from compute_100 up; the caller hands in the right one.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace cujit::link {

struct NvvmOutput {
  std::string code;  // LTO-IR bytes or PTX text
  std::string log;   // libNVVM's log (warnings), possibly empty
};

// The message names the libNVVM result and carries its log.
class NvvmError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// `options`, e.g. {"-arch=compute_90", "-gen-lto", "-opt=3"}. Throws NvvmError.
NvvmOutput nvvm_compile(const std::string& ir, const std::string& name, const std::vector<std::string>& options);

// The NVVM IR version libNVVM reads: {major, minor, debug major, debug minor}.
std::vector<int> nvvm_ir_version();

}  // namespace cujit::link
