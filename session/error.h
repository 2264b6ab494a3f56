#pragma once
// Typed command errors and results. Every session operation that can refuse returns a
// Result<T>: a value or an Error with a kind and the exact text. Front ends map an Error to
// their wire form in one function each (server/pi_wire.h for the rpc dialect); the kind is what
// another dialect (JSON-RPC codes) derives its code from. Pure.

#include <string>
#include <utility>
#include <variant>

namespace rebound::session {

enum class ErrorKind {
  invalid_argument,  // the command's input is unusable (a field, a model name, a path)
  not_found,         // a named thing does not exist (model, session file, command)
  busy,              // refused because something is in progress (bash, compaction)
  failed,            // it was tried and failed (I/O, a provider, nothing to do)
  cancelled,         // aborted before it finished
  internal,          // a bug: never expected
};

struct Error {
  ErrorKind kind = ErrorKind::failed;
  std::string message;
};

/// A value or an Error; like std::expected (C++23), kept small.
template <typename T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}      // NOLINT: implicit by design
  Result(Error error) : v_(std::move(error)) {}  // NOLINT
  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() { return std::get<0>(v_); }
  const T& value() const { return std::get<0>(v_); }
  T& operator*() { return value(); }
  const T& operator*() const { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

/// A Result without a value.
struct Done {};
using Status = Result<Done>;
inline Status ok() {
  return Done{};
}

}  // namespace rebound::session
