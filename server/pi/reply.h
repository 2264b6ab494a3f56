#pragma once
// Exactly one response per command (protocol.md section 3). A Reply is handed to whoever
// finishes the command; the first ok()/fail() writes the response, later calls are ignored,
// and a Reply dropped without an answer writes an internal-error response (and asserts in
// debug builds). The response is written in the envelope the command came in (protocol.md
// section 9): a pi response, a JSON-RPC result or error, or nothing for a JSON-RPC
// notification (whose failure goes to the log). Move-only; used on the event loop.

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "protocol/json.h"
#include "session/error.h"

namespace rebound::server {

using JsonSink = std::function<void(const protocol::Json&)>;

/// How a command's answer is written.
enum class ReplyStyle {
  pi,              // {"id"?,"type":"response","command",…}
  jsonrpc,         // {"jsonrpc":"2.0","id",…} (`id` is set, possibly null)
  jsonrpc_silent,  // a JSON-RPC notification: never answered
};

class Reply {
 public:
  Reply(std::optional<protocol::Json> id, std::string command, JsonSink sink,
        ReplyStyle style = ReplyStyle::pi);
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
  void send_ok(protocol::Json* data);
  void send_failure(std::string_view error, int jsonrpc_code);
  bool claim();

  std::optional<protocol::Json> id_;
  std::string command_;
  JsonSink sink_;
  ReplyStyle style_ = ReplyStyle::pi;
  bool sent_ = false;
};

}  // namespace rebound::server
