#include "protocol/jsonrpc.h"

#include <nlohmann/json.hpp>
#include <utility>

namespace rebound::protocol {

namespace {

JsonRpcError invalid_request(std::optional<Json> id, std::string_view what) {
  // Only a string or a number is echoed; anything else (and no id) is written as null.
  if (id && !id->is_string() && !id->is_number()) id.reset();
  return {std::move(id), jsonrpc_code::invalid_request, "Invalid Request: " + std::string(what),
          std::nullopt};
}

}  // namespace

JsonRpcShape jsonrpc_shape(const Json& object) {
  JsonRpcShape shape;
  const auto version = object.find("jsonrpc");
  shape.version_ok = version != object.end() && version->is_string() && *version == "2.0";
  if (const auto id = object.find("id"); id != object.end()) {
    using Id = JsonRpcShape::Id;
    shape.id = id->is_string()                                       ? Id::string
               : id->is_number_integer() || id->is_number_unsigned() ? Id::integer
               : id->is_number()                                     ? Id::number
               : id->is_null()                                       ? Id::null
                                                                     : Id::other;
  }
  if (const auto method = object.find("method"); method != object.end()) shape.method = &*method;
  if (const auto params = object.find("params"); params != object.end()) {
    using P = JsonRpcShape::Params;
    shape.params = params->is_null()     ? P::null
                   : params->is_object() ? P::object
                   : params->is_array()  ? P::array
                                         : P::other;
  }
  shape.response = object.contains("result") || object.contains("error");
  return shape;
}

JsonRpcRequest read_jsonrpc_request(Json object) {
  using Id = JsonRpcShape::Id;
  using P = JsonRpcShape::Params;
  const JsonRpcShape shape = jsonrpc_shape(object);
  JsonRpcRequest out;
  std::optional<Json> id;
  if (const auto it = object.find("id"); it != object.end()) id = *it;
  if (!shape.version_ok) {
    out.error = invalid_request(id, "jsonrpc must be \"2.0\"");
    return out;
  }
  if (shape.id == Id::other) {
    out.error = invalid_request(std::nullopt, "id must be a string, a number or null");
    return out;
  }
  if (!shape.method || !shape.method->is_string()) {
    out.error = invalid_request(id, "method must be a string");
    return out;
  }
  if (shape.params != P::absent && shape.params != P::object && shape.params != P::array) {
    out.error = invalid_request(id, "params must be an object or an array");
    return out;
  }
  const auto params = object.find("params");
  const auto method = object.find("method");
  out.valid = true;
  out.id = id;
  std::string type = method->get<std::string>();
  if (params != object.end() && params->is_array()) {
    out.error = JsonRpcError{std::move(id), jsonrpc_code::invalid_params,
                             "Invalid params: params must be an object", type};
    return out;
  }
  Json command = params == object.end() ? Json::object() : std::move(*params);
  // `type` and `id` inside params are ignored: the method names the command, the request's own
  // id is the one answered. extension_ui_response is the exception: its `id` is the dialog's
  // (extensions.md section 10).
  if (type != "extension_ui_response") command.erase("id");
  command["type"] = type;
  out.command = CommandEnvelope{std::move(id), std::move(type), std::move(command)};
  return out;
}

bool is_refused_batch(const Json& value, bool envelope_is_jsonrpc) {
  if (!value.is_array()) return false;
  if (envelope_is_jsonrpc) return true;
  return !value.empty() && value.front().is_object() && value.front().contains("jsonrpc");
}

Json jsonrpc_result(const Json& id, Json result) {
  Json j = Json::object();
  j["jsonrpc"] = "2.0";
  j["id"] = id;
  j["result"] = std::move(result);
  return j;
}

Json jsonrpc_request(const Json& id, std::string_view method, Json params) {
  Json j = Json::object();
  j["jsonrpc"] = "2.0";
  j["id"] = id;
  j["method"] = std::string(method);
  j["params"] = std::move(params);
  return j;
}

Json jsonrpc_notification(std::string_view method, Json params) {
  Json j = Json::object();
  j["jsonrpc"] = "2.0";
  j["method"] = std::string(method);
  if (!params.is_null()) j["params"] = std::move(params);
  return j;
}

Json jsonrpc_error(const JsonRpcError& error) {
  Json body = Json::object();
  body["code"] = error.code;
  body["message"] = error.message;
  if (error.command) body["data"] = Json{{"command", *error.command}};
  Json j = Json::object();
  j["jsonrpc"] = "2.0";
  j["id"] = error.id ? *error.id : Json(nullptr);
  j["error"] = std::move(body);
  return j;
}

JsonRpcError jsonrpc_parse_error(std::string message) {
  return {std::nullopt, jsonrpc_code::parse_error, std::move(message), std::nullopt};
}

JsonRpcError jsonrpc_not_an_object() {
  return invalid_request(std::nullopt, "expected a JSON object");
}

JsonRpcError jsonrpc_batch_error() {
  return invalid_request(std::nullopt, "batch requests are not supported");
}

std::string jsonrpc_notification_head(std::string_view method) {
  std::string head = R"({"jsonrpc":"2.0","method":)";
  head += Json(std::string(method)).dump();
  head += R"(,"params":)";
  return head;
}

std::string jsonrpc_error_text(const Json& error, std::string_view prefix) {
  const Json none = Json::object();
  const Json& e = error.is_object() ? error : none;
  const auto c = e.find("code");
  const auto m = e.find("message");
  return std::string(prefix) + " " +
         (c != e.end() && c->is_number() ? c->dump() : std::string("unknown")) + ": " +
         (m != e.end() && m->is_string() ? m->get<std::string>() : std::string("(no message)"));
}

}  // namespace rebound::protocol
