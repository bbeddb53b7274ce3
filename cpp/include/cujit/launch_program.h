// How a launch reads its arguments, below the bindings so that it needs no Python: one program per kernel
// specialisation, from types::argument_leaves and slot_for, that the launch fast path, the Python launch path and
// the CPU target all follow; and the fast path's table of specialisations by compact type key.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include "cujit/argument_slots.h"
#include "cujit/driver.h"
#include "cujit/types.h"

namespace cujit::driver {

// One leaf of a kernel's arguments and the slot its value goes into.
struct LeafOp {
  enum class Kind : std::uint8_t {
    Scalar,   // a number passed at its slot's width
    Complex,  // a complex number: its real part in `slot`, its imaginary part in the next
    Array,    // an array (its ndim in the slot)
    Pointer,  // an address (CPointer, voidptr): an int, a ctypes pointer, an array's data
    Record,   // a record scalar (numpy's np.void): the address of a copy in the kernel's memory, copied back after
              // the launch (numba-cuda passes records so)
  };
  Kind kind = Kind::Scalar;
  std::uint32_t argument = 0;        // which argument of the launch
  std::vector<unsigned> path;        // tuple indices from the argument to the leaf's value
  std::uint32_t slot = 0;
  TypeRef type = nullptr;            // the leaf's type (a complex's: its parts' float type)
};

struct ArgumentProgram {
  std::vector<ArgSlot> slots;  // the launcher's slots, in parameter order
  std::vector<LeafOp> ops;     // one per value read from the arguments, in slot order
};

// An argument no launch can pass: which one and its type (records, bfloat16, Optional...).
struct UnpassableArgument {
  std::uint32_t argument;
  TypeRef type;
};

// The program of kernel parameters `params`.
std::variant<ArgumentProgram, UnpassableArgument> argument_program(const std::vector<TypeRef>& params);

// ---- the fast path's compact type keys ----

// A key word is a TypeRef (a scalar or an array argument) or a tuple marker.
using KeyWord = std::uintptr_t;
inline constexpr KeyWord kTupleOpen = 1, kTupleClose = 2;

struct KeyHash {
  std::size_t operator()(const std::vector<KeyWord>& key) const {
    std::size_t h = key.size();
    for (KeyWord w : key) h = (h ^ (w >> 4)) * 0x100000001b3ull;
    return h;
  }
};

// The argument types a key stands for.
std::vector<TypeRef> key_types(const std::vector<KeyWord>& key);

// The program the fast path packs a launch by, for parameters `params` and the arguments read into `key`: every
// leaf a scalar or an array whose kind and ndim match what was read. nullopt when only the Python path can pass
// the arguments (pointers, records, Optional, a shape that does not match) or raise their error.
std::optional<ArgumentProgram> fast_program(const std::vector<TypeRef>& params, const std::vector<KeyWord>& key);

// One dispatcher's launch entries by type key, the last one found kept at hand. Not thread-safe: the fast path
// uses it under the GIL.
template <typename Entry>
class LaunchTable {
 public:
  std::shared_ptr<Entry> find(const std::vector<KeyWord>& key) {
    if (last_ && last_key_ == key) return last_;
    auto it = entries_.find(key);
    if (it == entries_.end()) return nullptr;
    last_key_ = key;
    last_ = it->second;
    return last_;
  }
  void add(const std::vector<KeyWord>& key, std::shared_ptr<Entry> entry) {
    entries_[key] = entry;
    last_key_ = key;
    last_ = std::move(entry);
  }
  void clear() {
    entries_.clear();
    last_.reset();
    last_key_.clear();
  }
  std::size_t size() const { return entries_.size(); }

 private:
  std::unordered_map<std::vector<KeyWord>, std::shared_ptr<Entry>, KeyHash> entries_;
  std::vector<KeyWord> last_key_;
  std::shared_ptr<Entry> last_;
};

}  // namespace cujit::driver
