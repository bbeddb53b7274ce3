// Python view of linking (`cujit._core.link`, `.nvrtc`, `.nvvm`, `.toolkit`):
// link inputs as data (`LinkInput`), NVRTC and libNVVM compiles, nvJitLink
// links, one kernel's whole link (`link_program`), and where the toolkit's
// parts were found. The tools run with the GIL released.
#include <pybind11/stl.h>

#include <optional>

#include "bindings.h"
#include "cujit/background.h"
#include "cujit/link.h"
#include "cujit/nvrtc.h"
#include "cujit/nvvm.h"
#include "cujit/toolkit.h"

namespace cujit::bindings {
namespace {

namespace lnk = cujit::link;
namespace tk = cujit::toolkit;

using LinkInputPtr = std::shared_ptr<lnk::LinkInput>;

std::string text_or_bytes(py::handle data) {
  return PyUnicode_Check(data.ptr()) ? data.cast<std::string>() : image_bytes(data);
}

void register_link_inputs(py::module_& m) {
  py::class_<lnk::LinkInput, LinkInputPtr>(m, "LinkInput",
                                           "A link input as data: kind, bytes, name (and the object it came from)")
      .def(py::init([](const std::string& kind, py::handle data, std::string name, py::object origin) {
             auto in = std::make_shared<lnk::LinkInput>();
             if (!lnk::parse_input_kind(kind, in->kind))
               throw py::value_error("Don't know how to link " + kind +
                                     " (expected cu, ptx, cubin, fatbin, object, library or ltoir)");
             in->data = text_or_bytes(data);
             in->name = std::move(name);
             in->origin = origin.is_none() ? nullptr : hold(std::move(origin));
             return LinkInputPtr(in);
           }),
           py::arg("kind"), py::arg("data"), py::arg("name"), py::arg("origin") = py::none())
      .def_property_readonly("kind", [](const lnk::LinkInput& in) { return lnk::input_kind_name(in.kind); })
      .def_property_readonly("name", [](const lnk::LinkInput& in) { return in.name; })
      .def_property_readonly("data", [](const lnk::LinkInput& in) { return py::bytes(in.data); })
      .def_property_readonly("origin",
                             [](const lnk::LinkInput& in) -> py::object {
                               if (!in.origin) return py::none();
                               return *static_cast<py::object*>(in.origin.get());
                             })
      .def("__repr__", [](const lnk::LinkInput& in) {
        return std::string("<LinkInput ") + lnk::input_kind_name(in.kind) + " '" + in.name + "'>";
      });
}

void register_nvrtc(py::module_& m) {
  py::module_ n = m.def_submodule("nvrtc", "NVRTC: CUDA C++ to PTX or LTO-IR (cached per source and options)");
  n.def(
      "compile",
      [](py::handle source, std::string name, std::string arch, bool lto, bool debug, bool lineinfo,
         std::vector<std::string> include_dirs, bool report) {
        std::string src = text_or_bytes(source);
        lnk::NvrtcOutput out;
        {
          py::gil_scoped_release release;
          out = lnk::compile_cuda(src, name, {std::move(arch), lto, debug, lineinfo, std::move(include_dirs)}, report);
        }
        py::object code = out.ltoir ? py::object(py::bytes(out.code)) : py::object(py::str(out.code));
        return py::make_tuple(code, out.log, out.cached);
      },
      py::arg("source"), py::arg("name"), py::arg("arch"), py::arg("lto") = false, py::arg("debug") = false,
      py::arg("lineinfo") = false, py::arg("include_dirs") = std::vector<std::string>{}, py::arg("report") = true,
      "Returns (PTX str or LTO-IR bytes, log, cached). cached: compiled before and its log already given to "
      "a caller with report=True (report=False, a prefetch, leaves the log to the next such caller).");
  n.def(
      "prefetch",
      [](const std::vector<LinkInputPtr>& inputs, std::string arch, std::optional<bool> lto, bool debug, bool lineinfo,
         std::vector<std::string> include_dirs) {
        std::vector<lnk::NvrtcSource> sources;
        for (const auto& in : inputs)
          if (in->kind == lnk::InputKind::Cu) sources.push_back({in->data, in->name});
        if (sources.empty()) return;
        std::function<bool()> decide_lto;
        if (!lto) {
          // lto=None: resolve_lto for CUDA C++; finding out may load nvJitLink and libNVVM, which the
          // prefetch's thread does.
          decide_lto = [debug] { return lnk::resolve_lto(std::nullopt, debug, {lnk::InputKind::Cu}); };
        }
        lnk::prefetch_cuda(std::move(sources),
                           {std::move(arch), lto.value_or(false), debug, lineinfo, std::move(include_dirs)},
                           std::move(decide_lto));
      },
      py::arg("inputs"), py::arg("arch"), py::arg("lto") = py::none(), py::arg("debug") = false,
      py::arg("lineinfo") = false, py::arg("include_dirs") = std::vector<std::string>{},
      "Starts NVRTC on the CUDA C++ among the link inputs on a native thread and returns at once; the link "
      "that needs one waits for its compile. lto=None: as linking.resolve_lto decides for CUDA C++. Errors "
      "are left to that link.");
  n.def(
      "options",
      [](std::string arch, bool lto, bool debug, bool lineinfo, std::vector<std::string> dirs) {
        return lnk::nvrtc_option_list({std::move(arch), lto, debug, lineinfo, std::move(dirs)});
      },
      py::arg("arch"), py::arg("lto") = false, py::arg("debug") = false, py::arg("lineinfo") = false,
      py::arg("include_dirs") = std::vector<std::string>{});
  n.def("compile_count", &lnk::nvrtc_compile_count, "compiles started in this process (not cache hits or waits)");
  n.def("version", &lnk::nvrtc_version);
  n.def("supported_archs", &lnk::nvrtc_supported_archs);
}

void register_nvvm(py::module_& m) {
  py::module_ n = m.def_submodule("nvvm", "libNVVM: NVVM IR to LTO-IR or PTX");
  n.def("compile", [](std::string ir, std::string name, std::vector<std::string> options) {
    lnk::NvvmOutput out;
    {
      py::gil_scoped_release release;
      out = lnk::nvvm_compile(ir, name, options);
    }
    return py::make_tuple(py::bytes(out.code), out.log);
  });
  n.def("ir_version", &lnk::nvvm_ir_version);
}

}  // namespace

void register_toolkit(py::module_& m) {
  py::module_ t = m.def_submodule("toolkit", "where the CUDA toolkit's parts were found");
  t.def("set_wheel_roots", &tk::set_wheel_roots, py::arg("roots"));
  py::class_<tk::Located>(t, "Located", "where a CUDA library was found, or why not and where it was looked for")
      .def_property_readonly("found", [](const tk::Located& l) { return l.handle != nullptr; })
      .def_readonly("path", &tk::Located::path)
      .def_readonly("reason", &tk::Located::reason)
      .def_readonly("searched", &tk::Located::searched);
  t.def(
      "library",
      [](const std::string& which) -> tk::Located {
        static const std::pair<const char*, tk::Library> names[] = {{"nvrtc", tk::Library::Nvrtc},
                                                                    {"nvjitlink", tk::Library::NvJitLink},
                                                                    {"nvvm", tk::Library::Nvvm},
                                                                    {"driver", tk::Library::Driver}};
        for (const auto& [name, lib] : names) {
          if (which != name) continue;
          return tk::library(lib);
        }
        throw py::value_error("unknown library '" + which + "' (nvrtc, nvjitlink, nvvm or driver)");
      },
      py::return_value_policy::copy, py::arg("which"));
  t.def("libdevice_path", [] {
    std::string reason;
    std::string path = tk::libdevice_path(&reason);
    return py::make_tuple(path, reason);
  });
  t.def("cudadevrt_path", [] {
    std::string reason;
    std::string path = tk::cudadevrt_path(&reason);
    return py::make_tuple(path, reason);
  });
  t.def("include_dirs", &tk::include_dirs);
  t.def("search_roots", &tk::search_roots, "The toolkit roots the locator looks in, in its order.");
}

namespace {

void register_link_nvjitlink(py::module_& m) {
  py::module_ l = m.def_submodule("link", "nvJitLink: link PTX, cubins, fatbins, objects, libraries and LTO-IR");
  // Loads nvJitLink on a background thread, so the first kernel launch does not wait for it.
  l.def("preload", [] { background::start([] { lnk::nvjitlink_status(); }); });
  l.def(
      "resolve_lto",
      [](std::optional<bool> lto, bool debug, const std::vector<std::string>& kinds) {
        std::vector<lnk::InputKind> parsed;
        for (const std::string& name : kinds) {
          lnk::InputKind k;
          if (!lnk::parse_input_kind(name, k)) throw py::value_error("unknown link input kind '" + name + "'");
          parsed.push_back(k);
        }
        py::gil_scoped_release nogil;  // may load nvJitLink and libNVVM
        return lnk::resolve_lto(lto, debug, parsed);
      },
      py::arg("lto"), py::arg("debug"), py::arg("kinds"),
      "Whether a kernel with link inputs of these kinds links with LTO (lto=None: when one is CUDA C++ or "
      "LTO-IR, not for debug, and nvJitLink and libNVVM are there).");
  l.def("lto_available", &lnk::lto_available, py::call_guard<py::gil_scoped_release>(),
        "Whether kernels can link with link-time optimisation: nvJitLink and libNVVM are found (loads them).");
  py::class_<lnk::LinkerStatus>(l, "LinkerStatus", "whether nvJitLink loaded, from where, and why not")
      .def_readonly("available", &lnk::LinkerStatus::available)
      .def_readonly("path", &lnk::LinkerStatus::path)
      .def_readonly("reason", &lnk::LinkerStatus::reason)
      .def_property_readonly("version", [](const lnk::LinkerStatus& s) { return py::make_tuple(s.major, s.minor); });
  l.def("status", [] { return lnk::nvjitlink_status(); }, py::return_value_policy::copy);
  py::class_<lnk::ProgramLinkResult>(l, "LinkResult", "one kernel's link: the cubin and what the tools said")
      .def_property_readonly("cubin", [](const lnk::ProgramLinkResult& r) { return py::bytes(r.cubin); })
      .def_readonly("info_log", &lnk::ProgramLinkResult::info_log)
      .def_readonly("options", &lnk::ProgramLinkResult::options)
      .def_readonly("nvrtc_logs", &lnk::ProgramLinkResult::nvrtc_logs);
  auto to_inputs = [](py::handle inputs) {
    std::vector<lnk::LinkInput> out;
    for (py::handle item : inputs) {
      py::tuple t = py::reinterpret_borrow<py::object>(item).cast<py::tuple>();
      if (t.size() != 3) throw py::value_error("a link input is (kind, data, name)");
      lnk::LinkInput in;
      std::string kind = t[0].cast<std::string>();
      if (!lnk::parse_input_kind(kind, in.kind))
        throw py::value_error("Don't know how to link " + kind +
                              " (expected ptx, cubin, fatbin, object, library or ltoir)");
      in.data = PyUnicode_Check(t[1].ptr()) ? t[1].cast<std::string>() : image_bytes(t[1]);
      in.name = t[2].cast<std::string>();
      out.push_back(std::move(in));
    }
    return out;
  };
  auto to_options = [](std::string arch, int max_registers, bool lineinfo, bool debug, bool ptx,
                       std::vector<std::string> extra) {
    lnk::LinkOptions o;
    o.arch = std::move(arch);
    o.max_registers = max_registers;
    o.lineinfo = lineinfo;
    o.debug = debug;
    o.ptx_output = ptx;
    o.extra = std::move(extra);
    return o;
  };
  l.def(
      "link_options",
      [=](std::vector<std::string> kinds, std::string arch, int max_registers, bool lineinfo, bool debug, bool ptx,
          std::vector<std::string> extra) {
        std::vector<lnk::LinkInput> inputs;
        for (const auto& k : kinds) {
          lnk::LinkInput in;
          if (!lnk::parse_input_kind(k, in.kind)) throw py::value_error("unknown link input kind " + k);
          inputs.push_back(in);
        }
        return lnk::link_options(inputs, to_options(arch, max_registers, lineinfo, debug, ptx, extra));
      },
      py::arg("kinds"), py::arg("arch"), py::arg("max_registers") = 0, py::arg("lineinfo") = false,
      py::arg("debug") = false, py::arg("ptx") = false, py::arg("extra") = std::vector<std::string>{},
      "The nvJitLink options a link of inputs of these kinds would use.");
  l.def(
      "link",
      [=](py::object inputs, std::string arch, int max_registers, bool lineinfo, bool debug, bool ptx,
          std::vector<std::string> extra) {
        std::vector<lnk::LinkInput> in = to_inputs(inputs);
        lnk::LinkOptions o = to_options(arch, max_registers, lineinfo, debug, ptx, extra);
        lnk::LinkResult r;
        {
          py::gil_scoped_release release;
          r = lnk::link(in, o);
        }
        return py::make_tuple(py::bytes(r.image), py::str(r.info_log));
      },
      py::arg("inputs"), py::arg("arch"), py::arg("max_registers") = 0, py::arg("lineinfo") = false,
      py::arg("debug") = false, py::arg("ptx") = false, py::arg("extra") = std::vector<std::string>{},
      "Links [(kind, data, name), ...] for arch ('sm_90a'); returns (image bytes, info log).");
}

void register_program_link(py::module_& m) {
  py::module_ l = m.attr("link");
  l.def(
      "link_program",
      [](const lnk::LinkInput& own, std::vector<LinkInputPtr> inputs, std::string arch, bool lto, bool debug,
         bool lineinfo, int max_registers, std::vector<std::string> include_dirs, std::string entry,
         std::vector<std::pair<std::string, std::string>> externs) {
        lnk::ProgramLink p{own,
                           std::move(inputs),
                           std::move(arch),
                           lto,
                           debug,
                           lineinfo,
                           max_registers,
                           std::move(include_dirs),
                           std::move(entry),
                           std::move(externs)};
        lnk::ProgramLinkResult r;
        {
          py::gil_scoped_release release;
          r = lnk::link_program(p);
        }
        return r;
      },
      py::arg("own"), py::arg("inputs"), py::arg("arch"), py::arg("lto") = false, py::arg("debug") = false,
      py::arg("lineinfo") = false, py::arg("max_registers") = 0, py::arg("include_dirs") = std::vector<std::string>{},
      py::arg("entry") = "", py::arg("externs") = std::vector<std::pair<std::string, std::string>>{},
      "One kernel's link: .cu inputs through NVRTC, then nvJitLink; returns a LinkResult (cubin, info_log, "
      "options, nvrtc_logs).");
  l.def("cubin_has_symbol",
        [](py::bytes cubin, const std::string& symbol) { return lnk::cubin_has_symbol(std::string(cubin), symbol); });
}

}  // namespace

void register_link(py::module_& m) {
  register_link_inputs(m);
  register_link_nvjitlink(m);
  register_program_link(m);
  register_nvrtc(m);
  register_nvvm(m);
}

}  // namespace cujit::bindings
