// The host target's per-thread context: what the host runtime (hostrt/) fills
// for each thread of a grid and what code compiled for the host target reads
// (hostgen/host_target.cpp). No LLVM here: the runtime includes it alone.
#pragma once

#include <atomic>
#include <cstdint>

namespace cujit::target {

// The host target's per-thread context, as the host runtime fills it and host code reads it (hostrt/).
struct HostThreadContext {
  uint32_t registers[4][3];  // [SpecialRegister][axis]
  char* shared;              // this block's static shared memory
  char* dynamic_shared;      // this block's dynamic shared memory
  uint64_t dynamic_shared_bytes;
  void (*barrier)(HostThreadContext*);
  void* runtime;             // the host runtime's own (the thread's fiber)
  // A collective operation (HostCollective): the thread waits until its group (the block, the warp's lanes in
  // `mask`, the grid) has arrived, then gets the result. `where` names the call for deadlock reports
  // ("cuda.shfl_sync at kernel.py:12"; null if unknown).
  uint64_t (*collective)(HostThreadContext*, uint32_t kind, uint32_t mask, uint64_t value, uint32_t operand,
                         const char* where);
  // The block barriers (and grid syncs) this thread has passed: code compiled for the host counts them (zero at
  // the thread's start), so debug checks tell which accesses lie between the same two barriers.
  uint32_t barriers_passed;
  // The cuda.syncwarp calls this thread has passed (counted likewise: debug checks take the accesses of two lanes
  // of a warp on either side of a syncwarp as ordered).
  uint32_t warp_syncs_passed;
  // Spin points (after each atomic and memory fence): code compiled for the host counts them here and calls `spin`
  // (when not null) at every kHostSpinInterval-th, where the runtime lets other threads run, so a thread spinning
  // on another's write (`while cuda.atomic.add(flag, 0, 0) == 0: pass`) sees it, as GPU threads run independently.
  uint32_t spins;
  void (*spin)(HostThreadContext*);
};

// Interrupts (Ctrl-C during a launch): the runtime sets host_interrupt_requested; code compiled for the host
// reads it (relaxed) at every loop's header and, when set, calls host_interrupted(), which never returns: the
// thread is abandoned through the handler the runtime installed for the running thread (its fiber is dropped, or
// the worker jumps back to where it started the thread). Defined once, by the runtime (hostrt/interrupts.cpp):
// the CPU target's code generation (hostgen/) hands their addresses to the code it compiles.
extern std::atomic<uint32_t> host_interrupt_requested;
struct HostInterruptHandler {
  void (*abandon)(void* runtime) = nullptr;  // never returns
  void* runtime = nullptr;
};
extern thread_local HostInterruptHandler host_interrupt_handler;
[[noreturn]] void host_interrupted();
// The symbols compiled host code refers to them by (hostgen/host_interrupts.cpp defines them in each JIT).
inline constexpr const char* kHostInterruptFlagSymbol = "__cujit_host_interrupt_requested";
inline constexpr const char* kHostInterruptedFunction = "__cujit_host_interrupted";

// The internal function a host module's spin points call (always inlined).
inline constexpr const char* kHostSpinPointFunction = "cujit.spin_point";

// How many spin points a thread passes between two calls of HostThreadContext::spin (a power of two).
inline constexpr uint32_t kHostSpinInterval = 256;

// What HostThreadContext::collective does, by `kind`.
enum class HostCollective : uint32_t {
  Barrier,                                          // cuda.syncthreads()
  BarrierCount,
  BarrierAnd,
  BarrierOr,              // syncthreads_count/_and/_or: value is the predicate
  ShuffleIdx,
  ShuffleUp,
  ShuffleDown,
  ShuffleXor,   // value: the 32 bits; operand: src lane, delta, lane mask
  VoteAll,
  VoteAny,
  VoteEq,
  VoteBallot,             // value: the predicate
  MatchAny,
  MatchAll,                               // value: the 64 bits; MatchAll gives mask | pred << 32
  SyncWarp,                                         // cuda.syncwarp(mask)
  ActiveMask,                                       // cuda.activemask(): the warp's lanes that reached this call
  GridSync,                                         // a grid group's sync() (cooperative launches)
  Yield,                                            // cuda.nanosleep(): the block's other threads run first
  Spin,  // (the runtime's own, from HostThreadContext::spin) a yield at a spin point: an atomic or a fence
};

// The global a host module records its static shared memory per block in (bytes; an i64 constant).
inline constexpr const char* kHostSharedBytesSymbol = "__cujit_static_shared_bytes";
// The named metadata a host module has when its code reaches a collective (a barrier, a warp function, a grid
// sync, nanosleep): its threads then run as fibers.
inline constexpr const char* kHostBarrierMetadata = "cujit.host.barrier";
// The metadata on an alloca the host target writes and reads at one call only (an index error's report): nothing
// in it outlives the call.
inline constexpr const char* kHostScratchMetadata = "cujit.scratch";
// The metadata on each call of HostThreadContext::collective: !{i32 kind} (a HostCollective).
inline constexpr const char* kHostCollectiveMetadata = "cujit.collective";

// Bounds checks: the first out-of-bounds array access of a launch, as code compiled for the host records it
// (through kHostIndexErrorFunction, hostgen/host_checks.cpp) in its module's kHostIndexErrorSymbol global.
struct HostIndexError {
  uint32_t raised;  // 0 until the first (which sets it atomically)
  uint32_t ndim;
  uint32_t memory;  // where the array's data lies: 0 device (global) memory, 1 shared, 2 local (the thread's)
  uint32_t reserved;
  int64_t index[32], shape[32];  // the index as written, the array's shape (ndim of each)
  uint32_t block[3], thread[3];
  const char* site;  // "array 'x' at kernel.py:12"
};
inline constexpr const char* kHostIndexErrorSymbol = "__cujit_index_error";
// void (HostThreadContext*, HostIndexError*, const char* site, const void* data, uint32_t ndim,
//       const int64_t* index, const int64_t* shape)
inline constexpr const char* kHostIndexErrorFunction = "__cujit_host_index_error";

// Debug checks of shared memory: the module's global holding its checks' state (a pointer the JIT's owner sets),
// and the function every load and store calls (hostgen/host_shared_checks.cpp):
// void (HostThreadContext*, void* state, const void* address, uint32_t bytes, uint32_t write, const char* site)
inline constexpr const char* kHostSharedChecksSymbol = "__cujit_shared_checks";
inline constexpr const char* kHostSharedAccessFunction = "__cujit_host_shared_access";

}  // namespace cujit::target
