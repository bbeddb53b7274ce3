// Internal to link/: reading a CUDA tool's log (NVRTC, libNVVM, nvJitLink all
// give a size, then the text) and naming its result codes.
#pragma once

#include <cstddef>
#include <string>

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

}  // namespace cujit::link
