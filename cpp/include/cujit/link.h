// Linking with nvJitLink, loaded with dlopen on first use: a kernel's PTX or
// LTO-IR and its link inputs (PTX, cubin, fatbin, host objects, static
// libraries, LTO-IR), each with a name for the logs, linked for one exact
// architecture into a cubin (or, for inspection of an LTO link, into PTX).
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "cujit/link_input.h"

namespace cujit::link {

struct LinkOptions {
  std::string arch;        // "sm_90a", "sm_80": passed as -arch=
  int max_registers = 0;   // > 0: -maxrregcount=N
  bool lineinfo = false;   // -lineinfo
  bool debug = false;      // -g
  bool ptx_output = false; // -ptx: link LTO-IR to PTX instead of a cubin
  std::vector<std::string> extra;  // passed through verbatim
};

struct LinkResult {
  std::string image;     // the cubin (or PTX text with ptx_output)
  std::string info_log;  // nvJitLink's info log, possibly empty
  std::vector<std::string> options;  // what was passed to nvJitLinkCreate
};

class LinkError : public std::runtime_error {
 public:
  enum class Kind { Unavailable, Failed, BadInput };
  LinkError(Kind kind, const std::string& message, int code = 0)
      : std::runtime_error(message), kind_(kind), code_(code) {}
  Kind kind() const { return kind_; }
  int code() const { return code_; }  // the nvJitLinkResult when Failed

 private:
  Kind kind_;
  int code_;
};

struct LinkerStatus {
  bool available = false;
  std::string path;    // the library that was loaded
  std::string reason;  // when not available: which library, every place looked, what the loader said
  unsigned major = 0, minor = 0;
};

// Found through the toolkit locator (cujit/toolkit.h).
// Loads nvJitLink on first call; never throws.
const LinkerStatus& nvjitlink_status();

// Whether a kernel can link with link-time optimisation: nvJitLink and libNVVM are found (this loads them).
bool lto_available();

// Whether a kernel links with LTO: `lto` when given; unset (jit's lto=None), when one of its inputs is CUDA
// C++ or LTO-IR, it is not built for debugging and lto_available(). The one rule the dispatcher and the
// NVRTC prefetch follow.
bool resolve_lto(std::optional<bool> lto, bool debug, const std::vector<InputKind>& kinds);

// The options for `inputs`: -lto iff any LTO-IR input (docs/linking.md: Link-time optimisation).
std::vector<std::string> link_options(const std::vector<LinkInput>& inputs, const LinkOptions& options);

// Throws LinkError: Unavailable (library missing, the message says where it
// was looked for), BadInput (no arch, no inputs), Failed (message is
// "ERROR_X (n)\nnvJitLink error log: ..." as numba-cuda reports it).
LinkResult link(const std::vector<LinkInput>& inputs, const LinkOptions& options);

}  // namespace cujit::link

namespace cujit::link {

// Everything one kernel links: its own code (PTX, or LTO-IR when compiled
// with lto), the inputs its calls collected, deduplicated, in first-reached
// order, and the options. `.cu` inputs go through NVRTC first (LTO-IR when
// `lto`), then everything goes to nvJitLink.
struct ProgramLink {
  LinkInput own;
  std::vector<std::shared_ptr<LinkInput>> inputs;
  std::string arch;  // "sm_90a"
  bool lto = false;
  bool debug = false, lineinfo = false;
  int max_registers = 0;
  std::vector<std::string> include_dirs;  // for NVRTC
  std::string entry;  // the kernel symbol the cubin must define
  // Declared external functions the code calls: symbol -> how to name the
  // declaration in an error ("cuda.declare_device('mul', ...) at f.py:3").
  std::vector<std::pair<std::string, std::string>> externs;
  // Link to PTX instead of a cubin (nvJitLink -ptx, an LTO link's optimised PTX: inspect_lto_ptx); inputs that are
  // not LTO-IR are left out, as numba-cuda's does, and `entry` is not checked.
  bool ptx_output = false;
};

struct ProgramLinkResult {
  std::string cubin;
  std::string info_log;
  std::vector<std::string> options;
  // NVRTC logs of sources compiled now (not cached): (name, log) for warnings.
  std::vector<std::pair<std::string, std::string>> nvrtc_logs;
};

// Throws LinkError (an undefined symbol is named with the declaration that
// needs it; an LTO-IR input in a link without -lto says to pass lto=True;
// a cubin without `entry` is an error) or NvrtcError.
ProgramLinkResult link_program(const ProgramLink& program);

// Whether an ELF cubin defines (or names) `symbol`.
bool cubin_has_symbol(const std::string& cubin, const std::string& symbol);

}  // namespace cujit::link
