// Internal to lowering: integer expressions known to be non-negative, so array
// indices built from them skip Python's negative-index wrap-around.
#pragma once

#include <vector>

#include "cujit/ir.h"

namespace cujit::lowering {

class NonNegative {
 public:
  explicit NonNegative(const ir::Function& fn);
  bool expr(const ir::Expr& e) const;

 private:
  void visit(const std::vector<ir::StmtPtr>& block, bool& changed);
  void assign(const ir::Expr& target, const ir::Expr* value, bool known, bool& changed);
  void clear(int var, bool& changed);

  const ir::Function& fn_;
  std::vector<bool> vars_;
};

}  // namespace cujit::lowering
