// What cujit._runtime knows of compiling without the compiler: CompileOptions (a specialisation's key is its
// options' key), the architectures (which a compile targets, which one a kernel links for on a device), how many of
// a kernel's arrays may be noalias, and the names of the kernel language's intrinsics (generated from the
// intrinsic table when the extension is built: cujit.cuda's namespace is made at import, before any compile).
#include <pybind11/stl.h>

#include "bindings.h"
#include "cujit/codegen.h"
#include "cujit/types.h"

namespace cujit::bindings {
namespace {

std::vector<std::string> intrinsic_paths() {
  static const char* const paths[] = {
#include "intrinsic_paths.inc"
  };
  return std::vector<std::string>(std::begin(paths), std::end(paths));
}

}  // namespace

void register_options(py::module_& m) {
  using codegen::CompileOptions;
  py::class_<CompileOptions>(m, "CompileOptions")
      .def(py::init<>())
      .def_property(
          "cc", [](const CompileOptions& o) { return py::make_tuple(o.cc.major, o.cc.minor, o.cc.suffix); },
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
      .def_property(
          "abi", [](const CompileOptions& o) { return o.abi == codegen::Abi::C ? "c" : "numba"; },
          [](CompileOptions& o, const std::string& abi) { o.abi = abi == "c" ? codegen::Abi::C : codegen::Abi::Numba; })
      .def_readwrite("abi_name", &CompileOptions::abi_name)
      .def_readwrite("from_dispatcher", &CompileOptions::from_dispatcher)
      .def_readwrite("noalias_arrays", &CompileOptions::noalias_arrays)
      .def_property(
          "launch_bounds",
          [](const CompileOptions& o) { return py::make_tuple(o.max_threads, o.min_blocks, o.max_cluster); },
          [](CompileOptions& o, py::tuple b) {
            o.max_threads = b.size() > 0 ? b[0].cast<int>() : 0;
            o.min_blocks = b.size() > 1 ? b[1].cast<int>() : 0;
            o.max_cluster = b.size() > 2 ? b[2].cast<int>() : 0;
          })
      .def("copy", [](const CompileOptions& o) { return CompileOptions(o); })
      .def_readwrite("forceinline", &CompileOptions::forceinline)
      .def_readwrite("inline_always", &CompileOptions::inline_always)
      .def_readwrite("lto", &CompileOptions::lto, "True, False, or None (LTO when a link input needs it)")
      .def_readwrite("max_registers", &CompileOptions::max_registers, "0: nvJitLink's choice")
      .def_readwrite("boundscheck", &CompileOptions::boundscheck, "the CPU target's checks; None: on")
      .def_readwrite("carveout", &CompileOptions::carveout,
                     "shared memory carveout percentage (-1: the default), or None")
      .def("key", &CompileOptions::key);
  m.attr("DEFAULT_CC") = py::make_tuple(codegen::kDefaultCCMajor, codegen::kDefaultCCMinor);

  m.def("resolve_arch", [](py::tuple cc) {
    codegen::ComputeCapability c;
    c.major = cc[0].cast<int>();
    c.minor = cc[1].cast<int>();
    if (cc.size() > 2) c.suffix = py::str(cc[2]);
    return unwrap(codegen::resolve_arch(c)).name();
  });
  m.def("supported_archs", &codegen::supported_archs);
  m.def("intrinsic_paths", &intrinsic_paths, "every cuda.* function and value the kernel language offers");
  m.def("device_arch", &codegen::device_arch, py::arg("major"), py::arg("minor"),
        "sm_XY a kernel links for on a device of (major, minor), with numba-cuda's 'a' from 9.0 up");
  m.def("noalias_arrays", &types::noalias_arrays, py::arg("argtypes"),
        "How many array arguments a kernel of these types compiles with noalias data (types::noalias_arrays)");
}

}  // namespace cujit::bindings
