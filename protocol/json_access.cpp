#include "protocol/json_access.h"

namespace rebound::protocol {

namespace {
const Json& null_json() {
  static const Json n;
  return n;
}
}  // namespace

const Json& get_value(const Json& j, std::string_view key) {
  if (!j.is_object()) return null_json();
  const auto it = j.find(key);
  return it == j.end() ? null_json() : *it;
}

std::string get_string(const Json& j, std::string_view key, std::string fallback) {
  const Json& v = get_value(j, key);
  return v.is_string() ? v.get<std::string>() : std::move(fallback);
}

std::int64_t get_int(const Json& j, std::string_view key, std::int64_t fallback) {
  const Json& v = get_value(j, key);
  return v.is_number_integer() ? v.get<std::int64_t>() : fallback;
}

const Json& get_object(const Json& j, std::string_view key) {
  static const Json empty = Json::object();
  const Json& v = get_value(j, key);
  return v.is_object() ? v : empty;
}

bool is_string_array(const Json& v) {
  if (!v.is_array()) return false;
  for (const auto& x : v)
    if (!x.is_string()) return false;
  return true;
}

bool is_string_object(const Json& v) {
  if (!v.is_object()) return false;
  for (const auto& x : v)
    if (!x.is_string()) return false;
  return true;
}

}  // namespace rebound::protocol
