#pragma once
// The JSON-RPC 2.0 side of one MCP server connection (mcp.md sections 2, 3.1 and 5): Rebound's
// requests with integer ids counted from 1 and their answers matched by id, notifications both
// ways, and the server's own requests (`ping` answered `{}`, anything else -32601). Lines in,
// lines out; the transport (a child process's pipes) and the timers belong to the caller. One
// event loop; an answer callback may send further requests.

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "protocol/json.h"

namespace rebound::mcp {

using protocol::Json;

class JsonRpcPeer {
 public:
  /// Writes one message: compact JSON plus LF.
  using Send = std::function<void(std::string line)>;
  /// The whole response object (it has `result` or `error`).
  using Answer = std::function<void(const Json& response)>;
  using Notification = std::function<void(const std::string& method, const Json& params)>;

  explicit JsonRpcPeer(Send send) : send_(std::move(send)) {}

  /// Sends a request; `answer` runs once with its response, unless forgotten first. Returns
  /// the request's id.
  std::int64_t request(const std::string& method, Json params, Answer answer);
  /// `params` none (null) leaves the member out.
  void notify(const std::string& method, const Json& params = nullptr);
  /// The request's answer is no longer wanted (a timeout, an abort): it is dropped on arrival.
  void forget(std::int64_t id) { pending_.erase(id); }
  /// The id the next request will get (a tools/call's progress token is its own id).
  std::int64_t next_id() const { return next_id_; }
  void on_notification(Notification handler) { notification_ = std::move(handler); }

  enum class Received { message, not_an_object };
  /// One line from the server. Anything that is not a JSON object is left to the caller to
  /// report; a response to an id not pending is dropped.
  Received receive(std::string_view line);

  std::size_t pending() const { return pending_.size(); }

 private:
  void write(const Json& message);

  Send send_;
  Notification notification_;
  std::map<std::int64_t, Answer> pending_;
  std::int64_t next_id_ = 1;
};

}  // namespace rebound::mcp
