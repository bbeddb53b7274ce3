// Internal to hostgen/: a kernel whose threads meet only at cuda.syncthreads in uniform control flow, as one
// function that runs every thread of a block, the code between two barriers a loop over the threads.
#pragma once

#include <cstdint>

namespace llvm {
class Function;
}  // namespace llvm

namespace cujit::hostgen {

// The block's function made from `kernel` (same parameters: the context, then the kernel's), or null when the
// kernel does not qualify: every collective it reaches is a block barrier in the kernel itself, and no barrier
// depends on a branch whose condition may differ between threads (a kernel without barriers is one region).
// `thread_bytes` receives what each thread keeps across barriers (values and locals, one copy per thread on the block
// function's frame); `blocks_axis` the axis of the block's ids along which consecutive blocks continue the kernel's
// memory accesses (0: x, 1: y), for the runtime to take blocks along.
llvm::Function* make_block_regions(llvm::Function& kernel, uint64_t& thread_bytes, int& blocks_axis);

}  // namespace cujit::hostgen
