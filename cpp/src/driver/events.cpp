// CUDA events (cujit/events.h): cuEventCreate/Record/Synchronize/Query/
// ElapsedTime/Destroy and cuStreamWaitEvent, each run with the event's context
// current and the thread's own context given back afterwards.
#include "cujit/events.h"

#include "cujit/context_stack.h"
#include "driver_api.h"

namespace cujit::driver {
namespace {

constexpr unsigned kDisableTiming = 2;  // CU_EVENT_DISABLE_TIMING
constexpr CUresult kInvalidHandle = 400;

template <typename Fn>
Fn need(Fn fn, const char* name) {
  if (fn == nullptr)
    throw DriverError(DriverErrorKind::Support,
                      std::string("CUDA events are not available: the CUDA driver lacks ") + name);
  return fn;
}

// What cujit knows about a failed cuEventElapsedTime that the driver's code does not say.
std::string elapsed_hint(const Event& start, const Event& end) {
  auto which = [&](const Event& e) { return &e == &start ? "start" : "end"; };
  for (const Event* e : {&start, &end}) {
    if (!e->timing())
      return std::string("the ") + which(*e) +
             " event was created with timing=False and records no time (use cuda.event(timing=True))";
  }
  for (const Event* e : {&start, &end}) {
    if (!e->recorded()) return std::string("the ") + which(*e) + " event was never recorded (call its record())";
  }
  if (&start.context() != &end.context()) return "the two events belong to different contexts";
  return {};
}

}  // namespace

std::shared_ptr<Event> Event::create(Context& ctx, bool timing) {
  const detail::DriverApi& a = detail::api();
  auto create = need(a.cuEventCreate, "cuEventCreate");
  need(a.cuEventDestroy, "cuEventDestroy");
  ScopedCurrent current(ctx);
  void* handle = nullptr;
  detail::check(create(&handle, timing ? 0u : kDisableTiming), "cuEventCreate");
  return std::shared_ptr<Event>(new Event(&ctx, handle, timing));
}

Event::~Event() {
  // cuEventDestroy returns at once; the driver releases an event still waited on once it has fired.
  if (const detail::DriverApi* a = detail::api_if_loaded()) a->cuEventDestroy(handle_);
}

void Event::record(CUstream stream) {
  const detail::DriverApi& a = detail::api();
  ScopedCurrent current(*ctx_);
  detail::check(need(a.cuEventRecord, "cuEventRecord")(handle_, stream), "cuEventRecord");
  recorded_ = true;
}

void Event::synchronize() const {
  const detail::DriverApi& a = detail::api();
  ScopedCurrent current(*ctx_);
  detail::check(need(a.cuEventSynchronize, "cuEventSynchronize")(handle_), "cuEventSynchronize");
}

bool Event::query() const {
  const detail::DriverApi& a = detail::api();
  ScopedCurrent current(*ctx_);
  CUresult rc = need(a.cuEventQuery, "cuEventQuery")(handle_);
  if (rc == detail::CUDA_ERROR_NOT_READY) return false;
  detail::check(rc, "cuEventQuery");
  return true;
}

void Event::wait(CUstream stream) const {
  const detail::DriverApi& a = detail::api();
  ScopedCurrent current(*ctx_);
  detail::check(need(a.cuStreamWaitEvent, "cuStreamWaitEvent")(stream, handle_, 0), "cuStreamWaitEvent");
}

float Event::elapsed_ms(const Event& start, const Event& end) {
  const detail::DriverApi& a = detail::api();
  auto elapsed = need(a.cuEventElapsedTime, "cuEventElapsedTime");
  ScopedCurrent current(start.context());
  float ms = 0.0f;
  CUresult rc = elapsed(&ms, start.handle_, end.handle_);
  if (rc == detail::CUDA_SUCCESS) return ms;
  try {
    detail::check(rc, "cuEventElapsedTime");
  } catch (const DriverError& e) {
    std::string hint = rc == kInvalidHandle || rc == detail::CUDA_ERROR_NOT_READY ? elapsed_hint(start, end) : "";
    if (rc == detail::CUDA_ERROR_NOT_READY && hint.empty())
      hint = "the end event's work is not done yet (call its synchronize() first)";
    if (hint.empty()) throw;
    throw DriverError(e.kind(), std::string(e.what()) + ": " + hint, e.code(), e.code_name(), e.call());
  }
  return ms;
}

}  // namespace cujit::driver
