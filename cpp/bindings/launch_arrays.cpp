// Array arguments read for the launch fast path (launch_arrays.h says what is read and how).
#include "launch_arrays.h"

#include <algorithm>
#include <cstring>

#include "cujit/host_driver.h"
#include "launch_cupy.h"

namespace cujit::bindings::launch {

Registry& registry() {
  // Leaked on purpose: its Python objects must not be released by a static destructor, after the interpreter
  // has finalized (that aborts the process at exit).
  static Registry* r = new Registry;
  return *r;
}

[[noreturn]] void argument_error(PyObject* cls, std::size_t position, const std::string& what) {
  PyErr_SetString(cls, ("kernel argument " + std::to_string(position) + ": " + what).c_str());
  throw py::error_already_set();
}

namespace {

// The dtypes arrays can have on the fast path, and the interned array types built from them.
enum DtypeCode : int { kBool, kI8, kI16, kI32, kI64, kU8, kU16, kU32, kU64, kF16, kF32, kF64, kC64, kC128, kDtypes };

TypeRef dtype_type(int code) {
  static const TypeRef table[kDtypes] = {types::boolean(),   types::int8(),      types::int16(),   types::int32(),
                                         types::int64(),     types::uint8(),     types::uint16(),  types::uint32(),
                                         types::uint64(),    types::float16(),   types::float32(), types::float64(),
                                         types::complex64(), types::complex128()};
  return table[code];
}

// -1 when a numpy kind letter ('b', 'i', 'u', 'f', 'c') and size name no dtype of the fast path.
int dtype_code(char kind, std::int64_t size) {
  switch (kind) {
    case 'b':
      return size == 1 ? kBool : -1;
    case 'i':
      return size == 1 ? kI8 : size == 2 ? kI16 : size == 4 ? kI32 : size == 8 ? kI64 : -1;
    case 'u':
      return size == 1 ? kU8 : size == 2 ? kU16 : size == 4 ? kU32 : size == 8 ? kU64 : -1;
    case 'f':
      return size == 2 ? kF16 : size == 4 ? kF32 : size == 8 ? kF64 : -1;
    case 'c':
      return size == 8 ? kC64 : size == 16 ? kC128 : -1;
    default:
      return -1;
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

}  // namespace

PyObject* interned(const char* text) {
  PyObject* s = PyUnicode_InternFromString(text);
  if (s == nullptr) throw py::error_already_set();
  return s;  // kept for the process
}

namespace {

// A dict item (borrowed) or null.
PyObject* item(PyObject* dict, PyObject* key) {
  PyObject* v = PyDict_GetItemWithError(dict, key);
  if (v == nullptr && PyErr_Occurred()) throw py::error_already_set();
  return v;
}

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
      argument_error(PyExc_ValueError, position,
                     "__cuda_array_interface__ has strides of another length than its shape");
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
      argument_error(PyExc_ValueError, position,
                     "__cuda_array_interface__ 'stream' is 0, which the interface "
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
constexpr std::int32_t kDLCPU = 1, kDLCUDA = 2, kDLCUDAManaged = 13;
constexpr std::uint64_t kDLReadOnly = 1;

// On the CPU target (its host driver installed) host memory is device memory: kDLCPU tensors are read too.
bool in_gpu_memory(std::int32_t device_type) {
  return device_type == kDLCUDA || device_type == kDLCUDAManaged ||
         (device_type == kDLCPU && hostrt::host_driver_installed());
}

void check_device_type(std::int32_t type, std::size_t position) {
  if (!in_gpu_memory(type))
    argument_error(
        PyExc_TypeError, position,
        "a DLPack tensor on device type " + std::to_string(type) + " is not in GPU memory (kDLCUDA or kDLCUDAManaged)");
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

}  // namespace

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

namespace {

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

// ---- cujit's device arrays: their launch view kept in the object ----

// DeviceNDArray's C base: the array's launch view, read on its first launch (a device array's memory, shape,
// strides and dtype never change), so that a launch reads an array with one type check and no dict lookup.
struct ViewHolder {
  PyObject_HEAD
  DeviceArrayView* view;  // owned; null until the first launch reads the array
};

void view_holder_dealloc(PyObject* self) {
  PyTypeObject* type = Py_TYPE(self);
  delete reinterpret_cast<ViewHolder*>(self)->view;
  type->tp_free(self);
  Py_DECREF(type);  // a heap type's instances hold a reference to it (subtype_dealloc leaves that to us)
}

// copy and pickle: the instance's __dict__ (the view is made again by the copy's first launch).
PyObject* view_holder_getstate(PyObject* self, PyObject*) { return PyObject_GenericGetDict(self, nullptr); }

DeviceArrayView* make_view(PyObject* obj, std::size_t position) {
  py::handle h(obj);
  auto v = std::make_unique<DeviceArrayView>();
  v->value.data = h.attr("_ptr").cast<std::uint64_t>();
  v->value.ndim = read_dims(h.attr("shape").ptr(), v->value.shape, position, "shape");
  read_dims(h.attr("strides").ptr(), v->value.strides, position, "strides");
  py::object dtype = h.attr("dtype");
  v->value.itemsize = dtype.attr("itemsize").cast<std::int64_t>();
  v->value.nitems = count_items(v->value);
  // A plain scalar dtype in the machine's byte order is typed here as a CAI array's is; records, subarrays and
  // what numba refuses are typed by the array itself (its _numba_type_, which raises numba's errors).
  std::string kind = py::str(dtype.attr("kind")), order = py::str(dtype.attr("byteorder"));
  int code = kind.size() == 1 && (order == "=" || order == "|") ? dtype_code(kind[0], v->value.itemsize) : -1;
  v->type = code >= 0 ? typed_array(v->value, code, false)
                      : py::reinterpret_borrow<py::object>(h.attr("_numba_type_")).cast<const Type*>();
  v->span = drv::array_span(v->value.arg(), v->value.ndim);
  return v.release();
}

}  // namespace

PyTypeObject* device_array_base() {
  static PyTypeObject* type = [] {
    static PyMethodDef methods[] = {
        {"__getstate__", &view_holder_getstate, METH_NOARGS, "the instance's __dict__ (its launch view is not kept)"},
        {nullptr, nullptr, 0, nullptr}};
    static PyType_Slot slots[] = {
        {Py_tp_dealloc, reinterpret_cast<void*>(&view_holder_dealloc)},
        {Py_tp_methods, methods},
        {Py_tp_new, reinterpret_cast<void*>(&PyType_GenericNew)},
        {Py_tp_doc, const_cast<char*>("The C base of cujit's DeviceNDArray: its launch view, read once.")},
        {0, nullptr}};
    static PyType_Spec spec = {"cujit._runtime.launch.DeviceArrayBase", sizeof(ViewHolder), 0,
                               Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, slots};
    PyObject* t = PyType_FromSpec(&spec);
    if (t == nullptr) throw py::error_already_set();
    return reinterpret_cast<PyTypeObject*>(t);  // kept for the process
  }();
  return type;
}

const DeviceArrayView* device_array_view(PyObject* obj, std::size_t position) {
  const Registry& r = registry();
  if (r.device_array == nullptr || !PyObject_TypeCheck(obj, r.device_array)) return nullptr;
  auto* holder = reinterpret_cast<ViewHolder*>(obj);  // register_types checked the class derives from the base
  if (holder->view == nullptr) holder->view = make_view(obj, position);
  return holder->view;
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

namespace {

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

}  // namespace

// Any array object the reader knows (device array, CAI, DLPack capsule or producer) into `out`; `keep`
// receives objects that must outlive the launch (a capsule made here). Returns a null type for objects that
// are not arrays the fast path reads.
ArrayRead read_array_object(PyObject* obj, std::size_t position, drv::CUstream consumer, ArrayValue& out,
                            std::vector<py::object>& keep, std::int64_t& cupy_stream) {
  static PyObject *k_cai = interned("__cuda_array_interface__"), *k_dlpack = interned("__dlpack__");
  const Registry& r = registry();
  if (const DeviceArrayView* v = device_array_view(obj, position)) {
    out.assign(v->value);
    return {v->type, 0};
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

}  // namespace cujit::bindings::launch
