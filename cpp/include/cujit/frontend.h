// Frontend: converts a Python AST (handed over by the bindings as a plain
// SyntaxNode tree, no Python objects) into cujit IR. Names that are not
// local are resolved through a NameResolver and frozen into the IR.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "cujit/error.h"
#include "cujit/ir.h"

namespace cujit::frontend {

struct SyntaxNode;
using SyntaxNodePtr = std::shared_ptr<const SyntaxNode>;

// One field of a Python ast node: None, int, float, complex (imag part only),
// Ellipsis, bool, str, bytes, a node, or a list of nodes.
struct SyntaxImag {
  double value;
};
struct SyntaxEllipsis {};
struct SyntaxBytes {
  std::string value;
};
// An int literal outside int64: a uint64 value (2**63 <= v < 2**64), or one no
// integer type holds (`fits` false; `text` is its decimal form for messages).
struct SyntaxBigInt {
  uint64_t value = 0;
  bool fits = false;
  std::string text;
};
using SyntaxField = std::variant<std::monostate, int64_t, double, SyntaxImag, SyntaxEllipsis, bool, std::string,
                                 SyntaxNodePtr, std::vector<SyntaxNodePtr>, SyntaxBigInt, SyntaxBytes>;

struct SyntaxNode {
  std::string type;  // the ast class name: "FunctionDef", "BinOp", "Name", ...
  SourceLoc loc;
  std::map<std::string, SyntaxField> fields;

  const SyntaxField* field(const std::string& name) const;
  SyntaxNodePtr node(const std::string& name) const;              // null if absent/None
  const std::vector<SyntaxNodePtr>& list(const std::string& name) const;  // empty if absent
  std::string str(const std::string& name) const;                 // "" if absent
};

// Resolves global and closure names, and attributes of resolved objects.
class NameResolver {
 public:
  virtual ~NameResolver() = default;
  // Returns false if the name is not defined.
  virtual bool resolve_name(const std::string& name, ir::GlobalValue& out) = 0;
  // Attribute of an Object or Module value; returns false if it has none.
  virtual bool resolve_attribute(const ir::GlobalValue& base, const std::string& attr, ir::GlobalValue& out) = 0;
};

struct FunctionSource {
  SyntaxNodePtr def;  // the FunctionDef node
  std::string name, qualname, module, filename;
  std::vector<std::string> source_lines;
  int first_line = 1;
  ir::ExcerptText excerpt;  // without source lines (read from bytecode): the line and caret of a location
};

Expected<std::shared_ptr<ir::Function>> build_ir(const FunctionSource& source, NameResolver& resolver);

}  // namespace cujit::frontend
