// NVRTC through dlopen (see cujit/nvrtc.h): options, the in-process cache of
// compiled sources, and errors that carry NVRTC's log.
#include "cujit/nvrtc.h"

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "cujit/background.h"
#include "cujit/telemetry.h"
#include "cujit/toolkit.h"
#include "tool_support.h"

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
    auto get = [&](auto& slot, const char* name) { resolve_symbol(lib, slot, name, "NVRTC", a->reason); };
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

// NVRTC >= 12.4 has -minimal: the implicit CUDA runtime declarations (texture
// and surface types, device-side runtime calls and launches, cudaError_t and
// friends) are left out, which takes a small source from ~20 ms to ~7 ms.
bool supports_minimal(const Api& a) {
  static const bool yes = [&] {
    int major = 0, minor = 0;
    a.version(&major, &minor);
    return major > 12 || (major == 12 && minor >= 4);
  }();
  return yes;
}

// Creates and compiles one program into `guard`; fills the log and options of `out`.
Result run_program(const Api& a, const std::string& source, const std::string& name,
                   const std::vector<std::string>& opts, HandleGuard<Program>& guard, NvrtcOutput& out) {
  Result r = a.create(&guard.handle, source.c_str(), name.c_str(), 0, nullptr, nullptr);
  if (r != 0) throw NvrtcError(describe(a, r) + " creating the NVRTC program for \"" + name + "\"");
  std::vector<const char*> argv;
  for (const auto& o : opts) argv.push_back(o.c_str());
  {
    telemetry::ScopedStage timed(telemetry::Stage::Nvrtc);
    r = a.compile(guard.handle, static_cast<int>(argv.size()), argv.data());
  }
  out.log = program_log(a, guard.handle);
  out.options = opts;
  return r;
}

// One compile per (source, options): the first caller compiles, callers that come while it runs wait for it
// (a prefetch started at declaration and the link that needs it, or two threads' first calls). A failed
// compile is not kept, so the next caller sees the error again. `reported`: a caller that reports NVRTC's
// log (a link) has had it; a prefetch leaves it for the first link.
struct Entry {
  std::shared_future<NvrtcOutput> result;
  std::shared_ptr<std::atomic<bool>> reported;
};

std::mutex g_cache_mutex;
std::atomic<long> g_compiles{0};
std::unordered_map<std::string, Entry>& cache() {
  static auto* c = new std::unordered_map<std::string, Entry>;
  return *c;
}

// fork() (see cujit/background.h) waits for the prefetches, then holds the cache's mutex so that the child's
// copy is not locked by a thread it does not have. A child forked while a thread of the user's compiles has
// that compile's cache entry but not the thread that would complete it: there the unfinished entries are
// dropped (the child compiles again).
void install_fork_hooks() {
  static std::once_flag once;
  std::call_once(once, [] {
    background::add_fork_hooks([] { g_cache_mutex.lock(); }, [] { g_cache_mutex.unlock(); },
                               [] {
                                 for (auto it = cache().begin(); it != cache().end();) {
                                   if (it->second.result.wait_for(std::chrono::seconds(0)) != std::future_status::ready)
                                     it = cache().erase(it);
                                   else
                                     ++it;
                                 }
                                 g_cache_mutex.unlock();
                               });
  });
}

NvrtcOutput run_compile(const Api& a, const std::string& source, const std::string& name,
                        const std::vector<std::string>& opts, bool lto) {
  // A source that compiles without the runtime declarations compiles the same with them (they only declare
  // names), so -minimal is tried first and the full compile is the answer whenever it fails.
  HandleGuard<Program> guard{a.destroy};
  NvrtcOutput out;
  Result r = 1;
  if (supports_minimal(a)) {
    std::vector<std::string> minimal = opts;
    minimal.push_back("-minimal");
    r = run_program(a, source, name, minimal, guard, out);
    if (r != 0) guard.reset();
  }
  if (r != 0) r = run_program(a, source, name, opts, guard, out);
  if (r != 0) {
    std::string message = describe(a, r) + ", compilation log:\n\n" + out.log;
    if (out.log.find("in the compilation of") == std::string::npos)
      message += "\n(in the compilation of \"" + name + "\")";
    throw NvrtcError(message);
  }
  size_t size = 0;
  out.ltoir = lto;
  r = lto ? a.ltoir_size(guard.handle, &size) : a.ptx_size(guard.handle, &size);
  if (r != 0) throw NvrtcError(describe(a, r) + " reading the output of \"" + name + "\"");
  out.code.resize(size);
  r = lto ? a.ltoir(guard.handle, out.code.data()) : a.ptx(guard.handle, out.code.data());
  if (r != 0) throw NvrtcError(describe(a, r) + " reading the output of \"" + name + "\"");
  if (!lto)
    while (!out.code.empty() && out.code.back() == '\0') out.code.pop_back();
  return out;
}

}  // namespace

// The virtual architecture (compute_90a for sm_90a): NVRTC's PTX or LTO-IR is all cujit reads, and a real
// one would also have NVRTC assemble a cubin that nobody uses (a third of a small source's compile).
std::vector<std::string> nvrtc_option_list(const NvrtcOptions& o) {
  std::string arch = o.arch.rfind("sm_", 0) == 0 ? "compute_" + o.arch.substr(3) : o.arch;
  std::vector<std::string> opts{"-arch=" + arch, "-rdc=true"};
  if (o.lto) opts.push_back("-dlto");
  if (o.debug) opts.push_back("-G");
  if (o.lineinfo) opts.push_back("-lineinfo");
  for (const auto& d : o.include_dirs) opts.push_back("-I" + d);
  return opts;
}

NvrtcOutput compile_cuda(const std::string& source, const std::string& name, const NvrtcOptions& options, bool report) {
  std::vector<std::string> opts = nvrtc_option_list(options);
  std::string key = source;
  for (const auto& o : opts) key += '\0' + o;
  std::promise<NvrtcOutput> promise;
  Entry entry;
  bool mine = false;
  install_fork_hooks();
  {
    std::lock_guard<std::mutex> lock(g_cache_mutex);
    auto it = cache().find(key);
    if (it != cache().end()) {
      entry = it->second;
    } else {
      entry = {promise.get_future().share(), std::make_shared<std::atomic<bool>>(report)};
      cache().emplace(key, entry);
      mine = true;
    }
  }
  if (!mine) {
    NvrtcOutput out = entry.result.get();  // rethrows the error of a compile that failed meanwhile
    out.cached = !report || entry.reported->exchange(true);
    return out;
  }
  try {
    ++g_compiles;
    NvrtcOutput out = run_compile(usable_api(), source, name, opts, options.lto);
    promise.set_value(out);
    out.cached = !report;
    return out;
  } catch (...) {
    {
      std::lock_guard<std::mutex> lock(g_cache_mutex);
      cache().erase(key);
    }
    promise.set_exception(std::current_exception());
    throw;
  }
}

void prefetch_cuda(std::vector<NvrtcSource> sources, NvrtcOptions options, std::function<bool()> decide_lto) {
  if (sources.empty()) return;
  install_fork_hooks();
  // (no thread to be had: the link compiles the sources when it needs them)
  background::start(
      [sources = std::move(sources), options = std::move(options), decide_lto = std::move(decide_lto)]() mutable {
        if (decide_lto) {
          if (!api().reason.empty()) return;  // no NVRTC: the link says so
          options.lto = decide_lto();
        }
        for (const auto& s : sources) {
          try {
            compile_cuda(s.source, s.name, options, /*report=*/false);
          } catch (...) {  // the link compiles it again and reports the error there
          }
        }
      });
}

long nvrtc_compile_count() { return g_compiles.load(); }

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
