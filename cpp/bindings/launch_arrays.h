// Array arguments of the launch fast path, read from the objects users pass (py_launch.cpp launches them):
// cujit device arrays (their view read once per array), __cuda_array_interface__ v2/v3, DLPack capsules and
// producers (with the C exchange table where a class has one), CuPy arrays and PyTorch tensors read in place,
// without building Python objects where the class allows it.
#pragma once

#include <Python.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "bindings.h"
#include "cujit/driver.h"
#include "cujit/types.h"

namespace cujit::bindings::launch {

namespace drv = cujit::driver;

constexpr int kMaxDims = 32;

// Only the first `ndim` entries of shape and strides are ever written or read: a launch makes one of these
// per array argument, so neither making nor copying one touches the rest.
struct ArrayValue {
  drv::CUdeviceptr data = 0;
  std::int64_t nitems = 0, itemsize = 0;
  int ndim = 0;
  int device = -1;  // the GPU its producer names (DLPack, CuPy, PyTorch); -1 when it names none (CAI)
  int position = 0;  // the kernel argument it came from
  std::array<std::int64_t, kMaxDims> shape, strides;
  ArrayValue() {}  // NOLINT: user-provided, so that value-initialisation leaves shape and strides alone
  void assign(const ArrayValue& o) {
    data = o.data, nitems = o.nitems, itemsize = o.itemsize, ndim = o.ndim, device = o.device;
    position = o.position;
    std::copy_n(o.shape.begin(), ndim, shape.begin());
    std::copy_n(o.strides.begin(), ndim, strides.begin());
  }
  drv::ArrayArg arg() const { return {data, nitems, itemsize, shape.data(), strides.data()}; }
};

// A cujit device array as every launch reads it, made at its first launch and kept in the object.
struct DeviceArrayView {
  TypeRef type = nullptr;
  ArrayValue value;
  std::optional<drv::ByteSpan> span;  // the bytes it covers (none when empty)
};

// What reading an array gave: its type (null: a dtype the fast path does not read, e.g. records), and the
// stream its producer named (CAI v3), 0 for none.
struct ArrayRead {
  TypeRef type = nullptr;
  std::uintptr_t producer_stream = 0;
};

struct DLPackExchangeAPI;

// How the objects of a class are read: CuPy arrays and PyTorch tensors as their __cuda_array_interface__
// would describe them, without building it (PyTorch through its DLPack exchange table when it has one), other
// classes with a DLPack exchange table through it, and the rest through the protocols.
enum class Reader : std::uint8_t { Protocols, CuPy, Torch, Exchange };

struct ClassReader {
  Reader reader = Reader::Protocols;
  const DLPackExchangeAPI* exchange = nullptr;  // the class's DLPack C exchange table (PyTorch ≥ 2.10)
};

struct Registry {
  PyTypeObject* device_array = nullptr;  // cujit's DeviceNDArray
  PyTypeObject* ndarray = nullptr;       // numpy.ndarray: the Python path copies it
  std::unordered_map<PyTypeObject*, TypeRef> scalars;  // numpy scalar types whose type is their dtype's
  py::object classify;                   // classify(cls) -> ("cupy", stream_ptr_fn) | ("torch", dtypes) | ...
  std::unordered_map<PyTypeObject*, ClassReader> readers;  // classes seen so far (each kept alive)
  bool cupy_streams = false;             // CuPy's CAI names its current stream (false: it exports CAI v2)
  py::object cupy_stream_ptr;            // () -> that stream's pointer, where CuPy exports no C function for it
  std::unordered_map<PyObject*, int> dtype_codes;     // numpy and torch dtype objects (kept alive) -> code
};

Registry& registry();

// The C base type cujit's DeviceNDArray derives from (it keeps the array's DeviceArrayView).
PyTypeObject* device_array_base();
// The view of `obj` when it is a cujit device array (made on its first launch), else null.
const DeviceArrayView* device_array_view(PyObject* obj, std::size_t position);
// An interned str, kept for the process.
PyObject* interned(const char* text);
// Raises `cls` for kernel argument `position`.
[[noreturn]] void argument_error(PyObject* cls, std::size_t position, const std::string& what);
// How the fast path reads objects of class `cls` (asked once per class).
const ClassReader& reader_for(PyTypeObject* cls);
// Any array object the reader knows (device array, CAI, DLPack capsule or producer) into `out`; `keep`
// receives objects that must outlive the launch (a capsule made here). Returns a null type for objects that
// are not arrays the fast path reads.
ArrayRead read_array_object(PyObject* obj, std::size_t position, drv::CUstream consumer, ArrayValue& out,
                            std::vector<py::object>& keep, std::int64_t& cupy_stream);

}  // namespace cujit::bindings::launch
