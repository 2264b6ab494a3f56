#pragma once
// One side of a JSON-RPC 2.0 connection as the requester: Rebound's requests with integer ids
// counted from `first_id` and their answers matched by id, notifications both ways, and the
// other side's requests (answered by the request handler, else -32601). Used for MCP servers
// (mcp.md sections 2, 3.1 and 5) and for ACP's requests to the client (acp.md section 7).
// Messages in, messages out; the transport and the timers belong to the caller. One event
// loop; an answer callback may send further requests.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "protocol/json.h"

namespace rebound::protocol {

class JsonRpcPeer {
 public:
  /// Writes one message.
  using Send = std::function<void(const Json& message)>;
  /// The whole response object (it has `result` or `error`).
  using Answer = std::function<void(const Json& response)>;
  using Notification = std::function<void(const std::string& method, const Json& params)>;
  /// The other side's request: the result to answer with, or none for -32601.
  using Request = std::function<std::optional<Json>(const std::string& method, const Json& params)>;

  explicit JsonRpcPeer(Send send, std::int64_t first_id = 1)
      : send_(std::move(send)), next_id_(first_id) {}

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
  void on_request(Request handler) { request_ = std::move(handler); }
  /// The other side's requests answered later: the handler gets the request's id and answers
  /// through respond() or respond_error(). Replaces on_request().
  using AsyncRequest =
      std::function<void(const std::string& method, const Json& params, const Json& id)>;
  void on_request_async(AsyncRequest handler) { async_request_ = std::move(handler); }
  void respond(const Json& id, Json result);
  void respond_error(const Json& id, int code, std::string message);

  enum class Received { message, not_an_object };
  /// One line from the other side. Anything that is not a JSON object is left to the caller to
  /// report; a response to an id not pending is dropped.
  Received receive(std::string_view line);
  /// A response already read (it has an `id` and `result` or `error`): runs its answer; false
  /// when no request of that id is pending.
  bool answer(const Json& response);

  std::size_t pending() const { return pending_.size(); }

 private:
  Send send_;
  Notification notification_;
  Request request_;
  AsyncRequest async_request_;
  std::map<std::int64_t, Answer> pending_;
  std::int64_t next_id_;
};

}  // namespace rebound::protocol
