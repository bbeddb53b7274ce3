// Python view of the compile cache's on-disk store (`cujit._core.cache`). The
// file IO runs with the GIL released, so other threads compile meanwhile.
#include <pybind11/stl.h>

#include "bindings.h"
#include "cujit/cache_record.h"
#include "cujit/disk_cache.h"

namespace cujit::bindings {

namespace {

void register_record(py::module_& c) {
  using cache::CacheRecord;
  using cache::RecordConstant;
  py::class_<RecordConstant> constant(c, "Constant", "a raise site's constant argument: its kind and its text");
  py::enum_<RecordConstant::Kind>(constant, "Kind")
      .value("str", RecordConstant::Kind::Str)
      .value("int", RecordConstant::Kind::Int)
      .value("float", RecordConstant::Kind::Float)
      .value("bool", RecordConstant::Kind::Bool)
      .value("none", RecordConstant::Kind::None);
  constant
      .def(py::init([](RecordConstant::Kind kind, std::string text) { return RecordConstant{kind, std::move(text)}; }),
           py::arg("kind"), py::arg("text"))
      .def_readonly("kind", &RecordConstant::kind)
      .def_readonly("text", &RecordConstant::text);
  py::class_<cache::RecordRaise>(c, "Raise", "a debug kernel's raise site: the exception by importable name")
      .def(py::init([](std::string exception, std::vector<RecordConstant> args, std::string function,
                       std::string filename, std::int64_t line) {
             return cache::RecordRaise{std::move(exception), std::move(args), std::move(function), std::move(filename),
                                       line};
           }),
           py::arg("exception"), py::arg("args"), py::arg("function"), py::arg("filename"), py::arg("line"))
      .def_readonly("exception", &cache::RecordRaise::exception)
      .def_readonly("args", &cache::RecordRaise::args)
      .def_readonly("function", &cache::RecordRaise::function)
      .def_readonly("filename", &cache::RecordRaise::filename)
      .def_readonly("line", &cache::RecordRaise::line);
  py::class_<CacheRecord> record(
      c, "Record",
      "What a cache entry holds, as data only: code, symbol, return type name, launch facts, "
      "link manifest, raise sites");
  py::enum_<CacheRecord::Kind>(record, "Kind")
      .value("kernel", CacheRecord::Kind::Kernel)
      .value("compiled", CacheRecord::Kind::Compiled);
  record
      .def(py::init([](CacheRecord::Kind kind, const py::bytes& code, std::string symbol, std::string return_type,
                       std::string arch, bool cooperative, std::vector<std::pair<std::string, std::string>> links,
                       std::vector<cache::RecordRaise> raises) {
             return CacheRecord{
                 kind,        std::string(code), std::move(symbol), std::move(return_type), std::move(arch),
                 cooperative, std::move(links),  std::move(raises)};
           }),
           py::arg("kind"), py::arg("code"), py::arg("symbol") = "", py::arg("return_type") = "", py::arg("arch") = "",
           py::arg("cooperative") = false, py::arg("links") = std::vector<std::pair<std::string, std::string>>{},
           py::arg("raises") = std::vector<cache::RecordRaise>{})
      .def_readonly("kind", &CacheRecord::kind)
      .def_property_readonly("code", [](const CacheRecord& r) { return py::bytes(r.code); })
      .def_readonly("symbol", &CacheRecord::symbol)
      .def_readonly("return_type", &CacheRecord::return_type)
      .def_readonly("arch", &CacheRecord::arch)
      .def_readonly("cooperative", &CacheRecord::cooperative)
      .def_readonly("links", &CacheRecord::links)
      .def_readonly("raises", &CacheRecord::raises)
      .def("encode", [](const CacheRecord& r) { return py::bytes(cache::encode(r)); })
      .def_static(
          "decode",
          [](const py::bytes& data) -> std::optional<CacheRecord> { return cache::decode(std::string_view(data)); },
          py::arg("data"), "The record the bytes hold, or None when they are not one whole record of this format.");
}

}  // namespace

void register_cache(py::module_& m) {
  using cache::DiskCache;
  py::module_ c = m.def_submodule("cache", "the compile cache's on-disk store");
  register_record(c);
  c.def("path_trust_problem", &cache::path_trust_problem, py::arg("path"), py::call_guard<py::gil_scoped_release>(),
        "'' when the file or directory may be trusted (this user's or root's, writable by nobody else), else why "
        "not.");
  py::class_<DiskCache>(c, "DiskCache",
                        "Payloads stored by (section, key) under a directory, written atomically, checked on read, "
                        "and bounded to max_bytes (0: unbounded) by evicting the least recently used")
      .def(py::init<std::string, std::uint64_t, bool>(), py::arg("dir"), py::arg("max_bytes") = 0,
           py::arg("shared") = false)
      .def("open_root", &DiskCache::open_root, py::call_guard<py::gil_scoped_release>(),
           "Creates the directory (0700) if missing; '' or why it cannot be.")
      .def("trust_problem", &DiskCache::trust_problem, py::call_guard<py::gil_scoped_release>(),
           "'' when the directory may be trusted (this user's or root's, writable by nobody else), else why not; "
           "'' for a shared cache.")
      .def(
          "get_record",
          [](DiskCache& self, const std::string& section, const std::string& key) -> std::optional<cache::CacheRecord> {
            py::gil_scoped_release release;
            std::optional<std::string> payload = self.get(section, key);
            if (!payload) return std::nullopt;
            return cache::decode(*payload);
          },
          py::arg("section"), py::arg("key"), "The entry's Record, or None (missing, untrusted, not a record).")
      .def(
          "put_record",
          [](DiskCache& self, const std::string& section, const std::string& key, const cache::CacheRecord& record) {
            py::gil_scoped_release release;
            return self.put(section, key, cache::encode(record));
          },
          py::arg("section"), py::arg("key"), py::arg("record"))
      .def(
          "get",
          [](DiskCache& self, const std::string& section, const std::string& key) -> std::optional<py::bytes> {
            std::optional<std::string> payload;
            {
              py::gil_scoped_release release;
              payload = self.get(section, key);
            }
            if (!payload) return std::nullopt;
            return py::bytes(*payload);
          },
          py::arg("section"), py::arg("key"), "The payload (bytes), or None when missing or corrupt.")
      .def(
          "put",
          [](DiskCache& self, const std::string& section, const std::string& key, py::handle data) {
            std::string payload = image_bytes(data);
            py::gil_scoped_release release;
            return self.put(section, key, payload);
          },
          py::arg("section"), py::arg("key"), py::arg("data"),
          "Stores data (bytes or any buffer); False (with last_error saying why) when it could not.")
      .def("evict", &DiskCache::evict, py::arg("target_bytes"), py::call_guard<py::gil_scoped_release>(),
           "Removes the least recently used entries until the total is at most target_bytes; returns how many.")
      .def("total_bytes", &DiskCache::total_bytes, py::call_guard<py::gil_scoped_release>())
      .def("stats",
           [](const DiskCache& self) {
             cache::DiskCacheStats s = self.stats();
             py::dict out;
             out["hits"] = s.hits;
             out["misses"] = s.misses;
             out["writes"] = s.writes;
             out["corrupt"] = s.corrupt;
             out["evictions"] = s.evictions;
             out["write_failures"] = s.write_failures;
             out["untrusted"] = s.untrusted;
             return out;
           })
      .def_property_readonly(
          "untrusted", [](const DiskCache& self) { return self.stats().untrusted; },
          "entries refused so far: owned by another user or writable by others")
      .def_property_readonly("last_error", &DiskCache::last_error)
      .def_property_readonly("dir", &DiskCache::dir)
      .def_property_readonly("max_bytes", &DiskCache::max_bytes)
      .def("__repr__", [](const DiskCache& self) {
        return "<DiskCache '" + self.dir() + "' max_bytes=" + std::to_string(self.max_bytes()) + ">";
      });
}

}  // namespace cujit::bindings
