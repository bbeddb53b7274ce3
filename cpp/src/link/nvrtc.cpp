// NVRTC through dlopen (see cujit/nvrtc.h): options, the in-process cache of
// compiled sources, and errors that carry NVRTC's log.
#include "cujit/nvrtc.h"

#include <mutex>
#include <unordered_map>

#include "cujit/toolkit.h"
#include "tool_log.h"

namespace cujit::link {
namespace {

using Program = void*;
using Result = int;

struct Api {
  Result (*create)(Program*, const char*, const char*, int, const char* const*, const char* const*) = nullptr;
  Result (*compile)(Program, int, const char* const*) = nullptr;
  Result (*destroy)(Program*) = nullptr;
  Result (*log_size)(Program, size_t*) = nullptr;
  Result (*log)(Program, char*) = nullptr;
  Result (*ptx_size)(Program, size_t*) = nullptr;
  Result (*ptx)(Program, char*) = nullptr;
  Result (*ltoir_size)(Program, size_t*) = nullptr;
  Result (*ltoir)(Program, char*) = nullptr;
  const char* (*error_string)(Result) = nullptr;
  Result (*version)(int*, int*) = nullptr;
  Result (*num_archs)(int*) = nullptr;
  Result (*archs)(int*) = nullptr;
  std::string reason;  // why it is unusable; empty when usable
};

const Api& api() {
  static const Api* loaded = [] {
    auto* a = new Api;  // leaked: may be used during interpreter shutdown
    const toolkit::Located& lib = toolkit::library(toolkit::Library::Nvrtc);
    if (lib.handle == nullptr) {
      a->reason = lib.reason;
      return a;
    }
    bool ok = true;
    auto get = [&](auto& slot, const char* name) {
      slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(toolkit::symbol(lib, {name}));
      if (slot == nullptr && ok) {
        ok = false;
        a->reason = "NVRTC at " + lib.path + " lacks " + name + "; it is too old";
      }
    };
    get(a->create, "nvrtcCreateProgram");
    get(a->compile, "nvrtcCompileProgram");
    get(a->destroy, "nvrtcDestroyProgram");
    get(a->log_size, "nvrtcGetProgramLogSize");
    get(a->log, "nvrtcGetProgramLog");
    get(a->ptx_size, "nvrtcGetPTXSize");
    get(a->ptx, "nvrtcGetPTX");
    get(a->ltoir_size, "nvrtcGetLTOIRSize");
    get(a->ltoir, "nvrtcGetLTOIR");
    get(a->error_string, "nvrtcGetErrorString");
    get(a->version, "nvrtcVersion");
    get(a->num_archs, "nvrtcGetNumSupportedArchs");
    get(a->archs, "nvrtcGetSupportedArchs");
    return a;
  }();
  return *loaded;
}

const Api& usable_api() {
  const Api& a = api();
  if (!a.reason.empty()) throw NvrtcError("cannot compile CUDA C++: " + a.reason, true);
  return a;
}

std::string describe(const Api& a, Result r) { return describe_result(a.error_string, r, "NVRTC_ERROR"); }

std::string program_log(const Api& a, Program p) { return read_tool_log(p, a.log_size, a.log); }

struct ProgramGuard {
  const Api& a;
  Program p = nullptr;
  ~ProgramGuard() {
    if (p != nullptr) a.destroy(&p);
  }
};

// NVRTC's log without what the automatic PCH says of itself (a PCH made with
// other options or includes was not reused): those are not the source's warnings.
std::string without_pch_notes(const std::string& log) {
  std::string kept, paragraph;
  size_t start = 0;
  bool skipping = false;
  while (start < log.size()) {
    size_t end = log.find('\n', start);
    if (end == std::string::npos) end = log.size();
    std::string line = log.substr(start, end - start);
    start = end + 1;
    if (line.find("precompiled header") != std::string::npos) {
      skipping = true;  // the note and its "Remark: ... -diag-suppress" line
      continue;
    }
    if (skipping && (line.empty() || line.rfind("Remark:", 0) == 0)) continue;
    skipping = false;
    kept += line + "\n";
  }
  while (!kept.empty() && kept.back() == '\n') kept.pop_back();
  return kept;
}

bool supports_pch(const Api& a) {
  static const bool yes = [&] {
    int major = 0, minor = 0;
    a.version(&major, &minor);
    return major > 12 || (major == 12 && minor >= 8);
  }();
  return yes;
}

std::mutex g_cache_mutex;
std::unordered_map<std::string, NvrtcOutput>& cache() {
  static auto* c = new std::unordered_map<std::string, NvrtcOutput>;
  return *c;
}

}  // namespace

std::vector<std::string> nvrtc_option_list(const NvrtcOptions& o) {
  std::vector<std::string> opts{"-arch=" + o.arch, "-rdc=true"};
  if (o.lto) opts.push_back("-dlto");
  if (o.debug) opts.push_back("-G");
  if (o.lineinfo) opts.push_back("-lineinfo");
  for (const auto& d : o.include_dirs) opts.push_back("-I" + d);
  return opts;
}

NvrtcOutput compile_cuda(const std::string& source, const std::string& name, const NvrtcOptions& options) {
  std::vector<std::string> opts = nvrtc_option_list(options);
  std::string key = source;
  for (const auto& o : opts) key += '\0' + o;
  {
    std::lock_guard<std::mutex> lock(g_cache_mutex);
    auto it = cache().find(key);
    if (it != cache().end()) {
      NvrtcOutput out = it->second;
      out.cached = true;
      return out;
    }
  }
  const Api& a = usable_api();
  ProgramGuard guard{a};
  Result r = a.create(&guard.p, source.c_str(), name.c_str(), 0, nullptr, nullptr);
  if (r != 0) throw NvrtcError(describe(a, r) + " creating the NVRTC program for \"" + name + "\"");
  // Automatic precompiled headers (NVRTC >= 12.8): the implicit CUDA headers are parsed once per process and
  // reused, which takes a small source from ~20 ms to ~8 ms; it changes nothing in the output.
  if (supports_pch(a)) {
    opts.push_back("-pch");
    opts.push_back("-pch-messages=false");  // its notes are not the source's warnings
  }
  std::vector<const char*> argv;
  for (const auto& o : opts) argv.push_back(o.c_str());
  r = a.compile(guard.p, static_cast<int>(argv.size()), argv.data());
  NvrtcOutput out;
  out.log = without_pch_notes(program_log(a, guard.p));
  out.options = opts;
  if (r != 0) {
    std::string message = describe(a, r) + ", compilation log:\n\n" + out.log;
    if (out.log.find("in the compilation of") == std::string::npos)
      message += "\n(in the compilation of \"" + name + "\")";
    throw NvrtcError(message);
  }
  size_t size = 0;
  out.ltoir = options.lto;
  r = options.lto ? a.ltoir_size(guard.p, &size) : a.ptx_size(guard.p, &size);
  if (r != 0) throw NvrtcError(describe(a, r) + " reading the output of \"" + name + "\"");
  out.code.resize(size);
  r = options.lto ? a.ltoir(guard.p, out.code.data()) : a.ptx(guard.p, out.code.data());
  if (r != 0) throw NvrtcError(describe(a, r) + " reading the output of \"" + name + "\"");
  if (!options.lto)
    while (!out.code.empty() && out.code.back() == '\0') out.code.pop_back();
  std::lock_guard<std::mutex> lock(g_cache_mutex);
  cache().emplace(std::move(key), out);
  return out;
}

std::pair<int, int> nvrtc_version() {
  const Api& a = usable_api();
  int major = 0, minor = 0;
  a.version(&major, &minor);
  return {major, minor};
}

std::vector<int> nvrtc_supported_archs() {
  const Api& a = usable_api();
  int n = 0;
  if (a.num_archs(&n) != 0 || n <= 0) return {};
  std::vector<int> archs(static_cast<size_t>(n));
  if (a.archs(archs.data()) != 0) return {};
  return archs;
}

}  // namespace cujit::link
