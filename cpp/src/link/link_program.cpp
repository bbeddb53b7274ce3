// One kernel's link (see ProgramLink in cujit/link.h): NVRTC for CUDA C++
// inputs, nvJitLink for everything, and errors that say which declaration
// lacks a definition.
#include <set>
#include <string_view>

#include "cujit/link.h"
#include "cujit/nvrtc.h"

namespace cujit::link {
namespace {

// The symbol in "Undefined reference to 'X'" (non-LTO) or "Unresolved extern function 'X'" (LTO).
std::string undefined_symbol(const std::string& log) {
  for (const char* marker :
       {"Undefined reference to '", "Unresolved extern function '", "Unresolved extern variable '"}) {
    size_t at = log.find(marker);
    if (at == std::string::npos) continue;
    size_t start = at + std::char_traits<char>::length(marker);
    size_t end = log.find('\'', start);
    if (end != std::string::npos) return log.substr(start, end - start);
  }
  return {};
}

[[noreturn]] void explain_failure(const LinkError& e, const ProgramLink& p) {
  std::string message = e.what();
  std::string symbol = undefined_symbol(message);
  if (!symbol.empty()) {
    std::string declared;
    for (const auto& [name, where] : p.externs)
      if (name == symbol) declared = where;
    message = "undefined symbol '" + symbol + "': " +
              (declared.empty() ? std::string("no linked code defines it")
                                : "it is declared by " + declared + ", but no linked code defines it") +
              " (link inputs: " +
              [&] {
                std::string names;
                for (const auto& in : p.inputs) names += (names.empty() ? "" : ", ") + in->name;
                return names.empty() ? std::string("none") : names;
              }() +
              ")\n" + message;
  } else if (message.rfind("ERROR_LTO_NOT_ENABLED", 0) == 0 || message.find("requires -lto") != std::string::npos) {
    message =
        "a link input holds LTO-IR, which links only with link-time optimisation: pass lto=True to "
        "cuda.jit\n" +
        message;
  }
  throw LinkError(e.kind(), message, e.code());
}

}  // namespace

bool cubin_has_symbol(const std::string& cubin, const std::string& symbol) {
  std::string needle = symbol + '\0';
  for (size_t at = cubin.find(needle); at != std::string::npos; at = cubin.find(needle, at + 1))
    if (at > 0 && (cubin[at - 1] == '\0' || cubin[at - 1] == '.')) return true;
  return false;
}

ProgramLinkResult link_program(const ProgramLink& p) {
  ProgramLinkResult result;
  std::vector<LinkInput> inputs{p.own};
  // An input reached twice is linked once, and so is the same code in two inputs (a link hook that makes a
  // new LinkableCode at each call it is asked about): linking it twice could only define its symbols twice.
  std::set<std::pair<InputKind, std::string_view>> seen;
  NvrtcOptions nvrtc{p.arch, p.lto, p.debug, p.lineinfo, p.include_dirs};
  for (const auto& in : p.inputs) {
    if (!seen.emplace(in->kind, in->data).second) continue;
    if (in->kind != InputKind::Cu) {
      if (!p.ptx_output || in->kind == InputKind::LtoIr) inputs.push_back(*in);
      continue;
    }
    NvrtcOutput out = compile_cuda(in->data, in->name, nvrtc);
    if (!out.cached && !out.log.empty()) result.nvrtc_logs.emplace_back(in->name, out.log);
    inputs.push_back(
        LinkInput{out.ltoir ? InputKind::LtoIr : InputKind::Ptx, std::move(out.code), in->name, in->origin});
  }
  LinkOptions options;
  options.arch = p.arch;
  options.max_registers = p.max_registers;
  options.lineinfo = p.lineinfo;
  options.ptx_output = p.ptx_output;
  LinkResult linked;
  try {
    linked = link(inputs, options);
  } catch (const LinkError& e) {
    if (e.kind() != LinkError::Kind::Failed) throw;
    explain_failure(e, p);
  }
  if (!p.ptx_output && !p.entry.empty() && !cubin_has_symbol(linked.image, p.entry))
    throw LinkError(
        LinkError::Kind::Failed, "the linked cubin does not contain the kernel '" + p.entry +
                                     "' (nvJitLink dropped it; options:" +
                                     [&] {
                                       std::string s;
                                       for (const auto& o : linked.options) s += " " + o;
                                       return s;
                                     }() +
                                     ")");
  result.cubin = std::move(linked.image);
  result.info_log = std::move(linked.info_log);
  result.options = std::move(linked.options);
  return result;
}

}  // namespace cujit::link
