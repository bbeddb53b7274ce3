// Compilation entry points: a Python function's source handed to the core,
// global-name resolution through a Python resolver object, device-function
// callees typed through their dispatchers, and PTX generation with the GIL
// released.
#include <optional>
#include <set>
#include <unordered_map>

#include <pybind11/stl.h>

#include "bindings.h"
#include "cujit/codegen.h"
#include "cujit/compiler.h"
#include "cujit/hostgen.h"
#include "cujit/telemetry.h"
#include "py_interfaces.h"

namespace cujit::bindings {
namespace {

using K = ir::GlobalValue::Kind;

// An error message's excerpt from a Python callable (the bytecode reader's): "" where it fails.
ir::ExcerptText excerpt_text(py::object fn) {
  std::shared_ptr<void> callable = hold(std::move(fn));
  return [callable](const cujit::SourceLoc& loc) -> std::string {
    py::gil_scoped_acquire gil;
    try {
      py::object text = held(callable)(loc.line, loc.col, loc.end_line, loc.end_col);
      return text.is_none() ? std::string() : text.cast<std::string>();
    } catch (const py::error_already_set&) {
      return std::string();
    } catch (const py::cast_error&) {
      return std::string();
    }
  };
}

// The resolver answers with Resolved values (registered below as `_core.Resolved`), or None if undefined.
bool to_global(py::handle answer, ir::GlobalValue& out) {
  if (answer.is_none()) return false;
  if (!py::isinstance<ir::GlobalValue>(answer))
    throw py::type_error("a name resolver must answer a cujit._core.Resolved or None, not " +
                         py::str(py::type::handle_of(answer).attr("__name__")).cast<std::string>());
  out = answer.cast<const ir::GlobalValue&>();
  return true;
}

// Resolves through the Python resolver, once per distinct question in a compile
// (a kernel names `cuda`, its constants and its types many times over).
class PyNameResolver : public frontend::NameResolver {
 public:
  explicit PyNameResolver(Resolver& resolver) : resolver_(resolver) {}
  bool resolve_name(const std::string& name, ir::GlobalValue& out) override {
    return answer(names_, name, out, [&] { return resolver_.resolve(name); });
  }
  bool resolve_attribute(const ir::GlobalValue& base, const std::string& attr, ir::GlobalValue& out) override {
    bool object = base.kind == K::Object;
    std::string question = (object ? "#" + std::to_string(base.int_value) : base.name) + "." + attr;
    return answer(attributes_, question, out, [&] {
      py::object key = object ? py::object(py::int_(base.int_value)) : py::object(py::str(base.name));
      return resolver_.resolve_attribute(object, key, attr);
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

  Resolver& resolver_;  // the caller's Python object keeps it alive for the compile
  Answers names_, attributes_;
};

// Device-function callees are typed through their Callee interface (their dispatchers cache).
class PyCalleeProvider : public typing::CalleeProvider {
 public:
  explicit PyCalleeProvider(const codegen::CompileOptions& options) : options_(options) {}
  Expected<std::shared_ptr<ir::TypedFunction>> type_callee(const ir::GlobalValue& fn,
                                                           const std::vector<TypeRef>& argtypes) override {
    try {
      return held(fn.function).cast<Callee&>().type_for_caller(argtypes, options_);
    } catch (py::error_already_set& e) {
      std::optional<Error> error = unlocated_compile_error(e);
      if (!error) throw;
      return *error;  // typing locates it at the call
    }
  }

  // cujit.extending._member("method" | "attribute" | "operator", self, name): a Resolved device callee, or None.
  std::optional<ir::GlobalValue> member(Member kind, TypeRef self, const std::string& name) override {
    const char* kinds[] = {"method", "attribute", "operator"};
    py::object found =
        py::module_::import("cujit.extending").attr("_member")(kinds[static_cast<int>(kind)], self, name);
    ir::GlobalValue value;
    if (found.is_none() || !to_global(found, value)) return std::nullopt;
    return value;
  }

  // A callee's _call_parameters() answers (names, defaults): a Resolved or None for each name; or None.
  std::optional<Parameters> parameters(const ir::GlobalValue& fn) override {
    py::object answer = held(fn.function).cast<Callee&>().call_parameters();
    if (answer.is_none()) return std::nullopt;
    py::tuple pair = answer.cast<py::tuple>();
    Parameters out;
    for (py::handle n : pair[0]) out.names.push_back(py::str(n));
    for (py::handle d : pair[1]) {
      ir::GlobalValue value;
      out.defaults.push_back(to_global(d, value) ? std::optional<ir::GlobalValue>(std::move(value)) : std::nullopt);
    }
    return out;
  }

 private:
  const codegen::CompileOptions& options_;
};

struct PyFunctionSource {
  frontend::FunctionSource source;
};

// What error messages need of a typed function's source: file, lines, first line.
// The GIL, released while the driver's target makes code.
class GilUnlocker final : public compiler::Unlocker {
 public:
  void unlock() override { state_ = PyEval_SaveThread(); }
  void relock() override { PyEval_RestoreThread(state_); }

 private:
  PyThreadState* state_ = nullptr;
};

// Tests' observer of every PTX a compile makes (_core.observe_ptx): called with (ptx, typed function, options).
py::object& ptx_observer() {
  static py::object* observer = new py::object(py::none());  // never destroyed: read until the interpreter exits
  return *observer;
}

void observe_ptx(const std::string& ptx, const std::shared_ptr<ir::TypedFunction>& typed,
                 const codegen::CompileOptions& options) {
  py::object& observer = ptx_observer();
  if (!observer.is_none()) observer(py::str(ptx), typed, options);
}

// The targets a compile can name (cujit/kernel_target.h), by the name of their Python Target.
const codegen::KernelTarget& kernel_target(const std::string& name) {
  static const codegen::KernelTarget* const targets[] = {&codegen::cuda_target(), &hostgen::host_target()};
  for (const codegen::KernelTarget* t : targets)
    if (name == t->name()) return *t;
  throw py::value_error("unknown compile target '" + name + "' (the targets are 'cuda' and 'cpu')");
}

// The image of a kernel's GPU code, linked here: nothing of Python runs but the warning of an NVRTC log.
driver::KernelCache::BuildImage code_build(std::shared_ptr<codegen::GpuKernelCode> code,
                                           std::vector<std::string> include_dirs) {
  return [code = std::move(code), include_dirs = std::move(include_dirs)](int major, int minor) {
    link::ProgramLinkResult linked = code->link(major, minor, include_dirs);
    if (!linked.nvrtc_logs.empty()) {
      py::gil_scoped_acquire gil;
      for (const auto& [name, log] : linked.nvrtc_logs)
        if (PyErr_WarnEx(PyExc_UserWarning, ("NVRTC log messages: " + log).c_str(), 1) != 0)
          throw py::error_already_set();
    }
    return std::move(linked.cubin);
  };
}

frontend::FunctionSource source_of(const ir::Function& fn) {
  frontend::FunctionSource located;
  located.filename = fn.filename;
  located.source_lines = fn.source_lines;
  located.first_line = fn.first_line;
  located.excerpt = fn.excerpt;
  return located;
}

}  // namespace

void register_compile(py::module_& m) {
  using codegen::CompileOptions;
  m.def("flags_summary", &compiler::flags_summary);
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
  m.def(
      "_inject_fault",
      [](const std::string& fault) {
        if (fault == "invalid_ir")
          codegen::inject_fault(codegen::InjectedFault::kInvalidIr);
        else if (fault == "unselectable")
          codegen::inject_fault(codegen::InjectedFault::kUnselectable);
        else if (fault.empty())
          codegen::inject_fault(codegen::InjectedFault::kNone);
        else
          throw py::value_error("unknown fault '" + fault + "' (invalid_ir, unselectable or '')");
      },
      "Tests only: plant a defect in the next compiles' modules ('' stops).");

  py::class_<PyFunctionSource>(m, "FunctionSource")
      .def(py::init([](py::handle def, std::string name, std::string qualname, std::string module, std::string filename,
                       std::vector<std::string> lines, int first_line, py::object excerpt) {
             PyFunctionSource s;
             s.source.def = convert_ast(def, first_line - 1);
             s.source.name = std::move(name);
             s.source.qualname = std::move(qualname);
             s.source.module = std::move(module);
             s.source.filename = std::move(filename);
             s.source.source_lines = std::move(lines);
             s.source.first_line = first_line;
             if (!excerpt.is_none()) s.source.excerpt = excerpt_text(std::move(excerpt));
             return s;
           }),
           py::arg("def"), py::arg("name"), py::arg("qualname"), py::arg("module"), py::arg("filename"),
           py::arg("lines"), py::arg("first_line"), py::arg("excerpt") = py::none(),
           "`excerpt(line, col, end_line, end_col)`: the text under an error's file:line where `lines` has none")
      .def_property_readonly("qualname", [](const PyFunctionSource& s) { return s.source.qualname; });

  py::class_<ir::TypedFunction, std::shared_ptr<ir::TypedFunction>>(m, "TypedFunction")
      .def_property_readonly(
          "return_type", [](const ir::TypedFunction& f) { return f.sig.return_type; },
          py::return_value_policy::reference)
      .def_property_readonly(
          "args", [](const ir::TypedFunction& f) { return f.sig.args; }, py::return_value_policy::reference)
      .def_property_readonly("symbol", [](const ir::TypedFunction& f) { return f.symbol; })
      .def_property_readonly("env_symbol", [](const ir::TypedFunction& f) { return f.env_symbol; })
      .def_property_readonly("signature", [](const ir::TypedFunction& f) { return f.sig; })
      .def_property_readonly("external", [](const ir::TypedFunction& f) { return f.external; })
      .def_property_readonly("cooperative", [](const ir::TypedFunction& f) { return f.cooperative; })
      .def_property_readonly("link_inputs", [](const ir::TypedFunction& f) { return f.link_inputs; })
      .def_property_readonly("externs", &ir::reached_externs,
                             "Declared functions it reaches through any depth of calls: (symbol, where declared)")
      .def_property_readonly("exceptions",
                             [](const ir::TypedFunction& f) {
                               // The raise sites it reaches, in status-code order (code i + 1 is site i):
                               // (class, constant arguments, function name, file, line).
                               py::list out;
                               for (const ir::ExceptionSite& site : ir::exception_sites(f)) {
                                 const ir::Expr& exc = *site.stmt->value;
                                 const ir::Expr& cls = exc.kind == ir::ExprKind::Call ? *exc.operands[0] : exc;
                                 py::list args;
                                 if (exc.kind == ir::ExprKind::Call)
                                   for (size_t i = 1; i < exc.operands.size(); ++i)
                                     args.append(constant_value(exc.operands[i]->global));
                                 out.append(py::make_tuple(held(cls.global.function), py::tuple(args), site.fn->name,
                                                           site.fn->filename, site.stmt->loc.line));
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

  m.def(
      "type_function",
      [](const PyFunctionSource& src, Resolver& resolver, std::vector<TypeRef> args, py::object return_type,
         const CompileOptions& options, std::vector<std::shared_ptr<link::LinkInput>> links) {
        PyNameResolver names(resolver);
        PyCalleeProvider callees(options);  // callees are typed with the caller's options
        Signature sig;
        sig.args = std::move(args);
        sig.return_type = return_type.is_none() ? nullptr : return_type.cast<TypeRef>();
        return unwrap(compiler::type_function(src.source, names, callees, sig, options, links), &src.source);
      },
      py::arg("source"), py::arg("resolver"), py::arg("args"), py::arg("return_type"), py::arg("options"),
      py::arg("links") = std::vector<std::shared_ptr<link::LinkInput>>{});

  m.def(
      "declare_external",
      [](const std::string& name, const Signature& sig, const std::string& abi,
         std::vector<std::shared_ptr<link::LinkInput>> links, const std::string& declared_at, bool cooperative) {
        return compiler::declare_external(name, sig, abi == "c" ? codegen::Abi::C : codegen::Abi::Numba,
                                          std::move(links), declared_at, cooperative);
      },
      py::arg("name"), py::arg("signature"), py::arg("abi"), py::arg("links"), py::arg("declared_at"),
      py::arg("cooperative") = false, "A function defined by linked code, as a typed function callers can call.");

  m.def("check_static_shared_memory", [](const ir::TypedFunction& kernel) {
    if (std::optional<codegen::LocatedError> e = codegen::check_static_shared_memory(kernel)) {
      frontend::FunctionSource located = source_of(*e->fn);
      raise_error(e->error, &located);
    }
  });

  py::class_<codegen::CompiledCode>(m, "CompiledCode",
                                    "a compiled function's code (PTX text or LTO-IR bytes), its symbol and LLVM IR")
      .def_property_readonly("code",
                             [](const codegen::CompiledCode& c) -> py::object {
                               if (c.kind == codegen::CompiledCode::Kind::LtoIr) return py::bytes(c.code);
                               return py::str(c.code);
                             })
      .def_property_readonly(
          "kind",
          [](const codegen::CompiledCode& c) { return c.kind == codegen::CompiledCode::Kind::LtoIr ? "ltoir" : "ptx"; })
      .def_readonly("llvm_ir", &codegen::CompiledCode::llvm_ir)
      .def_readonly("symbol", &codegen::CompiledCode::symbol);

  m.def(
      "compile_ptx",
      [](const std::shared_ptr<ir::TypedFunction>& fn, const CompileOptions& options, bool keep_llvm_ir) {
        Expected<codegen::CompiledCode> out = [&] {
          py::gil_scoped_release nogil;
          return codegen::compile_to_ptx(*fn, options, keep_llvm_ir);
        }();
        frontend::FunctionSource located = source_of(*fn->fn);
        codegen::CompiledCode code = unwrap(std::move(out), &located);
        observe_ptx(code.code, fn, options);
        return code;
      },
      py::arg("fn"), py::arg("options"), py::arg("keep_llvm_ir") = false);

  m.def(
      "observe_ptx", [](py::object observer) { ptx_observer() = std::move(observer); }, py::arg("observer"),
      "Tests only: observer(ptx, typed, options) is called with every PTX a compile makes (None: no observer).");

  py::class_<codegen::KernelCode, std::shared_ptr<codegen::KernelCode>>(
      m, "KernelCode", "what a target made of one typed function (cujit/kernel_target.h)")
      .def_property_readonly("llvm_ir", [](const codegen::KernelCode& c) {
        Expected<std::string> ir = [&] {
          py::gil_scoped_release nogil;
          return c.optimised_ir();
        }();
        return unwrap(std::move(ir));
      });

  py::class_<codegen::GpuKernelCode, codegen::KernelCode, std::shared_ptr<codegen::GpuKernelCode>>(
      m, "GpuKernelCode", "the GPU target's code of a function: PTX or LTO-IR, linked per device architecture")
      .def_property_readonly("lto", &codegen::GpuKernelCode::lto)
      .def_property_readonly("kind",
                             [](const codegen::GpuKernelCode& c) {
                               return c.own().kind == codegen::CompiledCode::Kind::LtoIr ? "ltoir" : "ptx";
                             })
      .def_property_readonly("code",
                             [](const codegen::GpuKernelCode& c) -> py::object {
                               if (c.own().kind == codegen::CompiledCode::Kind::LtoIr) return py::bytes(c.own().code);
                               return py::str(c.own().code);
                             })
      .def_property_readonly("ptx",
                             [](const codegen::GpuKernelCode& c) {
                               Expected<std::string> ptx = [&] {
                                 py::gil_scoped_release nogil;
                                 return c.ptx();
                               }();
                               frontend::FunctionSource located = source_of(*c.typed()->fn);
                               std::string text = unwrap(std::move(ptx), &located);
                               if (c.lto()) observe_ptx(text, c.typed(), c.options());  // made now
                               return text;
                             })
      .def(
          "own_input",
          [](const codegen::GpuKernelCode& c, py::tuple cc) {
            const int major = cc[0].cast<int>(), minor = cc[1].cast<int>();
            Expected<link::LinkInput> input = [&] {
              py::gil_scoped_release nogil;
              return c.own_input(major, minor);
            }();
            frontend::FunctionSource located = source_of(*c.typed()->fn);
            return std::make_shared<link::LinkInput>(unwrap(std::move(input), &located));
          },
          py::arg("cc"), "Its code as a link input for a device of cc (major, minor): PTX, or LTO-IR for that cc")
      .def(
          "_image_builder",
          [](std::shared_ptr<codegen::GpuKernelCode> c, std::vector<std::string> include_dirs) {
            return ImageBuilder{code_build(std::move(c), std::move(include_dirs))};
          },
          py::arg("include_dirs"), "how the kernel cache links it for a device (an ImageBuilder)")
      .def(
          "link",
          [](const codegen::GpuKernelCode& c, py::tuple cc, std::vector<std::string> include_dirs,
             std::optional<std::vector<std::shared_ptr<link::LinkInput>>> inputs, bool ptx) {
            const int major = cc[0].cast<int>(), minor = cc[1].cast<int>();
            py::gil_scoped_release nogil;
            return c.link(major, minor, include_dirs, inputs ? &*inputs : nullptr, ptx);
          },
          py::arg("cc"), py::arg("include_dirs"), py::arg("inputs") = py::none(), py::arg("ptx") = false,
          "The cubin for a device of cc (major, minor) as a LinkResult; `inputs` stands for the typed function's "
          "link inputs (the disk cache's NVRTC results); `ptx`: the LTO link's optimised PTX instead (its cubin "
          "field holds the text)");

  py::class_<compiler::CompiledKernel>(m, "CompiledKernel",
                                       "the compile driver's answer: the typed function, the target's code and the "
                                       "options it was compiled with")
      .def_readonly("typed", &compiler::CompiledKernel::typed)
      .def_readonly("code", &compiler::CompiledKernel::code)
      .def_readonly("options", &compiler::CompiledKernel::options);

  py::class_<compiler::KernelBuild>(m, "KernelBuild",
                                    "build_kernel's answer: the kept kernel (what the store's find() gave) or the "
                                    "kernel compiled now, with its image when it was kept")
      .def_property_readonly("kept",
                             [](const compiler::KernelBuild& b) -> py::object {
                               return b.kept ? *static_cast<py::object*>(b.kept.get()) : py::object(py::none());
                             })
      .def_readonly("compiled", &compiler::KernelBuild::compiled)
      .def_property_readonly("image",
                             [](const compiler::KernelBuild& b) -> py::object {
                               return b.image.empty() ? py::object(py::none()) : py::object(py::bytes(b.image));
                             })
      .def_readonly("nvrtc_logs", &compiler::KernelBuild::nvrtc_logs)
      .def_readonly("not_kept", &compiler::KernelBuild::not_kept);

  m.def(
      "compile_kernel",
      [](const PyFunctionSource& src, Resolver& resolver, std::vector<TypeRef> args, py::object return_type,
         const CompileOptions& options, std::vector<std::shared_ptr<link::LinkInput>> links, const std::string& target,
         const std::string& output, std::string describe, bool launchable, compiler::KernelStore* store,
         std::vector<std::string> include_dirs) -> py::object {
        PyNameResolver names(resolver);
        PyCalleeProvider callees(options);  // callees are typed with the caller's options
        GilUnlocker unlocker;
        compiler::KernelRequest request;
        request.source = &src.source;
        request.names = &names;
        request.callees = &callees;
        request.signature.args = std::move(args);
        request.signature.return_type = return_type.is_none() ? nullptr : return_type.cast<TypeRef>();
        request.options = options;
        request.links = std::move(links);
        request.target = &kernel_target(target);
        request.output = output == "ptx"     ? codegen::Output::Ptx
                         : output == "ltoir" ? codegen::Output::LtoIr
                                             : codegen::Output::Decide;
        request.describe = std::move(describe);
        request.launchable = launchable;
        request.include_dirs = std::move(include_dirs);
        request.unlocker = &unlocker;
        auto fail = [&](const compiler::KernelFailure& failure) {
          if (failure.fn == nullptr) raise_error(failure.error, &src.source);
          frontend::FunctionSource located = source_of(*failure.fn);
          raise_error(failure.error, &located);
        };
        auto observed = [](const compiler::CompiledKernel& kernel) {
          if (auto* gpu = dynamic_cast<const codegen::GpuKernelCode*>(kernel.code.get()))
            if (gpu->own().kind == codegen::CompiledCode::Kind::Ptx)
              observe_ptx(gpu->own().code, kernel.typed, kernel.options);
        };
        if (store == nullptr) {
          std::variant<compiler::CompiledKernel, compiler::KernelFailure> out = compiler::compile_kernel(request);
          if (auto* failure = std::get_if<compiler::KernelFailure>(&out)) fail(*failure);
          observed(std::get<compiler::CompiledKernel>(out));
          return py::cast(std::get<compiler::CompiledKernel>(std::move(out)));
        }
        std::variant<compiler::KernelBuild, compiler::KernelFailure> out = compiler::build_kernel(request, *store);
        if (auto* failure = std::get_if<compiler::KernelFailure>(&out)) fail(*failure);
        compiler::KernelBuild& build = std::get<compiler::KernelBuild>(out);
        if (build.compiled) observed(*build.compiled);
        return py::cast(std::move(build));
      },
      py::arg("source"), py::arg("resolver"), py::arg("args"), py::arg("return_type"), py::arg("options"),
      py::arg("links"), py::arg("target") = "cuda", py::arg("output") = "", py::arg("describe") = "",
      py::arg("launchable") = false, py::arg("store") = nullptr, py::arg("include_dirs") = std::vector<std::string>{},
      "The compile driver (cujit/compiler.h): one function for one signature, typed and compiled for `target` "
      "('cuda', 'cpu'); `output` 'ptx' or 'ltoir' asks for that code (default: the target decides); "
      "`launchable`: a kernel cujit launches, checked against the devices' limits and the target's refusals. "
      "Answers a CompiledKernel; with a KernelStore `store`, a KernelBuild (build_kernel: the kept kernel, or one "
      "compiled now and kept, linked with NVRTC's `include_dirs`).");

  m.def(
      "compile_ltoir",
      [](const ir::TypedFunction& fn, const CompileOptions& options, bool keep_llvm_ir) {
        Expected<codegen::CompiledCode> out = [&] {
          py::gil_scoped_release nogil;
          return codegen::compile_to_ltoir(fn, options, keep_llvm_ir);
        }();
        frontend::FunctionSource located = source_of(*fn.fn);
        return unwrap(std::move(out), &located);
      },
      py::arg("fn"), py::arg("options"), py::arg("keep_llvm_ir") = false);
}

}  // namespace cujit::bindings
