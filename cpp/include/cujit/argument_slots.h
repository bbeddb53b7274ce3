// How a kernel argument's leaves (types::argument_leaves) become launcher slots:
// the one rule the launch fast path, the Python launch path and the CPU target
// follow, below the bindings so that it needs no Python.
#pragma once

#include <optional>

#include "cujit/driver.h"
#include "cujit/types.h"

namespace cujit::driver {

// The launcher slot of one argument leaf: an array (its ndim), or a scalar of the width it is passed as
// (booleans one byte, integers their width, at least one byte; floats theirs; pointers 8-byte unsigned); nullopt
// for leaves no launch can pass (records, bfloat16, complex numbers before argument_leaves splits them).
std::optional<ArgSlot> slot_for(TypeRef leaf);

}  // namespace cujit::driver
