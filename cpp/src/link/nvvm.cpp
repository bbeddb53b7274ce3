// libNVVM through dlopen (see cujit/nvvm.h).
#include "cujit/nvvm.h"

#include <type_traits>

#include "cujit/toolkit.h"
#include "tool_support.h"

namespace cujit::link {
namespace {

using Program = void*;
using Result = int;

struct Api {
  Result (*create)(Program*) = nullptr;
  Result (*destroy)(Program*) = nullptr;
  Result (*add_module)(Program, const char*, size_t, const char*) = nullptr;
  Result (*compile)(Program, int, const char**) = nullptr;
  Result (*result_size)(Program, size_t*) = nullptr;
  Result (*result)(Program, char*) = nullptr;
  Result (*log_size)(Program, size_t*) = nullptr;
  Result (*log)(Program, char*) = nullptr;
  const char* (*error_string)(Result) = nullptr;
  Result (*ir_version)(int*, int*, int*, int*) = nullptr;
  std::string reason;
};

const Api& api() {
  static const Api* loaded = [] {
    auto* a = new Api;  // leaked: may be used during interpreter shutdown
    const toolkit::Located& lib = toolkit::library(toolkit::Library::Nvvm);
    if (lib.handle == nullptr) {
      a->reason = lib.reason;
      return a;
    }
    auto get = [&](auto& slot, const char* name) { resolve_symbol(lib, slot, name, "libNVVM", a->reason); };
    get(a->create, "nvvmCreateProgram");
    get(a->destroy, "nvvmDestroyProgram");
    get(a->add_module, "nvvmAddModuleToProgram");
    get(a->compile, "nvvmCompileProgram");
    get(a->result_size, "nvvmGetCompiledResultSize");
    get(a->result, "nvvmGetCompiledResult");
    get(a->log_size, "nvvmGetProgramLogSize");
    get(a->log, "nvvmGetProgramLog");
    get(a->error_string, "nvvmGetErrorString");
    get(a->ir_version, "nvvmIRVersion");
    return a;
  }();
  return *loaded;
}

const Api& usable_api() {
  const Api& a = api();
  if (!a.reason.empty()) throw NvvmError("cannot generate LTO-IR: " + a.reason);
  return a;
}

std::string describe(const Api& a, Result r) { return describe_result(a.error_string, r, "NVVM_ERROR"); }

std::string program_log(const Api& a, Program p) { return read_tool_log(p, a.log_size, a.log); }

}  // namespace

NvvmOutput nvvm_compile(const std::string& ir, const std::string& name, const std::vector<std::string>& options) {
  const Api& a = usable_api();
  HandleGuard<Program> guard{a.destroy};
  Result r = a.create(&guard.handle);
  if (r != 0) throw NvvmError("libNVVM: " + describe(a, r) + " creating a program");
  r = a.add_module(guard.handle, ir.data(), ir.size(), name.c_str());
  if (r != 0) throw NvvmError("libNVVM: " + describe(a, r) + " adding " + name + ":\n" + program_log(a, guard.handle));
  std::vector<const char*> argv;
  for (const auto& o : options) argv.push_back(o.c_str());
  r = a.compile(guard.handle, static_cast<int>(argv.size()), argv.data());
  NvvmOutput out;
  out.log = program_log(a, guard.handle);
  if (r != 0) throw NvvmError("libNVVM: " + describe(a, r) + " compiling " + name + ":\n" + out.log);
  size_t size = 0;
  if ((r = a.result_size(guard.handle, &size)) != 0) throw NvvmError("libNVVM: " + describe(a, r));
  out.code.resize(size);
  if ((r = a.result(guard.handle, out.code.data())) != 0) throw NvvmError("libNVVM: " + describe(a, r));
  return out;
}

std::vector<int> nvvm_ir_version() {
  const Api& a = usable_api();
  int v[4] = {};
  a.ir_version(&v[0], &v[1], &v[2], &v[3]);
  return {v[0], v[1], v[2], v[3]};
}

}  // namespace cujit::link
