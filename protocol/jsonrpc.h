#pragma once
// The JSON-RPC 2.0 envelope of the rpc mode (protocol.md section 9): reading a request object
// into a command, and the response, error and notification objects, keys in the spec's order.
// Which envelope the connection's events use is the server's business (server/event_output.h).
// Pure; nothing throws out of here.

#include <optional>
#include <string>
#include <string_view>

#include "protocol/commands.h"
#include "protocol/json.h"

namespace rebound::protocol {

/// The error codes of protocol.md section 9.
namespace jsonrpc_code {
inline constexpr int parse_error = -32700;
inline constexpr int invalid_request = -32600;
inline constexpr int method_not_found = -32601;
inline constexpr int invalid_params = -32602;
inline constexpr int internal_error = -32603;
inline constexpr int server_error = -32000;
/// ACP's (acp.md): a session or file that does not exist.
inline constexpr int resource_not_found = -32002;
}  // namespace jsonrpc_code

/// An error line: `{"jsonrpc","id","error":{"code","message","data"?}}`. `id` absent is written
/// as null; `command` becomes `data:{"command":…}`.
struct JsonRpcError {
  std::optional<Json> id;
  int code = jsonrpc_code::server_error;
  std::string message;
  std::optional<std::string> command;
};

/// A request object (one with a `jsonrpc` member) read by read_jsonrpc_request().
struct JsonRpcRequest {
  /// Passed the first four checks of section 9: such a request switches an `auto` envelope.
  bool valid = false;
  /// Absent for a notification (no `id` member), which is never answered.
  std::optional<Json> id;
  /// The command to run (params with `type` set to the method), when nothing failed.
  std::optional<CommandEnvelope> command;
  /// The one error to answer with instead, when a check failed.
  std::optional<JsonRpcError> error;
};

/// What a JSON-RPC message's members are, for the checks both dialects make in one order
/// (protocol.md section 9, acp.md section 10): the version, the id, the method, the params.
/// Each dialect words and codes the problems itself.
struct JsonRpcShape {
  bool version_ok = false;  // `jsonrpc` is "2.0"
  enum class Id { absent, string, integer, number, null, other } id = Id::absent;
  const Json* method = nullptr;  // the member, of any type
  enum class Params { absent, null, object, array, other } params = Params::absent;
  bool response = false;  // it has `result` or `error`
};
JsonRpcShape jsonrpc_shape(const Json& object);

/// Checks `object` (a JSON object with a `jsonrpc` member) in the order of section 9.
JsonRpcRequest read_jsonrpc_request(Json object);

/// Whether `value` is a batch that must be refused: an array whose first element is an object
/// with a `jsonrpc` member (`envelope_is_jsonrpc`: any array).
bool is_refused_batch(const Json& value, bool envelope_is_jsonrpc);

Json jsonrpc_result(const Json& id, Json result);
/// A request `{"jsonrpc","id","method","params"}` (Rebound's own, to an ACP client or an MCP
/// server).
Json jsonrpc_request(const Json& id, std::string_view method, Json params);
/// A notification `{"jsonrpc","method","params"}`; null `params` are left out.
Json jsonrpc_notification(std::string_view method, Json params = nullptr);
Json jsonrpc_error(const JsonRpcError& error);
/// A response's `error` member as a text: `<prefix> <code>: <message>` (whatever it holds; MCP
/// says `MCP error`, an extension's tool `Extension error`).
std::string jsonrpc_error_text(const Json& error, std::string_view prefix = "JSON-RPC error");

/// The section 9 error for a line that is not JSON (or not UTF-8, or too long): `message` is the
/// text the pi `parse` response would carry ("Failed to parse command: …").
JsonRpcError jsonrpc_parse_error(std::string message);
/// A non-object that is not an array, while the envelope is jsonrpc.
JsonRpcError jsonrpc_not_an_object();
/// A refused batch.
JsonRpcError jsonrpc_batch_error();

/// The notification prefix of an event line, `{"jsonrpc":"2.0","method":"<type>","params":`;
/// the event's own line (without its LF) and `}` complete it.
std::string jsonrpc_notification_head(std::string_view method);

}  // namespace rebound::protocol
