#include "policy/policy_gate.h"

#include "policy/policy_texts.h"

namespace rebound::policy {

using protocol::Json;

namespace {

constexpr std::size_t kTitleChars = 200;

bool is_file_tool(std::string_view t) {
  return t == "read" || t == "grep" || t == "find" || t == "ls" || t == "edit" || t == "write";
}

// At most `n` code points, `…` when cut.
std::string cut(const std::string& s, std::size_t n) {
  std::size_t count = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) continue;
    if (count++ == n) return s.substr(0, i) + "\xE2\x80\xA6";
  }
  return s;
}

session::ToolResult refusal(std::string text) {
  session::ToolResult r = session::ToolResult::error(std::move(text));
  r.details = Json::object();
  return r;
}

}  // namespace

std::string question_title(std::string_view tool, const Json& input) {
  std::string summary;
  if (tool == "bash" && input.contains("command") && input["command"].is_string()) {
    summary = input["command"].get<std::string>();
    summary = summary.substr(0, summary.find('\n'));
  } else if (is_file_tool(tool) && input.contains("path") && input["path"].is_string()) {
    summary = input["path"].get<std::string>();
  } else {
    summary = input.dump(-1, ' ', false, Json::error_handler_t::replace);
  }
  return "Allow " + std::string(tool) + ": " + cut(summary, kTitleChars) + "?";
}

class PolicyGate::Preflight : public session::ToolPreflight {
 public:
  Preflight(PolicyGate& gate, session::ToolPreflight* inner, session::PermissionHooks* hooks)
      : gate_(gate), inner_(inner), hooks_(hooks) {}

  std::unique_ptr<session::Waiting> check(
      const session::PreflightCall& call,
      std::function<void(session::PreflightVerdict)> done) override {
    auto st = std::make_shared<State>();
    st->id = call.id;
    st->name = call.name;
    st->input = call.input;
    st->mcp_server = call.mcp_server;
    st->extension = call.extension;
    st->read_only_hint = call.read_only_hint;
    st->repeats_unknown = call.repeats_unknown;
    st->validate = call.validate;
    st->done = std::move(done);
    std::optional<std::string> sandbox_text;
    if (call.name == "bash" && gate_.sandbox_refusal_) sandbox_text = gate_.sandbox_refusal_();
    if (!sandbox_text && gate_.root_check_) sandbox_text = gate_.root_check_(call.name, call.input);
    if (sandbox_text) {
      auto handle = std::make_unique<Handle>(st, gate_);
      std::weak_ptr<State> weak = st;
      gate_.scheduler_.post([this, weak, text = std::move(*sandbox_text)] {
        if (auto s = weak.lock()) refuse(s, session::PreflightVerdict{}, text);
      });
      return handle;
    }
    if (inner_) {
      std::weak_ptr<State> weak = st;
      st->waiting = inner_->check(call, [this, weak](session::PreflightVerdict v) {
        if (auto s = weak.lock()) judged_by_hooks(s, std::move(v));
      });
      if (st->waiting) return std::make_unique<Handle>(st, gate_);
    }
    // Nothing to wait for so far: an allowed call goes on without a verdict.
    const Verdict v = judge(*st, session::PreflightVerdict{});
    if (v.kind == Verdict::Kind::allow) return nullptr;
    auto handle = std::make_unique<Handle>(st, gate_);
    std::weak_ptr<State> weak = st;
    gate_.scheduler_.post([this, weak, v] {
      if (auto s = weak.lock()) act(s, session::PreflightVerdict{}, v);
    });
    return handle;
  }

  std::unique_ptr<session::Waiting> after_call(
      const session::FinishedCall& call,
      std::function<void(session::AfterCallVerdict)> done) override {
    return inner_ ? inner_->after_call(call, std::move(done)) : nullptr;
  }

 private:
  struct State {
    std::string id, name, mcp_server, extension;
    Json input;
    bool read_only_hint = false, repeats_unknown = false;
    std::function<std::optional<std::string>(const Json&)> validate;
    std::function<void(session::PreflightVerdict)> done;
    std::unique_ptr<session::Waiting> waiting;
    bool asking = false;  // the question is open
  };
  // Owned by the session: destroying it (an abort) drops the hooks or the open question.
  struct Handle : session::Waiting {
    Handle(std::shared_ptr<State> s, const PolicyGate& g) : st(std::move(s)), gate(g) {}
    ~Handle() override {
      st->done = nullptr;
      st->waiting.reset();
    }
    std::optional<std::string> abort_text() const override {
      if (!st->asking || gate.abort_text_.empty()) return std::nullopt;
      return gate.abort_text_;
    }
    std::shared_ptr<State> st;
    const PolicyGate& gate;
  };

  Verdict judge(const State& st, const session::PreflightVerdict& hooks) const {
    Call call(st.name, st.input, st.mcp_server);
    call.read_only_hint = st.read_only_hint;
    call.repeats_unknown = st.repeats_unknown;
    call.extension = !st.extension.empty();
    if (hooks.hook_permission == session::HookPermission::allow) call.hook = Behavior::allow;
    if (hooks.hook_permission == session::HookPermission::ask) call.hook = Behavior::ask;
    call.hook_reason = hooks.hook_reason;
    return gate_.policy_.judge(call);
  }

  void judged_by_hooks(const std::shared_ptr<State>& st, session::PreflightVerdict v) {
    st->waiting.reset();
    if (v.refused) return finish(st, std::move(v));
    if (v.input) {
      // A replaced input is validated before it is judged (extensions.md section 5.2).
      if (st->validate)
        if (auto problem = st->validate(*v.input)) {
          v.refused = session::ToolResult::error(std::move(*problem));
          return finish(st, std::move(v));
        }
      st->input = *v.input;
      if (gate_.root_check_)
        if (auto text = gate_.root_check_(st->name, st->input))
          return refuse(st, std::move(v), std::move(*text));
    }
    const Verdict verdict = judge(*st, v);
    act(st, std::move(v), verdict);
  }

  void act(const std::shared_ptr<State>& st, session::PreflightVerdict v, const Verdict& verdict) {
    switch (verdict.kind) {
      case Verdict::Kind::allow:
        return finish(st, std::move(v));
      case Verdict::Kind::deny:
        return refuse(st, std::move(v), verdict.text);
      case Verdict::Kind::ask:
        return ask(st, std::move(v), verdict);
    }
  }

  // The PermissionRequest hooks first (extensions.md section 3.7): their allow runs the call,
  // their deny refuses it; without an answer the question goes on.
  void ask(const std::shared_ptr<State>& st, session::PreflightVerdict v, const Verdict& verdict) {
    if (hooks_) {
      session::PreflightCall call(st->id, st->name, st->input, st->mcp_server);
      call.extension = st->extension;
      call.read_only_hint = st->read_only_hint;
      auto held = std::make_shared<session::PreflightVerdict>(std::move(v));
      std::weak_ptr<State> weak = st;
      st->waiting = hooks_->permission_request(
          call, [this, weak, held, verdict](session::PermissionHookVerdict h) {
            auto s = weak.lock();
            if (!s || !s->done) return;
            s->waiting.reset();
            if (h.stop_run) held->stop_run = h.stop_run;
            switch (h.kind) {
              case session::PermissionHookVerdict::Kind::deny:
                return refuse(s, std::move(*held), std::move(h.text));
              case session::PermissionHookVerdict::Kind::allow:
                // A replaced input is validated and root-checked; rules are not judged again.
                if (h.input) {
                  if (s->validate)
                    if (auto problem = s->validate(*h.input)) {
                      held->refused = session::ToolResult::error(std::move(*problem));
                      return finish(s, std::move(*held));
                    }
                  if (gate_.root_check_)
                    if (auto text = gate_.root_check_(s->name, *h.input))
                      return refuse(s, std::move(*held), std::move(*text));
                  held->input = std::move(h.input);
                }
                return finish(s, std::move(*held));
              case session::PermissionHookVerdict::Kind::none:
                return question(s, std::move(*held), verdict);
            }
          });
      if (st->waiting) return;
      v = std::move(*held);
    }
    question(st, std::move(v), verdict);
  }

  void question(const std::shared_ptr<State>& st, session::PreflightVerdict v,
                const Verdict& verdict) {
    if (!gate_.ask_.client || !gate_.dialogs_) return refuse(st, std::move(v), verdict.text);
    session::DialogRequest request;
    request.method = "select";
    request.tool_call_id = st->id;
    request.timeout_ms = gate_.ask_.timeout_ms;
    Json options = Json::array({"Allow"});
    if (verdict.offer_always) options.push_back("Always allow");
    options.push_back("Deny");
    request.fields = Json::object();
    request.fields["title"] = question_title(st->name, st->input);
    request.fields["options"] = std::move(options);
    request.fields["timeout"] = gate_.ask_.timeout_ms;
    Json permission = Json::object();
    permission["toolCallId"] = st->id;
    permission["toolName"] = st->name;
    permission["args"] = st->input;
    permission["reason"] = verdict.reason;
    request.fields["permission"] = std::move(permission);
    std::weak_ptr<State> weak = st;
    auto held = std::make_shared<session::PreflightVerdict>(std::move(v));
    const bool always = verdict.offer_always;
    const std::int64_t timeout = gate_.ask_.timeout_ms;
    std::weak_ptr<bool> alive = gate_.alive_;
    st->asking = true;
    const std::string tool = st->name;
    st->waiting = gate_.dialogs_->ask(
        request, [this, weak, held, always, timeout, alive](session::DialogAnswer a) {
          auto s = weak.lock();
          // An abort or shutdown closed it: the session ends the call as aborted.
          if (!s || alive.expired() || a.closed) return;
          s->asking = false;
          s->waiting.reset();
          if (a.timed_out) return refuse(s, std::move(*held), no_answer_text(timeout));
          const bool yes = (!a.cancelled && a.value == "Allow") ||
                           (!a.cancelled && !a.value && a.confirmed == true);
          const bool forever = always && !a.cancelled && a.value == "Always allow";
          if (forever) gate_.policy_.grant(s->name);
          if (yes || forever) return finish(s, std::move(*held));
          refuse(s, std::move(*held), user_denied_text());
        });
    if (hooks_) hooks_->question_put(tool);
  }

  void refuse(const std::shared_ptr<State>& st, session::PreflightVerdict v, std::string text) {
    v.refused = refusal(std::move(text));
    v.input.reset();
    finish(st, std::move(v));
  }

  static void finish(const std::shared_ptr<State>& st, session::PreflightVerdict v) {
    auto done = std::move(st->done);
    st->done = nullptr;
    if (done) done(std::move(v));
  }

  PolicyGate& gate_;
  session::ToolPreflight* inner_;
  session::PermissionHooks* hooks_;
};

std::unique_ptr<session::ToolPreflight> PolicyGate::preflight(session::ToolPreflight* inner,
                                                              session::PermissionHooks* hooks) {
  return std::make_unique<Preflight>(*this, inner, hooks);
}

}  // namespace rebound::policy
