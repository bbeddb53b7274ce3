// The compiler's stages without Python: a Python AST built here as the bindings would hand it over (a
// SyntaxNode tree), through the frontend (IR), typing (numba's rules), the compile driver (names) and code
// generation (PTX from LLVM's NVPTX backend, LTO-IR needing libNVVM is left to the Python tests).
#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "cujit/codegen.h"
#include "cujit/compiler.h"
#include "cujit/frontend.h"
#include "cujit/typing.h"

namespace cujit {
namespace {

using frontend::SyntaxField;
using frontend::SyntaxNode;
using frontend::SyntaxNodePtr;

// ---- a small builder of Python AST nodes -------------------------------------------------------------------

SyntaxNodePtr node(std::string type, std::vector<std::pair<std::string, SyntaxField>> fields = {}, int line = 2) {
  auto n = std::make_shared<SyntaxNode>();
  n->type = std::move(type);
  n->loc.line = line;
  n->loc.col = 4;
  for (auto& [name, value] : fields) n->fields[name] = std::move(value);
  return n;
}

SyntaxNodePtr name(const std::string& id) { return node("Name", {{"id", id}, {"ctx", node("Load")}}); }
SyntaxNodePtr constant(int64_t v) { return node("Constant", {{"value", v}}); }
SyntaxNodePtr binop(SyntaxNodePtr left, const std::string& op, SyntaxNodePtr right) {
  return node("BinOp", {{"left", std::move(left)}, {"op", node(op)}, {"right", std::move(right)}});
}

// def <fn>(<params>): <body>
frontend::FunctionSource function(const std::string& fn, const std::vector<std::string>& params,
                                  std::vector<SyntaxNodePtr> body) {
  std::vector<SyntaxNodePtr> args;
  for (const std::string& p : params) args.push_back(node("arg", {{"arg", p}}));
  auto arguments = node("arguments", {{"args", args}});
  frontend::FunctionSource source;
  source.def = node("FunctionDef", {{"name", fn}, {"args", arguments}, {"body", std::move(body)}}, 1);
  source.name = source.qualname = fn;
  source.module = "stages";
  source.filename = "<stages>";
  source.source_lines = {"def " + fn + "(...):", "    ..."};
  return source;
}

// No globals, no callees: the functions here are self-contained.
struct NoNames : frontend::NameResolver {
  bool resolve_name(const std::string&, ir::GlobalValue&) override { return false; }
  bool resolve_attribute(const ir::GlobalValue&, const std::string&, ir::GlobalValue&) override { return false; }
};
struct NoCallees : typing::CalleeProvider {
  Expected<std::shared_ptr<ir::TypedFunction>> type_callee(const ir::GlobalValue&,
                                                           const std::vector<TypeRef>&) override {
    return Error{ErrorKind::TypingError, "no callees here", {}};
  }
};

// def add(x, y): return x + y
frontend::FunctionSource add_source() {
  return function("add", {"x", "y"}, {node("Return", {{"value", binop(name("x"), "Add", name("y"))}})});
}

codegen::CompileOptions device_options() {
  codegen::CompileOptions o;
  o.cc = {8, 0, ""};
  return o;
}

// ---- the stages --------------------------------------------------------------------------------------------

TEST(Frontend, BuildsParametersAndAReturn) {
  NoNames names;
  auto fn = frontend::build_ir(add_source(), names);
  ASSERT_TRUE(fn) << fn.error().message;
  ASSERT_EQ((*fn)->params.size(), 2u);
  EXPECT_EQ((*fn)->vars[(*fn)->params[0]].name, "x");
  ASSERT_EQ((*fn)->body.size(), 1u);
  EXPECT_EQ((*fn)->body[0]->kind, ir::StmtKind::Return);
  EXPECT_EQ((*fn)->body[0]->value->kind, ir::ExprKind::Binary);
  EXPECT_EQ((*fn)->body[0]->value->op, ir::Op::Add);
}

TEST(Frontend, AnUndefinedNameIsLocated) {
  NoNames names;
  auto src = function("f", {}, {node("Return", {{"value", name("missing")}})});
  auto fn = frontend::build_ir(src, names);
  if (fn) {  // resolved lazily: typing reports it
    NoCallees callees;
    std::vector<std::shared_ptr<ir::TypedFunction>> called;
    auto t = typing::infer_types(**fn, {{}, nullptr, false, nullptr}, callees, called);
    ASSERT_FALSE(t);
    EXPECT_NE(t.error().message.find("missing"), std::string::npos) << t.error().message;
    EXPECT_TRUE(t.error().loc.known());
  } else {
    EXPECT_NE(fn.error().message.find("missing"), std::string::npos) << fn.error().message;
    EXPECT_TRUE(fn.error().loc.known());
  }
}

TEST(Typing, NumbasPromotionRules) {
  NoNames names;
  NoCallees callees;
  struct Case {
    TypeRef x, y, result;
  };
  for (const Case& c : {Case{types::int32(), types::int32(), types::int64()},
                        Case{types::uint64(), types::int64(), types::int64()},  // numba, unlike numpy
                        Case{types::float32(), types::int32(), types::float64()},
                        Case{types::float32(), types::float32(), types::float32()}}) {
    auto fn = frontend::build_ir(add_source(), names);
    ASSERT_TRUE(fn);
    std::vector<std::shared_ptr<ir::TypedFunction>> called;
    auto t = typing::infer_types(**fn, {{c.x, c.y}, nullptr, false, nullptr}, callees, called);
    ASSERT_TRUE(t) << t.error().message;
    EXPECT_EQ(*t, c.result) << c.x->name() << " + " << c.y->name() << " gave " << (*t)->name();
  }
}

TEST(Typing, AnIntegerLiteralIsInt64) {
  // def twice(x): return x * 2, for an int8 and a float32 x: numba's literal promotion.
  NoNames names;
  NoCallees callees;
  auto src = function("twice", {"x"}, {node("Return", {{"value", binop(name("x"), "Mult", constant(2))}})});
  for (auto [arg, result] : {std::pair{types::int8(), types::int64()}, std::pair{types::float32(), types::float64()}}) {
    auto fn = frontend::build_ir(src, names);
    ASSERT_TRUE(fn);
    std::vector<std::shared_ptr<ir::TypedFunction>> called;
    auto t = typing::infer_types(**fn, {{arg}, nullptr, false, nullptr}, callees, called);
    ASSERT_TRUE(t) << t.error().message;
    EXPECT_EQ(*t, result) << arg->name();
  }
}

TEST(Typing, AKernelReturningAValueIsLocated) {
  NoNames names;
  NoCallees callees;
  auto fn = frontend::build_ir(add_source(), names);
  ASSERT_TRUE(fn);
  std::vector<std::shared_ptr<ir::TypedFunction>> called;
  auto t = typing::infer_types(**fn, {{types::int32(), types::int32()}, nullptr, true, nullptr}, callees, called);
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().kind, ErrorKind::TypeError);
  EXPECT_EQ(t.error().loc.line, 2);
}

TEST(Compiler, NamesWithNumbasMangling) {
  NoNames names;
  NoCallees callees;
  Signature sig;
  sig.args = {types::int32(), types::int32()};
  auto numba = compiler::type_function(add_source(), names, callees, sig, device_options());
  ASSERT_TRUE(numba) << numba.error().message;
  EXPECT_EQ((*numba)->symbol.rfind("_ZN6stages3addB", 0), 0u) << (*numba)->symbol;
  EXPECT_EQ((*numba)->sig.return_type, types::int64());

  codegen::CompileOptions c_abi = device_options();
  c_abi.abi = codegen::Abi::C;
  auto c = compiler::type_function(add_source(), names, callees, sig, c_abi);
  ASSERT_TRUE(c);
  EXPECT_EQ((*c)->symbol, "add");
}

TEST(Codegen, PtxForBothAbis) {
  NoNames names;
  NoCallees callees;
  Signature sig;
  sig.args = {types::int64(), types::int64()};
  for (codegen::Abi abi : {codegen::Abi::Numba, codegen::Abi::C}) {
    codegen::CompileOptions o = device_options();
    o.abi = abi;
    auto typed = compiler::type_function(add_source(), names, callees, sig, o);
    ASSERT_TRUE(typed) << typed.error().message;
    auto ptx = codegen::compile_to_ptx(**typed, o);
    ASSERT_TRUE(ptx) << ptx.error().message;
    EXPECT_NE(ptx->code.find(".target sm_80"), std::string::npos);
    EXPECT_NE(ptx->code.find(".visible .func"), std::string::npos);
    EXPECT_NE(ptx->code.find("add.s64"), std::string::npos) << ptx->code;
  }
}

TEST(Codegen, OptionsKeyCoversEveryField) {
  codegen::CompileOptions a = device_options(), b = device_options();
  EXPECT_EQ(a.key(), b.key());
  for (auto change : std::vector<void (*)(codegen::CompileOptions&)>{
           [](codegen::CompileOptions& o) { o.fastmath = true; }, [](codegen::CompileOptions& o) { o.opt = false; },
           [](codegen::CompileOptions& o) { o.lineinfo = true; }, [](codegen::CompileOptions& o) { o.debug = true; },
           [](codegen::CompileOptions& o) { o.kernel = true; },
           [](codegen::CompileOptions& o) { o.abi = codegen::Abi::C; },
           [](codegen::CompileOptions& o) { o.abi_name = "f"; }, [](codegen::CompileOptions& o) { o.max_threads = 64; },
           [](codegen::CompileOptions& o) { o.min_blocks = 2; }, [](codegen::CompileOptions& o) { o.max_cluster = 2; },
           [](codegen::CompileOptions& o) { o.from_dispatcher = true; },
           [](codegen::CompileOptions& o) { o.noalias_arrays = true; },
           [](codegen::CompileOptions& o) { o.forceinline = true; },
           [](codegen::CompileOptions& o) { o.inline_always = true; }, [](codegen::CompileOptions& o) { o.lto = true; },
           [](codegen::CompileOptions& o) { o.lto = false; }, [](codegen::CompileOptions& o) { o.max_registers = 32; },
           [](codegen::CompileOptions& o) { o.boundscheck = false; },
           [](codegen::CompileOptions& o) { o.cc = {9, 0, "a"}; }}) {
    codegen::CompileOptions c = device_options();
    change(c);
    EXPECT_NE(c.key(), a.key());
  }
  codegen::CompileOptions loaded = device_options();
  loaded.carveout = 100;  // set when the kernel is loaded, not in its code
  EXPECT_EQ(loaded.key(), a.key());
}

// ---- the compile driver (compiler::compile_kernel, build_kernel) ------------------------------------------

compiler::KernelRequest add_request(const frontend::FunctionSource& source, frontend::NameResolver& names,
                                    typing::CalleeProvider& callees) {
  compiler::KernelRequest request;
  request.source = &source;
  request.names = &names;
  request.callees = &callees;
  request.signature.args = {types::int64(), types::int64()};
  request.options = device_options();
  return request;
}

TEST(Driver, OneRequestAnswersTheTypedFunctionAndTheGpuCode) {
  NoNames names;
  NoCallees callees;
  frontend::FunctionSource source = add_source();
  auto out = compiler::compile_kernel(add_request(source, names, callees));
  ASSERT_TRUE(std::holds_alternative<compiler::CompiledKernel>(out));
  const compiler::CompiledKernel& kernel = std::get<compiler::CompiledKernel>(out);
  auto* gpu = dynamic_cast<const codegen::GpuKernelCode*>(kernel.code.get());
  ASSERT_NE(gpu, nullptr);
  EXPECT_FALSE(gpu->lto());
  Expected<std::string> ptx = gpu->ptx();
  ASSERT_TRUE(ptx);
  EXPECT_NE(ptx->find(kernel.typed->symbol), std::string::npos);
  EXPECT_TRUE(gpu->llvm_ir.empty());  // not printed at compile time: made again when asked
  Expected<std::string> ir = gpu->optimised_ir();
  ASSERT_TRUE(ir);
  EXPECT_NE(ir->find("define"), std::string::npos);
}

TEST(Driver, ATypingFailureIsTheRequestedFunctions) {
  NoNames names;
  NoCallees callees;
  frontend::FunctionSource source = function("f", {"x"}, {node("Return", {{"value", name("missing")}})});
  compiler::KernelRequest request = add_request(source, names, callees);
  request.signature.args = {types::int64()};
  auto out = compiler::compile_kernel(request);
  ASSERT_TRUE(std::holds_alternative<compiler::KernelFailure>(out));
  EXPECT_EQ(std::get<compiler::KernelFailure>(out).fn, nullptr);  // located in the request's source
  EXPECT_NE(std::get<compiler::KernelFailure>(out).error.message.find("missing"), std::string::npos);
}

// A store that records what the driver asks, in order.
struct RecordingStore : compiler::KernelStore {
  std::vector<std::string> calls;
  compiler::KeptKernel kept_on_find;
  bool keeps_kernels = false;
  bool lock_released = false;
  compiler::KeptKernel find() override {
    calls.push_back("find");
    return kept_on_find;
  }
  bool keeps() override {
    calls.push_back("keeps");
    return keeps_kernels;
  }
  std::shared_ptr<void> lock() override {
    calls.push_back("lock");
    return std::shared_ptr<void>(new int(0), [this](void* p) {
      lock_released = true;
      delete static_cast<int*>(p);
    });
  }
  std::vector<std::shared_ptr<link::LinkInput>> link_inputs(const compiler::CompiledKernel&) override {
    calls.push_back("link_inputs");
    throw std::runtime_error("no link here");  // (this test links nothing)
  }
  void keep(const compiler::CompiledKernel&, const std::string&) override { calls.push_back("keep"); }
};

TEST(Driver, AKeptKernelIsNotCompiled) {
  NoNames names;
  NoCallees callees;
  frontend::FunctionSource source = add_source();
  RecordingStore store;
  store.kept_on_find = std::make_shared<int>(7);
  auto out = compiler::build_kernel(add_request(source, names, callees), store);
  ASSERT_TRUE(std::holds_alternative<compiler::KernelBuild>(out));
  const compiler::KernelBuild& build = std::get<compiler::KernelBuild>(out);
  EXPECT_EQ(build.kept, store.kept_on_find);
  EXPECT_FALSE(build.compiled.has_value());
  EXPECT_EQ(store.calls, (std::vector<std::string>{"find"}));
}

TEST(Driver, AStoreThatDoesNotKeepIsAskedOnce) {
  NoNames names;
  NoCallees callees;
  frontend::FunctionSource source = add_source();
  RecordingStore store;
  auto out = compiler::build_kernel(add_request(source, names, callees), store);
  const compiler::KernelBuild& build = std::get<compiler::KernelBuild>(out);
  EXPECT_TRUE(build.compiled.has_value());
  EXPECT_EQ(store.calls, (std::vector<std::string>{"find", "keeps"}));
}

TEST(Driver, AKernelToKeepIsCompiledUnderTheLockAfterASecondLook) {
  NoNames names;
  NoCallees callees;
  frontend::FunctionSource source = add_source();
  RecordingStore store;
  store.keeps_kernels = true;
  auto out = compiler::build_kernel(add_request(source, names, callees), store);
  const compiler::KernelBuild& build = std::get<compiler::KernelBuild>(out);
  EXPECT_TRUE(build.compiled.has_value());
  EXPECT_EQ(build.not_kept, "no link here");  // a link that fails keeps nothing; the kernel is used all the same
  EXPECT_TRUE(build.image.empty());
  EXPECT_EQ(store.calls, (std::vector<std::string>{"find", "keeps", "lock", "find", "link_inputs"}));
  EXPECT_TRUE(store.lock_released);
}

TEST(Driver, NoaliasArraysOnlyBesideScalars) {
  TypeRef array = types::array(types::float32(), 1, 'C', false);
  EXPECT_EQ(types::noalias_arrays({array, array, types::float32()}), 2);
  EXPECT_EQ(types::noalias_arrays({array, types::tuple({types::int32(), types::int32()})}), 0);
}

}  // namespace
}  // namespace cujit
