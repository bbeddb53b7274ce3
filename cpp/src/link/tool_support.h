// Internal to link/: what NVRTC, libNVVM and nvJitLink wrappers share: their
// symbols looked up in the library the toolkit locator opened, a handle
// destroyed however the work ends, the log (a size, then the text) and the
// names of result codes.
#pragma once

#include <cstddef>
#include <string>
#include <type_traits>

#include "cujit/toolkit.h"

namespace cujit::link {

// The log through `size(handle, &n)` and `get(handle, buffer)`, trailing NULs and newlines dropped; "" on failure.
template <typename Handle, typename SizeFn, typename GetFn>
std::string read_tool_log(Handle handle, SizeFn size, GetFn get) {
  std::size_t n = 0;
  if (size(handle, &n) != 0 || n <= 1) return {};
  std::string log(n, '\0');
  if (get(handle, log.data()) != 0) return {};
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  return log;
}

// "NAME (code)" from the tool's own error-string function.
template <typename ErrorStringFn>
std::string describe_result(ErrorStringFn error_string, int result, const char* fallback) {
  const char* s = error_string(result);
  return std::string(s ? s : fallback) + " (" + std::to_string(result) + ")";
}

// Points `slot` at `name` in `lib`; the first symbol missing is recorded in `reason`.
template <typename Fn>
void resolve_symbol(const toolkit::Located& lib, Fn& slot, const char* name, const char* tool, std::string& reason) {
  slot = reinterpret_cast<Fn>(toolkit::symbol(lib, {name}));
  if (slot == nullptr && reason.empty())
    reason = std::string(tool) + " at " + lib.path + " lacks " + name + "; it is too old";
}

// A program or linker handle of a tool, destroyed with `destroy` when the guard goes.
template <typename Handle>
struct HandleGuard {
  int (*destroy)(Handle*);
  Handle handle = nullptr;
  ~HandleGuard() { reset(); }
  void reset() {
    if (handle != nullptr) destroy(&handle);
    handle = nullptr;
  }
};

}  // namespace cujit::link
