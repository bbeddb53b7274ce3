// Python view of the compile cache's on-disk store (`cujit._core.cache`). The
// file IO runs with the GIL released, so other threads compile meanwhile.
#include <pybind11/stl.h>

#include "bindings.h"
#include "cujit/disk_cache.h"

namespace cujit::bindings {

void register_cache(py::module_& m) {
  using cache::DiskCache;
  py::module_ c = m.def_submodule("cache", "the compile cache's on-disk store");
  py::class_<DiskCache>(c, "DiskCache",
                        "Payloads stored by (section, key) under a directory, written atomically, checked on read, "
                        "and bounded to max_bytes (0: unbounded) by evicting the least recently used")
      .def(py::init<std::string, std::uint64_t>(), py::arg("dir"), py::arg("max_bytes") = 0)
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
             return out;
           })
      .def_property_readonly("last_error", &DiskCache::last_error)
      .def_property_readonly("dir", &DiskCache::dir)
      .def_property_readonly("max_bytes", &DiskCache::max_bytes)
      .def("__repr__", [](const DiskCache& self) {
        return "<DiskCache '" + self.dir() + "' max_bytes=" + std::to_string(self.max_bytes()) + ">";
      });
}

}  // namespace cujit::bindings
