// Code generation: the compile options users pass (cc, fastmath, opt,
// lineinfo, debug, ABI), target (arch) resolution, and the whole pipeline
// from a typed function to PTX through LLVM's NVPTX backend with libdevice.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cujit/error.h"
#include "cujit/ir.h"

namespace cujit::codegen {

// The default architecture of a compile given none (numba-cuda's 7.5), and the lowest cujit supports.
inline constexpr int kDefaultCCMajor = 7, kDefaultCCMinor = 5;

struct ComputeCapability {
  int major = kDefaultCCMajor, minor = kDefaultCCMinor;
  std::string suffix;  // "", "a" or "f"
};

// The architecture PTX is generated for: the nearest supported one not above
// the request (docs/numba_abi.md: Target architectures). Errors: CCSupport below the minimum, ValueError
// for an arch-specific suffix that cannot be honoured or an unknown suffix.
struct TargetArch {
  int arch = 75;        // 75, 80, ..., 90, 100, ...
  std::string suffix;   // "", "a", "f"
  std::string name() const { return "sm_" + std::to_string(arch) + suffix; }
};
Expected<TargetArch> resolve_arch(const ComputeCapability& cc);
const std::vector<int>& supported_archs();
// The architecture a kernel links for on a device of (major, minor): sm_XY, with numba-cuda's "a" from 9.0 up.
std::string device_arch(int major, int minor);
// The PTX ISA version code for an architecture is written in (80 for 8.0).
int ptx_isa_version(const TargetArch& arch);

enum class Abi { Numba, C };

struct CompileOptions {
  ComputeCapability cc;
  bool fastmath = false;
  bool opt = true;
  bool lineinfo = false;
  bool debug = false;
  bool kernel = false;
  Abi abi = Abi::Numba;
  std::string abi_name;  // overrides the symbol name when set
  // launch_bounds (kernels): max threads per block, min blocks per SM, max blocks per cluster; 0 = unset.
  int max_threads = 0, min_blocks = 0, max_cluster = 0;
  // Compiled by a @cuda.jit(device=True) dispatcher for a caller rather than by
  // compile/compile_ptx: numba records its NVVM options in another order then.
  bool from_dispatcher = false;
  // Kernels: the data of distinct array arguments never overlaps (the runtime
  // checks each launch and falls back to a variant without it). Array data
  // pointers are `noalias`, so read-only arrays load through the
  // non-coherent cache (ld.global.nc), as `const __restrict__` does in CUDA C.
  bool noalias_arrays = false;
  // Inlining into callers (device functions): numba-cuda's forceinline=True (LLVM's alwaysinline) and
  // inline="always" (numba inlines its IR; cujit asks LLVM for the same with alwaysinline). Both are flags
  // numba's mangled names record.
  bool forceinline = false;
  bool inline_always = false;
  // Linking a kernel: jit's lto (nullopt: LTO when a link input is CUDA C++ or LTO-IR, link::resolve_lto) and
  // max_registers (0: nvJitLink's choice). They change the cubin, so the key has them.
  std::optional<bool> lto;
  int max_registers = 0;
  // The CPU target's array bounds checks (nullopt: the target's default, on).
  std::optional<bool> boundscheck;
  // jit's shared_memory_carveout as the driver's percentage (-1: the driver's default; nullopt: not set): set on
  // each loaded kernel, not in its code, so not in the key.
  std::optional<int> carveout;

  // Every field that changes the code, in one string: what a compile is keyed by (dispatcher tables, the disk
  // cache). A field added above is added here, in the one place.
  std::string key() const;
};

// A compiled function's code: PTX text (compile_to_ptx) or NVVM LTO-IR bytes (compile_to_ltoir, magic ed 43 4e 7f).
struct CompiledCode {
  enum class Kind : uint8_t { Ptx, LtoIr };
  Kind kind = Kind::Ptx;
  std::string code;
  std::string llvm_ir;  // optimised LLVM IR (kept for inspection)
  std::string symbol;
};

// Lowering + optimisation + PTX emission. Needs no Python and no GIL.
Expected<CompiledCode> compile_to_ptx(const ir::TypedFunction& fn, const CompileOptions& options,
                                      bool keep_llvm_ir = false);
// The same optimised module as LTO-IR, through libNVVM (-gen-lto): below
// compute_100 in libNVVM's legacy dialect (LLVM 7, typed pointers), from
// compute_100 up in its modern one. A kernel stays listed in @llvm.used so
// that nvJitLink's -lto keeps it. libNVVM's failures are LoweringErrors.
Expected<CompiledCode> compile_to_ltoir(const ir::TypedFunction& fn, const CompileOptions& options,
                                        bool keep_llvm_ir = false);

// The first compile for a target builds its TargetMachine and pass managers
// (milliseconds). start_warm_up(cc) builds them on a thread of cujit's own
// (cujit/background.h: exit and fork() wait for it), by compiling a trivial
// module, for the next compile of any thread to lease. Once per process.
void start_warm_up(const ComputeCapability& cc);

// An error in the source of `fn` (which may be a callee of the function compiled).
struct LocatedError {
  Error error;
  const ir::Function* fn;
};

// Static shared memory per block that every CUDA device allows.
inline constexpr int64_t kMaxStaticSharedBytes = 48 * 1024;

// A kernel's static shared memory (its cuda.shared.array buffers of constant
// shape and those of the device functions it calls) over kMaxStaticSharedBytes:
// the error, located at the largest array. ptxas would reject the PTX at load.
std::optional<LocatedError> check_static_shared_memory(const ir::TypedFunction& kernel);

// Tests of the compiler's recovery from its own bugs: the next compiles (of any
// thread) get a defect planted in their module. kInvalidIr adds a function the
// verifier rejects, after lowering; kUnselectable adds one that NVPTX instruction
// selection cannot select (a fatal error inside LLVM's codegen run). kNone: off.
enum class InjectedFault { kNone, kInvalidIr, kUnselectable };
void inject_fault(InjectedFault fault);

// The passes of the NVPTX codegen pipeline for a target, in order, and whether
// cujit keeps each (it leaves some out for compile speed; see codegen_passes.cpp).
struct CodegenPass {
  std::string name;
  bool kept = true;
};
Expected<std::vector<CodegenPass>> codegen_passes(const ComputeCapability& cc);

// libdevice: the bitcode file is read once per process on first need.
void set_libdevice_path(const std::string& path);
const std::string& libdevice_path();

}  // namespace cujit::codegen
