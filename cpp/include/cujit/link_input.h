// A link input as data: what a kernel links besides its own code (CUDA C++
// for NVRTC, PTX, cubin, fatbin, object, static library, LTO-IR), its bytes
// and its name. Typing sees these (a declared external function brings its
// `link=` items; a called device function brings its own), so they travel
// with typed functions to every kernel that reaches them.
#pragma once

#include <memory>
#include <string>

namespace cujit::link {

enum class InputKind { Ptx, Cubin, Fatbin, Object, Library, LtoIr, Cu };

// "ptx", "cubin", "fatbin", "object", "library", "ltoir", "cu".
const char* input_kind_name(InputKind kind);
bool parse_input_kind(const std::string& name, InputKind& out);

struct LinkInput {
  InputKind kind = InputKind::Ptx;
  std::string data;  // bytes (CUDA C++ or PTX text for those kinds)
  std::string name;  // shows in the tools' logs: "functions.cu", "<unnamed-ptx>"
  // The object this came from (a Python LinkableCode or path), kept alive for
  // its setup/teardown callbacks; opaque here.
  std::shared_ptr<void> origin;
};

}  // namespace cujit::link
