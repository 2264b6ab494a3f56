#pragma once
// The JSON type of the wire. ordered_json keeps insertion order, which the spec's key orders
// rely on. Wire types hold JSON values (ids, arguments), so the full header is needed here.

#include <nlohmann/json.hpp>

namespace rebound::protocol {
using Json = nlohmann::ordered_json;
}  // namespace rebound::protocol
