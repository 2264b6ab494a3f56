#pragma once
// Exactly one response per command (protocol.md section 3). A Reply is handed to whoever
// finishes the command; the first ok()/fail() writes the response, later calls are ignored,
// and a Reply dropped without an answer writes an internal-error response (and asserts in
// debug builds). Move-only; used on the event loop.

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "protocol/json.h"
#include "session/error.h"

namespace rebound::server {

using JsonSink = std::function<void(const protocol::Json&)>;

class Reply {
 public:
  Reply(std::optional<protocol::Json> id, std::string command, JsonSink sink);
  Reply(Reply&& other) noexcept;
  Reply& operator=(Reply&&) = delete;
  Reply(const Reply&) = delete;
  ~Reply();

  void ok();
  void ok(protocol::Json data);
  void fail(std::string_view error);
  /// The rpc dialect's form of a session error: its text (the kind is not on this wire).
  void fail(const session::Error& error);
  bool sent() const { return sent_; }

 private:
  void send(const protocol::Json& response);

  std::optional<protocol::Json> id_;
  std::string command_;
  JsonSink sink_;
  bool sent_ = false;
};

}  // namespace rebound::server
