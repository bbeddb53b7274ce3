// CuPy arrays read in place for the launch fast path (py_launch.cpp).
//
// CuPy's ndarray and MemoryPointer are Cython classes whose C fields (CuPy >= 13: cupy/_core/core.pxd and
// cupy/cuda/memory.pxd) sit at offsets Cython fixes from their declarations. Reading them there costs a few
// loads instead of six attribute reads and two tuples per array. The layout is trusted only after the first
// array read both ways agreed (the same dtype and MemoryPointer objects, pointer, device, shape and strides);
// another layout keeps the attribute reads, so a CuPy that moves a field is read correctly, only slower.
#pragma once

#include <Python.h>

#include <cstdint>

namespace cujit::bindings::cupy {

// An array's fields as CuPy holds them (shape and strides point into the array, valid under the GIL while
// the array lives).
struct Fields {
  PyObject* dtype = nullptr;  // borrowed
  PyObject* memory = nullptr;  // the MemoryPointer, borrowed
  std::uintptr_t data = 0;
  int device = -1;
  Py_ssize_t ndim = 0;
  const Py_ssize_t* shape = nullptr;
  const Py_ssize_t* strides = nullptr;
};

// Whether arrays are read in place: false until confirm() accepted the layout (and after it refused it).
bool direct();

// Reads `array` in place; false when its fields do not look like an array's (a null MemoryPointer, another
// class there, more than `max_dims` dimensions): the caller reads its attributes.
bool read(PyObject* array, Py_ssize_t max_dims, Fields& out);

// Compares the in-place read of `array` with what its attributes said (`dtype`, `memory` the objects; data,
// device, shape and strides the values) and settles the layout: accepted when everything agrees, refused
// otherwise. Arrays whose shape and strides cannot tell the two vectors apart (0-d, or equal) leave it
// unsettled.
void confirm(PyObject* array, PyObject* dtype, PyObject* memory, std::uintptr_t data, int device,
             const std::int64_t* shape, const std::int64_t* strides, int ndim);

// CuPy's current stream through the C function `cupy.cuda.stream` exports in __pyx_capi__
// ("get_current_stream_ptr", signature "intptr_t (void)"); `capsule` of another signature is refused.
// Returns false when no such function was accepted.
bool set_stream_function(PyObject* capsule);
bool has_stream_function();
// The current stream pointer (0: the legacy default stream). Cython's convention for a failure: -1 with a
// Python error set.
std::intptr_t current_stream();

}  // namespace cujit::bindings::cupy
