// The launch fast path (docs/architecture.md: A first launch): `kernel[grid, block, stream, sharedmem](*args)` is one
// call into this file. The configured kernel (a ConfiguredLaunch, made once per configuration) reads each argument
// without building Python objects where it can, forms a compact type key (the cujit types of scalars and
// arrays, with markers around tuples), finds the specialisation in its dispatcher's LaunchTable (asking the
// dispatcher to choose or compile one on a miss), packs the arguments into the parameter buffer by the
// specialisation's argument program, and calls cuLaunchKernel with the GIL released.
//
// Arguments read here: Python bool/int/float/complex, numpy scalars, tuples of arguments, and the array
// objects launch_arrays.cpp reads (cujit device arrays, __cuda_array_interface__ v2/v3, DLPack capsules and
// producers, CuPy arrays and PyTorch tensors). Anything else (numpy arrays, which are copied in and back,
// In/Out/InOut, records, pointers) takes the Python path (`dispatcher._launch_slow`), as do debug kernels
// that report exceptions. Both paths read CAI and DLPack objects the same way (`launch.read_array`).
#include <Python.h>
#include <structmember.h>

#include <pybind11/stl.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <unordered_map>
#include <vector>

#include "bindings.h"
#include "cujit/driver.h"
#include "cujit/kernel_cache.h"
#include "cujit/launch_program.h"
#include "cujit/types.h"
#include "launch_arrays.h"
#include "launch_cupy.h"
#include "py_interfaces.h"

namespace cujit::bindings {
namespace {

namespace drv = cujit::driver;
using namespace launch;

// ---- the type key and the argument leaves --------------------------------------------------------------

using drv::KeyWord;
using drv::kTupleClose;
using drv::kTupleOpen;

// One value the arguments were read into: a scalar's object or an array's index in `arrays`.
struct Leaf {
  PyObject* object;
  int array;  // -1 for scalars
};

// An array argument: a device array's view (kept in the array, which the call's arguments keep alive), or an
// array read for this launch into `owned`.
struct ArrayRef {
  const ArrayValue* value;             // into `owned` only once every argument is read (it may grow until then)
  const std::optional<drv::ByteSpan>* span;  // a device array's, else null (worked out when asked)
  int owned;                           // the index in `owned`, or -1
};

// Everything one launch read from its arguments. Reused per thread (and per nesting depth, since reading an
// argument may run Python code that launches), so a launch allocates nothing once warm.
struct Reading {
  std::vector<KeyWord> key;
  std::vector<Leaf> leaves;
  std::vector<ArrayRef> arrays;
  std::vector<ArrayValue> owned;
  std::vector<std::uintptr_t> producer_streams;
  std::vector<py::object> keep;
  std::vector<drv::ByteSpan> spans;  // the arrays' byte ranges, when the kernel has a variant for overlaps
  std::int64_t cupy_stream = -1;  // CuPy's current stream, asked once per launch
  void clear() {
    cupy_stream = -1;
    key.clear();
    leaves.clear();
    arrays.clear();
    owned.clear();
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

}  // namespace

// numba's typeof of a scalar: bool, int (int64, or uint64 from 2**63; larger is a ValueError), float,
// complex (and their subclasses, as numba's typeof dispatches on them), and the numpy scalar types registered
// with their dtype's type; null for any other object.
namespace {

// numba's typeof of a Python int: int64 (bit_length() < 64), or uint64 from 2**63; null when no integer type
// holds it.
TypeRef int_type(PyObject* obj) {
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(obj, &overflow);
  if (overflow == 0 && v != LLONG_MIN) return types::int64();
  if (overflow > 0) {
    PyLong_AsUnsignedLongLong(obj);
    if (!PyErr_Occurred()) return types::uint64();
    PyErr_Clear();
  }
  return nullptr;
}

}  // namespace

TypeRef scalar_type(PyObject* obj) {
  if (PyBool_Check(obj)) return types::boolean();
  if (PyLong_Check(obj)) {
    if (TypeRef t = int_type(obj)) return t;
    PyErr_SetString(PyExc_ValueError, "Int value is too large");
    throw py::error_already_set();
  }
  if (PyFloat_Check(obj)) return types::float64();
  if (PyComplex_Check(obj)) return types::complex128();
  const Registry& r = registry();
  auto numpy_scalar = r.scalars.find(Py_TYPE(obj));
  return numpy_scalar != r.scalars.end() ? numpy_scalar->second : nullptr;
}

namespace {

// Appends `obj`'s key words and leaves; false when it is a kind only the Python path passes.
bool read_argument(PyObject* obj, std::size_t position, drv::CUstream consumer, Reading& in) {
  if (const DeviceArrayView* view = device_array_view(obj, position)) {  // the commonest argument first
    in.arrays.push_back({&view->value, &view->span, -1});
    in.key.push_back(reinterpret_cast<KeyWord>(view->type));
    in.leaves.push_back({obj, static_cast<int>(in.arrays.size() - 1)});
    return true;
  }
  // An int no integer type holds leaves the fast path: the Python path's error names the argument.
  const bool is_int = PyLong_Check(obj) && !PyBool_Check(obj);
  TypeRef t = is_int ? int_type(obj) : scalar_type(obj);
  if (is_int && t == nullptr) return false;
  if (t != nullptr) {
    in.key.push_back(reinterpret_cast<KeyWord>(t));
    in.leaves.push_back({obj, -1});
    return true;
  }
  if (PyTuple_Check(obj)) {
    in.key.push_back(kTupleOpen);
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(obj); ++i)
      if (!read_argument(PyTuple_GET_ITEM(obj, i), position, consumer, in)) return false;
    in.key.push_back(kTupleClose);
    return true;
  }
  ArrayValue& value = in.owned.emplace_back();
  ArrayRead read = read_array_object(obj, position, consumer, value, in.keep, in.cupy_stream);
  if (read.type == nullptr) return false;
  value.position = static_cast<int>(position);
  if (read.producer_stream != 0) in.producer_streams.push_back(read.producer_stream);
  in.arrays.push_back({nullptr, nullptr, static_cast<int>(in.owned.size() - 1)});
  in.key.push_back(reinterpret_cast<KeyWord>(read.type));
  in.leaves.push_back({obj, static_cast<int>(in.arrays.size() - 1)});
  return true;
}

// Every argument read: the arrays read into `owned` take their places.
void settle_arrays(Reading& in) {
  if (in.owned.empty()) return;
  for (ArrayRef& a : in.arrays)
    if (a.owned >= 0) a.value = &in.owned[static_cast<std::size_t>(a.owned)];
}

// ---- specialisations -----------------------------------------------------------------------------------

// One specialisation as the launch path sees it: its kernel and the program its arguments are packed by
// (driver::fast_program), or the Python path.
struct Entry {
  std::shared_ptr<drv::KernelCache::Kernel> native;  // the specialisation, owned by the dispatcher's KernelCache
  bool python_path = false;  // launched by the dispatcher's launch_slow (see the file comment)
  drv::ArgumentPlan plan;
  std::vector<drv::LeafOp> ops;
};

using LaunchTable = drv::LaunchTable<Entry>;

std::shared_ptr<Entry> make_entry(const std::vector<KeyWord>& key, std::shared_ptr<drv::KernelCache::Kernel> kernel) {
  auto e = std::make_shared<Entry>();
  e->native = std::move(kernel);
  const PySpecialisation& spec = py_specialisation(*e->native);
  std::optional<drv::ArgumentProgram> program;
  if (!spec.raises) program = drv::fast_program(spec.argtypes, key);
  e->python_path = !program;
  if (program) {
    e->plan = drv::ArgumentPlan(std::move(program->slots));
    e->ops = std::move(program->ops);
  }
  return e;
}

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

Dispatcher& dispatcher_of(ConfiguredLaunch* self) { return py::handle(self->dispatcher).cast<Dispatcher&>(); }

PyObject* call_python_path(ConfiguredLaunch* self, PyObject* const* args, std::size_t n) {
  py::tuple tuple(n);
  for (std::size_t i = 0; i < n; ++i) tuple[i] = py::reinterpret_borrow<py::object>(args[i]);
  dispatcher_of(self).launch_slow(py::reinterpret_borrow<py::object>(reinterpret_cast<PyObject*>(self)), tuple);
  Py_RETURN_NONE;
}

// The kernel's function in the current context, from the KernelCache that owns it; on its first use there (or
// after its module was unloaded) the kernel builds and loads it, and setup callbacks run.
std::shared_ptr<drv::Function> function_here(Entry& e) {
  if (std::shared_ptr<drv::Function> fn = e.native->loaded_in(drv::current_context_handle())) return fn;
  drv::Context& ctx = drv::current_context();
  py::gil_scoped_release release;  // building and hooks take the GIL back when they run
  return e.native->function(ctx);
}

// An array whose producer names a GPU (DLPack, CuPy, PyTorch) must be on the kernel's.
void check_array_device(const ArrayValue& a, int device) {
  if (a.device >= 0 && a.device != device)
    argument_error(
        PyExc_ValueError, static_cast<std::size_t>(a.position),
        "the array is on GPU " + std::to_string(a.device) + ", the kernel launches on GPU " + std::to_string(device));
}

bool arrays_overlap(Reading& in) {
  if (in.arrays.size() < 2) return false;
  in.spans.clear();
  for (const ArrayRef& a : in.arrays) {
    std::optional<drv::ByteSpan> span = a.span ? *a.span : drv::array_span(a.value->arg(), a.value->ndim);
    if (span) in.spans.push_back(*span);
  }
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
  settle_arrays(in);
  clock.lap(kReadArguments);
  std::shared_ptr<Entry> e = self->table->find(in.key);
  if (!e) {
    std::shared_ptr<drv::KernelCache::Kernel> kernel = dispatcher_of(self).kernel_for_types(drv::key_types(in.key));
    e = self->table->find(in.key);  // another thread may have added it meanwhile
    if (!e) {
      e = make_entry(in.key, std::move(kernel));
      self->table->add(in.key, e);
    }
  }
  if (e->python_path) return call_python_path(self, args, n);
  std::shared_ptr<drv::Function> fn = function_here(*e);
  for (const ArrayValue& a : in.owned) check_array_device(a, fn->context().device_id());  // (views name no GPU)
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
  const bool cooperative = e->native->code().cooperative;  // (its launch takes pointers; the others the buffer)
  if (cooperative)
    for (std::size_t p = 0; p < offsets.size(); ++p) pointers[p] = bytes + offsets[p];
  for (std::size_t i = 0; i < e->ops.size(); ++i) {
    const drv::LeafOp& op = e->ops[i];
    const Leaf& leaf = in.leaves[i];
    std::uint8_t* at = bytes + offsets[plan.first_param(op.slot)];
    const drv::ArgSlot& slot = plan.slots()[op.slot];
    switch (op.kind) {
      case drv::LeafOp::Kind::Scalar: {
        std::uint64_t bits = scalar_bits(slot, leaf.object, i);
        std::memcpy(at, &bits, static_cast<std::size_t>(slot.size));
        break;
      }
      case drv::LeafOp::Kind::Complex: {  // two float parameters of 4 or 8 bytes
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
      case drv::LeafOp::Kind::Array: {
        const ArrayValue& a = *in.arrays[static_cast<std::size_t>(leaf.array)].value;
        drv::write_array_params(reinterpret_cast<std::int64_t*>(at), a.ndim, a.arg());
        break;
      }
      case drv::LeafOp::Kind::Pointer:  // fast_program leaves pointers and records to the Python path
      case drv::LeafOp::Kind::Record:
        break;
    }
  }
  const py::object& if_overlap = py_specialisation(*e->native).if_overlap;
  if (!if_overlap.is_none() && arrays_overlap(in)) fn = if_overlap().cast<std::shared_ptr<drv::Function>>();
  drv::LaunchConfig config = self->config;
  config.cooperative = cooperative;
  clock.lap(kPack);
  {
    // The GIL released with CPython's own calls (pybind11's guard also consults its internals each time).
    struct Release {
      PyThreadState* state = PyEval_SaveThread();
      ~Release() { PyEval_RestoreThread(state); }
    } release;
    if (cooperative)
      drv::launch_function(*fn, config, pointers);
    else
      drv::launch_function(*fn, config, storage, plan.params_end());  // one buffer: the driver copies it whole
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
    static PyObject* k_describe = interned("_describe");
    PyObject* kernel = PyObject_CallMethodNoArgs(self->dispatcher, k_describe);
    if (kernel == nullptr) return nullptr;
    PyErr_Format(PyExc_TypeError, "%U is launched with positional arguments only, got keyword argument(s) %R", kernel,
                 kwnames);
    Py_DECREF(kernel);
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
                               Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL, configured_slots};

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
        py::object method =
            py::reinterpret_steal<py::object>(PyDescr_NewMethod(reinterpret_cast<PyTypeObject*>(cls.ptr()), &def));
        if (!method) throw py::error_already_set();
        py::setattr(cls, "__getitem__", method);
      },
      py::arg("cls"),
      "Replaces cls.__getitem__ (a dispatcher class) with the fast path's: the configured kernel of a "
      "configuration seen before without a Python frame, self._configure(config) otherwise.");
  l.attr("DeviceArrayBase") = py::handle(reinterpret_cast<PyObject*>(device_array_base()));
  l.def(
      "register_types",
      [](py::handle device_array, py::handle ndarray, py::dict scalars) {
        Registry& r = registry();
        if (!PyType_Check(device_array.ptr()) ||
            !PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(device_array.ptr()), device_array_base()))
          throw py::type_error("register_types: the device array class must derive from launch.DeviceArrayBase");
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
                : r.reader == Reader::CuPy && cupy::direct()       ? " (in place)"
                                                                   : "");
      },
      py::arg("cls"),
      "How the fast path reads arguments of class cls: 'cupy' (+ ' (in place)' once CuPy's field layout was "
      "confirmed), 'torch' (+ ' (DLPack exchange)' when through its DLPack C exchange table), 'DLPack "
      "exchange' (another class with such a table) or 'protocols'.");
  py::enum_<drv::LeafOp::Kind>(l, "LeafKind", "how one leaf of a kernel's arguments is read (cujit/launch_program.h)")
      .value("scalar", drv::LeafOp::Kind::Scalar)
      .value("complex", drv::LeafOp::Kind::Complex)
      .value("array", drv::LeafOp::Kind::Array)
      .value("pointer", drv::LeafOp::Kind::Pointer)
      .value("record", drv::LeafOp::Kind::Record);
  py::class_<drv::LeafOp>(l, "LeafOp", "one leaf of a kernel's arguments: what reads it and the slot it fills")
      .def_readonly("kind", &drv::LeafOp::kind)
      .def_readonly("argument", &drv::LeafOp::argument)
      .def_property_readonly("path", [](const drv::LeafOp& op) { return py::tuple(py::cast(op.path)); })
      .def_readonly("slot", &drv::LeafOp::slot)
      .def_property_readonly(
          "type", [](const drv::LeafOp& op) { return op.type; }, py::return_value_policy::reference)
      .def("__repr__", [](const drv::LeafOp& op) {
        static const char* kinds[] = {"scalar", "complex", "array", "pointer"};
        return std::string("<LeafOp ") + kinds[static_cast<int>(op.kind)] + " of argument " +
               std::to_string(op.argument) + " in slot " + std::to_string(op.slot) + ">";
      });
  py::class_<drv::ArgumentProgram>(l, "ArgumentProgram",
                                   "how a launch of kernels of these parameter types reads and packs its arguments")
      .def_property_readonly("slots",
                             [](const drv::ArgumentProgram& p) {
                               py::list out;
                               for (const auto& slot : p.slots) out.append(slot_spec(slot));
                               return out;
                             })
      .def_readonly("ops", &drv::ArgumentProgram::ops);
  l.def(
      "argument_program",
      [](const std::vector<TypeRef>& params) {
        auto made = drv::argument_program(params);
        if (auto* bad = std::get_if<drv::UnpassableArgument>(&made)) {
          const std::string message = "kernel argument " + std::to_string(bad->argument) +
                                      ": cujit cannot pass a value of type " + bad->type->name() + " to a kernel";
          PyErr_SetString(PyExc_NotImplementedError, message.c_str());
          throw py::error_already_set();
        }
        return std::get<drv::ArgumentProgram>(std::move(made));
      },
      py::arg("argtypes"),
      "The program of kernels of these parameter types (driver::argument_program): the launcher's slots and one "
      "LeafOp per value read from the arguments, the rule the fast path and the compiler's lowering follow.");
  l.def(
      "scalar_type",
      [](py::handle obj) -> py::object {
        TypeRef t = scalar_type(obj.ptr());
        return t == nullptr ? py::none() : py::cast(t, py::return_value_policy::reference);
      },
      py::arg("obj"),
      "numba's typeof of a Python or numpy scalar, as the launch path types it (ValueError for an int beyond "
      "uint64); None for other objects.");
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
  // What read_array answers: an array argument as the launch reads it.
  struct ReadArray {
    std::uint64_t data;
    std::int64_t nitems, itemsize;
    py::tuple shape, strides;
    py::object keepalive;  // a capsule made for the launch, kept until it is queued (or None)
  };
  py::class_<ReadArray>(l, "ReadArray", "an array argument as a launch reads it")
      .def_readonly("data", &ReadArray::data)
      .def_readonly("nitems", &ReadArray::nitems)
      .def_readonly("itemsize", &ReadArray::itemsize)
      .def_readonly("shape", &ReadArray::shape)
      .def_readonly("strides", &ReadArray::strides)
      .def_readonly("keepalive", &ReadArray::keepalive);
  l.def(
      "read_array",
      [](py::handle obj, std::size_t position, py::handle native_stream) -> std::optional<ReadArray> {
        ArrayValue v;
        std::vector<py::object> keep;
        drv::CUstream consumer = native_stream.is_none() ? nullptr : native_stream.cast<drv::Stream&>().handle();
        std::int64_t cupy_stream = -1;
        ArrayRead read = read_array_object(obj.ptr(), position, consumer, v, keep, cupy_stream);
        if (read.type == nullptr) return std::nullopt;
        v.position = static_cast<int>(position);
        if (v.device >= 0) check_array_device(v, drv::current_context().device_id());  // no driver call otherwise
        if (read.producer_stream != 0) drv::order_after(consumer, read.producer_stream);
        py::tuple shape(v.ndim), strides(v.ndim);
        for (int d = 0; d < v.ndim; ++d) {
          shape[d] = py::int_(v.shape[d]);
          strides[d] = py::int_(v.strides[d]);
        }
        return ReadArray{v.data, v.nitems, v.itemsize, shape, strides, keep.empty() ? py::none() : keep[0]};
      },
      py::arg("obj"), py::arg("position"), py::arg("native_stream"),
      "The ReadArray of an array object for a launch on native_stream (the producer's stream ordered before "
      "it), or None for objects the fast path does not read.");
}

}  // namespace cujit::bindings
