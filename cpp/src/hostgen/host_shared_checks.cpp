// The CPU target's debug checks of shared memory (kernels compiled with
// debug=True): every load and store of an array element calls the recorder
// here, which keeps those touching the block's shared memory in a shadow record
// per byte: the last writer and the readers of the current barrier interval
// (HostThreadContext::barriers_passed tells intervals apart). A read of a byte no
// thread of the block has written, and two threads touching the same byte
// between the same two barriers with at least one writing (atomics are not
// recorded: they do not race; two lanes of a warp with a syncwarp between their
// accesses are ordered), are problems; the first of a launch is kept and
// reported after it (take_shared_report). The threads of a block run on one
// worker, so a block's shadow needs no lock; the map from blocks to shadows does.
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include <llvm/ExecutionEngine/Orc/AbsoluteSymbols.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>

#include "cujit/host_context.h"
#include "cujit/hostgen.h"
#include "host_checks.h"

namespace cujit::hostgen {

using target::HostThreadContext;

namespace {

struct ShadowByte {
  uint32_t written = 0;       // 1 + the barrier interval of the last write; 0: never written in this block
  uint32_t writer = 0;        // its thread (linear id in the block)
  uint32_t writer_syncs = 0;  // the syncwarps its thread had passed
  uint32_t read = 0;          // 1 + the barrier interval of the reads recorded below
  uint32_t reader = 0;        // the first thread that read in that interval
  uint32_t reader_syncs = 0;  // the most syncwarps a reader had passed
  bool many = false;          // another thread read it in that interval too
  bool warps = false;         // ... one of another warp than the first reader's
};

// Two accesses of one barrier interval are ordered if their threads are lanes of one warp and the later one had
// passed more syncwarps (a syncwarp of both lanes lies between them).
bool warp_ordered(uint32_t earlier, uint32_t earlier_syncs, uint32_t later, uint32_t later_syncs) {
  return earlier / 32 == later / 32 && earlier_syncs < later_syncs;
}

struct BlockShadow {
  uint64_t block = ~uint64_t{0};  // the block (linear id) the shadow describes
  std::vector<ShadowByte> bytes;
};

}  // namespace

struct HostSharedChecks {
  std::mutex mutex;
  std::unordered_map<const char*, std::unique_ptr<BlockShadow>> blocks;  // by the block's shared memory base
  std::atomic<uint64_t> generation{1};  // bumped when the shadows are dropped (threads' caches go stale)
  std::atomic<bool> reported{false};
  std::string report;
};

namespace {

uint32_t linear(const uint32_t (&v)[3], const uint32_t (&dim)[3]) { return v[0] + dim[0] * (v[1] + dim[1] * v[2]); }

std::string ids(uint32_t x, uint32_t y, uint32_t z) {
  return "(" + std::to_string(x) + ", " + std::to_string(y) + ", " + std::to_string(z) + ")";
}

std::string thread_ids(uint32_t t, const uint32_t (&dim)[3]) {
  return ids(t % dim[0], t / dim[0] % dim[1], t / (dim[0] * dim[1]));
}

// This thread's shadow of its block's shared memory (the worker thread's last one, if it is still current).
BlockShadow& shadow_of(HostSharedChecks& checks, HostThreadContext* ctx, uint64_t bytes) {
  thread_local HostSharedChecks* cached_checks = nullptr;
  thread_local uint64_t cached_generation = 0;
  thread_local const char* cached_base = nullptr;
  thread_local BlockShadow* cached = nullptr;
  const uint64_t generation = checks.generation.load(std::memory_order_acquire);
  if (cached_checks != &checks || cached_generation != generation || cached_base != ctx->shared) {
    std::lock_guard<std::mutex> lock(checks.mutex);
    auto& slot = checks.blocks[ctx->shared];
    if (!slot) slot = std::make_unique<BlockShadow>();
    cached_checks = &checks, cached_generation = generation, cached_base = ctx->shared, cached = slot.get();
  }
  const auto& r = ctx->registers;
  const uint64_t block = r[1][0] + uint64_t{r[3][0]} * (r[1][1] + uint64_t{r[3][1]} * r[1][2]);
  if (cached->block != block) {  // a new block on this shared memory: nothing written yet
    cached->block = block;
    cached->bytes.assign(bytes, ShadowByte{});
  }
  return *cached;
}

void report(HostSharedChecks& checks, const std::string& what) {
  bool expected = false;
  if (!checks.reported.compare_exchange_strong(expected, true)) return;
  std::lock_guard<std::mutex> lock(checks.mutex);
  checks.report = what;
}

void record_access(HostThreadContext* ctx, HostSharedChecks* checks, const void* address, uint32_t size, uint32_t write,
                   const char* site) {
  if (checks == nullptr) return;
  const char* p = static_cast<const char*>(address);
  const uint64_t total = static_cast<uint64_t>(ctx->dynamic_shared - ctx->shared) + ctx->dynamic_shared_bytes;
  if (p < ctx->shared || p + size > ctx->shared + total) return;  // not this block's shared memory
  if (checks->reported.load(std::memory_order_relaxed)) return;
  BlockShadow& shadow = shadow_of(*checks, ctx, total);
  const auto& r = ctx->registers;
  const uint32_t tid = linear(r[0], r[2]);
  const uint32_t interval = ctx->barriers_passed + 1;
  const uint32_t syncs = ctx->warp_syncs_passed;
  const uint64_t offset = static_cast<uint64_t>(p - ctx->shared);
  auto where = [&] {
    return std::string(site ? site : "shared memory") + " (byte " + std::to_string(offset) +
           " of the block's shared memory), in block " + ids(r[1][0], r[1][1], r[1][2]);
  };
  for (uint32_t i = 0; i < size; ++i) {
    ShadowByte& s = shadow.bytes[offset + i];
    if (!write) {
      if (s.written == 0) {
        report(*checks, "thread " + thread_ids(tid, r[2]) +
                            " reads shared memory no thread of its block has "
                            "written: " +
                            where());
        return;
      }
      if (s.written == interval && s.writer != tid && !warp_ordered(s.writer, s.writer_syncs, tid, syncs)) {
        report(*checks, "a data race on shared memory: thread " + thread_ids(s.writer, r[2]) + " writes and thread " +
                            thread_ids(tid, r[2]) + " reads " + where() + ", with no barrier between them");
        return;
      }
      if (s.read != interval) {
        s.read = interval, s.reader = tid, s.reader_syncs = syncs, s.many = false, s.warps = false;
      } else if (s.reader != tid) {
        s.many = true;
        s.warps = s.warps || tid / 32 != s.reader / 32;
        if (syncs > s.reader_syncs) s.reader_syncs = syncs;
      }
      continue;
    }
    if (s.written == interval && s.writer != tid && !warp_ordered(s.writer, s.writer_syncs, tid, syncs)) {
      report(*checks, "a data race on shared memory: threads " + thread_ids(s.writer, r[2]) + " and " +
                          thread_ids(tid, r[2]) + " both write " + where() + ", with no barrier between them");
      return;
    }
    if (s.read == interval && (s.reader != tid || s.many) &&
        (s.warps || !warp_ordered(s.reader, s.reader_syncs, tid, syncs))) {
      std::string reader = s.reader != tid ? "thread " + thread_ids(s.reader, r[2]) : std::string("another thread");
      report(*checks, "a data race on shared memory: " + reader + " reads and thread " + thread_ids(tid, r[2]) +
                          " writes " + where() + ", with no barrier between them");
      return;
    }
    s.written = interval, s.writer = tid, s.writer_syncs = syncs;
  }
}

}  // namespace

std::shared_ptr<HostSharedChecks> make_shared_checks() { return std::make_shared<HostSharedChecks>(); }

llvm::Error add_shared_checks(llvm::orc::LLJIT& jit) {
  llvm::orc::SymbolMap symbols;
  symbols[jit.mangleAndIntern(target::kHostSharedAccessFunction)] = {
      llvm::orc::ExecutorAddr::fromPtr(&record_access),
      llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable};
  return jit.getMainJITDylib().define(llvm::orc::absoluteSymbols(std::move(symbols)));
}

std::optional<std::string> take_shared_report(const HostKernel& kernel) {
  HostSharedChecks* checks = kernel.shared_checks.get();
  if (checks == nullptr) return std::nullopt;
  std::lock_guard<std::mutex> lock(checks->mutex);
  checks->blocks.clear();
  checks->generation.fetch_add(1, std::memory_order_acq_rel);
  if (!checks->reported.load()) return std::nullopt;
  std::string out = "kernel '" + kernel.qualname + "' (debug=True): " + checks->report;
  checks->report.clear();
  checks->reported.store(false);
  return out;
}

}  // namespace cujit::hostgen
