#include "protocol/commands.h"

#include <nlohmann/json.hpp>

#include "protocol/json_line.h"

namespace rebound::protocol {

namespace {

std::optional<StreamingBehavior> streaming_behavior_from_string(std::string_view s) {
  if (s == "steer") return StreamingBehavior::steer;
  if (s == "followUp") return StreamingBehavior::follow_up;
  return std::nullopt;
}

ProtocolError parse_error(std::optional<Json> id, const std::string& reason) {
  return {std::move(id), "parse", "Failed to parse command: " + reason};
}

}  // namespace

const Json* FieldReader::find(const char* name) const {
  const auto it = object_.find(name);
  return it == object_.end() ? nullptr : &*it;
}

std::string FieldReader::string(const char* name) const {
  const Json* v = find(name);
  if (!v || !v->is_string()) throw FieldError{name, "string"};
  return v->get<std::string>();
}

std::optional<std::string> FieldReader::optional_string(const char* name) const {
  const Json* v = find(name);
  if (!v) return std::nullopt;
  if (!v->is_string()) throw FieldError{name, "string"};
  return v->get<std::string>();
}

bool FieldReader::boolean(const char* name) const {
  const Json* v = find(name);
  if (!v || !v->is_boolean()) throw FieldError{name, "boolean"};
  return v->get<bool>();
}

std::vector<ImageContent> FieldReader::images() const {
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

MessageArgs read_prompt_args(const FieldReader& f) {
  MessageArgs a{f.string("message"), f.images(), std::nullopt};
  if (f.find("streamingBehavior")) {
    a.streaming_behavior = f.one_of<StreamingBehavior>(
        "streamingBehavior", streaming_behavior_from_string, "steer, followUp");
  }
  return a;
}

MessageArgs read_message_args(const FieldReader& f) {
  return MessageArgs{f.string("message"), f.images(), std::nullopt};
}

NewSessionArgs read_new_session_args(const FieldReader& f) {
  return NewSessionArgs{f.optional_string("parentSession")};
}

SetModelArgs read_set_model_args(const FieldReader& f) {
  return SetModelArgs{f.string("provider"), f.string("modelId")};
}

ThinkingLevelArgs read_thinking_level_args(const FieldReader& f) {
  return ThinkingLevelArgs{f.one_of<ThinkingLevel>("level", thinking_level_from_string,
                                                   "off, minimal, low, medium, high, xhigh")};
}

QueueModeArgs read_queue_mode_args(const FieldReader& f) {
  return QueueModeArgs{f.one_of<QueueMode>("mode", queue_mode_from_string, "all, one-at-a-time")};
}

PermissionModeArgs read_permission_mode_args(const FieldReader& f) {
  const auto known = [](const std::string& s) -> std::optional<std::string> {
    for (const char* m : {"default", "acceptEdits", "plan", "dontAsk", "bypassPermissions"})
      if (s == m) return s;
    return std::nullopt;
  };
  return PermissionModeArgs{f.one_of<std::string>(
      "mode", known, "default, acceptEdits, plan, dontAsk, bypassPermissions")};
}

InterruptModeArgs read_interrupt_mode_args(const FieldReader& f) {
  return InterruptModeArgs{
      f.one_of<InterruptMode>("mode", interrupt_mode_from_string, "immediate, wait")};
}

CompactArgs read_compact_args(const FieldReader& f) {
  return CompactArgs{f.optional_string("customInstructions")};
}

EnabledArgs read_enabled_args(const FieldReader& f) {
  return EnabledArgs{f.boolean("enabled")};
}

BashArgs read_bash_args(const FieldReader& f) {
  return BashArgs{f.string("command")};
}

SwitchSessionArgs read_switch_session_args(const FieldReader& f) {
  return SwitchSessionArgs{f.string("sessionPath")};
}

ForkArgs read_fork_args(const FieldReader& f) {
  return ForkArgs{f.string("entryId")};
}

SessionNameArgs read_session_name_args(const FieldReader& f) {
  return SessionNameArgs{f.string("name")};
}

EntriesArgs read_entries_args(const FieldReader& f) {
  return EntriesArgs{f.optional_string("since")};
}

ExportHtmlArgs read_export_html_args(const FieldReader& f) {
  return ExportHtmlArgs{f.optional_string("outputPath")};
}

McpServersArgs read_mcp_servers_args(const FieldReader& f) {
  const Json* wait = f.find("wait");
  return McpServersArgs{wait && !wait->is_null() ? f.boolean("wait") : false};
}

RestartMcpServerArgs read_restart_mcp_server_args(const FieldReader& f) {
  return RestartMcpServerArgs{f.string("name")};
}

UiResponseArgs read_ui_response_args(const FieldReader& f) {
  UiResponseArgs a;
  a.id = f.string("id");
  a.value = f.optional_string("value");
  if (const Json* confirmed = f.find("confirmed"); confirmed && !confirmed->is_null())
    a.confirmed = f.boolean("confirmed");
  if (const Json* cancelled = f.find("cancelled"); cancelled && !cancelled->is_null())
    a.cancelled = f.boolean("cancelled");
  return a;
}

EventFilterArgs read_event_filter_args(const FieldReader& f) {
  EventFilterArgs a;
  if (const Json* events = f.find("events"); events && !events->is_null()) {
    const auto bad = [] { return FieldError{"events", "array of non-empty strings or null"}; };
    if (!events->is_array()) throw bad();
    a.events.emplace();
    for (const Json& name : *events) {
      if (!name.is_string() || name.get_ref<const std::string&>().empty()) throw bad();
      a.events->push_back(name.get<std::string>());
    }
  }
  if (const Json* updates = f.find("messageUpdates")) {
    if (!updates->is_string() || (*updates != "full" && *updates != "delta"))
      throw FieldError{"messageUpdates", "one of full, delta"};
    a.delta_updates = *updates == "delta";
  }
  return a;
}

ParsedEnvelope parse_envelope(Json value) {
  if (!value.is_object())
    return {std::nullopt, parse_error(std::nullopt, "expected a JSON object")};
  std::optional<Json> id;
  if (const auto it = value.find("id"); it != value.end()) id = *it;
  const auto type_it = value.find("type");
  if (type_it == value.end() || !type_it->is_string()) {
    return {std::nullopt, parse_error(id, "missing string field 'type'")};
  }
  std::string type = type_it->get<std::string>();
  return {CommandEnvelope{std::move(id), std::move(type), std::move(value)}, std::nullopt};
}

ParsedEnvelope parse_envelope_line(std::string_view line) {
  JsonLine parsed = parse_json_line(line);
  if (!parsed.value) return {std::nullopt, parse_error(std::nullopt, parsed.error)};
  return parse_envelope(std::move(*parsed.value));
}

ProtocolError unknown_command_error(std::optional<Json> id, const std::string& type) {
  return ProtocolError{std::move(id), type, "Unknown command: " + type};
}

ProtocolError line_too_long_error(std::size_t max_line_bytes) {
  return parse_error(std::nullopt,
                     "line exceeds the limit of " + std::to_string(max_line_bytes) + " bytes");
}

}  // namespace rebound::protocol
