#include "session/tool_arguments.h"

#include <vector>

namespace rebound::session {

using protocol::Json;

namespace {

// "12", "0.5", "-3": a JSON number and nothing else.
std::optional<Json> number_from_string(const std::string& s) {
  if (s.empty() || s.find_first_of(" \t\r\n") != std::string::npos) return std::nullopt;
  Json parsed = Json::parse(s, nullptr, false);
  if (parsed.is_discarded() || !parsed.is_number()) return std::nullopt;
  return parsed;
}

// Coerces `value` towards `type` (section 5); true when it then has that type.
bool coerce(const std::string& type, Json& value) {
  if (type == "string") {
    if (value.is_number() || value.is_boolean()) value = value.dump();
    return value.is_string();
  }
  if (type == "number") {
    if (value.is_string()) {
      if (auto n = number_from_string(value.get<std::string>())) value = *n;
    }
    return value.is_number();
  }
  if (type == "boolean") {
    if (value == "true") value = true;
    if (value == "false") value = false;
    return value.is_boolean();
  }
  if (type == "array") return value.is_array();
  if (type == "object") return value.is_object();
  return true;
}

void check_object(const Json& schema, Json& value, const std::string& path,
                  std::vector<std::string>& problems) {
  auto at = [&](const std::string& field) { return path.empty() ? field : path + "." + field; };
  // null counts as absent.
  for (auto it = value.begin(); it != value.end();) {
    if (it->is_null()) {
      it = value.erase(it);
    } else {
      ++it;
    }
  }
  if (schema.contains("required")) {
    for (const auto& r : schema["required"]) {
      const std::string field = r.get<std::string>();
      if (!value.contains(field))
        problems.push_back(at(field) + ": must have required properties " + field);
    }
  }
  const Json& props = schema.contains("properties") ? schema["properties"] : Json::object();
  for (const auto& [field, prop] : props.items()) {
    if (!value.contains(field)) continue;
    Json& v = value[field];
    const std::string type = prop.value("type", "");
    if (!coerce(type, v)) {
      problems.push_back(at(field) + ": must be " + type);
      continue;
    }
    if (type == "array" && prop.contains("items")) {
      const Json& items = prop["items"];
      const std::string item_type = items.value("type", "");
      for (std::size_t i = 0; i < v.size(); ++i) {
        const std::string item_path = at(field) + "." + std::to_string(i);
        if (!coerce(item_type, v[i])) {
          problems.push_back(item_path + ": must be " + item_type);
        } else if (item_type == "object") {
          check_object(items, v[i], item_path, problems);
        }
      }
    } else if (type == "object") {
      check_object(prop, v, at(field), problems);
    }
  }
  if (schema.value("additionalProperties", true) == false) {
    for (const auto& [field, v] : value.items()) {
      if (!props.contains(field)) {
        problems.push_back((path.empty() ? std::string("root") : path) +
                           ": must not have additional properties");
        break;
      }
    }
  }
}

}  // namespace

std::optional<std::string> check_tool_arguments(const ToolDefinition& definition,
                                                const Json& prepared, Json& args,
                                                const Json& received) {
  std::vector<std::string> problems;
  args = prepared.is_object() ? prepared : Json::object();
  if (!prepared.is_object()) {
    problems.push_back("root: must be object");
  } else {
    check_object(definition.parameters, args, "", problems);
    // A path or command reaches the system as a C string, which a NUL would cut short: the
    // call would act on another file than the one its result (and a permission prompt) names.
    for (const char* field : {"path", "command"}) {
      const auto it = args.find(field);
      if (it != args.end() && it->is_string() &&
          it->get_ref<const std::string&>().find('\0') != std::string::npos)
        problems.push_back(std::string(field) + ": must not contain a NUL character");
    }
  }
  if (problems.empty()) return std::nullopt;
  std::string text = "Validation failed for tool \"" + definition.name + "\":\n";
  for (const auto& p : problems)
    text += "  - " + p + "\n";
  text += "\nReceived arguments:\n" + received.dump(2);
  return text;
}

Result<Json> tool_input(const Tool& tool, const Json& received) {
  Json args = received;
  tool.prepare_arguments(args);
  if (tool.definition().external) return Result<Json>(std::move(args));
  Json checked;
  if (auto problem = check_tool_arguments(tool.definition(), args, checked, received))
    return failure(std::move(*problem));
  return Result<Json>(std::move(checked));
}

}  // namespace rebound::session
