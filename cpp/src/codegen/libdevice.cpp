// libdevice: found by the toolkit locator (or set by hand), read from disk
// once per process; each compile opens it lazily in its own LLVMContext and
// links only the functions used.
#include <mutex>

#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/Linker/Linker.h>
#include <llvm/Support/MemoryBuffer.h>

#include "cujit/toolkit.h"
#include "target_machine.h"

namespace cujit::codegen {
namespace {

std::mutex g_mutex;
std::string g_path;
std::unique_ptr<llvm::MemoryBuffer> g_bitcode;

const llvm::MemoryBuffer& libdevice_bitcode() {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_bitcode) return *g_bitcode;
  if (g_path.empty()) {  // not set by hand: the toolkit locator's
    std::string reason;
    g_path = toolkit::libdevice_path(&reason);
    if (g_path.empty()) fail(ErrorKind::Runtime, reason);
  }
  auto buf = llvm::MemoryBuffer::getFile(g_path);
  if (!buf) fail(ErrorKind::Runtime, "cannot read libdevice at " + g_path + ": " + buf.getError().message());
  g_bitcode = std::move(*buf);
  return *g_bitcode;
}

}  // namespace

void set_libdevice_path(const std::string& path) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (path != g_path) g_bitcode.reset();
  g_path = path;
}

const std::string& libdevice_path() { return g_path; }

bool needs_libdevice(const llvm::Module& module) {
  for (const llvm::Function& f : module)
    if (f.isDeclaration() && f.getName().starts_with("__nv_")) return true;
  return false;
}

void link_libdevice(llvm::Module& module) {
  const llvm::MemoryBuffer& bitcode = libdevice_bitcode();
  auto lazy = llvm::getLazyBitcodeModule(bitcode.getMemBufferRef(), module.getContext());
  if (!lazy) fail(ErrorKind::Runtime, "cannot parse libdevice at " + g_path + ": " + llvm::toString(lazy.takeError()));
  std::unique_ptr<llvm::Module> lib = std::move(*lazy);
  lib->setTargetTriple(module.getTargetTriple());
  lib->setDataLayout(module.getDataLayout());
  if (llvm::Linker::linkModules(module, std::move(lib), llvm::Linker::LinkOnlyNeeded))
    fail(ErrorKind::Internal, "linking libdevice failed");
}

}  // namespace cujit::codegen
