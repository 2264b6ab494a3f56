#pragma once
// Extension processes as the application wires them (extensions.md sections 1.1, 1.3, 1.5, 4):
// the configuration of every source under the trust rule, and the tap that hands each session
// event's pi line to the extensions that subscribed to it (serialised once per form, whatever
// the client's filter and envelope). rpc mode only so far.

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "extensions/extension_config.h"
#include "extensions/extension_set.h"
#include "server/events/pi_encoder.h"
#include "session/event_sink.h"
#include "workspace/service_flags.h"

#include "config/settings_pair.h"

namespace rebound::server {

/// Sources 1 (the global settings), 2 (the project's, run only with the user's opt-in) and 3
/// (`--extension`), merged, the limit applied; each problem logged once. `untrusted` counts the
/// project's entries that will not run.
std::vector<extensions::ExtensionConfig> read_extension_configs(
    const workspace::ServiceFlags& options, const config::SettingsPair& files,
    const peer::Getenv& getenv);

/// Passes every event on, then gives its pi line to the extensions that want it (section 4.3).
class ExtensionEventTap : public session::EventSink {
 public:
  ExtensionEventTap(session::EventSink& next, extensions::ExtensionSet& set)
      : next_(next), set_(set) {}
  void on_event(const session::Event& event) override;

 private:
  session::EventSink& next_;
  extensions::ExtensionSet& set_;
  PiEventEncoder full_;
  PiEventEncoder delta_;
  std::string scratch_;
};

}  // namespace rebound::server
