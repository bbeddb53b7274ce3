// CompileOptions' key: every field that can change what a compile produces, rendered once.
#include <string>

#include "cujit/codegen.h"

namespace cujit::codegen {

std::string CompileOptions::key() const {
  auto flag = [](bool b) { return b ? '1' : '0'; };
  std::string k = "sm_" + std::to_string(cc.major) + std::to_string(cc.minor) + cc.suffix;
  for (bool b : {fastmath, opt, lineinfo, debug, kernel, abi == Abi::C, from_dispatcher, noalias_arrays, forceinline,
                 inline_always})
    k += flag(b);
  auto tri = [](const std::optional<bool>& b) { return b ? (*b ? '1' : '0') : '-'; };
  k += ";" + std::to_string(max_threads) + "," + std::to_string(min_blocks) + "," + std::to_string(max_cluster);
  k += ";lto" + std::string(1, tri(lto)) + ",regs" + std::to_string(max_registers) + ",bounds" + tri(boundscheck);
  return k + ";" + abi_name;
}

}  // namespace cujit::codegen
