#pragma once
// What the extension runner needs from whoever drives the session, and what the commands need
// from the runner (extensions.md sections 4.7, 6 and 7.1), as interfaces: the front end shows
// dialogs (rpc: extension_ui_request lines answered by extension_ui_response), the runner lists
// and restarts its extensions. Event loop only.

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "protocol/json.h"
#include "session/error.h"
#include "session/tool.h"

namespace rebound::session {

/// One dialog of an extension (section 4.7): `method` is `select`, `confirm`, `input` or
/// `editor`; `fields` the request's params in 4.7's order, `timeout` (ms) the effective one.
struct DialogRequest {
  std::string extension;
  std::string method;
  protocol::Json fields;
  std::int64_t timeout_ms = 0;
  /// The call whose `tool_call` request of that extension is open, if any (ACP asks about it).
  std::string tool_call_id;
};

/// The client's answer; `cancelled` (or nothing else set) means the dialog's default.
struct DialogAnswer {
  std::optional<std::string> value;
  std::optional<bool> confirmed;
  bool cancelled = false;
  bool timed_out = false;  // (with cancelled) nobody answered within the timeout
  bool closed = false;     // (with cancelled) an abort or shutdown closed it
};

class DialogHost {
 public:
  virtual ~DialogHost() = default;
  /// Shows the dialog; `done` runs once, later (at its timeout, an abort or shutdown with a
  /// cancel), unless the handle is destroyed first.
  virtual std::unique_ptr<Waiting> ask(const DialogRequest& request,
                                       std::function<void(DialogAnswer)> done) = 0;
};

/// The extension processes as a front end drives them: started and stopped with the
/// connection (section 4.1, 4.9), get_extensions and restart_extension (section 7.1).
class ExtensionControl {
 public:
  virtual ~ExtensionControl() = default;
  virtual void start_all() = 0;
  /// Stops every one (`session_shutdown` with `reason`); `gone` once no process is left.
  virtual void stop_all(const std::string& reason, std::function<void()> gone) = 0;
  virtual bool any_running() const = 0;
  /// `{"extensions":[…],"hooks":[…]}`; with `wait`, once no extension is starting.
  virtual void list(bool wait, std::function<void(protocol::Json)> done) = 0;
  /// The ExtensionInfo once ready or failed again; errors as section 7.1 words them.
  virtual void restart(const std::string& name,
                       std::function<void(Result<protocol::Json>)> done) = 0;
};

}  // namespace rebound::session
