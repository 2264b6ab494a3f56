#include "mcp/jsonrpc_peer.h"

#include <utility>

#include "protocol/json_line.h"
#include "protocol/jsonrpc.h"

namespace rebound::mcp {

void JsonRpcPeer::write(const Json& message) {
  send_(protocol::to_line(message));
}

std::int64_t JsonRpcPeer::request(const std::string& method, Json params, Answer answer) {
  const std::int64_t id = next_id_++;
  pending_.emplace(id, std::move(answer));
  write(protocol::jsonrpc_request(id, method, std::move(params)));
  return id;
}

void JsonRpcPeer::notify(const std::string& method, const Json& params) {
  write(protocol::jsonrpc_notification(method, params));
}

JsonRpcPeer::Received JsonRpcPeer::receive(std::string_view line) {
  protocol::JsonLine parsed = protocol::parse_json_line(line);
  if (!parsed.value || !parsed.value->is_object()) return Received::not_an_object;
  const Json& message = *parsed.value;
  const auto method = message.find("method");
  const auto id = message.find("id");
  if (method != message.end() && method->is_string()) {
    const Json params = message.contains("params") ? message["params"] : Json::object();
    if (id == message.end()) {
      if (notification_) notification_(method->get<std::string>(), params);
      return Received::message;
    }
    // A request of the server's: only ping is served (section 5).
    if (*method == "ping") {
      write(protocol::jsonrpc_result(*id, Json::object()));
    } else {
      write(protocol::jsonrpc_error(protocol::JsonRpcError{
          *id, protocol::jsonrpc_code::method_not_found, "Method not found", std::nullopt}));
    }
    return Received::message;
  }
  if (id == message.end() || !id->is_number_integer()) return Received::message;
  const auto found = pending_.find(id->get<std::int64_t>());
  if (found == pending_.end()) return Received::message;  // forgotten, or never sent
  Answer answer = std::move(found->second);
  pending_.erase(found);
  answer(message);
  return Received::message;
}

}  // namespace rebound::mcp
