// The launch fast path (design decision 9): `kernel[grid, block, stream, sharedmem](*args)` is one call into
// this file. The configured kernel (a ConfiguredLaunch, made once per configuration) reads each argument
// without building Python objects where it can, forms a compact type key (the cujit types of scalars and
// arrays, with markers around tuples), finds the specialisation in its dispatcher's LaunchTable (asking the
// dispatcher to choose or compile one on a miss), packs the arguments into the parameter buffer by the
// specialisation's argument program, and calls cuLaunchKernel with the GIL released.
//
// Arguments read here: Python bool/int/float/complex, numpy scalars, tuples of arguments, cujit device arrays
// (their view read once per array), objects with __cuda_array_interface__ v2/v3, DLPack capsules and
// producers (__dlpack__/__dlpack_device__). Anything else (numpy arrays, which are copied in and back,
// In/Out/InOut, records, pointers) takes the Python path (`dispatcher._launch_slow`), as do debug kernels
// that report exceptions. Both paths read CAI and DLPack objects through `read_array` here.
#include <Python.h>
#include <structmember.h>

#include <pybind11/stl.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <unordered_map>
#include <vector>

#include "bindings.h"
#include "launch_cupy.h"
#include "cujit/driver.h"
#include "cujit/types.h"

namespace cujit::bindings {
namespace {

namespace drv = cujit::driver;

constexpr int kMaxDims = 32;

// ---- arrays read from their objects ----------------------------------------------------------------------

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

[[noreturn]] void argument_error(PyObject* cls, std::size_t position, const std::string& what) {
  PyErr_SetString(cls, ("kernel argument " + std::to_string(position) + ": " + what).c_str());
  throw py::error_already_set();
}

// The dtypes arrays can have on the fast path, and the interned array types built from them.
enum DtypeCode : int { kBool, kI8, kI16, kI32, kI64, kU8, kU16, kU32, kU64, kF16, kF32, kF64, kC64, kC128, kDtypes };

TypeRef dtype_type(int code) {
  static const TypeRef table[kDtypes] = {types::boolean(), types::int8(),   types::int16(),     types::int32(),
                                         types::int64(),   types::uint8(),  types::uint16(),    types::uint32(),
                                         types::uint64(),  types::float16(), types::float32(),  types::float64(),
                                         types::complex64(), types::complex128()};
  return table[code];
}

// -1 when a numpy kind letter ('b', 'i', 'u', 'f', 'c') and size name no dtype of the fast path.
int dtype_code(char kind, std::int64_t size) {
  switch (kind) {
    case 'b': return size == 1 ? kBool : -1;
    case 'i': return size == 1 ? kI8 : size == 2 ? kI16 : size == 4 ? kI32 : size == 8 ? kI64 : -1;
    case 'u': return size == 1 ? kU8 : size == 2 ? kU16 : size == 4 ? kU32 : size == 8 ? kU64 : -1;
    case 'f': return size == 2 ? kF16 : size == 4 ? kF32 : size == 8 ? kF64 : -1;
    case 'c': return size == 8 ? kC64 : size == 16 ? kC128 : -1;
    default: return -1;
  }
}

// array(dtype, ndim, layout, readonly), interned once per combination (the table is used under the GIL).
TypeRef array_type(int code, int ndim, char layout, bool readonly) {
  static std::vector<TypeRef> cache(static_cast<std::size_t>(kDtypes) * (kMaxDims + 1) * 3 * 2, nullptr);
  const int l = layout == 'C' ? 0 : layout == 'F' ? 1 : 2;
  TypeRef& slot = cache[((static_cast<std::size_t>(code) * (kMaxDims + 1) + ndim) * 3 + l) * 2 + readonly];
  if (slot == nullptr) slot = types::array(dtype_type(code), ndim, layout, readonly);
  return slot;
}

std::int64_t as_int64(PyObject* value, std::size_t position, const char* what) {
  long long v = PyLong_AsLongLong(value);
  if (v == -1 && PyErr_Occurred()) {
    PyErr_Clear();
    argument_error(PyExc_TypeError, position, std::string(what) + " must hold integers");
  }
  return v;
}

// shape or strides from a tuple (or any sequence) of ints into `out`; returns the count.
int read_dims(PyObject* seq, std::array<std::int64_t, kMaxDims>& out, std::size_t position, const char* what) {
  if (PyTuple_Check(seq)) {
    Py_ssize_t n = PyTuple_GET_SIZE(seq);
    if (n > kMaxDims) argument_error(PyExc_ValueError, position, "arrays have at most 32 dimensions");
    for (Py_ssize_t i = 0; i < n; ++i) out[i] = as_int64(PyTuple_GET_ITEM(seq, i), position, what);
    return static_cast<int>(n);
  }
  py::object fast = py::reinterpret_steal<py::object>(PySequence_Fast(seq, "not a sequence"));
  if (!fast) {
    PyErr_Clear();
    argument_error(PyExc_TypeError, position, std::string(what) + " must be a tuple of integers");
  }
  Py_ssize_t n = PySequence_Fast_GET_SIZE(fast.ptr());
  if (n > kMaxDims) argument_error(PyExc_ValueError, position, "arrays have at most 32 dimensions");
  for (Py_ssize_t i = 0; i < n; ++i) out[i] = as_int64(PySequence_Fast_GET_ITEM(fast.ptr(), i), position, what);
  return static_cast<int>(n);
}

void fill_c_strides(ArrayValue& a) {
  std::int64_t step = a.itemsize;
  for (int d = a.ndim - 1; d >= 0; --d) {
    a.strides[d] = step;
    step *= a.shape[d] > 1 ? a.shape[d] : 1;
  }
}

std::int64_t count_items(const ArrayValue& a) {
  std::int64_t n = 1;
  for (int d = 0; d < a.ndim; ++d) n *= a.shape[d];
  return n;
}

PyObject* interned(const char* text) {
  PyObject* s = PyUnicode_InternFromString(text);
  if (s == nullptr) throw py::error_already_set();
  return s;  // kept for the process
}

// A dict item (borrowed) or null.
PyObject* item(PyObject* dict, PyObject* key) {
  PyObject* v = PyDict_GetItemWithError(dict, key);
  if (v == nullptr && PyErr_Occurred()) throw py::error_already_set();
  return v;
}

// What reading an array gave: its type (null: a dtype the fast path does not read, e.g. records), and the
// stream its producer named (CAI v3), 0 for none.
struct ArrayRead {
  TypeRef type = nullptr;
  std::uintptr_t producer_stream = 0;
};

bool cai_sync_enabled() {
  static const bool enabled = [] {
    for (const char* name : {"CUJIT_CUDA_ARRAY_INTERFACE_SYNC", "NUMBA_CUDA_ARRAY_INTERFACE_SYNC"}) {
      const char* v = std::getenv(name);
      if (v != nullptr) return !(std::strcmp(v, "0") == 0 || std::strcmp(v, "") == 0);
    }
    return true;
  }();
  return enabled;
}

// The array type of a value read with dtype `code`, its layout from its shape and strides.
TypeRef typed_array(const ArrayValue& a, int code, bool readonly) {
  return array_type(code, a.ndim, types::array_layout(a.ndim, a.shape.data(), a.strides.data(), a.itemsize), readonly);
}

// nitems and the type of an array read field by field; an empty array is described as CAI producers describe
// it (a null pointer and, being C-contiguous, C strides).
void finish(ArrayValue& out, int code, bool readonly, ArrayRead& read) {
  out.nitems = count_items(out);
  if (out.nitems == 0) {
    out.data = 0;
    fill_c_strides(out);
  }
  read.type = typed_array(out, code, readonly);
}

// A __cuda_array_interface__ dict (versions 2 and 3) into `out`, with the spec's rules: strides None is
// C-contiguous, data[1] is readonly, typestr's byte order must be the host's, a mask is refused, stream is the
// producer's (0 is not allowed).
ArrayRead read_cai(PyObject* desc, std::size_t position, ArrayValue& out) {
  static PyObject *k_shape = interned("shape"), *k_typestr = interned("typestr"), *k_data = interned("data"),
                  *k_strides = interned("strides"), *k_mask = interned("mask"), *k_stream = interned("stream");
  if (!PyDict_Check(desc)) argument_error(PyExc_TypeError, position, "__cuda_array_interface__ must be a dict");
  PyObject* mask = item(desc, k_mask);
  if (mask != nullptr && mask != Py_None)
    argument_error(PyExc_NotImplementedError, position,
                   "masked CUDA arrays are not supported (its __cuda_array_interface__ has a mask)");
  PyObject* typestr = item(desc, k_typestr);
  PyObject* shape = item(desc, k_shape);
  PyObject* data = item(desc, k_data);
  if (typestr == nullptr || shape == nullptr || data == nullptr || !PyUnicode_Check(typestr))
    argument_error(PyExc_TypeError, position, "__cuda_array_interface__ needs 'shape', 'typestr' and 'data'");
  Py_ssize_t len = 0;
  const char* ts = PyUnicode_AsUTF8AndSize(typestr, &len);
  if (ts == nullptr) throw py::error_already_set();
  ArrayRead read;
  int code = -1;
  if (len >= 3) {
    const std::int64_t size = std::atoll(ts + 2);
    code = dtype_code(ts[1], size);
    if (code >= 0) {
      if (ts[0] == '>' && size > 1)
        argument_error(PyExc_TypeError, position,
                       "big-endian data (typestr '" + std::string(ts) + "') cannot be passed to a kernel");
      out.itemsize = size;
    }
  }
  out.ndim = read_dims(shape, out.shape, position, "shape");
  PyObject* strides = item(desc, k_strides);
  const bool has_strides = strides != nullptr && strides != Py_None;
  if (has_strides) {
    if (read_dims(strides, out.strides, position, "strides") != out.ndim)
      argument_error(PyExc_ValueError, position, "__cuda_array_interface__ has strides of another length than its shape");
  }
  if (!PyTuple_Check(data) || PyTuple_GET_SIZE(data) != 2)
    argument_error(PyExc_TypeError, position, "__cuda_array_interface__ 'data' must be (pointer, readonly)");
  PyObject* ptr = PyTuple_GET_ITEM(data, 0);
  out.data = ptr == Py_None ? 0 : static_cast<drv::CUdeviceptr>(PyLong_AsUnsignedLongLongMask(ptr));
  if (PyErr_Occurred()) throw py::error_already_set();
  int readonly = PyObject_IsTrue(PyTuple_GET_ITEM(data, 1));
  if (readonly < 0) throw py::error_already_set();
  PyObject* stream = item(desc, k_stream);
  if (stream != nullptr && stream != Py_None) {
    std::int64_t s = as_int64(stream, position, "__cuda_array_interface__ 'stream'");
    if (s == 0)
      argument_error(PyExc_ValueError, position, "__cuda_array_interface__ 'stream' is 0, which the interface "
                                                 "disallows (1 is the legacy default stream)");
    if (cai_sync_enabled()) read.producer_stream = static_cast<std::uintptr_t>(s);
  }
  if (code < 0) return read;  // a dtype for the Python path
  if (!has_strides) fill_c_strides(out);
  out.nitems = count_items(out);
  read.type = typed_array(out, code, readonly != 0);
  return read;
}

// ---- DLPack (the ABI of dlpack.h, v0.8 and v1.x) ----

struct DLDevice {
  std::int32_t device_type, device_id;
};
struct DLDataType {
  std::uint8_t code, bits;
  std::uint16_t lanes;
};
struct DLTensor {
  void* data;
  DLDevice device;
  std::int32_t ndim;
  DLDataType dtype;
  std::int64_t* shape;
  std::int64_t* strides;  // elements; null: C-contiguous
  std::uint64_t byte_offset;
};
struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor*);
};
struct DLManagedTensorVersioned {
  std::uint32_t major, minor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensorVersioned*);
  std::uint64_t flags;
  DLTensor dl_tensor;
};
constexpr std::int32_t kDLCUDA = 2, kDLCUDAManaged = 13;
constexpr std::uint64_t kDLReadOnly = 1;

bool in_gpu_memory(std::int32_t device_type) { return device_type == kDLCUDA || device_type == kDLCUDAManaged; }

void check_device_type(std::int32_t type, std::size_t position) {
  if (!in_gpu_memory(type))
    argument_error(PyExc_TypeError, position,
                   "a DLPack tensor on device type " + std::to_string(type) +
                       " is not in GPU memory (kDLCUDA or kDLCUDAManaged)");
}

// A DLTensor into `out`; returns its dtype code. `strict`: a tensor outside GPU memory or of a dtype cujit
// does not read is an error naming the argument; otherwise -1 leaves it to another reader.
int read_dltensor(const DLTensor& t, std::size_t position, ArrayValue& out, bool strict) {
  const bool on_gpu = in_gpu_memory(t.device.device_type);
  const char kinds[] = {'i', 'u', 'f', '?', '?', 'c', 'b'};
  const int code = t.dtype.code < sizeof kinds && t.dtype.lanes == 1 && t.dtype.bits % 8 == 0
                       ? dtype_code(kinds[t.dtype.code], t.dtype.bits / 8)
                       : -1;
  if (!strict && (!on_gpu || code < 0)) return -1;
  check_device_type(t.device.device_type, position);
  if (code < 0)
    argument_error(PyExc_TypeError, position,
                   "unsupported DLPack dtype (code " + std::to_string(t.dtype.code) + ", bits " +
                       std::to_string(t.dtype.bits) + ", lanes " + std::to_string(t.dtype.lanes) + ")");
  if (t.ndim < 0 || t.ndim > kMaxDims) argument_error(PyExc_ValueError, position, "arrays have at most 32 dimensions");
  out.device = t.device.device_id;
  out.ndim = t.ndim;
  out.itemsize = t.dtype.bits / 8;
  out.data = reinterpret_cast<drv::CUdeviceptr>(t.data) + t.byte_offset;
  for (int d = 0; d < out.ndim; ++d) out.shape[d] = t.shape[d];
  if (t.strides == nullptr) {
    fill_c_strides(out);
  } else {
    for (int d = 0; d < out.ndim; ++d) out.strides[d] = t.strides[d] * out.itemsize;
  }
  return code;
}

// DLPack's C exchange API (dlpack.h 1.2+): a producer's table of C functions, found on the class as
// `__dlpack_c_exchange_api__` (a capsule, DLPack 1.3) or `__c_dlpack_exchange_api__` (an integer, 1.2).
// Its `dltensor_from_py_object_no_sync` fills a DLTensor on the stack without building Python objects.
struct DLPackExchangeAPI {
  std::uint32_t major, minor;
  const void* prev_api;
  void* managed_tensor_allocator;
  void* managed_tensor_from_py_object_no_sync;
  void* managed_tensor_to_py_object_no_sync;
  int (*dltensor_from_py_object_no_sync)(void* py_object, DLTensor* out);
  int (*current_work_stream)(std::int32_t device_type, std::int32_t device_id, void** out_stream);
};

// The exchange table of a class, or null when it has none cujit can use (another major version, or no
// DLTensor export).
const DLPackExchangeAPI* exchange_api_of(PyTypeObject* cls) {
  static PyObject *k_capsule = interned("__dlpack_c_exchange_api__"), *k_int = interned("__c_dlpack_exchange_api__");
  PyObject* type = reinterpret_cast<PyObject*>(cls);
  const DLPackExchangeAPI* api = nullptr;
  PyObject* v = PyObject_GetAttr(type, k_capsule);
  if (v != nullptr && PyCapsule_IsValid(v, "dlpack_exchange_api")) {
    api = static_cast<const DLPackExchangeAPI*>(PyCapsule_GetPointer(v, "dlpack_exchange_api"));
  } else {
    Py_XDECREF(v);
    PyErr_Clear();
    v = PyObject_GetAttr(type, k_int);
    if (v != nullptr && PyLong_Check(v)) api = static_cast<const DLPackExchangeAPI*>(PyLong_AsVoidPtr(v));
  }
  Py_XDECREF(v);  // the table outlives the process's use of it (the protocol's rule)
  PyErr_Clear();
  if (api == nullptr || api->major != 1 || api->dltensor_from_py_object_no_sync == nullptr) return nullptr;
  return api;
}

// A DLPack capsule's tensor into `out` (the capsule is read, not consumed: it keeps the memory alive).
ArrayRead read_dlpack_capsule(PyObject* capsule, std::size_t position, ArrayValue& out) {
  const char* name = PyCapsule_GetName(capsule);
  if (name == nullptr) throw py::error_already_set();
  const DLTensor* t = nullptr;
  bool readonly = false;
  out = ArrayValue{};
  if (std::strcmp(name, "dltensor") == 0) {
    t = &static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, name))->dl_tensor;
  } else if (std::strcmp(name, "dltensor_versioned") == 0) {
    auto* v = static_cast<DLManagedTensorVersioned*>(PyCapsule_GetPointer(capsule, name));
    if (v->major != 1)
      argument_error(PyExc_TypeError, position, "DLPack version " + std::to_string(v->major) + " is not supported");
    t = &v->dl_tensor;
    readonly = (v->flags & kDLReadOnly) != 0;
  } else if (std::strncmp(name, "used_", 5) == 0) {
    argument_error(PyExc_ValueError, position, "the DLPack capsule was consumed already");
  } else {
    argument_error(PyExc_TypeError, position, std::string("a capsule named '") + name + "' is not a DLPack tensor");
  }
  ArrayRead read;
  finish(out, read_dltensor(*t, position, out, true), readonly, read);
  return read;
}

// `obj.__dlpack__(stream=...)` for a producer on a CUDA device: the producer orders its work before the
// consumer's stream (the protocol's contract), so no producer stream is returned.
py::object dlpack_capsule(PyObject* obj, std::size_t position, drv::CUstream consumer) {
  py::handle h(obj);
  py::tuple device = py::reinterpret_borrow<py::object>(h.attr("__dlpack_device__")()).cast<py::tuple>();
  check_device_type(device[0].cast<std::int32_t>(), position);
  // The protocol names the legacy default stream 1 (0 is ambiguous there).
  std::uintptr_t s = consumer == nullptr ? drv::Stream::kLegacy : reinterpret_cast<std::uintptr_t>(consumer);
  return h.attr("__dlpack__")(py::arg("stream") = s);
}

// ---- the registered Python types the reader recognises ----

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

Registry& registry() {
  static Registry r;
  return r;
}

// A device array's launch view, read once and kept in its __dict__: a bytes object holding its TypeRef and
// its ArrayValue (a device array's memory, shape, strides and dtype never change).
struct DeviceArrayView {
  TypeRef type;
  ArrayValue value;
};

const DeviceArrayView& device_array_view(PyObject* obj, std::size_t position) {
  static PyObject* k_view = interned("_cujit_launch_view");
  PyObject* dict = PyObject_GenericGetDict(obj, nullptr);
  if (dict == nullptr) throw py::error_already_set();
  py::object owned_dict = py::reinterpret_steal<py::object>(dict);
  PyObject* view = item(dict, k_view);
  if (view == nullptr) {
    py::handle h(obj);
    DeviceArrayView v{};
    v.type = py::reinterpret_borrow<py::object>(h.attr("_numba_type_")).cast<const Type*>();
    v.value.data = h.attr("_ptr").cast<std::uint64_t>();
    v.value.ndim = read_dims(h.attr("shape").ptr(), v.value.shape, position, "shape");
    read_dims(h.attr("strides").ptr(), v.value.strides, position, "strides");
    v.value.itemsize = h.attr("dtype").attr("itemsize").cast<std::int64_t>();
    v.value.nitems = count_items(v.value);
    py::bytes bytes(reinterpret_cast<const char*>(&v), sizeof v);
    if (PyDict_SetItem(dict, k_view, bytes.ptr()) != 0) throw py::error_already_set();
    view = item(dict, k_view);
  }
  return *reinterpret_cast<const DeviceArrayView*>(PyBytes_AS_STRING(view));
}

const ClassReader& reader_for(PyTypeObject* cls) {
  Registry& r = registry();
  auto it = r.readers.find(cls);
  if (it != r.readers.end()) return it->second;
  ClassReader reader;
  if (r.classify) {
    py::tuple kind = r.classify(py::handle(reinterpret_cast<PyObject*>(cls))).cast<py::tuple>();
    std::string name = kind[0].cast<std::string>();
    if (name == "cupy") {
      reader.reader = Reader::CuPy;
      r.cupy_streams = !kind[1].is_none();
      if (r.cupy_streams && !cupy::set_stream_function(kind[1].ptr())) r.cupy_stream_ptr = kind[1];
    } else if (name == "torch") {
      reader.reader = Reader::Torch;
      reader.exchange = exchange_api_of(cls);
      for (auto [dtype, spec] : kind[1].cast<py::dict>()) {
        auto [k, size] = spec.cast<std::pair<std::string, int>>();
        r.dtype_codes[dtype.inc_ref().ptr()] = dtype_code(k.empty() ? '?' : k[0], size);
      }
    }
  }
  if (reader.reader == Reader::Protocols && (reader.exchange = exchange_api_of(cls)) != nullptr)
    reader.reader = Reader::Exchange;
  Py_INCREF(cls);
  return r.readers.emplace(cls, reader).first->second;
}

// The code of a numpy dtype object (-1: not a dtype the fast path reads: records, big-endian, datetimes).
int numpy_dtype_code(PyObject* dtype) {
  Registry& r = registry();
  auto it = r.dtype_codes.find(dtype);
  if (it != r.dtype_codes.end()) return it->second;
  py::handle d(dtype);
  int code = -1;
  if (d.attr("fields").is_none() && d.attr("byteorder").cast<std::string>() != ">") {
    std::string kind = d.attr("kind").cast<std::string>();
    code = dtype_code(kind.empty() ? '?' : kind[0], d.attr("itemsize").cast<std::int64_t>());
  }
  r.dtype_codes[d.inc_ref().ptr()] = code;
  return code;
}

std::int64_t itemsize_of(int code) {
  static const std::int64_t sizes[kDtypes] = {1, 1, 2, 4, 8, 1, 2, 4, 8, 2, 4, 8, 8, 16};
  return sizes[code];
}

py::object get(PyObject* obj, PyObject* name) {
  PyObject* v = PyObject_GetAttr(obj, name);
  if (v == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(v);
}

py::object call(PyObject* obj, PyObject* name) {
  PyObject* v = PyObject_CallMethodNoArgs(obj, name);
  if (v == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(v);
}

// A CuPy array as its CAI (v3) describes it: data.ptr, shape, strides, dtype, never readonly, and CuPy's
// current stream as the producer's (1 for the legacy default stream). `stream` caches that stream for the
// launch (-1: not asked yet). The fields are read in place once CuPy's layout is confirmed (launch_cupy.h),
// else through the attributes, the first such read confirming it. A dtype the fast path does not read gives a
// null type (the protocols decide).
ArrayRead read_cupy(PyObject* obj, std::size_t position, ArrayValue& out, std::int64_t& stream) {
  static PyObject *k_dtype = interned("dtype"), *k_data = interned("data"), *k_ptr = interned("ptr"),
                  *k_device_id = interned("device_id"), *k_shape = interned("shape"), *k_strides = interned("strides");
  ArrayRead read;
  int code;
  cupy::Fields f;
  if (cupy::read(obj, kMaxDims, f)) {
    if ((code = numpy_dtype_code(f.dtype)) < 0) return read;
    out.data = f.data;
    out.device = f.device;
    out.ndim = static_cast<int>(f.ndim);
    std::copy(f.shape, f.shape + f.ndim, out.shape.begin());
    std::copy(f.strides, f.strides + f.ndim, out.strides.begin());
  } else {
    py::object dtype = get(obj, k_dtype);
    if ((code = numpy_dtype_code(dtype.ptr())) < 0) return read;
    py::object memory = get(obj, k_data);
    out.data = get(memory.ptr(), k_ptr).cast<std::uint64_t>();
    out.device = get(memory.ptr(), k_device_id).cast<int>();
    out.ndim = read_dims(get(obj, k_shape).ptr(), out.shape, position, "shape");
    read_dims(get(obj, k_strides).ptr(), out.strides, position, "strides");
    if (!cupy::direct())
      cupy::confirm(obj, dtype.ptr(), memory.ptr(), out.data, out.device, out.shape.data(), out.strides.data(),
                    out.ndim);
  }
  out.itemsize = itemsize_of(code);
  const Registry& r = registry();
  if (r.cupy_streams && cai_sync_enabled()) {
    if (stream < 0) {
      if (cupy::has_stream_function()) {
        stream = cupy::current_stream();
        if (stream == -1 && PyErr_Occurred()) throw py::error_already_set();
      } else {
        stream = r.cupy_stream_ptr().cast<std::int64_t>();
      }
      if (stream == 0) stream = static_cast<std::int64_t>(drv::Stream::kLegacy);
    }
    read.producer_stream = static_cast<std::uintptr_t>(stream);
  }
  finish(out, code, false, read);
  return read;
}

// An object of a class with a DLPack exchange table: its DLTensor, and, with `order_stream`, the producer's
// current work stream as the stream to order after (the table's "no sync" contract leaves that to the
// consumer). A failed export (e.g. a conjugate view) or a dtype cujit does not read gives a null type: the
// protocols decide, with their own error or description.
ArrayRead read_exchange(PyObject* obj, std::size_t position, ArrayValue& out, const DLPackExchangeAPI& api,
                        bool order_stream) {
  ArrayRead read;
  DLTensor t;
  if (api.dltensor_from_py_object_no_sync(obj, &t) != 0) {
    PyErr_Clear();
    return read;
  }
  const int code = read_dltensor(t, position, out, false);
  if (code < 0) return read;
  if (order_stream && api.current_work_stream != nullptr && cai_sync_enabled()) {
    void* stream = nullptr;
    if (api.current_work_stream(t.device.device_type, t.device.device_id, &stream) != 0) throw py::error_already_set();
    read.producer_stream = stream == nullptr ? drv::Stream::kLegacy : reinterpret_cast<std::uintptr_t>(stream);
  }
  finish(out, code, false, read);
  return read;
}

// A PyTorch tensor as its CAI (v2: no stream) describes it: through PyTorch's DLPack exchange table when it
// has one (one C call), else data_ptr(), shape, stride() in elements and dtype. Tensors that need grad, are
// not on a GPU or have a dtype the CAI describes otherwise (bfloat16) give a null type: their CAI decides.
ArrayRead read_torch(PyObject* obj, std::size_t position, ArrayValue& out, const DLPackExchangeAPI* exchange) {
  static PyObject *k_dtype = interned("dtype"), *k_requires_grad = interned("requires_grad"),
                  *k_get_device = interned("get_device"), *k_data_ptr = interned("data_ptr"),
                  *k_shape = interned("shape"), *k_stride = interned("stride");
  ArrayRead read;
  if (get(obj, k_requires_grad).ptr() == Py_True) return read;
  if (exchange != nullptr) return read_exchange(obj, position, out, *exchange, false);  // its CAI names no stream
  const Registry& r = registry();
  auto code_it = r.dtype_codes.find(get(obj, k_dtype).ptr());
  if (code_it == r.dtype_codes.end() || code_it->second < 0) return read;
  out.device = call(obj, k_get_device).cast<int>();
  if (out.device < 0) return read;
  const int code = code_it->second;
  out.data = call(obj, k_data_ptr).cast<std::uint64_t>();
  out.itemsize = itemsize_of(code);
  out.ndim = read_dims(get(obj, k_shape).ptr(), out.shape, position, "shape");
  read_dims(call(obj, k_stride).ptr(), out.strides, position, "stride()");
  for (int d = 0; d < out.ndim; ++d) out.strides[d] *= out.itemsize;
  finish(out, code, false, read);
  return read;
}

// Any array object the reader knows (device array, CAI, DLPack capsule or producer) into `out`; `keep`
// receives objects that must outlive the launch (a capsule made here). Returns a null type for objects that
// are not arrays the fast path reads.
ArrayRead read_array_object(PyObject* obj, std::size_t position, drv::CUstream consumer, ArrayValue& out,
                            std::vector<py::object>& keep, std::int64_t& cupy_stream) {
  static PyObject *k_cai = interned("__cuda_array_interface__"), *k_dlpack = interned("__dlpack__");
  const Registry& r = registry();
  if (r.device_array != nullptr && PyObject_TypeCheck(obj, r.device_array)) {
    const DeviceArrayView& v = device_array_view(obj, position);
    out.assign(v.value);
    return {v.type, 0};
  }
  if (PyCapsule_CheckExact(obj)) return read_dlpack_capsule(obj, position, out);
  if (r.ndarray != nullptr && PyObject_TypeCheck(obj, r.ndarray)) return {};
  const ClassReader& reader = reader_for(Py_TYPE(obj));
  if (reader.reader != Reader::Protocols) {
    ArrayRead read = reader.reader == Reader::CuPy    ? read_cupy(obj, position, out, cupy_stream)
                     : reader.reader == Reader::Torch ? read_torch(obj, position, out, reader.exchange)
                                                      : read_exchange(obj, position, out, *reader.exchange, true);
    if (read.type != nullptr) return read;
    out = ArrayValue{};
  }
  PyObject* desc = PyObject_GetAttr(obj, k_cai);
  if (desc != nullptr) {
    py::object held = py::reinterpret_steal<py::object>(desc);
    return read_cai(desc, position, out);
  }
  if (!PyErr_ExceptionMatches(PyExc_AttributeError)) throw py::error_already_set();
  PyErr_Clear();
  if (PyObject_HasAttr(obj, k_dlpack)) {
    keep.push_back(dlpack_capsule(obj, position, consumer));
    return read_dlpack_capsule(keep.back().ptr(), position, out);
  }
  return {};
}

// ---- the type key and the argument leaves --------------------------------------------------------------

// A key word is a TypeRef (a scalar or an array argument) or a tuple marker.
using KeyWord = std::uintptr_t;
constexpr KeyWord kTupleOpen = 1, kTupleClose = 2;

struct KeyHash {
  std::size_t operator()(const std::vector<KeyWord>& key) const {
    std::size_t h = key.size();
    for (KeyWord w : key) h = (h ^ (w >> 4)) * 0x100000001b3ull;
    return h;
  }
};

// One value the arguments were read into: a scalar's object or an array's index in `arrays`.
struct Leaf {
  PyObject* object;
  int array;  // -1 for scalars
};

// Everything one launch read from its arguments. Reused per thread (and per nesting depth, since reading an
// argument may run Python code that launches), so a launch allocates nothing once warm.
struct Reading {
  std::vector<KeyWord> key;
  std::vector<Leaf> leaves;
  std::vector<ArrayValue> arrays;
  std::vector<std::uintptr_t> producer_streams;
  std::vector<py::object> keep;
  std::vector<drv::ByteSpan> spans;  // the arrays' byte ranges, when the kernel has a variant for overlaps
  std::int64_t cupy_stream = -1;  // CuPy's current stream, asked once per launch
  void clear() {
    cupy_stream = -1;
    key.clear();
    leaves.clear();
    arrays.clear();
    producer_streams.clear();
    keep.clear();
  }
};

class ReadingLease {
 public:
  ReadingLease() {
    if (pool().size() <= depth()) pool().push_back(std::make_unique<Reading>());
    reading_ = pool()[depth()++].get();
  }
  ~ReadingLease() {
    reading_->clear();
    --depth();
  }
  Reading& operator*() const { return *reading_; }

 private:
  static std::vector<std::unique_ptr<Reading>>& pool() {
    thread_local std::vector<std::unique_ptr<Reading>> p;
    return p;
  }
  static std::size_t& depth() {
    thread_local std::size_t d = 0;
    return d;
  }
  Reading* reading_;
};

// Appends `obj`'s key words and leaves; false when it is a kind only the Python path passes.
bool read_argument(PyObject* obj, std::size_t position, drv::CUstream consumer, Reading& in) {
  auto scalar = [&](TypeRef t) {
    in.key.push_back(reinterpret_cast<KeyWord>(t));
    in.leaves.push_back({obj, -1});
    return true;
  };
  if (PyBool_Check(obj)) return scalar(types::boolean());
  if (PyLong_CheckExact(obj)) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(obj, &overflow);
    if (overflow == 0 && v != LLONG_MIN) return scalar(types::int64());  // typeof: bit_length() < 64
    if (overflow > 0) {
      PyLong_AsUnsignedLongLong(obj);
      if (!PyErr_Occurred()) return scalar(types::uint64());
      PyErr_Clear();
    }
    PyErr_SetString(PyExc_ValueError, "Int value is too large");
    throw py::error_already_set();
  }
  if (PyFloat_CheckExact(obj)) return scalar(types::float64());
  if (PyComplex_CheckExact(obj)) return scalar(types::complex128());
  const Registry& r = registry();
  auto numpy_scalar = r.scalars.find(Py_TYPE(obj));
  if (numpy_scalar != r.scalars.end()) return scalar(numpy_scalar->second);
  if (PyTuple_Check(obj)) {
    in.key.push_back(kTupleOpen);
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(obj); ++i)
      if (!read_argument(PyTuple_GET_ITEM(obj, i), position, consumer, in)) return false;
    in.key.push_back(kTupleClose);
    return true;
  }
  in.arrays.emplace_back();
  ArrayRead read = read_array_object(obj, position, consumer, in.arrays.back(), in.keep, in.cupy_stream);
  if (read.type == nullptr) return false;
  in.arrays.back().position = static_cast<int>(position);
  if (read.producer_stream != 0) in.producer_streams.push_back(read.producer_stream);
  in.key.push_back(reinterpret_cast<KeyWord>(read.type));
  in.leaves.push_back({obj, static_cast<int>(in.arrays.size() - 1)});
  return true;
}

// The argument types a key stands for (a miss asks the dispatcher for the kernel of these).
TypeRef key_type(const std::vector<KeyWord>& key, std::size_t& at) {
  if (key[at] != kTupleOpen) return reinterpret_cast<TypeRef>(key[at++]);
  ++at;
  std::vector<TypeRef> elements;
  while (key[at] != kTupleClose) elements.push_back(key_type(key, at));
  ++at;
  return types::tuple(elements);
}

// ---- specialisations -----------------------------------------------------------------------------------

// How one leaf read from the arguments goes into the parameter buffer.
struct PackOp {
  enum class Kind : std::uint8_t { Scalar, Complex, Array } kind;
  std::uint32_t slot;  // Complex: the real part's slot, the imaginary part's is the next
};

struct LoadedFunction {
  drv::CUcontext context;
  std::shared_ptr<drv::Function> function;
  drv::LaunchLimits limits;
};

// One specialisation as the launch path sees it.
struct Entry {
  std::vector<KeyWord> key;
  py::object kernel;      // the dispatcher's _Kernel
  bool python_path = false;  // launched by dispatcher._launch_slow (see the file comment)
  bool cooperative = false;
  py::object if_overlap;  // None, or a callable giving the Function of the variant for overlapping arrays
  drv::ArgumentPlan plan;
  std::vector<PackOp> program;
  std::vector<LoadedFunction> functions;  // per context
};

drv::ArgSlot slot_for(TypeRef t) {
  if (t->kind() == TypeKind::Array) return drv::ArgSlot::make_array(t->ndim());
  if (t->is_boolean()) return drv::ArgSlot::make_scalar(drv::ScalarKind::Bool, 1);
  if (t->is_integer()) {
    TypeRef u = t->unliteral();
    return drv::ArgSlot::make_scalar(u->is_signed() ? drv::ScalarKind::Signed : drv::ScalarKind::Unsigned,
                                     std::max(u->bitwidth(), 8) / 8);
  }
  return drv::ArgSlot::make_scalar(drv::ScalarKind::Float, t->bitwidth() / 8);
}

// The plan and program for parameters `params` and a key; false when the fast path cannot pack them (the
// Python path converts, or raises its error).
bool build_program(const std::vector<TypeRef>& params, const std::vector<KeyWord>& key, Entry& e) {
  std::vector<drv::ArgSlot> slots;
  std::vector<KeyWord> leaf_words;  // the key's words of leaves, in order
  for (KeyWord w : key)
    if (w != kTupleOpen && w != kTupleClose) leaf_words.push_back(w);
  std::size_t next = 0;
  for (TypeRef p : params) {
    for (const types::ArgumentLeaf& leaf : types::argument_leaves(p)) {
      const TypeKind k = leaf.type->kind();
      const bool scalar = leaf.type->is_number() && k != TypeKind::Complex;
      if (k != TypeKind::Array && !scalar) return false;  // pointers, records, bfloat16, Optional...
      if (leaf.role == types::ArgumentLeaf::Role::OptionalFlag) return false;
      if (leaf.role == types::ArgumentLeaf::Role::ComplexImag) {
        slots.push_back(slot_for(leaf.type));
        continue;
      }
      if (next >= leaf_words.size()) return false;
      auto given = reinterpret_cast<TypeRef>(leaf_words[next++]);
      if ((k == TypeKind::Array) != (given->kind() == TypeKind::Array)) return false;
      if (k == TypeKind::Array && given->ndim() != leaf.type->ndim()) return false;
      const auto slot = static_cast<std::uint32_t>(slots.size());
      slots.push_back(slot_for(leaf.type));
      e.program.push_back({k == TypeKind::Array ? PackOp::Kind::Array
                           : leaf.role == types::ArgumentLeaf::Role::ComplexReal ? PackOp::Kind::Complex
                                                                                 : PackOp::Kind::Scalar,
                           slot});
    }
  }
  if (next != leaf_words.size()) return false;
  e.plan = drv::ArgumentPlan(std::move(slots));
  return true;
}

// One dispatcher's specialisations by type key. Used under the GIL only.
class LaunchTable {
 public:
  std::shared_ptr<Entry> find(const std::vector<KeyWord>& key) {
    if (last_ && last_->key == key) return last_;
    auto it = entries_.find(key);
    if (it == entries_.end()) return nullptr;
    last_ = it->second;
    return last_;
  }
  std::shared_ptr<Entry> add(const std::vector<KeyWord>& key, py::object kernel) {
    auto e = std::make_shared<Entry>();
    e->key = key;
    e->kernel = kernel;
    std::vector<TypeRef> params;
    for (py::handle t : kernel.attr("argtypes")) params.push_back(t.cast<const Type*>());
    e->cooperative = kernel.attr("cooperative").cast<bool>();
    e->if_overlap = kernel.attr("if_overlap");
    e->python_path = py::len(kernel.attr("exceptions")) > 0 || !build_program(params, key, *e);
    entries_[key] = e;
    last_ = e;
    return e;
  }
  void clear() {
    entries_.clear();
    last_.reset();
  }
  std::size_t size() const { return entries_.size(); }

 private:
  std::unordered_map<std::vector<KeyWord>, std::shared_ptr<Entry>, KeyHash> entries_;
  std::shared_ptr<Entry> last_;
};

// ---- the configured kernel -----------------------------------------------------------------------------

struct ConfiguredLaunch {
  PyObject_HEAD
  vectorcallfunc vectorcall;
  PyObject* dispatcher;
  PyObject* table_object;
  PyObject* griddim;
  PyObject* blockdim;
  PyObject* stream;
  PyObject* native_stream;  // the cujit._core.driver.Stream, or None for numba's default
  PyObject* sharedmem;
  PyObject* weakrefs;
  LaunchTable* table;
  drv::LaunchConfig config;
};

PyObject* call_python_path(ConfiguredLaunch* self, PyObject* const* args, std::size_t n) {
  py::tuple tuple(n);
  for (std::size_t i = 0; i < n; ++i) tuple[i] = py::reinterpret_borrow<py::object>(args[i]);
  return py::handle(self->dispatcher).attr("_launch_slow")(py::handle(reinterpret_cast<PyObject*>(self)), tuple).release().ptr();
}

const LoadedFunction& function_here(Entry& e) {
  drv::CUcontext ctx = drv::current_context_handle();
  for (LoadedFunction& f : e.functions)
    if (f.context == ctx && f.function->module().loaded()) return f;
  // First use in this context, or its module was unloaded since: the kernel loads it (setup callbacks run).
  auto fn = e.kernel.attr("function")().cast<std::shared_ptr<drv::Function>>();
  ctx = fn->context().handle();
  LoadedFunction loaded{ctx, fn, drv::LaunchLimits::for_function(*fn)};
  for (LoadedFunction& f : e.functions)
    if (f.context == ctx) return f = loaded;
  e.functions.push_back(loaded);
  return e.functions.back();
}

// An array whose producer names a GPU (DLPack, CuPy, PyTorch) must be on the kernel's.
void check_array_device(const ArrayValue& a, int device) {
  if (a.device >= 0 && a.device != device)
    argument_error(PyExc_ValueError, static_cast<std::size_t>(a.position),
                   "the array is on GPU " + std::to_string(a.device) + ", the kernel launches on GPU " +
                       std::to_string(device));
}

bool arrays_overlap(Reading& in) {
  if (in.arrays.size() < 2) return false;
  in.spans.clear();
  for (const ArrayValue& a : in.arrays)
    if (auto span = drv::array_span(a.arg(), a.ndim)) in.spans.push_back(*span);
  return drv::any_overlap(in.spans);
}

// CUJIT_LAUNCH_PROFILE=1: the fast path times its steps (benchmarks/launch_overhead.py --profile reads them).
enum ProfileStep { kReadArguments, kFindKernel, kPack, kDriverLaunch, kSteps };
const char* const kStepNames[kSteps] = {"read arguments", "find kernel", "pack", "driver launch"};
std::array<std::atomic<std::int64_t>, kSteps> profile_ns{};
std::atomic<std::int64_t> profiled_launches{0};

bool profiling() {
  static const bool on = [] {
    const char* v = std::getenv("CUJIT_LAUNCH_PROFILE");
    return v != nullptr && std::strcmp(v, "0") != 0 && *v != '\0';
  }();
  return on;
}

class StepClock {
 public:
  StepClock() : last_(profiling() ? now() : 0) {}
  void lap(ProfileStep step) {
    if (!profiling()) return;
    std::int64_t t = now();
    profile_ns[step] += t - last_;
    last_ = t;
  }

 private:
  static std::int64_t now() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
  std::int64_t last_;
};

PyObject* launch(ConfiguredLaunch* self, PyObject* const* args, std::size_t n) {
  StepClock clock;
  ReadingLease lease;
  Reading& in = *lease;
  for (std::size_t i = 0; i < n; ++i)
    if (!read_argument(args[i], i, self->config.stream, in)) return call_python_path(self, args, n);
  clock.lap(kReadArguments);
  std::shared_ptr<Entry> e = self->table->find(in.key);
  if (!e) {
    py::list argtypes;
    for (std::size_t at = 0; at < in.key.size();) argtypes.append(py::cast(key_type(in.key, at), py::return_value_policy::reference));
    py::object kernel = py::handle(self->dispatcher).attr("_kernel_for_types")(py::tuple(argtypes));
    e = self->table->find(in.key);  // another thread may have added it meanwhile
    if (!e) e = self->table->add(in.key, kernel);
  }
  if (e->python_path) return call_python_path(self, args, n);
  const LoadedFunction& loaded = function_here(*e);
  std::shared_ptr<drv::Function> fn = loaded.function;
  drv::LaunchLimits limits = loaded.limits;
  for (const ArrayValue& a : in.arrays) check_array_device(a, fn->context().device_id());
  for (std::uintptr_t producer : in.producer_streams) drv::order_after(self->config.stream, producer);
  clock.lap(kFindKernel);

  // The parameter buffer: on the stack for up to 256 parameters.
  const drv::ArgumentPlan& plan = e->plan;
  std::array<std::uint64_t, 256> small_storage;
  std::array<void*, 256> small_pointers;
  std::vector<std::uint64_t> big_storage;
  std::vector<void*> big_pointers;
  std::uint64_t* storage = small_storage.data();
  void** pointers = small_pointers.data();
  if (plan.buffer_size() / 8 > small_storage.size() || plan.param_count() > small_pointers.size()) {
    big_storage.resize(plan.buffer_size() / 8);
    big_pointers.resize(plan.param_count());
    storage = big_storage.data();
    pointers = big_pointers.data();
  }
  auto* bytes = reinterpret_cast<std::uint8_t*>(storage);
  const auto& offsets = plan.param_offsets();
  for (std::size_t p = 0; p < offsets.size(); ++p) pointers[p] = bytes + offsets[p];
  for (std::size_t i = 0; i < e->program.size(); ++i) {
    const PackOp& op = e->program[i];
    const Leaf& leaf = in.leaves[i];
    std::uint8_t* at = bytes + offsets[plan.first_param(op.slot)];
    const drv::ArgSlot& slot = plan.slots()[op.slot];
    switch (op.kind) {
      case PackOp::Kind::Scalar: {
        std::uint64_t bits = scalar_bits(slot, leaf.object, i);
        std::memcpy(at, &bits, static_cast<std::size_t>(slot.size));
        break;
      }
      case PackOp::Kind::Complex: {  // two float parameters of 4 or 8 bytes
        Py_complex c = PyComplex_AsCComplex(leaf.object);
        if (c.real == -1.0 && PyErr_Occurred()) throw py::error_already_set();
        std::uint8_t* imag = bytes + offsets[plan.first_param(op.slot + 1)];
        if (slot.size == 4) {
          const float parts[2] = {static_cast<float>(c.real), static_cast<float>(c.imag)};
          std::memcpy(at, &parts[0], 4);
          std::memcpy(imag, &parts[1], 4);
        } else {
          std::memcpy(at, &c.real, 8);
          std::memcpy(imag, &c.imag, 8);
        }
        break;
      }
      case PackOp::Kind::Array: {
        const ArrayValue& a = in.arrays[static_cast<std::size_t>(leaf.array)];
        drv::write_array_params(reinterpret_cast<std::int64_t*>(at), a.ndim, a.arg());
        break;
      }
    }
  }
  if (!e->if_overlap.is_none() && arrays_overlap(in)) {
    fn = e->if_overlap().cast<std::shared_ptr<drv::Function>>();
    limits = drv::LaunchLimits::for_function(*fn);
  }
  drv::LaunchConfig config = self->config;
  config.cooperative = e->cooperative;
  clock.lap(kPack);
  {
    // The GIL released with CPython's own calls (pybind11's guard also consults its internals each time).
    struct Release {
      PyThreadState* state = PyEval_SaveThread();
      ~Release() { PyEval_RestoreThread(state); }
    } release;
    drv::launch_function(*fn, config, limits, pointers);
  }
  clock.lap(kDriverLaunch);
  if (profiling()) ++profiled_launches;
  Py_RETURN_NONE;
}

// `dispatcher[config]`: the ConfiguredLaunch memoised in dispatcher._configs, or dispatcher._configure(config)
// for a configuration not seen yet (or unhashable: lists).
PyObject* configured_subscript(PyObject* dispatcher, PyObject* config) {
  static PyObject *k_configs = interned("_configs"), *k_configure = interned("_configure");
  PyObject* configs = PyObject_GetAttr(dispatcher, k_configs);
  if (configs == nullptr) return nullptr;
  PyObject* hit = PyDict_Check(configs) ? PyDict_GetItemWithError(configs, config) : nullptr;
  Py_XINCREF(hit);
  Py_DECREF(configs);
  if (hit != nullptr) return hit;
  if (PyErr_Occurred()) {
    if (!PyErr_ExceptionMatches(PyExc_TypeError)) return nullptr;
    PyErr_Clear();
  }
  return PyObject_CallMethodOneArg(dispatcher, k_configure, config);
}

PyObject* configured_vectorcall(PyObject* callable, PyObject* const* args, std::size_t nargsf, PyObject* kwnames) {
  auto* self = reinterpret_cast<ConfiguredLaunch*>(callable);
  if (kwnames != nullptr && PyTuple_GET_SIZE(kwnames) > 0) {
    PyErr_SetString(PyExc_TypeError, "kernel launches take positional arguments only");
    return nullptr;
  }
  try {
    return launch(self, args, PyVectorcall_NARGS(nargsf));
  } catch (py::error_already_set& e) {
    e.restore();
  } catch (const py::builtin_exception& e) {
    e.set_error();
  } catch (...) {
    try {
      set_runtime_error(std::current_exception());
    } catch (const std::exception& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    }
  }
  return nullptr;
}

int configured_traverse(PyObject* obj, visitproc visit, void* arg) {
  auto* self = reinterpret_cast<ConfiguredLaunch*>(obj);
  Py_VISIT(Py_TYPE(obj));
  Py_VISIT(self->dispatcher);
  Py_VISIT(self->table_object);
  Py_VISIT(self->griddim);
  Py_VISIT(self->blockdim);
  Py_VISIT(self->stream);
  Py_VISIT(self->native_stream);
  Py_VISIT(self->sharedmem);
  return 0;
}

int configured_clear(PyObject* obj) {
  auto* self = reinterpret_cast<ConfiguredLaunch*>(obj);
  self->table = nullptr;
  Py_CLEAR(self->dispatcher);
  Py_CLEAR(self->table_object);
  Py_CLEAR(self->griddim);
  Py_CLEAR(self->blockdim);
  Py_CLEAR(self->stream);
  Py_CLEAR(self->native_stream);
  Py_CLEAR(self->sharedmem);
  return 0;
}

void configured_dealloc(PyObject* obj) {
  PyTypeObject* type = Py_TYPE(obj);
  PyObject_GC_UnTrack(obj);
  if (reinterpret_cast<ConfiguredLaunch*>(obj)->weakrefs != nullptr) PyObject_ClearWeakRefs(obj);
  configured_clear(obj);
  type->tp_free(obj);
  Py_DECREF(type);
}

drv::Dim3 dim3_of(PyObject* t) {
  py::tuple dims = py::reinterpret_borrow<py::object>(t).cast<py::tuple>();
  if (dims.size() != 3) throw py::value_error("griddim and blockdim are normalised 3-tuples here");
  return {dims[0].cast<std::int64_t>(), dims[1].cast<std::int64_t>(), dims[2].cast<std::int64_t>()};
}

// ConfiguredLaunch(dispatcher, table, griddim, blockdim, stream, native_stream, sharedmem): griddim and
// blockdim normalised 3-tuples, native_stream the driver Stream (None: numba's default stream 0).
PyObject* configured_new(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  PyObject *dispatcher, *table, *griddim, *blockdim, *stream, *native, *sharedmem;
  if (kwargs != nullptr && PyDict_GET_SIZE(kwargs) > 0) {
    PyErr_SetString(PyExc_TypeError, "ConfiguredLaunch takes positional arguments");
    return nullptr;
  }
  if (!PyArg_UnpackTuple(args, "ConfiguredLaunch", 7, 7, &dispatcher, &table, &griddim, &blockdim, &stream, &native,
                         &sharedmem))
    return nullptr;
  drv::LaunchConfig config;
  LaunchTable* table_ptr = nullptr;
  try {
    table_ptr = py::handle(table).cast<LaunchTable*>();
    config.grid = dim3_of(griddim);
    config.block = dim3_of(blockdim);
    config.shared_mem = py::handle(sharedmem).cast<std::size_t>();
    if (native != Py_None) config.stream = py::handle(native).cast<drv::Stream&>().handle();
  } catch (py::error_already_set& e) {
    e.restore();
    return nullptr;
  } catch (const py::cast_error& e) {
    PyErr_SetString(PyExc_TypeError, e.what());
    return nullptr;
  } catch (const py::builtin_exception& e) {
    e.set_error();
    return nullptr;
  }
  auto* self = reinterpret_cast<ConfiguredLaunch*>(type->tp_alloc(type, 0));
  if (self == nullptr) return nullptr;
  self->vectorcall = configured_vectorcall;
  auto hold = [](PyObject* o) {
    Py_INCREF(o);
    return o;
  };
  self->dispatcher = hold(dispatcher);
  self->table_object = hold(table);
  self->griddim = hold(griddim);
  self->blockdim = hold(blockdim);
  self->stream = hold(stream);
  self->native_stream = hold(native);
  self->sharedmem = hold(sharedmem);
  self->table = table_ptr;
  new (&self->config) drv::LaunchConfig(config);
  return reinterpret_cast<PyObject*>(self);
}

PyMemberDef configured_members[] = {
    {"dispatcher", T_OBJECT, offsetof(ConfiguredLaunch, dispatcher), READONLY, nullptr},
    {"griddim", T_OBJECT, offsetof(ConfiguredLaunch, griddim), READONLY, nullptr},
    {"blockdim", T_OBJECT, offsetof(ConfiguredLaunch, blockdim), READONLY, nullptr},
    {"stream", T_OBJECT, offsetof(ConfiguredLaunch, stream), READONLY, nullptr},
    {"sharedmem", T_OBJECT, offsetof(ConfiguredLaunch, sharedmem), READONLY, nullptr},
    {"_native_stream", T_OBJECT, offsetof(ConfiguredLaunch, native_stream), READONLY, nullptr},
    {"__vectorcalloffset__", T_PYSSIZET, offsetof(ConfiguredLaunch, vectorcall), READONLY, nullptr},
    {"__weaklistoffset__", T_PYSSIZET, offsetof(ConfiguredLaunch, weakrefs), READONLY, nullptr},
    {nullptr, 0, 0, 0, nullptr}};

PyType_Slot configured_slots[] = {
    {Py_tp_doc, const_cast<char*>("kernel[griddim, blockdim, stream, sharedmem]: call it with the kernel's arguments")},
    {Py_tp_new, reinterpret_cast<void*>(configured_new)},
    {Py_tp_dealloc, reinterpret_cast<void*>(configured_dealloc)},
    {Py_tp_traverse, reinterpret_cast<void*>(configured_traverse)},
    {Py_tp_clear, reinterpret_cast<void*>(configured_clear)},
    {Py_tp_call, reinterpret_cast<void*>(PyVectorcall_Call)},
    {Py_tp_members, configured_members},
    {0, nullptr}};

PyType_Spec configured_spec = {"cujit._core.launch.ConfiguredLaunch", sizeof(ConfiguredLaunch), 0,
                               Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
                               configured_slots};

}  // namespace

void register_launch(py::module_& m) {
  py::module_ l = m.def_submodule("launch", "the launch fast path (see cpp/bindings/py_launch.cpp)");

  py::class_<LaunchTable>(l, "LaunchTable", "One dispatcher's specialisations by compact type key")
      .def(py::init<>())
      .def("clear", &LaunchTable::clear, "Forgets every specialisation (the dispatcher's overloads changed)")
      .def("__len__", &LaunchTable::size);

  PyObject* type = PyType_FromSpec(&configured_spec);
  if (type == nullptr) throw py::error_already_set();
  l.attr("ConfiguredLaunch") = py::reinterpret_steal<py::object>(type);

  l.def(
      "profile",
      [](bool reset) {
        py::dict out;
        const std::int64_t n = profiled_launches.load();
        out["launches"] = n;
        for (int step = 0; step < kSteps; ++step)
          out[kStepNames[step]] = n ? static_cast<double>(profile_ns[step].load()) / n / 1000.0 : 0.0;
        if (reset) {
          for (auto& ns : profile_ns) ns = 0;
          profiled_launches = 0;
        }
        return out;
      },
      py::arg("reset") = false,
      "Mean microseconds per fast-path launch in each step, when CUJIT_LAUNCH_PROFILE=1 (else zeros).");
  l.def(
      "install_subscript",
      [](py::handle cls) {
        static PyMethodDef def{"__getitem__", reinterpret_cast<PyCFunction>(configured_subscript), METH_O,
                               "kernel[griddim, blockdim, stream, sharedmem]: the configured kernel, from the "
                               "dispatcher's _configs, or made by its _configure(config)."};
        if (!PyType_Check(cls.ptr())) throw py::type_error("install_subscript takes a class");
        py::object method = py::reinterpret_steal<py::object>(
            PyDescr_NewMethod(reinterpret_cast<PyTypeObject*>(cls.ptr()), &def));
        if (!method) throw py::error_already_set();
        py::setattr(cls, "__getitem__", method);
      },
      py::arg("cls"),
      "Replaces cls.__getitem__ (a dispatcher class) with the fast path's: the configured kernel of a "
      "configuration seen before without a Python frame, self._configure(config) otherwise.");
  l.def(
      "register_types",
      [](py::handle device_array, py::handle ndarray, py::dict scalars) {
        Registry& r = registry();
        r.device_array = reinterpret_cast<PyTypeObject*>(device_array.inc_ref().ptr());
        r.ndarray = reinterpret_cast<PyTypeObject*>(ndarray.inc_ref().ptr());
        for (auto [cls, t] : scalars)
          r.scalars[reinterpret_cast<PyTypeObject*>(cls.inc_ref().ptr())] = t.cast<const Type*>();
      },
      py::arg("device_array"), py::arg("ndarray"), py::arg("scalars"),
      "The classes the fast path recognises: cujit's DeviceNDArray, numpy.ndarray (left to the Python path), "
      "and numpy scalar types with their cujit types.");
  l.def(
      "register_classifier", [](py::object classify) { registry().classify = std::move(classify); },
      py::arg("classify"),
      "classify(cls), asked once per class of array argument: ('cupy', current_stream_ptr or None), where "
      "current_stream_ptr is a callable or CuPy's C function capsule (signature 'intptr_t (void)'), "
      "('torch', {dtype: (kind, itemsize)}) or ('protocols', None).");
  l.def(
      "reader_of",
      [](py::handle cls) {
        const ClassReader& r = reader_for(reinterpret_cast<PyTypeObject*>(cls.ptr()));
        const char* names[] = {"protocols", "cupy", "torch", "DLPack exchange"};
        return std::string(names[static_cast<int>(r.reader)]) +
               (r.reader == Reader::Torch && r.exchange != nullptr ? " (DLPack exchange)"
                : r.reader == Reader::CuPy && cupy::direct()     ? " (in place)"
                                                                 : "");
      },
      py::arg("cls"),
      "How the fast path reads arguments of class cls: 'cupy' (+ ' (in place)' once CuPy's field layout was "
      "confirmed), 'torch' (+ ' (DLPack exchange)' when through its DLPack C exchange table), 'DLPack "
      "exchange' (another class with such a table) or 'protocols'.");
  l.def(
      "array_type",
      [](py::handle obj) -> py::object {
        ArrayValue value;
        std::vector<py::object> keep;
        std::int64_t cupy_stream = -1;
        ArrayRead read = read_array_object(obj.ptr(), 0, nullptr, value, keep, cupy_stream);
        if (read.type == nullptr) return py::none();
        return py::cast(read.type, py::return_value_policy::reference);
      },
      py::arg("obj"),
      "The cujit array type of a device array, a __cuda_array_interface__ object or a DLPack capsule or "
      "producer, as the launch path types it; None for objects it does not read (numpy arrays, records).");
  l.def(
      "read_array",
      [](py::handle obj, std::size_t position, py::handle native_stream) -> py::object {
        ArrayValue v;
        std::vector<py::object> keep;
        drv::CUstream consumer = native_stream.is_none() ? nullptr : native_stream.cast<drv::Stream&>().handle();
        std::int64_t cupy_stream = -1;
        ArrayRead read = read_array_object(obj.ptr(), position, consumer, v, keep, cupy_stream);
        if (read.type == nullptr) return py::none();
        v.position = static_cast<int>(position);
        if (v.device >= 0) check_array_device(v, drv::current_context().device_id());  // no driver call otherwise
        if (read.producer_stream != 0) drv::order_after(consumer, read.producer_stream);
        py::tuple shape(v.ndim), strides(v.ndim);
        for (int d = 0; d < v.ndim; ++d) {
          shape[d] = py::int_(v.shape[d]);
          strides[d] = py::int_(v.strides[d]);
        }
        return py::make_tuple(v.data, v.nitems, v.itemsize, shape, strides, keep.empty() ? py::none() : keep[0]);
      },
      py::arg("obj"), py::arg("position"), py::arg("native_stream"),
      "(data, nitems, itemsize, shape, strides, keepalive) of an array object for a launch on native_stream "
      "(the producer's stream ordered before it), or None for objects the fast path does not read.");
}

}  // namespace cujit::bindings
