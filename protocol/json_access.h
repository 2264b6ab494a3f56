#pragma once
// Non-throwing reads of JSON that came from outside (provider streams, files): a missing key
// or a value of another type gives the fallback. nlohmann's value() throws on a type mismatch,
// which must never happen on input. Pure.

#include <cstdint>
#include <string>
#include <string_view>

#include "protocol/json.h"

namespace rebound::protocol {

/// The string at `key`, or `fallback` when absent or not a string (or `j` not an object).
std::string get_string(const Json& j, std::string_view key, std::string fallback = {});
/// The integer at `key`, or `fallback`.
std::int64_t get_int(const Json& j, std::string_view key, std::int64_t fallback = 0);
/// The object at `key`, or an empty object.
const Json& get_object(const Json& j, std::string_view key);
/// The value at `key`, or null.
const Json& get_value(const Json& j, std::string_view key);
/// An array of strings only; an object whose values are all strings.
bool is_string_array(const Json& v);
bool is_string_object(const Json& v);

}  // namespace rebound::protocol
