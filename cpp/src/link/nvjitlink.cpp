// nvJitLink through dlopen (the library found by the toolkit locator): its
// versioned symbols, the link itself, and errors that carry nvJitLink's log
// the way numba-cuda shows it.
#include <algorithm>
#include <cstdint>

#include "cujit/link.h"
#include "cujit/telemetry.h"
#include "cujit/toolkit.h"
#include "tool_support.h"

namespace cujit::link {
namespace {

using Handle = void*;
using Result = int;

struct Api {
  Result (*create)(Handle*, std::uint32_t, const char**) = nullptr;
  Result (*destroy)(Handle*) = nullptr;
  Result (*add_data)(Handle, int, const void*, std::size_t, const char*) = nullptr;
  Result (*complete)(Handle) = nullptr;
  Result (*cubin_size)(Handle, std::size_t*) = nullptr;
  Result (*cubin)(Handle, void*) = nullptr;
  Result (*ptx_size)(Handle, std::size_t*) = nullptr;
  Result (*ptx)(Handle, char*) = nullptr;
  Result (*error_log_size)(Handle, std::size_t*) = nullptr;
  Result (*error_log)(Handle, char*) = nullptr;
  Result (*info_log_size)(Handle, std::size_t*) = nullptr;
  Result (*info_log)(Handle, char*) = nullptr;
  Result (*version)(unsigned*, unsigned*) = nullptr;  // nvJitLink >= 12.3
};

struct Loaded {
  Api api;
  LinkerStatus status;
};

// nvJitLinkResult names as cuda.bindings spells them (without NVJITLINK_).
std::string result_name(Result r) {
  static const char* names[] = {"SUCCESS",
                                "ERROR_UNRECOGNIZED_OPTION",
                                "ERROR_MISSING_ARCH",
                                "ERROR_INVALID_INPUT",
                                "ERROR_PTX_COMPILE",
                                "ERROR_NVVM_COMPILE",
                                "ERROR_INTERNAL",
                                "ERROR_THREADPOOL",
                                "ERROR_UNRECOGNIZED_INPUT",
                                "ERROR_FINALIZE",
                                "ERROR_NULL_INPUT",
                                "ERROR_INCOMPATIBLE_OPTIONS",
                                "ERROR_INCORRECT_INPUT_TYPE",
                                "ERROR_ARCH_MISMATCH",
                                "ERROR_OUTDATED_LIBRARY",
                                "ERROR_MISSING_FATBIN",
                                "ERROR_UNRECOGNIZED_ARCH",
                                "ERROR_UNSUPPORTED_ARCH",
                                "ERROR_LTO_NOT_ENABLED"};
  if (r >= 0 && r < static_cast<Result>(sizeof names / sizeof names[0])) return names[r];
  return "ERROR_" + std::to_string(r);
}

// nvJitLinkInputType values.
int input_type(InputKind kind) {
  switch (kind) {
    case InputKind::Cubin:
      return 1;
    case InputKind::Ptx:
      return 2;
    case InputKind::LtoIr:
      return 3;
    case InputKind::Fatbin:
      return 4;
    case InputKind::Object:
      return 5;
    case InputKind::Library:
      return 6;
    case InputKind::Cu:
      break;  // compiled by NVRTC before the link
  }
  return 0;
}

// nvJitLink 13 exports only versioned symbols (__nvJitLinkCreate_13_0); 12.x the plain names.
template <typename Fn>
bool resolve(const toolkit::Located& lib, Fn& slot, const char* name) {
  std::string versioned = std::string("__") + name + "_13_0";
  slot = reinterpret_cast<Fn>(toolkit::symbol(lib, {versioned.c_str(), name}));
  return slot != nullptr;
}

bool resolve_all(const toolkit::Located& lib, Api& a, std::string& missing) {
  struct {
    bool ok;
    const char* name;
  } required[] = {
      {resolve(lib, a.create, "nvJitLinkCreate"), "nvJitLinkCreate"},
      {resolve(lib, a.destroy, "nvJitLinkDestroy"), "nvJitLinkDestroy"},
      {resolve(lib, a.add_data, "nvJitLinkAddData"), "nvJitLinkAddData"},
      {resolve(lib, a.complete, "nvJitLinkComplete"), "nvJitLinkComplete"},
      {resolve(lib, a.cubin_size, "nvJitLinkGetLinkedCubinSize"), "nvJitLinkGetLinkedCubinSize"},
      {resolve(lib, a.cubin, "nvJitLinkGetLinkedCubin"), "nvJitLinkGetLinkedCubin"},
      {resolve(lib, a.ptx_size, "nvJitLinkGetLinkedPtxSize"), "nvJitLinkGetLinkedPtxSize"},
      {resolve(lib, a.ptx, "nvJitLinkGetLinkedPtx"), "nvJitLinkGetLinkedPtx"},
      {resolve(lib, a.error_log_size, "nvJitLinkGetErrorLogSize"), "nvJitLinkGetErrorLogSize"},
      {resolve(lib, a.error_log, "nvJitLinkGetErrorLog"), "nvJitLinkGetErrorLog"},
      {resolve(lib, a.info_log_size, "nvJitLinkGetInfoLogSize"), "nvJitLinkGetInfoLogSize"},
      {resolve(lib, a.info_log, "nvJitLinkGetInfoLog"), "nvJitLinkGetInfoLog"},
  };
  for (auto& r : required) {
    if (!r.ok) {
      missing = r.name;
      return false;
    }
  }
  resolve(lib, a.version, "nvJitLinkVersion");
  return true;
}

Loaded& loaded() {
  static Loaded* state = [] {
    auto* s = new Loaded;  // leaked: links may run during interpreter shutdown
    const toolkit::Located& lib = toolkit::library(toolkit::Library::NvJitLink);
    if (lib.handle == nullptr) {
      s->status.reason = lib.reason;
      return s;
    }
    s->status.path = lib.path;
    std::string missing;
    if (!resolve_all(lib, s->api, missing)) {
      s->status.reason = "the nvJitLink library " + lib.path + " lacks " + missing + "; it is too old";
      return s;
    }
    if (s->api.version) s->api.version(&s->status.major, &s->status.minor);
    s->status.available = true;
    return s;
  }();
  return *state;
}

std::string read_log(const Api& a, Handle h, bool error_log) {
  return error_log ? read_tool_log(h, a.error_log_size, a.error_log) : read_tool_log(h, a.info_log_size, a.info_log);
}

[[noreturn]] void link_failed(const Api& a, Handle h, Result r, const std::string& during) {
  std::string message = result_name(r) + " (" + std::to_string(r) + ")\nnvJitLink error log: " + read_log(a, h, true);
  if (!during.empty()) message += "\n(" + during + ")";
  throw LinkError(LinkError::Kind::Failed, message, r);
}

}  // namespace

const char* input_kind_name(InputKind kind) {
  switch (kind) {
    case InputKind::Ptx:
      return "ptx";
    case InputKind::Cubin:
      return "cubin";
    case InputKind::Fatbin:
      return "fatbin";
    case InputKind::Object:
      return "object";
    case InputKind::Library:
      return "library";
    case InputKind::LtoIr:
      return "ltoir";
    case InputKind::Cu:
      return "cu";
  }
  return "?";
}

bool parse_input_kind(const std::string& name, InputKind& out) {
  for (InputKind k : {InputKind::Ptx, InputKind::Cubin, InputKind::Fatbin, InputKind::Object, InputKind::Library,
                      InputKind::LtoIr, InputKind::Cu}) {
    if (name == input_kind_name(k)) {
      out = k;
      return true;
    }
  }
  return false;
}

const LinkerStatus& nvjitlink_status() { return loaded().status; }

bool resolve_lto(std::optional<bool> lto, bool debug, const std::vector<InputKind>& kinds) {
  if (lto) return *lto;
  if (debug) return false;
  bool wants =
      std::any_of(kinds.begin(), kinds.end(), [](InputKind k) { return k == InputKind::Cu || k == InputKind::LtoIr; });
  return wants && lto_available();
}

bool lto_available() {
  return toolkit::library(toolkit::Library::NvJitLink).handle != nullptr &&
         toolkit::library(toolkit::Library::Nvvm).handle != nullptr;
}

std::vector<std::string> link_options(const std::vector<LinkInput>& inputs, const LinkOptions& options) {
  std::vector<std::string> opts{"-arch=" + options.arch};
  if (options.max_registers > 0) opts.push_back("-maxrregcount=" + std::to_string(options.max_registers));
  if (options.lineinfo) opts.push_back("-lineinfo");
  if (options.debug) opts.push_back("-g");
  for (const auto& in : inputs) {
    if (in.kind == InputKind::LtoIr) {
      opts.push_back("-lto");
      break;
    }
  }
  if (options.ptx_output) opts.push_back("-ptx");
  for (const auto& e : options.extra) opts.push_back(e);
  return opts;
}

LinkResult link(const std::vector<LinkInput>& inputs, const LinkOptions& options) {
  if (options.arch.empty()) throw LinkError(LinkError::Kind::BadInput, "no architecture to link for (arch=sm_XX)");
  if (inputs.empty()) throw LinkError(LinkError::Kind::BadInput, "nothing to link: no inputs");
  Loaded& l = loaded();
  if (!l.status.available) throw LinkError(LinkError::Kind::Unavailable, "cannot link: " + l.status.reason);
  const Api& a = l.api;

  LinkResult result;
  result.options = link_options(inputs, options);
  std::vector<const char*> argv;
  for (const auto& o : result.options) argv.push_back(o.c_str());

  HandleGuard<Handle> guard{a.destroy};
  Result r = a.create(&guard.handle, static_cast<std::uint32_t>(argv.size()), argv.data());
  if (r != 0) {
    // The handle may exist and hold a log (an unrecognised option, say).
    link_failed(
        a, guard.handle, r, "nvJitLinkCreate with options:" + [&] {
          std::string s;
          for (const auto& o : result.options) s += " " + o;
          return s;
        }());
  }
  for (const auto& in : inputs) {
    if (in.data.empty())
      throw LinkError(LinkError::Kind::BadInput,
                      std::string("link input '") + in.name + "' (" + input_kind_name(in.kind) + ") is empty");
    const std::string* data = &in.data;
    std::string terminated;
    if (in.kind == InputKind::Ptx && in.data.back() != '\0') {
      terminated = in.data + '\0';
      data = &terminated;
    }
    r = a.add_data(guard.handle, input_type(in.kind), data->data(), data->size(), in.name.c_str());
    if (r != 0)
      link_failed(a, guard.handle, r, std::string("adding ") + input_kind_name(in.kind) + " input '" + in.name + "'");
  }
  {
    telemetry::ScopedStage timed(telemetry::Stage::NvJitLink);
    r = a.complete(guard.handle);
  }
  if (r != 0) link_failed(a, guard.handle, r, "");
  result.info_log = read_log(a, guard.handle, false);

  std::size_t size = 0;
  if (options.ptx_output) {
    r = a.ptx_size(guard.handle, &size);
    if (r != 0) link_failed(a, guard.handle, r, "nvJitLinkGetLinkedPtxSize");
    result.image.resize(size);
    r = a.ptx(guard.handle, result.image.data());
    if (r != 0) link_failed(a, guard.handle, r, "nvJitLinkGetLinkedPtx");
    while (!result.image.empty() && result.image.back() == '\0') result.image.pop_back();
  } else {
    r = a.cubin_size(guard.handle, &size);
    if (r != 0) link_failed(a, guard.handle, r, "nvJitLinkGetLinkedCubinSize");
    result.image.resize(size);
    r = a.cubin(guard.handle, result.image.data());
    if (r != 0) link_failed(a, guard.handle, r, "nvJitLinkGetLinkedCubin");
  }
  return result;
}

}  // namespace cujit::link
