#include "extensions/extension_config.h"

#include <algorithm>

#include "protocol/json_access.h"
#include "protocol/name_table.h"

namespace rebound::extensions {

using protocol::Json;

namespace {
constexpr protocol::Named<ExtensionSource> kSourceNames[] = {{ExtensionSource::user, "user"},
                                                             {ExtensionSource::project, "project"},
                                                             {ExtensionSource::cli, "cli"}};
}  // namespace

std::string_view source_name(ExtensionSource source) {
  return protocol::name_of(source, kSourceNames);
}

namespace {

using protocol::is_string_array;
using protocol::is_string_object;

bool is_positive_integer(const Json& v) {
  return v.is_number_integer() && v.get<std::int64_t>() >= 1;
}

// The first key of `entry` whose value has the wrong type, worded as section 1.3 says.
std::optional<std::string> type_problem(const Json& entry) {
  struct Rule {
    const char* key;
    bool (*ok)(const Json&);
    const char* kind;
  };
  static const Rule rules[] = {
      {"command", [](const Json& v) { return v.is_string(); }, "a string"},
      {"args", is_string_array, "an array of strings"},
      {"env", is_string_object, "an object of strings"},
      {"cwd", [](const Json& v) { return v.is_string(); }, "a string"},
      {"timeoutMs", is_positive_integer, "an integer"},
      {"failOpen", [](const Json& v) { return v.is_boolean(); }, "a boolean"},
      {"disabled", [](const Json& v) { return v.is_boolean(); }, "a boolean"},
  };
  for (const auto& rule : rules) {
    const auto it = entry.find(rule.key);
    if (it != entry.end() && !rule.ok(*it))
      return "Invalid configuration: " + std::string(rule.key) + " must be " + rule.kind;
  }
  return std::nullopt;
}

ExtensionConfig read_entry(const std::string& name, const Json& entry, const peer::Getenv& getenv) {
  ExtensionConfig out;
  out.name = name;
  if (!entry.is_object()) {
    out.error = "Invalid configuration: an extension entry must be an object";
    return out;
  }
  out.disabled = entry.value("disabled", Json(false)) == true;
  if (auto problem = type_problem(entry)) {
    out.error = std::move(problem);
    return out;
  }
  if (!entry.contains("command") || entry["command"].get<std::string>().empty()) {
    out.error = "Invalid configuration: command is required";
    return out;
  }
  std::optional<std::string> missing;
  auto expand = [&](const std::string& s) { return peer::expand_variables(s, getenv, missing); };
  out.command = expand(entry["command"].get<std::string>());
  if (const auto it = entry.find("args"); it != entry.end())
    for (const auto& a : *it)
      out.args.push_back(expand(a.get<std::string>()));
  if (const auto it = entry.find("env"); it != entry.end())
    for (const auto& [key, value] : it->items())
      out.env.emplace_back(key, expand(value.get<std::string>()));
  if (const auto it = entry.find("cwd"); it != entry.end())
    out.cwd = expand(it->get<std::string>());
  if (const auto it = entry.find("timeoutMs"); it != entry.end())
    out.timeout_ms = it->get<std::int64_t>();
  out.fail_open = entry.value("failOpen", Json(false)) == true;
  if (missing) out.error = "Environment variable " + *missing + " is not set";
  return out;
}

}  // namespace

std::vector<ExtensionConfig> read_extensions(const Json& extensions, ExtensionSource source,
                                             const std::string& path, bool trusted, bool disabled,
                                             const peer::Getenv& getenv,
                                             std::vector<std::string>& warnings) {
  std::vector<ExtensionConfig> out;
  if (!extensions.is_object()) {
    if (!extensions.is_null()) warnings.push_back(path + ": extensions must be an object; ignored");
    return out;
  }
  for (const auto& [name, entry] : extensions.items()) {
    if (name.empty()) {
      warnings.push_back(path + ": an extension entry with an empty name is ignored");
      continue;
    }
    ExtensionConfig config = read_entry(name, entry, getenv);
    config.source = source;
    config.settings_path = path;
    config.trusted = trusted;
    config.disabled = config.disabled || disabled;
    out.push_back(std::move(config));
  }
  return out;
}

std::vector<ExtensionConfig> cli_extensions(const std::vector<std::string>& commands) {
  std::vector<ExtensionConfig> out;
  for (std::size_t i = 0; i < commands.size(); ++i) {
    ExtensionConfig config;
    config.name = "cli-" + std::to_string(i + 1);
    config.command = "/bin/sh";
    config.args = {"-c", commands[i]};
    config.source = ExtensionSource::cli;
    config.settings_path = commands[i];
    out.push_back(std::move(config));
  }
  return out;
}

void merge_extensions(std::vector<ExtensionConfig>& into, std::vector<ExtensionConfig> source) {
  for (auto& entry : source) {
    const auto same = std::find_if(into.begin(), into.end(),
                                   [&](const ExtensionConfig& e) { return e.name == entry.name; });
    if (same == into.end()) {
      into.push_back(std::move(entry));
    } else if (entry.trusted) {
      *same = std::move(entry);  // as a whole, in the first one's position
    }
  }
}

void apply_extension_limit(std::vector<ExtensionConfig>& entries) {
  std::size_t starting = 0;
  for (auto& entry : entries) {
    if (entry.disabled || !entry.trusted || entry.error) continue;
    if (++starting > kMaxExtensions) entry.error = "Too many extensions (limit 32)";
  }
}

}  // namespace rebound::extensions
