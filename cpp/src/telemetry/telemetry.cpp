// Process-wide stage totals: relaxed atomics, since readers only want sums.
#include "cujit/telemetry.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>

namespace cujit::telemetry {
namespace {

constexpr int kStages = static_cast<int>(Stage::kCount);
std::array<std::atomic<std::int64_t>, kStages> counts{};
std::array<std::atomic<std::int64_t>, kStages> nanoseconds{};

bool printing() {
  static const bool on = std::getenv("CUJIT_TIMING") != nullptr;
  return on;
}

}  // namespace

const char* stage_name(Stage stage) {
  static const char* const names[kStages] = {"frontend",  "IR passes",         "typing",       "lowering",
                                             "libdevice", "LLVM optimisation", "PTX emission", "libNVVM",
                                             "NVRTC",     "nvJitLink",         "module load"};
  const int i = static_cast<int>(stage);
  return i >= 0 && i < kStages ? names[i] : "?";
}

void record(Stage stage, std::int64_t ns) {
  const int i = static_cast<int>(stage);
  if (i < 0 || i >= kStages) return;
  counts[i].fetch_add(1, std::memory_order_relaxed);
  nanoseconds[i].fetch_add(ns, std::memory_order_relaxed);
  if (printing()) std::fprintf(stderr, "cujit: %-18s %9.1f us\n", stage_name(stage), ns / 1000.0);
}

std::array<StageTotal, kStages> totals(bool reset) {
  std::array<StageTotal, kStages> out;
  for (int i = 0; i < kStages; ++i) {
    out[i].count = reset ? counts[i].exchange(0) : counts[i].load();
    out[i].nanoseconds = reset ? nanoseconds[i].exchange(0) : nanoseconds[i].load();
  }
  return out;
}

void StageClock::lap(Stage stage) {
  const auto now = std::chrono::steady_clock::now();
  record(stage, std::chrono::duration_cast<std::chrono::nanoseconds>(now - last_).count());
  last_ = now;
}

}  // namespace cujit::telemetry
