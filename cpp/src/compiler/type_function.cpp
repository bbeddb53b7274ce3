// The compile driver: frontend and typing for one function and signature,
// numba's symbol naming (mangled name with uid and flags tags, or C names),
// the CUDAFlags summary that the flags tag encodes, the link inputs a typed
// function collects, and external (declared) functions.
#include <algorithm>
#include <atomic>
#include <mutex>
#include <unordered_map>

#include "cujit/compiler.h"
#include "cujit/mangle.h"
#include "cujit/passes.h"
#include "cujit/telemetry.h"

namespace cujit::compiler {

using codegen::Abi;

std::string flags_summary(const CompileOptions& o) {
  std::vector<std::pair<std::string, std::string>> flags;
  std::string cc = "(" + std::to_string(o.cc.major) + ", " + std::to_string(o.cc.minor) +
                   (o.cc.suffix.empty() ? "" : ", '" + o.cc.suffix + "'") + ")";
  flags.emplace_back("compute_capability", cc);
  if (o.debug) {
    flags.emplace_back("dbg_extend_lifetimes", "True");
    flags.emplace_back("debuginfo", "True");
  } else {
    flags.emplace_back("error_model", "numpy");
    if (o.lineinfo) {
      flags.emplace_back("dbg_directives_only", "True");
      flags.emplace_back("debuginfo", "True");
    }
  }
  if (o.fastmath) flags.emplace_back("fastmath", "FastMathOptions({'fast'})");
  if (o.forceinline) flags.emplace_back("forceinline", "True");
  if (o.inline_always) flags.emplace_back("inline", "InlineOptions('always')");
  flags.emplace_back("no_cfunc_wrapper", "True");
  flags.emplace_back("no_compile", "True");
  flags.emplace_back("no_cpython_wrapper", "True");
  std::string opt = o.opt ? "3" : "0";
  std::string fm = o.fastmath ? "True" : "False";
  std::string nvvm;
  // numba builds the dict in another key order for device functions its dispatchers compile.
  std::string g = o.debug ? ", 'g': None" : "";
  if (o.from_dispatcher)
    nvvm = "{'opt': " + opt + ", 'fastmath': " + fm + g + "}";
  else
    nvvm = "{'fastmath': " + fm + ", 'opt': " + opt + g + "}";
  flags.emplace_back("nvvm_options", nvvm);
  std::sort(flags.begin(), flags.end());
  std::string s = "CUDAFlags(";
  for (size_t i = 0; i < flags.size(); ++i) s += (i ? ", " : "") + flags[i].first + "=" + flags[i].second;
  return s + ")";
}

namespace {

// numba's uid tag: a process-wide counter, one per compiled function identity.
int64_t next_uid() {
  static std::atomic<int64_t> counter{0};
  return ++counter;
}

// The flags tag of an options summary (a deflated, base64-encoded string), made
// once per distinct summary: a process sees few.
std::string flags_tag(const std::string& summary) {
  static std::mutex mutex;
  static std::unordered_map<std::string, std::string> tags;
  std::lock_guard<std::mutex> lock(mutex);
  auto [it, inserted] = tags.try_emplace(summary);
  if (inserted) it->second = mangle::encode_flags(summary);
  return it->second;
}

void name_function(ir::TypedFunction& tf, const CompileOptions& o) {
  const ir::Function& fn = *tf.fn;
  if (tf.c_abi) {
    std::string last = fn.qualname.substr(fn.qualname.rfind('.') + 1);
    tf.symbol = o.abi_name.empty() ? mangle::escape_string(last) : o.abi_name;
    return;
  }
  std::string tag = flags_tag(flags_summary(o));
  int64_t uid = next_uid();
  std::string dotted = fn.module + "." + fn.qualname;
  tf.symbol = o.abi_name.empty() ? mangle::mangle(dotted, tf.sig.args, {tag}, uid) : o.abi_name;
  tf.env_symbol = mangle::mangle(".NumbaEnv." + dotted, tf.sig.args, {tag}, uid);
}

// Own items first, then each callee's, skipping any already there.
void collect_link_inputs(ir::TypedFunction& tf, const std::vector<std::shared_ptr<link::LinkInput>>& own) {
  auto add = [&](const std::shared_ptr<link::LinkInput>& in) {
    if (std::find(tf.link_inputs.begin(), tf.link_inputs.end(), in) == tf.link_inputs.end())
      tf.link_inputs.push_back(in);
  };
  for (const auto& in : own) add(in);
  for (const auto& callee : tf.callees) {
    for (const auto& in : callee->link_inputs) add(in);
    tf.cooperative = tf.cooperative || callee->cooperative;
  }
}

// The callee of a function's calls to itself: its name, signature and ABI, not its body (lowering finds the
// function being lowered by its symbol; a reference to its body would be a cycle).
void name_recursive_callee(ir::TypedFunction& recursive, const ir::TypedFunction& tf) {
  recursive.symbol = tf.symbol;
  recursive.env_symbol = tf.env_symbol;
  recursive.sig = tf.sig;
  recursive.c_abi = tf.c_abi;
  recursive.fn = std::make_shared<ir::Function>();
  recursive.fn->name = tf.fn->name;
  recursive.fn->qualname = tf.fn->qualname;
  recursive.fn->module = tf.fn->module;
}

}  // namespace

Expected<std::shared_ptr<ir::TypedFunction>> type_function(
    const frontend::FunctionSource& source, frontend::NameResolver& resolver, typing::CalleeProvider& callees,
    const Signature& signature, const CompileOptions& options,
    const std::vector<std::shared_ptr<link::LinkInput>>& own_links) {
  telemetry::StageClock clock;
  auto fn = frontend::build_ir(source, resolver);
  clock.lap(telemetry::Stage::Frontend);
  if (!fn) return fn.error();
  try {
    passes::inline_inner_functions(**fn);
  } catch (CompileError& e) {
    return e.error();
  }
  passes::prune_branches(**fn, signature.args);
  passes::narrow_optionals(**fn);
  passes::version_variables(**fn);
  clock.lap(telemetry::Stage::Passes);
  auto tf = std::make_shared<ir::TypedFunction>();
  tf->fn = *fn;
  tf->kernel = options.kernel;
  tf->c_abi = options.abi == Abi::C;
  tf->always_inline = !options.kernel && (options.forceinline || options.inline_always);
  auto recursive = std::make_shared<ir::TypedFunction>();
  typing::TypingRequest request{signature.args, signature.return_type, options.kernel, recursive};
  auto ret = typing::infer_types(*tf->fn, request, callees, tf->callees);
  clock.lap(telemetry::Stage::Typing);
  if (!ret) return ret.error();
  if (options.kernel && (*ret)->kind() != TypeKind::None)
    return Error{ErrorKind::TypeError, "CUDA kernel must have void return type.", {}};
  tf->sig.args = signature.args;
  tf->sig.return_type = *ret;
  tf->cooperative = tf->fn->cooperative;
  name_function(*tf, options);
  collect_link_inputs(*tf, own_links);
  if (recursive.use_count() > 1) name_recursive_callee(*recursive, *tf);
  return tf;
}

std::shared_ptr<ir::TypedFunction> declare_external(const std::string& name, const Signature& signature, Abi abi,
                                                    std::vector<std::shared_ptr<link::LinkInput>> links,
                                                    const std::string& declared_at, bool cooperative) {
  auto fn = std::make_shared<ir::Function>();
  fn->name = fn->qualname = name;
  fn->module = "<external>";
  for (size_t i = 0; i < signature.args.size(); ++i) {
    fn->params.push_back(static_cast<int>(fn->vars.size()));
    fn->vars.push_back(ir::Variable{"arg" + std::to_string(i), signature.args[i], true, false});
  }
  auto tf = std::make_shared<ir::TypedFunction>();
  tf->fn = std::move(fn);
  tf->sig = signature;
  tf->symbol = name;
  tf->c_abi = abi == Abi::C;
  tf->external = true;
  tf->declared_at = declared_at;
  tf->cooperative = cooperative;
  collect_link_inputs(*tf, links);
  return tf;
}

}  // namespace cujit::compiler
