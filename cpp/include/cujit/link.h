// Linking with nvJitLink, loaded with dlopen on first use: a kernel's PTX or
// LTO-IR and its link inputs (PTX, cubin, fatbin, host objects, static
// libraries, LTO-IR), each with a name for the logs, linked for one exact
// architecture into a cubin (or, for inspection of an LTO link, into PTX).
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace cujit::link {

enum class InputKind { Ptx, Cubin, Fatbin, Object, Library, LtoIr };

// "ptx", "cubin", "fatbin", "object", "library", "ltoir".
const char* input_kind_name(InputKind kind);
bool parse_input_kind(const std::string& name, InputKind& out);

struct LinkInput {
  InputKind kind = InputKind::Ptx;
  std::string data;  // bytes; PTX needs no terminating NUL (one is added)
  std::string name;  // shows in the linker's logs, e.g. "<cudapy-ptx>" or a file name
};

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
  LinkError(Kind kind, const std::string& message, int code = 0) : std::runtime_error(message), kind_(kind), code_(code) {}
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

// CUJIT_NVJITLINK, when set, names the library file and is the only place
// looked. Otherwise: directories searched after $CUDA_HOME/lib64 and /usr/local/cuda/lib64 and
// before the loader's default path (the Python package hands in the lib
// folders of NVIDIA's pip wheels). Only effective before the first load.
void set_search_paths(std::vector<std::string> directories);
std::vector<std::string> search_paths();
// Loads nvJitLink on first call; never throws.
const LinkerStatus& nvjitlink_status();

// The options for `inputs`: -lto iff any LTO-IR input (spec §5.4).
std::vector<std::string> link_options(const std::vector<LinkInput>& inputs, const LinkOptions& options);

// Throws LinkError: Unavailable (library missing, the message says where it
// was looked for), BadInput (no arch, no inputs), Failed (message is
// "ERROR_X (n)\nnvJitLink error log: ..." as numba-cuda reports it).
LinkResult link(const std::vector<LinkInput>& inputs, const LinkOptions& options);

}  // namespace cujit::link
