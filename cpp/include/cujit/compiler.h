// The compile driver, above codegen: the frontend and typing of one function
// for one signature, numba's symbol names, and the typed descriptions of
// external functions (cuda.declare_device). Codegen then turns a typed
// function into PTX or LTO-IR; link/ links it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "cujit/codegen.h"
#include "cujit/frontend.h"
#include "cujit/ir.h"
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

// A function defined by linked code, called with `abi` (numba: int status and
// a return slot; c: plain) under its exact symbol `name`. `signature` must
// have a return type. `cooperative`: kernels that reach it launch cooperatively.
std::shared_ptr<ir::TypedFunction> declare_external(const std::string& name, const Signature& signature,
                                                    codegen::Abi abi,
                                                    std::vector<std::shared_ptr<link::LinkInput>> links,
                                                    const std::string& declared_at, bool cooperative = false);

}  // namespace cujit::compiler
