#include "protocol/jsonrpc_peer.h"

#include <utility>

#include "protocol/json_line.h"
#include "protocol/jsonrpc.h"

namespace rebound::protocol {

std::int64_t JsonRpcPeer::request(const std::string& method, Json params, Answer answer) {
  const std::int64_t id = next_id_++;
  pending_.emplace(id, std::move(answer));
  send_(jsonrpc_request(id, method, std::move(params)));
  return id;
}

void JsonRpcPeer::notify(const std::string& method, const Json& params) {
  send_(jsonrpc_notification(method, params));
}

JsonRpcPeer::Received JsonRpcPeer::receive(std::string_view line) {
  JsonLine parsed = parse_json_line(line);
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
    if (async_request_) {
      async_request_(method->get<std::string>(), params, *id);
      return Received::message;
    }
    std::optional<Json> result;
    if (request_) result = request_(method->get<std::string>(), params);
    if (result) {
      send_(jsonrpc_result(*id, std::move(*result)));
    } else {
      send_(jsonrpc_error(
          JsonRpcError{*id, jsonrpc_code::method_not_found, "Method not found", std::nullopt}));
    }
    return Received::message;
  }
  answer(message);
  return Received::message;
}

void JsonRpcPeer::respond(const Json& id, Json result) {
  send_(jsonrpc_result(id, std::move(result)));
}

void JsonRpcPeer::respond_error(const Json& id, int code, std::string message) {
  send_(jsonrpc_error(JsonRpcError{id, code, std::move(message), std::nullopt}));
}

bool JsonRpcPeer::answer(const Json& response) {
  const auto id = response.find("id");
  if (id == response.end() || !id->is_number_integer()) return false;
  const auto found = pending_.find(id->get<std::int64_t>());
  if (found == pending_.end()) return false;  // forgotten, or never sent
  Answer answer = std::move(found->second);
  pending_.erase(found);
  answer(response);
  return true;
}

}  // namespace rebound::protocol
