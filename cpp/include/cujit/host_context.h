// The host target's per-thread context: what the host runtime (hostrt/) fills
// for each thread of a grid and what code compiled for the host target reads
// (codegen/host_target.cpp). No LLVM here: the runtime includes it alone.
#pragma once

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
};

// The global a host module records its static shared memory per block in (bytes; an i64 constant).
inline constexpr const char* kHostSharedBytesSymbol = "__cujit_static_shared_bytes";
// The named metadata a host module has when its code reaches a barrier (its threads then need fibers).
inline constexpr const char* kHostBarrierMetadata = "cujit.host.barrier";

}  // namespace cujit::target
