// Writes the paths of the kernel language's intrinsics (intrinsics::paths) as C++ string literals, one per line,
// to the file named by its argument: the build compiles them into cujit._runtime (bindings/py_options.cpp), so that
// `import cujit` names every cuda.* function without loading the compiler.
#include <cstdio>

#include "cujit/intrinsics.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUTPUT\n", argv[0]);
    return 2;
  }
  std::FILE* out = std::fopen(argv[1], "w");
  if (out == nullptr) {
    std::perror(argv[1]);
    return 1;
  }
  for (const std::string& path : cujit::intrinsics::paths()) std::fprintf(out, "\"%s\",\n", path.c_str());
  return std::fclose(out) == 0 ? 0 : 1;
}
