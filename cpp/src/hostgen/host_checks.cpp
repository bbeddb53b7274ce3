// The CPU target's bounds checks at run time: the recorder that code compiled
// with checks calls on an out-of-bounds array access (it keeps the first of a
// launch in the module's HostIndexError record, with the thread's ids and
// where the array's data lies), and the IndexError message made from the
// record after the launch. The access itself goes to a scratch slot (lowering
// redirects it), so nothing undefined happens before the report.
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <string>

#include <llvm/ExecutionEngine/Orc/AbsoluteSymbols.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>

#include "cujit/host_context.h"
#include "cujit/hostgen.h"
#include "host_checks.h"

namespace cujit::hostgen {
namespace {

using target::HostIndexError;
using target::HostThreadContext;

// A thread's local arrays live in its frames, on its fiber's stack (or its worker's): near this function's.
constexpr uintptr_t kStackReach = 256 * 1024;

uint32_t memory_of(const HostThreadContext* ctx, const void* data) {
  auto p = reinterpret_cast<uintptr_t>(data);
  auto shared = reinterpret_cast<uintptr_t>(ctx->shared);
  auto dynamic = reinterpret_cast<uintptr_t>(ctx->dynamic_shared);
  if ((p >= shared && p < dynamic) || (p >= dynamic && p < dynamic + ctx->dynamic_shared_bytes)) return 1;
  int here = 0;
  auto frame = reinterpret_cast<uintptr_t>(&here);
  if ((p > frame ? p - frame : frame - p) < kStackReach) return 2;
  return 0;
}

void record_index_error(HostThreadContext* ctx, HostIndexError* record, const char* site, const void* data,
                        uint32_t ndim, const int64_t* index, const int64_t* shape) {
  auto* raised = reinterpret_cast<std::atomic<uint32_t>*>(&record->raised);
  uint32_t expected = 0;
  if (!raised->compare_exchange_strong(expected, 2)) return;  // 2: being written; 1: complete
  record->ndim = ndim < 32 ? ndim : 32;
  record->memory = memory_of(ctx, data);
  for (uint32_t d = 0; d < record->ndim; ++d) {
    record->index[d] = index[d];
    record->shape[d] = shape[d];
  }
  for (int a = 0; a < 3; ++a) {
    record->block[a] = ctx->registers[1][a];
    record->thread[a] = ctx->registers[0][a];
  }
  record->site = site;
  raised->store(1, std::memory_order_release);
}

std::string tuple(const int64_t* v, uint32_t n) {
  if (n == 1) return std::to_string(v[0]);
  std::string out = "(";
  for (uint32_t d = 0; d < n; ++d) out += (d ? ", " : "") + std::to_string(v[d]);
  return out + ")";
}

std::string ids(const uint32_t* v) {
  return "(" + std::to_string(v[0]) + ", " + std::to_string(v[1]) + ", " + std::to_string(v[2]) + ")";
}

}  // namespace

llvm::Error add_host_checks(llvm::orc::LLJIT& jit) {
  llvm::orc::SymbolMap symbols;
  symbols[jit.mangleAndIntern(target::kHostIndexErrorFunction)] = {
      llvm::orc::ExecutorAddr::fromPtr(&record_index_error),
      llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable};
  return jit.getMainJITDylib().define(llvm::orc::absoluteSymbols(std::move(symbols)));
}

std::optional<std::string> take_index_error(const HostKernel& kernel) {
  HostIndexError* r = kernel.index_error;
  if (r == nullptr || reinterpret_cast<std::atomic<uint32_t>*>(&r->raised)->load(std::memory_order_acquire) == 0)
    return std::nullopt;
  // The first axis out of bounds, after Python's wrapping of negative indices.
  uint32_t axis = 0;
  for (uint32_t d = 0; d < r->ndim; ++d) {
    int64_t i = r->index[d] < 0 ? r->index[d] + r->shape[d] : r->index[d];
    if (i < 0 || i >= r->shape[d]) {
      axis = d;
      break;
    }
  }
  static const char* const memory[] = {"", " (shared memory)", " (local memory)"};
  std::string message = "kernel '" + kernel.qualname + "': index " + tuple(r->index, r->ndim) +
                        " is out of bounds for axis " + std::to_string(axis) + " with size " +
                        std::to_string(r->shape[axis]) + " of " + (r->site ? r->site : "an array") +
                        memory[r->memory < 3 ? r->memory : 0];
  if (r->ndim > 1) message += " (shape " + tuple(r->shape, r->ndim) + ")";
  message += ", in block " + ids(r->block) + ", thread " + ids(r->thread);
  *r = HostIndexError{};
  return message;
}

}  // namespace cujit::hostgen
