// The compile driver, above codegen: one request (a function's frontend input, its signature, options, link
// inputs and target) in, one compiled kernel out: frontend and typing, numba's symbol names, the checks every
// target shares, then the target's code (cujit/kernel_target.h: PTX or LTO-IR linked per device, or host code);
// and the typed descriptions of external functions (cuda.declare_device).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "cujit/codegen.h"
#include "cujit/frontend.h"
#include "cujit/ir.h"
#include "cujit/kernel_target.h"
#include "cujit/link_input.h"
#include "cujit/typing.h"

namespace cujit::compiler {

using codegen::CompileOptions;

// numba's CUDAFlags summary string for these options (docs/numba_abi.md: Mangled names).
std::string flags_summary(const CompileOptions& options);

// Frontend + typing for one function and signature; names the symbol. The
// typed function's link inputs are `own_links` then its callees', each once.
Expected<std::shared_ptr<ir::TypedFunction>> type_function(
    const frontend::FunctionSource& source, frontend::NameResolver& resolver, typing::CalleeProvider& callees,
    const Signature& signature, const CompileOptions& options,
    const std::vector<std::shared_ptr<link::LinkInput>>& own_links = {});

// A lock of the caller's that the stages after typing do not need (they call nothing of it): the driver gives it
// up while the target makes code, so that other threads run meanwhile (the bindings release the GIL).
class Unlocker {
 public:
  virtual ~Unlocker() = default;
  virtual void unlock() = 0;
  virtual void relock() = 0;
};

// One compile asked of the driver.
struct KernelRequest {
  const frontend::FunctionSource* source = nullptr;
  frontend::NameResolver* names = nullptr;
  typing::CalleeProvider* callees = nullptr;
  Signature signature;  // argument types; the return type when declared
  CompileOptions options;  // checked by the caller (jit, compile*); the target adapts them
  std::vector<std::shared_ptr<link::LinkInput>> links;  // the function's own link= items
  const codegen::KernelTarget* target = nullptr;  // null: the GPU
  codegen::Output output = codegen::Output::Decide;
  std::string describe;  // how messages name the function ("@cuda.jit function 'f' at f.py:3")
  // A kernel cujit will load and launch (a dispatcher's): checked against every device's limits (static shared
  // memory) and what the target refuses. cuda.compile's output is checked by whoever links it.
  bool launchable = false;
  std::vector<std::string> include_dirs;  // NVRTC's, when the driver links (build_kernel with a store that keeps)
  Unlocker* unlocker = nullptr;
};

// What the driver answers: the typed function (its symbol, link inputs, launch facts: cooperative, raise sites)
// and the target's code, compiled with `options` (the target's).
struct CompiledKernel {
  std::shared_ptr<ir::TypedFunction> typed;
  std::shared_ptr<codegen::KernelCode> code;
  CompileOptions options;
};

// A failure of the driver, with the function whose source locates it (null: the requested one).
struct KernelFailure {
  Error error;
  const ir::Function* fn = nullptr;
  std::shared_ptr<ir::TypedFunction> typed;  // keeps `fn` alive (it may be a callee's)
};

// Runs one request: types the function, checks a kernel's static shared memory and what the target refuses, and
// makes the target's code. Needs no Python and no GIL beyond what the resolver and callee provider take.
std::variant<CompiledKernel, KernelFailure> compile_kernel(const KernelRequest& request);

// A kernel kept between processes (an entry of the disk cache or of an AOT bundle) as its store gives it: opaque to
// the driver, which hands it back (the store's entry holds the image, the symbol and what launching needs).
using KeptKernel = std::shared_ptr<void>;

// Where kernels are kept between processes, for one request. Its entries are keyed by everything the function
// reads from outside it (the caller walks the function's names), so the caller implements it; the driver decides
// when each step runs (build_kernel).
class KernelStore {
 public:
  virtual ~KernelStore() = default;
  virtual KeptKernel find() = 0;  // the kept kernel, or null
  virtual bool keeps() = 0;       // whether a kernel compiled now is kept (the disk cache is on for it)
  // Held while the kernel is compiled and kept (released when dropped): processes that start at once compile it
  // once, the others wait and then find it.
  virtual std::shared_ptr<void> lock() = 0;
  // A kernel's link inputs as a kept kernel links them (CUDA C++ through the store's NVRTC results).
  virtual std::vector<std::shared_ptr<link::LinkInput>> link_inputs(const CompiledKernel& kernel) = 0;
  // Keeps a kernel compiled now, with its image for the compile's device.
  virtual void keep(const CompiledKernel& kernel, const std::string& image) = 0;
};

// What build_kernel answers: a kept kernel, or one compiled now (with its image, when it was kept).
struct KernelBuild {
  KeptKernel kept;
  std::optional<CompiledKernel> compiled;
  std::string image;  // the image linked to keep it, for the compile's device (major, minor)
  std::vector<std::pair<std::string, std::string>> nvrtc_logs;  // (name, log) of CUDA C++ that linking compiled
  std::string not_kept;  // why a kernel compiled now was not kept (its link failed: a launch meets it again), or ""
};

// The driver with a store: the kept kernel when the store has it; else, when the store keeps kernels, under its
// lock (and after looking again), the compile, the GPU link for the compile's device with the store's inputs, and
// keep(); else the compile alone.
std::variant<KernelBuild, KernelFailure> build_kernel(const KernelRequest& request, KernelStore& store);

// A function defined by linked code, called with `abi` (numba: int status and
// a return slot; c: plain) under its exact symbol `name`. `signature` must
// have a return type. `cooperative`: kernels that reach it launch cooperatively.
std::shared_ptr<ir::TypedFunction> declare_external(const std::string& name, const Signature& signature,
                                                    codegen::Abi abi,
                                                    std::vector<std::shared_ptr<link::LinkInput>> links,
                                                    const std::string& declared_at, bool cooperative = false);

}  // namespace cujit::compiler
