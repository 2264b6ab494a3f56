#include "protocol/commands.h"

#include <array>
#include <nlohmann/json.hpp>

#include "protocol/json_line.h"

namespace rebound::protocol {

namespace {

constexpr std::array<std::string_view, 24> kNames{
    "prompt",
    "steer",
    "follow_up",
    "abort",
    "new_session",
    "get_state",
    "set_model",
    "cycle_model",
    "get_available_models",
    "set_thinking_level",
    "cycle_thinking_level",
    "set_steering_mode",
    "set_follow_up_mode",
    "set_interrupt_mode",
    "compact",
    "set_auto_compaction",
    "set_auto_retry",
    "abort_retry",
    "bash",
    "abort_bash",
    "get_session_stats",
    "switch_session",
    "get_last_assistant_text",
    "get_messages",
};

// Thrown only inside this file and caught in parse_command: it carries the field path.
struct FieldError {
  std::string path;
  std::string kind;
};

class FieldReader {
 public:
  explicit FieldReader(const Json& object) : object_(object) {}

  const Json* find(const char* name) const {
    const auto it = object_.find(name);
    return it == object_.end() ? nullptr : &*it;
  }

  std::string string(const char* name) const {
    const Json* v = find(name);
    if (!v || !v->is_string()) throw FieldError{name, "string"};
    return v->get<std::string>();
  }

  std::optional<std::string> optional_string(const char* name) const {
    const Json* v = find(name);
    if (!v) return std::nullopt;
    if (!v->is_string()) throw FieldError{name, "string"};
    return v->get<std::string>();
  }

  bool boolean(const char* name) const {
    const Json* v = find(name);
    if (!v || !v->is_boolean()) throw FieldError{name, "boolean"};
    return v->get<bool>();
  }

  template <typename E, typename Parse>
  E one_of(const char* name, Parse parse, std::string_view choices) const {
    const Json* v = find(name);
    std::optional<E> value;
    if (v && v->is_string()) value = parse(v->get_ref<const std::string&>());
    if (!value) throw FieldError{name, "one of " + std::string(choices)};
    return *value;
  }

  std::vector<ImageContent> images() const {
    std::vector<ImageContent> out;
    const Json* v = find("images");
    if (!v) return out;
    if (!v->is_array()) throw FieldError{"images", "array"};
    for (std::size_t i = 0; i < v->size(); ++i) {
      const Json& item = (*v)[i];
      const std::string at = "images[" + std::to_string(i) + "]";
      if (!item.is_object()) throw FieldError{at, "object"};
      const auto type = item.find("type");
      if (type == item.end() || *type != "image") throw FieldError{at + ".type", "one of image"};
      const auto data = item.find("data");
      if (data == item.end() || !data->is_string()) throw FieldError{at + ".data", "string"};
      const auto mime = item.find("mimeType");
      if (mime == item.end() || !mime->is_string()) throw FieldError{at + ".mimeType", "string"};
      out.push_back({data->get<std::string>(), mime->get<std::string>()});
    }
    return out;
  }

 private:
  const Json& object_;
};

std::optional<StreamingBehavior> streaming_behavior_from_string(std::string_view s) {
  if (s == "steer") return StreamingBehavior::steer;
  if (s == "followUp") return StreamingBehavior::follow_up;
  return std::nullopt;
}

CommandArgs read_args(CommandType type, const FieldReader& f) {
  switch (type) {
    case CommandType::prompt: {
      MessageArgs a{f.string("message"), f.images(), std::nullopt};
      if (f.find("streamingBehavior")) {
        a.streaming_behavior = f.one_of<StreamingBehavior>(
            "streamingBehavior", streaming_behavior_from_string, "steer, followUp");
      }
      return a;
    }
    case CommandType::steer:
    case CommandType::follow_up:
      return MessageArgs{f.string("message"), f.images(), std::nullopt};
    case CommandType::new_session:
      return NewSessionArgs{f.optional_string("parentSession")};
    case CommandType::set_model:
      return SetModelArgs{f.string("provider"), f.string("modelId")};
    case CommandType::set_thinking_level:
      return ThinkingLevelArgs{f.one_of<ThinkingLevel>("level", thinking_level_from_string,
                                                       "off, minimal, low, medium, high, xhigh")};
    case CommandType::set_steering_mode:
    case CommandType::set_follow_up_mode:
      return QueueModeArgs{
          f.one_of<QueueMode>("mode", queue_mode_from_string, "all, one-at-a-time")};
    case CommandType::set_interrupt_mode:
      return InterruptModeArgs{
          f.one_of<InterruptMode>("mode", interrupt_mode_from_string, "immediate, wait")};
    case CommandType::compact:
      return CompactArgs{f.optional_string("customInstructions")};
    case CommandType::set_auto_compaction:
    case CommandType::set_auto_retry:
      return EnabledArgs{f.boolean("enabled")};
    case CommandType::bash:
      return BashArgs{f.string("command")};
    case CommandType::switch_session:
      return SwitchSessionArgs{f.string("sessionPath")};
    default:
      return std::monostate{};
  }
}

ProtocolError parse_error(std::optional<Json> id, const std::string& reason) {
  return {std::move(id), "parse", "Failed to parse command: " + reason};
}

}  // namespace

std::string_view command_name(CommandType type) {
  return kNames[static_cast<int>(type)];
}

std::optional<CommandType> command_type_from_name(std::string_view name) {
  for (std::size_t i = 0; i < kNames.size(); ++i) {
    if (kNames[i] == name) return static_cast<CommandType>(i);
  }
  return std::nullopt;
}

ParsedCommand parse_command(const Json& value) {
  if (!value.is_object())
    return {std::nullopt, parse_error(std::nullopt, "expected a JSON object")};
  std::optional<Json> id;
  if (const auto it = value.find("id"); it != value.end()) id = *it;
  const auto type_it = value.find("type");
  if (type_it == value.end() || !type_it->is_string()) {
    return {std::nullopt, parse_error(id, "missing string field 'type'")};
  }
  const std::string& name = type_it->get_ref<const std::string&>();
  const auto type = command_type_from_name(name);
  if (!type) return {std::nullopt, ProtocolError{id, name, "Unknown command: " + name}};
  try {
    return {Command{id, *type, read_args(*type, FieldReader(value))}, std::nullopt};
  } catch (const FieldError& e) {
    return {std::nullopt,
            ProtocolError{id, name, "Invalid field '" + e.path + "': expected " + e.kind}};
  }
}

ParsedCommand parse_command_line(std::string_view line) {
  JsonLine parsed = parse_json_line(line);
  if (!parsed.value) return {std::nullopt, parse_error(std::nullopt, parsed.error)};
  return parse_command(*parsed.value);
}

ProtocolError line_too_long_error(std::size_t max_line_bytes) {
  return parse_error(std::nullopt,
                     "line exceeds the limit of " + std::to_string(max_line_bytes) + " bytes");
}

}  // namespace rebound::protocol
