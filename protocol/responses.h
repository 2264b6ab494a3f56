#pragma once
// Response objects of protocol.md section 3, keys in the spec's order: id (when the command
// had one), type, command, success, then data or error. Pure builders.

#include <optional>
#include <string_view>

#include "protocol/commands.h"
#include "protocol/json.h"

namespace rebound::protocol {

/// A success without a `data` key.
Json success_response(const std::optional<Json>& id, std::string_view command);
/// A success whose `data` is `data` (a null Json is written as "data":null).
Json success_response(const std::optional<Json>& id, std::string_view command, Json data);
/// A failure with its error text.
Json error_response(const std::optional<Json>& id, std::string_view command,
                    std::string_view error);
/// The response for a rejected line or command.
Json error_response(const ProtocolError& error);

}  // namespace rebound::protocol
