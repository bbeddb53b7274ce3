// Finding the CUDA toolkit's parts (see cujit/toolkit.h): search order,
// dlopen once per part and process, and messages that say where we looked.
#include "cujit/toolkit.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <cstdlib>
#include <mutex>

namespace cujit::toolkit {
namespace {

std::mutex& roots_mutex() {
  static std::mutex m;
  return m;
}

std::vector<std::string>& wheel_roots() {
  static std::vector<std::string> roots;
  return roots;
}

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : "";
}

bool exists(const std::string& path) {
  struct stat st{};
  return stat(path.c_str(), &st) == 0;
}

struct Spec {
  const char* name;
  std::vector<const char*> override_vars;
  std::vector<const char*> sonames;
  std::vector<const char*> subdirs;  // under each root
  const char* hint;
};

const Spec& spec(Library which) {
  static const Spec specs[] = {
      {"NVRTC",
       {"CUJIT_NVRTC"},
       {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"},
       {"lib64", "lib"},
       "`pip install cujit[cu13]` (or nvidia-cuda-nvrtc), or set CUDA_HOME to a CUDA toolkit"},
      {"nvJitLink",
       {"CUJIT_NVJITLINK"},
       {"libnvJitLink.so.13", "libnvJitLink.so.12", "libnvJitLink.so"},
       {"lib64", "lib"},
       "`pip install cujit[cu13]` (or nvidia-nvjitlink), or set CUDA_HOME to a CUDA toolkit"},
      {"libNVVM",
       {"CUJIT_NVVM"},
       {"libnvvm.so.4", "libnvvm.so"},
       {"nvvm/lib64", "lib64", "lib"},
       "`pip install cujit[cu13]` (or nvidia-nvvm), or set CUDA_HOME to a CUDA toolkit"},
      {"the CUDA driver",
       {"CUJIT_CUDA_DRIVER", "NUMBA_CUDA_DRIVER"},
       {"libcuda.so.1"},
       {},
       "install the NVIDIA driver, or set CUJIT_CUDA_DRIVER to the full path of libcuda.so.1"},
  };
  return specs[static_cast<int>(which)];
}

Located locate(Library which) {
  const Spec& s = spec(which);
  Located out;
  std::string last_error;
  auto try_open = [&](const std::string& path, const std::string& label) {
    out.searched.push_back(label);
    void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) {
      const char* e = dlerror();
      last_error = e ? e : "";
    }
    return h;
  };
  for (const char* var : s.override_vars) {
    std::string forced = env(var);
    if (forced.empty()) continue;
    out.handle = try_open(forced, forced + " (" + var + ")");
    if (out.handle == nullptr) {
      out.reason =
          std::string(s.name) + " named by " + var + " could not be loaded: " + forced + " (" + last_error + ")";
      return out;
    }
    break;
  }
  if (out.handle == nullptr) {
    for (const auto& root : search_roots()) {
      for (const char* sub : s.subdirs) {
        for (const char* so : s.sonames) {
          std::string path = root + "/" + sub + "/" + so;
          if (!exists(path)) {
            out.searched.push_back(path);
            continue;
          }
          if ((out.handle = try_open(path, path)) != nullptr) break;
        }
        if (out.handle != nullptr) break;
      }
      if (out.handle != nullptr) break;
    }
  }
  if (out.handle == nullptr) {
    for (const char* so : s.sonames)
      if ((out.handle = try_open(so, std::string(so) + " (loader path)")) != nullptr) break;
  }
  if (out.handle == nullptr) {
    std::string where;
    for (const auto& a : out.searched) where += "\n  " + a;
    out.reason = std::string(s.name) + " (" + s.sonames[0] + ") was not found; it was looked for in:" + where +
                 (last_error.empty() ? "" : "\n(last loader error: " + last_error + ")") + "\nTo fix: " + s.hint +
                 (env("CUDA_HOME").empty() ? " (CUDA_HOME is not set)." : " (CUDA_HOME=" + env("CUDA_HOME") + ").");
    return out;
  }
  out.path = out.searched.back();
  return out;
}

}  // namespace

std::vector<std::string> search_roots() {
  std::vector<std::string> out;
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
    if (!env(var).empty()) out.push_back(env(var));
  {
    std::lock_guard<std::mutex> lock(roots_mutex());
    for (const auto& r : wheel_roots()) out.push_back(r);
  }
  out.push_back("/usr/local/cuda");
  return out;
}

void set_wheel_roots(std::vector<std::string> r) {
  std::lock_guard<std::mutex> lock(roots_mutex());
  wheel_roots() = std::move(r);
}

const char* library_name(Library which) { return spec(which).name; }

const Located& library(Library which) {
  static std::once_flag once[4];
  static Located* found[4] = {};  // leaked: used during interpreter shutdown
  int i = static_cast<int>(which);
  std::call_once(once[i], [&] { found[i] = new Located(locate(which)); });
  return *found[i];
}

void* symbol(const Located& lib, std::initializer_list<const char*> names) {
  if (lib.handle == nullptr) return nullptr;
  for (const char* n : names)
    if (void* p = dlsym(lib.handle, n)) return p;
  return nullptr;
}

namespace {

// A file of the toolkit under one of `subpaths` of a root, or "" with `reason`.
std::string find_file(const std::string& what, std::initializer_list<const char*> subpaths, const char* hint,
                      std::string* reason) {
  std::vector<std::string> tried;
  for (const auto& root : search_roots()) {
    for (const char* sub : subpaths) {
      std::string path = root + "/" + sub;
      if (exists(path)) return path;
      tried.push_back(path);
    }
  }
  if (reason != nullptr) {
    *reason = what + " was not found; it was looked for in:";
    for (const auto& t : tried) *reason += "\n  " + t;
    *reason += std::string("\nTo fix: ") + hint + (env("CUDA_HOME").empty() ? " (CUDA_HOME is not set)." : ".");
  }
  return "";
}

}  // namespace

std::string libdevice_path(std::string* reason) {
  return find_file("libdevice (libdevice.10.bc)", {"nvvm/libdevice/libdevice.10.bc"},
                   "`pip install cujit[cu13]` (or nvidia-nvvm), or set CUDA_HOME to a CUDA toolkit", reason);
}

std::string cudadevrt_path(std::string* reason) {
  return find_file("the CUDA device runtime (libcudadevrt.a)", {"lib64/libcudadevrt.a", "lib/libcudadevrt.a"},
                   "`pip install nvidia-cuda-runtime` (CUDA 13), or set CUDA_HOME to a CUDA toolkit", reason);
}

std::vector<std::string> include_dirs() {
  std::vector<std::string> out;
  auto add = [&](const std::string& d) {
    if (!d.empty() && exists(d)) {
      for (const auto& o : out)
        if (o == d) return;
      out.push_back(d);
    }
  };
  for (const char* var : {"CUJIT_CUDA_INCLUDE_PATH", "NUMBA_CUDA_INCLUDE_PATH"}) {
    std::string v = env(var);
    size_t start = 0;
    while (start <= v.size() && !v.empty()) {
      size_t end = v.find(':', start);
      if (end == std::string::npos) end = v.size();
      add(v.substr(start, end - start));
      start = end + 1;
    }
  }
  for (const auto& root : search_roots()) {
    add(root + "/include");
    add(root + "/include/cccl");
  }
  return out;
}

}  // namespace cujit::toolkit
