#pragma once
// Exactly one response per command (protocol.md section 3). A Reply is handed to whoever
// finishes the command; the first ok()/fail() writes the response, later calls are ignored,
// and a Reply dropped without an answer writes an internal-error response (and asserts in
// debug builds). The response is written in the envelope the command came in (protocol.md
// section 9): a pi response, a JSON-RPC result or error, or nothing for a JSON-RPC
// notification (whose failure goes to the log). Move-only; used on the event loop.

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "protocol/json.h"
#include "session/error.h"

namespace rebound::server {

using JsonSink = std::function<void(const protocol::Json&)>;
/// Where a whole protocol line (with its LF) goes when it is built as text.
using LineSink = std::function<void(std::string line)>;

/// How a command's answer is written.
enum class ReplyStyle {
  pi,              // {"id"?,"type":"response","command",…}
  jsonrpc,         // {"jsonrpc":"2.0","id",…} (`id` is set, possibly null)
  jsonrpc_silent,  // a JSON-RPC notification: never answered
};

/// The rpc dialect's JSON-RPC envelope (protocol.md section 9): the code of a failed command.
/// A bad field is -32602, every other failure -32000. The one mapping of an error kind to it.
int jsonrpc_error_code(const session::Error& error);

/// Another dialect's form of a command's answer (ACP's `_rebound/*` methods run the rpc
/// commands' handlers): called at most once per Reply, with the data (null: none) or the error.
class ReplyWire {
 public:
  virtual ~ReplyWire() = default;
  virtual void ok(const std::optional<protocol::Json>& id, protocol::Json* data) = 0;
  virtual void fail(const std::optional<protocol::Json>& id, const session::Error& error) = 0;
};

class Reply {
 public:
  Reply(std::optional<protocol::Json> id, std::string command, JsonSink sink,
        ReplyStyle style = ReplyStyle::pi);
  Reply(std::optional<protocol::Json> id, std::string command, std::shared_ptr<ReplyWire> wire);
  Reply(Reply&& other) noexcept;
  Reply& operator=(Reply&&) = delete;
  Reply(const Reply&) = delete;
  ~Reply();

  void ok();
  void ok(protocol::Json data);
  /// A large answer built as text (get_entries): `append_data` appends the data's JSON to the
  /// line being made, so the answer is held once, as the line. Without a line sink (another
  /// dialect's wire) the text is parsed and sent as ok(data).
  void ok_text(const std::function<void(std::string&)>& append_data);
  /// The line sink ok_text() writes to (the rpc front end's writer).
  void set_line_sink(LineSink sink) { line_sink_ = std::move(sink); }
  /// The pi form is the error's text; the JSON-RPC envelope's code comes from its kind.
  void fail(const session::Error& error);
  /// Answered without a response line (extension_ui_response, extensions.md section 6.1: the
  /// one exception to "exactly one response"); a JSON-RPC request still gets `"result":null`.
  void acknowledge();
  bool sent() const { return sent_; }

 private:
  void send_ok(protocol::Json* data);
  void send_failure(const session::Error& error);
  bool claim();

  std::optional<protocol::Json> id_;
  std::string command_;
  JsonSink sink_;
  ReplyStyle style_ = ReplyStyle::pi;
  std::shared_ptr<ReplyWire> wire_;  // set: that dialect writes the answer
  LineSink line_sink_;
  bool sent_ = false;
};

}  // namespace rebound::server
