// CUDA's vprintf on the CPU target (host_print.h): walks the format's
// conversions, reads each argument from the packed buffer at its natural
// alignment (ints of the length modifier's width, doubles, pointers), formats
// it with snprintf and writes the whole line with one fwrite and a flush, so
// the lines of threads printing at once do not interleave.
#include "host_print.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include <llvm/ExecutionEngine/Orc/LLJIT.h>

namespace cujit::hostgen {
namespace {

// Reads a value of `size` bytes at the next multiple of `size` in the buffer.
template <typename T>
T take(const char*& args, std::uintptr_t& offset) {
  offset = (offset + sizeof(T) - 1) / sizeof(T) * sizeof(T);
  T value;
  std::memcpy(&value, args + offset, sizeof(T));
  offset += sizeof(T);
  return value;
}

// One conversion `spec` (from '%' to its conversion character) with its argument, appended to `out`.
void format_one(std::string& out, const std::string& spec, char conversion, int long_count, const char* args,
                std::uintptr_t& offset) {
  char buffer[512];
  int n = 0;
  switch (conversion) {
    case 'd':
    case 'i':
    case 'u':
    case 'x':
    case 'X':
    case 'o':
    case 'c':
      if (long_count > 0)
        n = std::snprintf(buffer, sizeof buffer, spec.c_str(), take<long long>(args, offset));
      else
        n = std::snprintf(buffer, sizeof buffer, spec.c_str(), take<int>(args, offset));
      break;
    case 'f':
    case 'F':
    case 'e':
    case 'E':
    case 'g':
    case 'G':
    case 'a':
    case 'A':
      n = std::snprintf(buffer, sizeof buffer, spec.c_str(), take<double>(args, offset));
      break;
    case 's': {
      const char* s = take<const char*>(args, offset);
      n = std::snprintf(buffer, sizeof buffer, spec.c_str(), s != nullptr ? s : "(null)");
      break;
    }
    case 'p':
      n = std::snprintf(buffer, sizeof buffer, spec.c_str(), take<void*>(args, offset));
      break;
    default:  // not a conversion CUDA's printf has: printed as written
      out += spec;
      return;
  }
  if (n > 0) out.append(buffer, std::min<std::size_t>(static_cast<std::size_t>(n), sizeof buffer - 1));
}

int host_vprintf(const char* format, const char* args) {
  if (format == nullptr) return -1;
  std::string out;
  std::uintptr_t offset = 0;
  for (const char* p = format; *p != '\0'; ++p) {
    if (*p != '%') {
      out += *p;
      continue;
    }
    if (p[1] == '%') {
      out += '%';
      ++p;
      continue;
    }
    std::string spec = "%";
    const char* q = p + 1;
    while (*q != '\0' && std::strchr("-+ #0123456789.*", *q) != nullptr) spec += *q++;
    int long_count = 0;
    std::string length;
    while (*q != '\0' && std::strchr("hlLqjzt", *q) != nullptr) {
      long_count += *q == 'l' || *q == 'q' || *q == 'j' || *q == 'z' || *q == 't' || *q == 'L';
      length += *q++;
    }
    if (*q == '\0') {
      out += spec + length;
      break;
    }
    const char conversion = *q;
    // Integers print with the width their argument was stored in: ll for 8 bytes, none for 4.
    const bool integer = std::strchr("diuxXoc", conversion) != nullptr;
    if (integer && long_count > 0) spec += "ll";
    spec += conversion;
    format_one(out, spec, conversion, long_count, args, offset);
    p = q;
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  std::fflush(stdout);
  return static_cast<int>(out.size());
}

}  // namespace

llvm::Error add_host_print(llvm::orc::LLJIT& jit) {
  llvm::orc::SymbolMap symbols;
  symbols[jit.mangleAndIntern(kHostPrintFunction)] = {llvm::orc::ExecutorAddr::fromPtr(&host_vprintf),
                                                      llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable};
  return jit.getMainJITDylib().define(llvm::orc::absoluteSymbols(std::move(symbols)));
}

}  // namespace cujit::hostgen
