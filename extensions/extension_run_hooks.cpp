// ExtensionSet's run hooks: every question of the session's RunHooks goes to the hooks' (when
// there are hooks), and a session change is told to the extensions (extensions.md sections 4.8
// and 8): `session_shutdown` before it, with the old session's id, `session_start` after it,
// with `previousSessionFile`.
#include <utility>

#include "extensions/extension_set.h"

namespace rebound::extensions {

using protocol::Json;

namespace {

// The reason of 4.8 for a SessionStart source or SessionEnd reason; empty: not told here
// (start-up has the handshake's session_start, shutdown stop_all's session_shutdown).
std::string change_reason(std::string_view source) {
  if (source == "clear") return "new";
  if (source == "resume") return "resume";
  if (source == "fork") return "fork";  // fork and clone (sessions.md section 4)
  return "";
}

class RunHooksOver : public session::ForwardingRunHooks {
 public:
  RunHooksOver(ExtensionSet& set, session::RunHooks* inner, std::function<Json()> session)
      : ForwardingRunHooks(inner), set_(set), session_(std::move(session)) {}

  std::unique_ptr<session::Waiting> session_start(
      std::string_view source, const std::string& model_id,
      std::function<void(std::vector<std::string>)> done) override {
    if (const std::string reason = change_reason(source); !reason.empty()) {
      Json params = Json::object();
      params["reason"] = reason;
      const Json now = session_();
      for (const auto& [key, value] : now.items())
        params[key] = value;
      if (!previous_file_.empty()) params["previousSessionFile"] = previous_file_;
      set_.notify_all("session_start", params);
    }
    return ForwardingRunHooks::session_start(source, model_id, std::move(done));
  }
  void session_end(std::string_view reason) override {
    if (const std::string r = change_reason(reason); !r.empty()) {
      const Json now = session_();
      previous_file_ = now.value("sessionFile", Json("")).get<std::string>();
      Json params = Json::object();
      params["reason"] = r;
      params["sessionId"] = now.value("sessionId", Json(""));
      set_.notify_all("session_shutdown", params);
    }
    ForwardingRunHooks::session_end(reason);
  }

 private:
  ExtensionSet& set_;
  std::function<Json()> session_;
  std::string previous_file_;
};

}  // namespace

std::unique_ptr<session::RunHooks> ExtensionSet::run_hooks(session::RunHooks* inner,
                                                           std::function<Json()> session) {
  return std::make_unique<RunHooksOver>(*this, inner, std::move(session));
}

}  // namespace rebound::extensions
