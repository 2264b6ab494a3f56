#pragma once
// The slash commands a session's prompts can name (extensions.md section 4.6, sessions.md
// section 11): a `prompt` that is `/<name>` or starts with `/<name> ` runs the command instead of
// reaching the model; `steer` and `follow_up` naming one are refused; get_commands lists them.
// Optional: without it every message reaches the model as typed. Event loop only.

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/json.h"
#include "session/error.h"

namespace rebound::session {

/// `/<name>` or `/<name> <args>`: the name and what follows the first space ("" when none);
/// nothing for a text that does not start with `/` or names nothing.
struct SlashCall {
  std::string name;
  std::string args;
};
std::optional<SlashCall> parse_slash_call(std::string_view text);

class SlashCommands {
 public:
  virtual ~SlashCommands() = default;
  /// Whether every source knows its commands now (an extension still starting does not).
  virtual bool known() const = 0;
  /// Runs `known` once they all do: at once when they do, else later (bounded by the sources'
  /// start-up timeouts).
  virtual void when_known(std::function<void()> known) = 0;
  /// Whether `name` is a command that runs now.
  virtual bool has(std::string_view name) const = 0;
  /// Runs command `name` with `args`: `done` once, later, with ok or the error text of the
  /// command's failure.
  virtual void run(const std::string& name, const std::string& args,
                   std::function<void(Status)> done) = 0;
  /// get_commands' entries, in order (`{"name","description","source","sourceInfo"}`).
  virtual std::vector<protocol::Json> list() const = 0;
};

/// pi's refusal of a steer or follow_up that names a command (extensions.md section 4.6).
std::string queued_command_error(std::string_view name);

}  // namespace rebound::session
