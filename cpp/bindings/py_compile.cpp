// Compilation entry points: a Python function's source handed to the core,
// global-name resolution through a Python resolver object, device-function
// callees typed through their dispatchers, and PTX generation with the GIL
// released.
#include <optional>
#include <set>
#include <unordered_map>

#include <pybind11/stl.h>

#include "bindings.h"
#include "cujit/background.h"
#include "cujit/codegen.h"
#include "cujit/compiler.h"
#include "cujit/intrinsics.h"
#include "cujit/telemetry.h"

namespace cujit::bindings {
namespace {

using K = ir::GlobalValue::Kind;

// A Python object owned by the core (a callee dispatcher): released under the GIL.
std::shared_ptr<void> hold(py::object obj) {
  return std::shared_ptr<void>(new py::object(std::move(obj)), [](void* p) {
    py::gil_scoped_acquire gil;
    delete static_cast<py::object*>(p);
  });
}

py::object held(const std::shared_ptr<void>& p) { return *static_cast<py::object*>(p.get()); }

// A constant's Python value (the arguments of a raised exception).
py::object constant_value(const ir::GlobalValue& g) {
  switch (g.kind) {
    case K::Int: return g.is_unsigned ? py::int_(static_cast<uint64_t>(g.int_value)) : py::int_(g.int_value);
    case K::Bool: return py::bool_(g.int_value != 0);
    case K::Float: return py::float_(g.float_value);
    case K::Complex: return py::module_::import("builtins").attr("complex")(g.float_value, g.imag_value);
    case K::Str: return py::str(g.name);
    default: return py::none();
  }
}

// The resolver answers with tuples: ("int", v), ("float", v), ("bool", v),
// ("complex", re, im), ("none",), ("module", name), ("builtin", path),
// ("type", Type), ("device", dispatcher), ("object", handle, repr); None if undefined.
bool to_global(py::handle answer, ir::GlobalValue& out) {
  if (answer.is_none()) return false;
  py::tuple t = answer.cast<py::tuple>();
  std::string kind = py::str(t[0]);
  if (kind == "int") {
    out.kind = K::Int;
    out.int_value = t[1].cast<int64_t>();
  } else if (kind == "uint") {  // 2**63 <= v < 2**64: numba types it uint64
    out.kind = K::Int;
    out.int_value = static_cast<int64_t>(t[1].cast<uint64_t>());
    out.is_unsigned = true;
  } else if (kind == "float") {
    out.kind = K::Float;
    out.float_value = t[1].cast<double>();
  } else if (kind == "bool") {
    out.kind = K::Bool;
    out.int_value = t[1].cast<bool>();
  } else if (kind == "complex") {
    out.kind = K::Complex;
    out.float_value = t[1].cast<double>();
    out.imag_value = t[2].cast<double>();
  } else if (kind == "none") {
    out.kind = K::None;
  } else if (kind == "module" || kind == "builtin") {
    out.kind = kind == "module" ? K::Module : K::Builtin;
    out.name = py::str(t[1]);
  } else if (kind == "type") {
    out.kind = K::TypeObject;
    out.type = t[1].cast<TypeRef>();
    out.name = out.type->name();
  } else if (kind == "device") {
    out.kind = K::DeviceFunction;
    out.function = hold(py::reinterpret_borrow<py::object>(t[1]));
    out.name = py::str(t[2]);
  } else if (kind == "exception") {  // ("exception", class, qualname)
    out.kind = K::ExceptionClass;
    out.function = hold(py::reinterpret_borrow<py::object>(t[1]));
    out.name = py::str(t[2]);
  } else if (kind == "ndarray") {  // ("ndarray", dtype Type, shape tuple, bytes, repr)
    out.kind = K::NdArray;
    for (py::handle d : t[2]) out.shape.push_back(d.cast<int64_t>());
    out.type = types::array(t[1].cast<TypeRef>(), static_cast<int>(out.shape.size()), 'C', /*readonly=*/true);
    out.data = t[3].cast<std::string>();
  } else if (kind == "object") {
    out.kind = K::Object;
    out.int_value = t[1].cast<int64_t>();
  } else {
    throw py::value_error("bad resolver answer kind " + kind);
  }
  out.repr = py::str(t[t.size() - 1]);
  if (kind == "module" || kind == "builtin") out.repr = out.name;
  return true;
}

// Resolves through the Python resolver, once per distinct question in a compile
// (a kernel names `cuda`, its constants and its types many times over).
class PyNameResolver : public frontend::NameResolver {
 public:
  explicit PyNameResolver(py::object resolver) : resolver_(std::move(resolver)) {}
  bool resolve_name(const std::string& name, ir::GlobalValue& out) override {
    return answer(names_, name, out, [&] { return resolver_.attr("resolve")(name); });
  }
  bool resolve_attribute(const ir::GlobalValue& base, const std::string& attr, ir::GlobalValue& out) override {
    bool object = base.kind == K::Object;
    std::string question = (object ? "#" + std::to_string(base.int_value) : base.name) + "." + attr;
    return answer(attributes_, question, out, [&] {
      py::object key = object ? py::object(py::int_(base.int_value)) : py::object(py::str(base.name));
      return resolver_.attr("resolve_attribute")(object, key, attr);
    });
  }

 private:
  using Answers = std::unordered_map<std::string, std::optional<ir::GlobalValue>>;

  template <typename Ask>
  static bool answer(Answers& answers, const std::string& question, ir::GlobalValue& out, Ask ask) {
    auto it = answers.find(question);
    if (it == answers.end()) {
      ir::GlobalValue value;
      bool found = false;
      try {
        found = to_global(ask(), value);
      } catch (py::error_already_set& e) {
        std::optional<Error> error = unlocated_compile_error(e);
        if (!error) throw;
        throw CompileError(error->kind, error->message);  // the frontend locates it at the name
      }
      it = answers.emplace(question, found ? std::optional<ir::GlobalValue>(std::move(value)) : std::nullopt).first;
    }
    if (!it->second) return false;
    out = *it->second;
    return true;
  }

  py::object resolver_;
  Answers names_, attributes_;
};

// Device-function callees are typed by their own dispatchers (which cache).
class PyCalleeProvider : public typing::CalleeProvider {
 public:
  explicit PyCalleeProvider(py::object options) : options_(std::move(options)) {}
  Expected<std::shared_ptr<ir::TypedFunction>> type_callee(const ir::GlobalValue& fn,
                                                           const std::vector<TypeRef>& argtypes) override {
    py::tuple args(argtypes.size());
    for (size_t i = 0; i < argtypes.size(); ++i) args[i] = py::cast(argtypes[i], py::return_value_policy::reference);
    try {
      py::object typed = held(fn.function).attr("_type_for_caller")(args, options_);
      return typed.cast<std::shared_ptr<ir::TypedFunction>>();
    } catch (py::error_already_set& e) {
      std::optional<Error> error = unlocated_compile_error(e);
      if (!error) throw;
      return *error;  // typing locates it at the call
    }
  }

  // Dispatchers answer _call_parameters() with (names, defaults): a resolver answer or None for each name.
  std::optional<Parameters> parameters(const ir::GlobalValue& fn) override {
    py::object callee = held(fn.function);
    if (!py::hasattr(callee, "_call_parameters")) return std::nullopt;
    py::tuple answer = callee.attr("_call_parameters")();
    Parameters out;
    for (py::handle n : answer[0]) out.names.push_back(py::str(n));
    for (py::handle d : answer[1]) {
      ir::GlobalValue value;
      out.defaults.push_back(to_global(d, value) ? std::optional<ir::GlobalValue>(std::move(value)) : std::nullopt);
    }
    return out;
  }

 private:
  py::object options_;
};

struct PyFunctionSource {
  frontend::FunctionSource source;
};

// What error messages need of a typed function's source: file, lines, first line.
frontend::FunctionSource source_of(const ir::Function& fn) {
  frontend::FunctionSource located;
  located.filename = fn.filename;
  located.source_lines = fn.source_lines;
  located.first_line = fn.first_line;
  return located;
}

}  // namespace

void register_compile(py::module_& m) {
  using codegen::CompileOptions;
  py::class_<CompileOptions>(m, "CompileOptions")
      .def(py::init<>())
      .def_property("cc",
                    [](const CompileOptions& o) { return py::make_tuple(o.cc.major, o.cc.minor, o.cc.suffix); },
                    [](CompileOptions& o, py::tuple cc) {
                      if (cc.size() < 2 || cc.size() > 3)
                        throw py::value_error("cc must be a (major, minor) or (major, minor, suffix) tuple");
                      o.cc.major = cc[0].cast<int>();
                      o.cc.minor = cc[1].cast<int>();
                      o.cc.suffix = cc.size() == 3 ? py::str(cc[2]).cast<std::string>() : "";
                    })
      .def_readwrite("fastmath", &CompileOptions::fastmath)
      .def_readwrite("opt", &CompileOptions::opt)
      .def_readwrite("lineinfo", &CompileOptions::lineinfo)
      .def_readwrite("debug", &CompileOptions::debug)
      .def_readwrite("kernel", &CompileOptions::kernel)
      .def_property("abi",
                    [](const CompileOptions& o) { return o.abi == codegen::Abi::C ? "c" : "numba"; },
                    [](CompileOptions& o, const std::string& abi) {
                      o.abi = abi == "c" ? codegen::Abi::C : codegen::Abi::Numba;
                    })
      .def_readwrite("abi_name", &CompileOptions::abi_name)
      .def_readwrite("from_dispatcher", &CompileOptions::from_dispatcher)
      .def_readwrite("noalias_arrays", &CompileOptions::noalias_arrays)
      .def_property("launch_bounds",
                    [](const CompileOptions& o) { return py::make_tuple(o.max_threads, o.min_blocks, o.max_cluster); },
                    [](CompileOptions& o, py::tuple b) {
                      o.max_threads = b.size() > 0 ? b[0].cast<int>() : 0;
                      o.min_blocks = b.size() > 1 ? b[1].cast<int>() : 0;
                      o.max_cluster = b.size() > 2 ? b[2].cast<int>() : 0;
                    })
      .def("copy", [](const CompileOptions& o) { return CompileOptions(o); })
      .def_readwrite("forceinline", &CompileOptions::forceinline)
      .def_readwrite("inline_always", &CompileOptions::inline_always)
      .def("key", &CompileOptions::key);

  m.def("flags_summary", &compiler::flags_summary);
  m.def("resolve_arch", [](py::tuple cc) {
    codegen::ComputeCapability c;
    c.major = cc[0].cast<int>();
    c.minor = cc[1].cast<int>();
    if (cc.size() > 2) c.suffix = py::str(cc[2]);
    return unwrap(codegen::resolve_arch(c)).name();
  });
  m.def("supported_archs", &codegen::supported_archs);
  m.def("intrinsic_paths", &intrinsics::paths, "every cuda.* function and value the kernel language offers");
  m.def("codegen_passes", [](py::tuple cc) {
    codegen::ComputeCapability c;
    c.major = cc[0].cast<int>();
    c.minor = cc[1].cast<int>();
    py::list passes;
    for (const codegen::CodegenPass& p : unwrap(codegen::codegen_passes(c)))
      passes.append(py::make_tuple(p.name, p.kept));
    return passes;
  });
  m.def("set_libdevice_path", &codegen::set_libdevice_path);
  m.def("start_warm_up", [](py::tuple cc) {
    codegen::ComputeCapability c;
    c.major = cc[0].cast<int>();
    c.minor = cc[1].cast<int>();
    codegen::start_warm_up(c);
  });
  m.def("wait_for_background_work", &background::wait_idle, py::call_guard<py::gil_scoped_release>(),
        "Returns once no thread of cujit's own runs (NVRTC prefetches, the warm-up, loading nvJitLink).");
  m.def("_inject_fault", [](const std::string& fault) {
    if (fault == "invalid_ir") codegen::inject_fault(codegen::InjectedFault::kInvalidIr);
    else if (fault == "unselectable") codegen::inject_fault(codegen::InjectedFault::kUnselectable);
    else if (fault.empty()) codegen::inject_fault(codegen::InjectedFault::kNone);
    else throw py::value_error("unknown fault '" + fault + "' (invalid_ir, unselectable or '')");
  }, "Tests only: plant a defect in the next compiles' modules ('' stops).");

  py::class_<PyFunctionSource>(m, "FunctionSource")
      .def(py::init([](py::handle def, std::string name, std::string qualname, std::string module,
                       std::string filename, std::vector<std::string> lines, int first_line) {
        PyFunctionSource s;
        s.source.def = convert_ast(def, first_line - 1);
        s.source.name = std::move(name);
        s.source.qualname = std::move(qualname);
        s.source.module = std::move(module);
        s.source.filename = std::move(filename);
        s.source.source_lines = std::move(lines);
        s.source.first_line = first_line;
        return s;
      }))
      .def_property_readonly("qualname", [](const PyFunctionSource& s) { return s.source.qualname; });

  py::class_<ir::TypedFunction, std::shared_ptr<ir::TypedFunction>>(m, "TypedFunction")
      .def_property_readonly("return_type", [](const ir::TypedFunction& f) { return f.sig.return_type; },
                             py::return_value_policy::reference)
      .def_property_readonly("args", [](const ir::TypedFunction& f) { return f.sig.args; },
                             py::return_value_policy::reference)
      .def_property_readonly("symbol", [](const ir::TypedFunction& f) { return f.symbol; })
      .def_property_readonly("env_symbol", [](const ir::TypedFunction& f) { return f.env_symbol; })
      .def_property_readonly("signature", [](const ir::TypedFunction& f) { return f.sig; })
      .def_property_readonly("external", [](const ir::TypedFunction& f) { return f.external; })
      .def_property_readonly("cooperative", [](const ir::TypedFunction& f) { return f.cooperative; })
      .def_property_readonly("link_inputs", [](const ir::TypedFunction& f) { return f.link_inputs; })
      .def_property_readonly("externs", [](const ir::TypedFunction& f) {
        // Declared functions it reaches through any depth of calls: (symbol, where declared).
        std::vector<std::pair<std::string, std::string>> out;
        std::vector<const ir::TypedFunction*> todo{&f};
        std::set<const ir::TypedFunction*> seen;
        while (!todo.empty()) {
          const ir::TypedFunction* t = todo.back();
          todo.pop_back();
          if (!seen.insert(t).second) continue;
          if (t->external) out.emplace_back(t->symbol, t->declared_at);
          for (const auto& c : t->callees) todo.push_back(c.get());
        }
        return out;
      })
      .def_property_readonly("exceptions", [](const ir::TypedFunction& f) {
        // The raise sites it reaches, in status-code order (code i + 1 is site i):
        // (class, constant arguments, function name, file, line).
        py::list out;
        for (const ir::ExceptionSite& site : ir::exception_sites(f)) {
          const ir::Expr& exc = *site.stmt->value;
          const ir::Expr& cls = exc.kind == ir::ExprKind::Call ? *exc.operands[0] : exc;
          py::list args;
          if (exc.kind == ir::ExprKind::Call)
            for (size_t i = 1; i < exc.operands.size(); ++i) args.append(constant_value(exc.operands[i]->global));
          out.append(py::make_tuple(held(cls.global.function), py::tuple(args), site.fn->name, site.fn->filename,
                                    site.stmt->loc.line));
        }
        return out;
      })
      .def_property_readonly("variables", [](const ir::TypedFunction& f) {
        py::list out;
        for (const ir::Variable& v : f.fn->vars)
          if (v.type != nullptr && v.name[0] != '$')
            out.append(py::make_tuple(v.name, py::cast(v.type, py::return_value_policy::reference)));
        return out;
      });

  m.def("type_function",
        [](const PyFunctionSource& src, py::object resolver, std::vector<TypeRef> args, py::object return_type,
           const CompileOptions& options, py::object callee_options,
           std::vector<std::shared_ptr<link::LinkInput>> links) {
          PyNameResolver names(resolver);
          PyCalleeProvider callees(callee_options);
          Signature sig;
          sig.args = std::move(args);
          sig.return_type = return_type.is_none() ? nullptr : return_type.cast<TypeRef>();
          return unwrap(compiler::type_function(src.source, names, callees, sig, options, links), &src.source);
        },
        py::arg("source"), py::arg("resolver"), py::arg("args"), py::arg("return_type"), py::arg("options"),
        py::arg("callee_options"), py::arg("links") = std::vector<std::shared_ptr<link::LinkInput>>{});

  m.def("declare_external",
        [](const std::string& name, const Signature& sig, const std::string& abi,
           std::vector<std::shared_ptr<link::LinkInput>> links, const std::string& declared_at, bool cooperative) {
          return compiler::declare_external(name, sig, abi == "c" ? codegen::Abi::C : codegen::Abi::Numba,
                                            std::move(links), declared_at, cooperative);
        },
        py::arg("name"), py::arg("signature"), py::arg("abi"), py::arg("links"), py::arg("declared_at"),
        py::arg("cooperative") = false,
        "A function defined by linked code, as a typed function callers can call.");

  m.def("check_static_shared_memory", [](const ir::TypedFunction& kernel) {
    if (std::optional<codegen::LocatedError> e = codegen::check_static_shared_memory(kernel)) {
      frontend::FunctionSource located = source_of(*e->fn);
      raise_error(e->error, &located);
    }
  });

  m.def("compile_ptx",
        [](const ir::TypedFunction& fn, const CompileOptions& options, bool keep_llvm_ir) {
          Expected<codegen::CompiledPtx> out = [&] {
            py::gil_scoped_release nogil;
            return codegen::compile_to_ptx(fn, options, keep_llvm_ir);
          }();
          frontend::FunctionSource located = source_of(*fn.fn);
          codegen::CompiledPtx ptx = unwrap(std::move(out), &located);
          return py::make_tuple(ptx.ptx, ptx.llvm_ir, ptx.symbol);
        },
        py::arg("fn"), py::arg("options"), py::arg("keep_llvm_ir") = false);

  py::module_ tm = m.def_submodule("telemetry", "compile stage totals (cpp/include/cujit/telemetry.h)");
  tm.def(
      "stages",
      [](bool reset) {
        py::dict out;
        auto totals = telemetry::totals(reset);
        for (int i = 0; i < static_cast<int>(telemetry::Stage::kCount); ++i)
          out[telemetry::stage_name(static_cast<telemetry::Stage>(i))] =
              py::make_tuple(totals[i].count, totals[i].nanoseconds / 1e9);
        return out;
      },
      py::arg("reset") = false, "{stage: (count, seconds)} since the process started or the last reset");

  m.def("compile_ltoir",
        [](const ir::TypedFunction& fn, const CompileOptions& options, bool keep_llvm_ir) {
          Expected<codegen::CompiledPtx> out = [&] {
            py::gil_scoped_release nogil;
            return codegen::compile_to_ltoir(fn, options, keep_llvm_ir);
          }();
          frontend::FunctionSource located = source_of(*fn.fn);
          codegen::CompiledPtx code = unwrap(std::move(out), &located);
          return py::make_tuple(py::bytes(code.ltoir), code.llvm_ir, code.symbol);
        },
        py::arg("fn"), py::arg("options"), py::arg("keep_llvm_ir") = false);
}

}  // namespace cujit::bindings
