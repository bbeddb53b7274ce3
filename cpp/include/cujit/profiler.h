// The CUDA profiler's collection switch (cuProfilerStart / cuProfilerStop), for
// numba-cuda's cuda.profile_start(), cuda.profile_stop() and cuda.profiling():
// Nsight Systems and Nsight Compute started with capture-range=cudaProfilerApi
// record only between the two.
#pragma once

namespace cujit::driver {

void profiler_start();  // in the calling thread's current context
void profiler_stop();

}  // namespace cujit::driver
