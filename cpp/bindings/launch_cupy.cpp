#include "launch_cupy.h"

#include <algorithm>
#include <cstring>

namespace cujit::bindings::cupy {
namespace {

// The declarations the offsets come from (64-bit CPython, Cython's layout: the object header, then the
// vtable pointer of a class with cdef methods, then the fields in declaration order):
//   cdef class _ndarray_base:            object __weakref__; Py_ssize_t size; shape_t _shape;
//                                        strides_t _strides; bint _c_contiguous, _f_contiguous,
//                                        _index_32_bits; object dtype; MemoryPointer data; _ndarray_base base
//   cdef class MemoryPointer:            intptr_t ptr; int device_id; BaseMemory mem
// shape_t and strides_t are std::vector<Py_ssize_t>: three pointers (begin, end, end of storage).
constexpr Py_ssize_t kShape = 40, kStrides = 64, kDtype = 104, kData = 112;
constexpr Py_ssize_t kPointer = 24, kDeviceId = 32;

struct Vector {
  const Py_ssize_t* begin;
  const Py_ssize_t* end;
  const Py_ssize_t* capacity;
};

enum class Layout { Unsettled, Accepted, Refused };

struct State {
  Layout layout = Layout::Unsettled;
  PyTypeObject* memory_pointer = nullptr;  // the MemoryPointer class seen at confirmation (kept alive)
  std::intptr_t (*stream)() = nullptr;
};

State& state() {
  static State s;
  return s;
}

template <typename T>
T at(const PyObject* object, Py_ssize_t offset) {
  T v;
  std::memcpy(&v, reinterpret_cast<const char*>(object) + offset, sizeof v);
  return v;
}

// The vector's length, or -1 when it does not look like one.
Py_ssize_t length(const Vector& v) {
  if (v.end < v.begin || v.capacity < v.end || (v.begin == nullptr && v.end != nullptr) ||
      reinterpret_cast<std::uintptr_t>(v.begin) % alignof(Py_ssize_t) != 0)
    return -1;
  return v.end - v.begin;
}

bool large_enough(PyObject* array) {
  return Py_TYPE(array)->tp_basicsize >= kData + static_cast<Py_ssize_t>(sizeof(PyObject*));
}

// Reads the fields, dereferencing the MemoryPointer found at its offset: only for an accepted layout, or after
// the caller checked that the word there is the array's MemoryPointer.
bool read_unchecked(PyObject* array, Py_ssize_t max_dims, PyTypeObject* memory_pointer, Fields& out) {
  if (!large_enough(array)) return false;
  PyObject* memory = at<PyObject*>(array, kData);
  if (memory == nullptr || (memory_pointer != nullptr && Py_TYPE(memory) != memory_pointer) ||
      Py_TYPE(memory)->tp_basicsize < kDeviceId + static_cast<Py_ssize_t>(sizeof(int)))
    return false;
  const Vector shape = at<Vector>(array, kShape), strides = at<Vector>(array, kStrides);
  const Py_ssize_t ndim = length(shape);
  if (ndim < 0 || ndim > max_dims || length(strides) != ndim) return false;
  out.dtype = at<PyObject*>(array, kDtype);
  if (out.dtype == nullptr) return false;
  out.memory = memory;
  out.data = at<std::uintptr_t>(memory, kPointer);
  out.device = at<int>(memory, kDeviceId);
  out.ndim = ndim;
  out.shape = shape.begin;
  out.strides = strides.begin;
  return true;
}

}  // namespace

bool direct() { return state().layout == Layout::Accepted; }

bool read(PyObject* array, Py_ssize_t max_dims, Fields& out) {
  return direct() && read_unchecked(array, max_dims, state().memory_pointer, out);
}

void confirm(PyObject* array, PyObject* dtype, PyObject* memory, std::uintptr_t data, int device,
             const std::int64_t* shape, const std::int64_t* strides, int ndim) {
  State& s = state();
  if (s.layout != Layout::Unsettled || ndim == 0 || std::equal(shape, shape + ndim, strides)) return;
  // The two object pointers first: nothing found at those offsets is dereferenced unless it is the array's own
  // dtype and MemoryPointer.
  Fields f;
  bool same = large_enough(array) && at<PyObject*>(array, kDtype) == dtype && at<PyObject*>(array, kData) == memory &&
              read_unchecked(array, 64, nullptr, f) && f.data == data && f.device == device && f.ndim == ndim;
  for (int d = 0; same && d < ndim; ++d) same = f.shape[d] == shape[d] && f.strides[d] == strides[d];
  if (same) {
    s.memory_pointer = Py_TYPE(memory);
    Py_INCREF(s.memory_pointer);
  }
  s.layout = same ? Layout::Accepted : Layout::Refused;
}

bool set_stream_function(PyObject* capsule) {
  static const char kSignature[] = "intptr_t (void)";
  if (capsule == nullptr || !PyCapsule_CheckExact(capsule)) return false;
  const char* name = PyCapsule_GetName(capsule);
  if (name == nullptr || std::strcmp(name, kSignature) != 0) return false;
  void* f = PyCapsule_GetPointer(capsule, kSignature);
  if (f == nullptr) {
    PyErr_Clear();
    return false;
  }
  state().stream = reinterpret_cast<std::intptr_t (*)()>(f);
  return true;
}

bool has_stream_function() { return state().stream != nullptr; }

std::intptr_t current_stream() { return state().stream(); }

}  // namespace cujit::bindings::cupy
