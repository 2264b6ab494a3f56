#pragma once
// The permission policy as a session's tool preflight (policy.md sections 4 and 6): after the
// interceptors and PreToolUse hooks (the inner preflight) each call is judged; a denial ends it
// with section 5's text, a question goes to the client through the dialog host (rpc: pi's
// extension_ui_request `select`) or, with nobody to ask, is refused. One gate per rpc process
// (its mode and grants outlive new_session, fork, …) or per ACP session. Event loop only.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "policy/policy.h"
#include "session/extension_host.h"
#include "session/scheduler.h"
#include "session/tool.h"

namespace rebound::policy {

struct AskSettings {
  bool client = true;               // --permission-prompts client (else none: refused at once)
  std::int64_t timeout_ms = 60000;  // permissions.askTimeoutMs
};

class PolicyGate {
 public:
  PolicyGate(Policy policy, AskSettings ask, session::Scheduler& scheduler)
      : policy_(std::move(policy)), ask_(ask), scheduler_(scheduler) {}

  Policy& policy() { return policy_; }
  const Policy& policy() const { return policy_; }
  const AskSettings& ask() const { return ask_; }
  /// Who answers questions (none: refused as if nobody were asked).
  void set_dialogs(session::DialogHost* dialogs) { dialogs_ = dialogs; }
  /// The text a call gets when an abort closes its open question (acp: `Permission denied by
  /// the user`); empty: the session's `Operation aborted` (rpc), section 5.
  void set_abort_text(std::string text) { abort_text_ = std::move(text); }
  /// With the sandbox on but unavailable: every bash call ends with this text, before any hook
  /// or rule (section 4 step 2, 8.10).
  void set_sandbox_refusal(std::function<std::optional<std::string>()> refusal) {
    sandbox_refusal_ = std::move(refusal);
  }
  /// With the sandbox enabled: a file tool call's refusal for a path outside the roots, checked
  /// before anyone is asked and again after a hook's updatedInput (section 4 step 2, 8.9).
  using RootCheck =
      std::function<std::optional<std::string>(std::string_view tool, const protocol::Json& input)>;
  void set_root_check(RootCheck check) { root_check_ = std::move(check); }

  /// The preflight for one session: `inner` (the PreToolUse hooks, or none) first; `hooks`
  /// (the PermissionRequest hooks, or none) before a question goes out.
  std::unique_ptr<session::ToolPreflight> preflight(session::ToolPreflight* inner,
                                                    session::PermissionHooks* hooks = nullptr);

 private:
  class Preflight;
  Policy policy_;
  AskSettings ask_;
  session::Scheduler& scheduler_;
  session::DialogHost* dialogs_ = nullptr;
  std::string abort_text_;
  std::function<std::optional<std::string>()> sandbox_refusal_;
  RootCheck root_check_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

/// The question's title: `Allow <tool>: <summary>?` (section 6.1).
std::string question_title(std::string_view tool, const protocol::Json& input);

}  // namespace rebound::policy
