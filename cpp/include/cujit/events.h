// CUDA events as numba-cuda's cuda.event() has them: created in a context,
// recorded on a stream, waited on by the host (synchronize, query) or by
// another stream (wait), and timed against each other (elapsed_ms). An Event
// is destroyed with its last owner; it needs no context to be current then.
//
// Errors are DriverError{Driver} with the call and code numba's CudaAPIError
// carries; the messages add what went wrong where cujit can tell (an event
// made without timing, one never recorded).
#pragma once

#include <memory>

#include "cujit/driver.h"

namespace cujit::driver {

class Event {
 public:
  // cuEventCreate in `ctx`; timing=false passes CU_EVENT_DISABLE_TIMING (cheaper, no elapsed times).
  static std::shared_ptr<Event> create(Context& ctx, bool timing);
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  void* handle() const { return handle_; }
  Context& context() const { return *ctx_; }
  bool timing() const { return timing_; }
  bool recorded() const { return recorded_; }

  // The point in `stream` (null: the default stream) after the work queued on it so far.
  void record(CUstream stream);
  void synchronize() const;  // the host waits until the recorded work is done
  bool query() const;        // true when the recorded work is done (or nothing was recorded)
  void wait(CUstream stream) const;  // work queued on `stream` later waits for the recorded work

  // Milliseconds between two recorded, completed events of timing=true (cuEventElapsedTime).
  static float elapsed_ms(const Event& start, const Event& end);

 private:
  Event(Context* ctx, void* handle, bool timing) : ctx_(ctx), handle_(handle), timing_(timing) {}
  Context* ctx_;
  void* handle_;
  bool timing_;
  bool recorded_ = false;
};

}  // namespace cujit::driver
