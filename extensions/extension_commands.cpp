// ExtensionSet: the slash commands of its ready extensions (extensions.md sections 4.6, 7.5).
#include <spdlog/spdlog.h>

#include <filesystem>

#include "extensions/extension_set.h"

namespace rebound::extensions {

using protocol::Json;

ExtensionConnection* ExtensionSet::owner(std::string_view name) const {
  for (const auto& c : connections_) {
    if (!c->ready()) continue;
    for (const auto& command : c->commands())
      if (command.name == name) return c.get();
  }
  return nullptr;
}

void ExtensionSet::warn_collisions() {
  for (const auto& c : connections_) {
    if (!c->ready()) continue;
    for (const auto& command : c->commands()) {
      const ExtensionConnection* first = owner(command.name);
      if (first == c.get() || !collisions_warned_.insert(c->name() + "/" + command.name).second)
        continue;
      spdlog::warn("ext[{}] command /{} skipped: extension {} has it", c->name(), command.name,
                   first->name());
    }
  }
}

void ExtensionSet::run(const std::string& name, const std::string& args,
                       std::function<void(session::Status)> done) {
  if (ExtensionConnection* c = owner(name)) return c->run_command(name, args, std::move(done));
  scheduler_.post([name, done = std::move(done)] {
    done(session::Error{session::ErrorKind::not_found,
                        "Extension command /" + name + " failed: not available"});
  });
}

std::vector<Json> ExtensionSet::list() const {
  std::vector<Json> out;
  for (const auto& c : connections_) {
    if (!c->ready()) continue;
    const ExtensionConfig& config = c->config();
    const bool cli = config.source == ExtensionSource::cli;
    Json info = Json::object();
    info["path"] = config.settings_path;
    info["source"] = cli ? "cli" : "local";
    info["scope"] = cli ? std::string("temporary") : std::string(source_name(config.source));
    info["origin"] = "top-level";
    info["baseDir"] =
        cli ? cwd_ : std::filesystem::path(config.settings_path).parent_path().string();
    for (const auto& command : c->commands()) {
      if (owner(command.name) != c.get()) continue;
      Json entry = Json::object();
      entry["name"] = command.name;
      entry["description"] = command.description;
      entry["source"] = "extension";
      entry["sourceInfo"] = info;
      out.push_back(std::move(entry));
    }
  }
  return out;
}

}  // namespace rebound::extensions
