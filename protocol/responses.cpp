#include "protocol/responses.h"

#include <nlohmann/json.hpp>

namespace rebound::protocol {

namespace {

Json head(const std::optional<Json>& id, std::string_view command, bool success) {
  Json j = Json::object();
  if (id) j["id"] = *id;
  j["type"] = "response";
  j["command"] = command;
  j["success"] = success;
  return j;
}

}  // namespace

Json success_response(const std::optional<Json>& id, std::string_view command) {
  return head(id, command, true);
}

Json success_response(const std::optional<Json>& id, std::string_view command, Json data) {
  Json j = head(id, command, true);
  j["data"] = std::move(data);
  return j;
}

Json error_response(const std::optional<Json>& id, std::string_view command,
                    std::string_view error) {
  Json j = head(id, command, false);
  j["error"] = error;
  return j;
}

Json error_response(const ProtocolError& error) {
  return error_response(error.id, error.command, error.message);
}

}  // namespace rebound::protocol
