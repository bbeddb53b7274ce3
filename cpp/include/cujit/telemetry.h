// Compile telemetry: process-wide time and count per compile stage, read by
// `cujit.stats()` (python/cujit/telemetry.py). Every component records into it,
// so it depends on nothing. CUJIT_TIMING=1 also prints each stage as it ends.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>

namespace cujit::telemetry {

enum class Stage : int {
  Frontend,      // Python AST -> cujit IR
  Passes,        // the IR passes before typing (branch pruning, SSA versions)
  Typing,        // type inference
  Lowering,      // typed IR -> LLVM IR
  Libdevice,     // linking the libdevice functions used
  Optimisation,  // the LLVM pipeline
  PtxEmission,   // the NVPTX backend
  Nvvm,          // LTO-IR through libNVVM
  Nvrtc,         // CUDA C++ through NVRTC (compiles that ran, not in-process cache hits)
  NvJitLink,     // nvJitLink's link
  ModuleLoad,    // cuModuleLoadData / cuLibraryLoadData
  kCount
};

const char* stage_name(Stage stage);

struct StageTotal {
  std::int64_t count = 0;
  std::int64_t nanoseconds = 0;
};

void record(Stage stage, std::int64_t nanoseconds);
// The totals since the process started or the last reset.
std::array<StageTotal, static_cast<int>(Stage::kCount)> totals(bool reset);

// Times consecutive stages: each lap records the time since the previous one.
class StageClock {
 public:
  StageClock() : last_(std::chrono::steady_clock::now()) {}
  void lap(Stage stage);

 private:
  std::chrono::steady_clock::time_point last_;
};

// Times one stage: from construction to destruction.
class ScopedStage {
 public:
  explicit ScopedStage(Stage stage) : stage_(stage) {}
  ~ScopedStage() { clock_.lap(stage_); }
  ScopedStage(const ScopedStage&) = delete;
  ScopedStage& operator=(const ScopedStage&) = delete;

 private:
  Stage stage_;
  StageClock clock_;
};

}  // namespace cujit::telemetry
