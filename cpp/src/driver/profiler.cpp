// cuProfilerStart / cuProfilerStop (cujit/profiler.h).
#include "cujit/profiler.h"

#include "driver_api.h"

namespace cujit::driver {
namespace {

template <typename Fn>
void call(Fn fn, const char* name) {
  if (fn == nullptr) throw DriverError(DriverErrorKind::Support, std::string("the CUDA driver lacks ") + name);
  current_context();  // the profiler acts on a context: device 0's primary one when the thread has none
  detail::check(fn(), name);
}

}  // namespace

void profiler_start() { call(detail::api().cuProfilerStart, "cuProfilerStart"); }
void profiler_stop() { call(detail::api().cuProfilerStop, "cuProfilerStop"); }

}  // namespace cujit::driver
