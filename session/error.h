#pragma once
// Typed command errors and results. Every session operation that can refuse returns a
// Result<T>: a value or an Error with a kind, the exact text and, for a bad field, which field
// and what it should be. Front ends map an Error to their wire form in one function each
// (server/pi/reply.h: the pi text and the JSON-RPC code; server/acp/acp_reply.h: ACP's code
// and text); nothing parses a message to find a code. Pure.

#include <optional>
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

/// A field of a command's input that is missing or of the wrong kind: each dialect words it
/// (pi: "Invalid field '<path>': expected <expected>", ACP: "Invalid params: <path>: …").
struct FieldProblem {
  std::string path;
  std::string expected;
};

struct Error {
  ErrorKind kind = ErrorKind::failed;
  std::string message;
  std::optional<FieldProblem> field = std::nullopt;  // invalid_argument of one field
};

/// The invalid_argument error of one field, its message in the pi dialect's words.
inline Error field_error(std::string path, std::string expected) {
  std::string message = "Invalid field '" + path + "': expected " + expected;
  return Error{ErrorKind::invalid_argument, std::move(message),
               FieldProblem{std::move(path), std::move(expected)}};
}

/// The `failed` error with that text: what went wrong when something was tried (a file, a
/// process, a parse), the text as the caller shows it.
inline Error failure(std::string message) {
  return Error{ErrorKind::failed, std::move(message)};
}

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
