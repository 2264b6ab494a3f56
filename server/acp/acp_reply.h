#pragma once
// Exactly one response per ACP request (acp.md section 10): the first ok()/fail() writes it,
// later calls are ignored, and an AcpReply dropped unanswered writes -32603 (and asserts in
// debug builds). A notification's AcpReply (no id) writes nothing. Also the one mapping of a
// session error to ACP's code and text, and the wire through which `_rebound/*` methods answer
// with the rpc commands' handlers. Move-only; event loop only.

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "protocol/json.h"
#include "protocol/jsonrpc.h"
#include "server/pi/reply.h"
#include "session/error.h"

namespace rebound::server::acp {

using protocol::Json;

/// ACP's form of a session error: a bad field is -32602 `Invalid params: <field>: expected
/// <kind>`; a missing thing -32002 `Resource not found: …`; a refusal because something is in
/// progress -32000 with its text (docs/decisions.md, "ACP: a busy prompt"); anything else
/// -32603 `Internal error: …`.
protocol::JsonRpcError acp_error(std::optional<Json> id, const session::Error& error);

class AcpReply {
 public:
  AcpReply(std::optional<Json> id, JsonSink sink);
  AcpReply(AcpReply&& other) noexcept;
  AcpReply& operator=(AcpReply&&) = delete;
  AcpReply(const AcpReply&) = delete;
  ~AcpReply();

  void ok(Json result);
  void fail(int code, std::string message);
  void fail(const session::Error& error);
  /// Never answered after all (the connection is going away); nothing is written.
  void abandon() { sent_ = true; }
  /// The request's id (none: a notification).
  const std::optional<Json>& id() const { return id_; }
  bool sent() const { return sent_; }

 private:
  bool claim();

  std::optional<Json> id_;
  JsonSink sink_;
  bool sent_ = false;
};

/// A pi command's Reply that answers an ACP request: the command's data as the result (`{}`
/// when it has none or it is not an object), its error by acp_error(); `answered(true)` runs
/// after a result, `answered(false)` after an error.
std::shared_ptr<ReplyWire> acp_reply_wire(AcpReply reply,
                                          std::function<void(bool ok)> answered = nullptr);

}  // namespace rebound::server::acp
