// Errors as values: every recoverable failure inside the core is an Error
// carrying a kind (which Python exception the bindings raise), a message, and
// an optional source location. Passes may throw CompileError internally; each
// component entry point catches it and returns Expected<T>.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>

namespace cujit {

enum class ErrorKind {
  TypingError,       // cujit.errors.TypingError
  Unsupported,       // cujit.errors.UnsupportedError (a TypingError)
  TypeError,         // builtins.TypeError
  ValueError,
  NameError,
  SyntaxError,
  NotImplemented,    // NotImplementedError
  Runtime,           // RuntimeError
  CCSupport,         // cujit.errors.CCSupportError (a RuntimeError)
  NotDefined,        // cujit.errors.NotDefinedError: a variable read before any assignment
  Lowering,          // cujit.errors.LoweringError: compiling a typed function failed (a cujit bug)
  Internal,          // a bug in cujit: still a Python exception, never an abort
  Interrupted,       // KeyboardInterrupt: the user stopped a CPU-target launch (Ctrl-C)
};

struct SourceLoc {
  int line = 0;        // 1-based line in the file; 0 = unknown
  int col = 0;         // 0-based column
  int end_line = 0;
  int end_col = 0;
  bool known() const { return line > 0; }
};

struct Error {
  ErrorKind kind = ErrorKind::Internal;
  std::string message;
  SourceLoc loc;
};

class CompileError : public std::runtime_error {
 public:
  CompileError(ErrorKind kind, std::string message, SourceLoc loc = {})
      : std::runtime_error(message), error_{kind, std::move(message), loc} {}
  const Error& error() const { return error_; }
  Error& error() { return error_; }

 private:
  Error error_;
};

template <typename T>
class Expected {
 public:
  Expected(T value) : v_(std::move(value)) {}
  Expected(Error error) : v_(std::move(error)) {}
  explicit operator bool() const { return v_.index() == 0; }
  T& operator*() { return std::get<0>(v_); }
  const T& operator*() const { return std::get<0>(v_); }
  T* operator->() { return &std::get<0>(v_); }
  const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

[[noreturn]] inline void fail(ErrorKind kind, std::string message, SourceLoc loc = {}) {
  throw CompileError(kind, std::move(message), loc);
}

}  // namespace cujit
