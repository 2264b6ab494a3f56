#include "workspace/extension_setup.h"

#include <spdlog/spdlog.h>

#include "config/json_file.h"

namespace rebound::server {

namespace fs = std::filesystem;
using protocol::Json;

std::vector<extensions::ExtensionConfig> read_extension_configs(
    const workspace::ServiceFlags& options, const config::SettingsPair& files,
    const peer::Getenv& getenv) {
  using extensions::ExtensionSource;
  const Json& global = files.global;
  const Json& project = files.project;
  const std::string global_file = files.global_file.string();
  const std::string project_file = files.project_file.string();
  const bool trusted = files.trusted;
  std::vector<std::string> warnings;
  std::vector<extensions::ExtensionConfig> out;
  extensions::merge_extensions(
      out, extensions::read_extensions(config::settings_member(global, "extensions"),
                                       ExtensionSource::user, global_file, true,
                                       options.no_extensions, getenv, warnings));
  extensions::merge_extensions(
      out, extensions::read_extensions(config::settings_member(project, "extensions"),
                                       ExtensionSource::project, project_file, trusted,
                                       options.no_extensions, getenv, warnings));
  extensions::merge_extensions(out, extensions::cli_extensions(options.extensions));
  extensions::apply_extension_limit(out);
  for (const auto& w : warnings)
    spdlog::warn("extensions: {}", w);
  return out;
}

void ExtensionEventTap::on_event(const session::Event& event) {
  next_.on_event(event);
  // Not sent: dialogs and notices (section 4.3).
  if (std::holds_alternative<session::ev::ExtensionUiRequest>(event.body)) return;
  const std::string_view type = session::event_name(event.body.index());
  const auto wanted = set_.wanted(type);
  const bool update = std::holds_alternative<session::ev::MessageUpdate>(event.body);
  if (update && !wanted.full) full_.skipped_update();
  if (update && !wanted.delta) delta_.skipped_update();
  if (!wanted.full && !wanted.delta) return;
  std::string full;
  if (wanted.full) {
    full = full_.line(event);
    full.pop_back();  // the LF
  }
  scratch_.clear();
  if (wanted.delta) {
    delta_.append_delta_line(scratch_, event);
    scratch_.pop_back();
  }
  set_.forward(type, full, scratch_);
}

}  // namespace rebound::server
