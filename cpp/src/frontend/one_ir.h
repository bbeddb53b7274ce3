// Where CPython's bytecode cannot tell two spellings of a statement apart, the IR both readers (source and
// bytecode) give for either: an else after a branch that leaves its block, a loop's else with no break, a
// while loop that always breaks at the end of its body.
#pragma once

#include <vector>

#include "cujit/ir.h"

namespace cujit::frontend {

// A statement after which its block never goes on (return, raise, break, continue).
bool ends_control(const ir::Stmt& s);

// Whether `body` holds a break (or a continue) of the loop it is the body of (nested loops' own aside).
bool breaks(const std::vector<ir::StmtPtr>& body);
bool continues(const std::vector<ir::StmtPtr>& body);

// Appends the if statement `s`: `if c: ...; return` then `else: rest` is that if, then `rest`.
void push_if(ir::StmtPtr s, std::vector<ir::StmtPtr>& out);

// Appends the loop `loop`: with no break in its body, its else clause is the code after it. A while loop whose
// body ends in a break and has no other break or continue runs it at most once: it is `if test: body` (its else
// clause as the if's else), or the body alone under a constant true test.
void push_loop(ir::StmtPtr loop, std::vector<ir::StmtPtr>& out);

// Whether `cond` is a condition a constant decides after parts that only read values (`x or 2`, `x and y and 0`):
// CPython leaves the arm it never takes out of the bytecode and the bytecode reader cannot rebuild it, so both
// readers build neither those parts nor that arm (a conditional expression is its arm, an if its branch).
bool pure_decided(const ir::Expr& cond);

}  // namespace cujit::frontend
