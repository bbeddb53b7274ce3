// NVRTC: CUDA C++ link inputs compiled to PTX or LTO-IR for one architecture,
// with relocatable device code (so their device functions can be called), in
// the process once per (source, options): two kernels linking one `.cu` run
// NVRTC once. libnvrtc is opened on first use (cujit/toolkit.h).
#pragma once

#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace cujit::link {

struct NvrtcOptions {
  std::string arch;   // "sm_90a": -arch=compute_90a (NVRTC's PTX or LTO-IR is what is read)
  bool lto = false;   // -dlto: LTO-IR instead of PTX
  bool debug = false;     // -G
  bool lineinfo = false;  // -lineinfo
  std::vector<std::string> include_dirs;  // -I, in order
};

struct NvrtcOutput {
  std::string code;     // PTX text or LTO-IR bytes
  bool ltoir = false;
  std::string log;      // NVRTC's log (warnings), possibly empty
  bool cached = false;  // compiled before, and its log already given to a caller that reports it
  std::vector<std::string> options;  // what NVRTC was given
};

// A failed compile: the message is numba-cuda's shape, "NVRTC_ERROR_COMPILATION
// (6), compilation log: ..." with NVRTC's log, which names the source.
// `unavailable`: libnvrtc was not found (the message says where it was looked for).
class NvrtcError : public std::runtime_error {
 public:
  NvrtcError(const std::string& message, bool unavailable = false)
      : std::runtime_error(message), unavailable_(unavailable) {}
  bool unavailable() const { return unavailable_; }

 private:
  bool unavailable_;
};

// The option list compile_cuda passes (-rdc=true always).
std::vector<std::string> nvrtc_option_list(const NvrtcOptions& options);

// Throws NvrtcError. Thread-safe; runs without any cujit lock held. A caller that comes while the same
// source and options compile waits for that compile. `report`: the caller shows NVRTC's log (a link does;
// a prefetch does not, and leaves `cached` false for the first caller that does).
NvrtcOutput compile_cuda(const std::string& source, const std::string& name, const NvrtcOptions& options,
                         bool report = true);

// A source to compile ahead of its link: (CUDA C++ text, its name).
struct NvrtcSource {
  std::string source;
  std::string name;
};

// Starts compile_cuda(report = false) of each source on a thread of cujit's own (cujit/background.h) and
// returns at once: a declaration or kernel that links CUDA C++ has NVRTC running before its first call
// needs the result, with no Python thread (nor the GIL it would wait for) in between. Errors are dropped:
// the link meets them again. `decide_lto`, when given, sets options.lto on that thread once NVRTC is
// loaded (it may load the tools that decide it, which then does not hold up the caller).
void prefetch_cuda(std::vector<NvrtcSource> sources, NvrtcOptions options, std::function<bool()> decide_lto = nullptr);

// How many compiles this process started (cache hits and waits not counted).
long nvrtc_compile_count();

// NVRTC's version and the architectures it supports (75, 80, ... ); throws NvrtcError if unavailable.
std::pair<int, int> nvrtc_version();
std::vector<int> nvrtc_supported_archs();

}  // namespace cujit::link
