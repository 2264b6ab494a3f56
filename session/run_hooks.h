#pragma once
// What a session asks its hooks about a run as a whole (extensions.md sections 5.1, 5.3):
// whether a submitted message is taken (`UserPromptSubmit`), whether a run about to end
// normally goes on (`Stop`), what a starting session's system prompt adds (`SessionStart`), and
// the observers of a session's end and of a run it gave up on (`SessionEnd`, `StopFailure`).
// Optional: without it a run ends as runtime.md section 1 says.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "session/tool.h"

namespace rebound::session {

/// A run about to end normally: its last assistant message's text, and how often Stop hooks
/// continued it already.
struct StopCall {
  StopCall(std::int64_t continuations_, const std::string& last_assistant_message_)
      : continuations(continuations_), last_assistant_message(last_assistant_message_) {}
  std::int64_t continuations;
  const std::string& last_assistant_message;
};

/// `continue_run`: the same run goes on, with `context` (custom messages) before its next turn;
/// `user_message`: it goes on with that user message (one-shot's re-ask for a structured output).
struct StopVerdict {
  bool continue_run = false;
  std::vector<ContextNote> context;
  std::optional<std::string> user_message;
};

/// A submitted message's UserPromptSubmit verdict: refused with a text, or accepted with hook
/// texts that follow the user message.
struct PromptVerdict {
  std::optional<std::string> refused;
  std::vector<ContextNote> context;
};

/// A compaction's PreCompact verdict: refused with a text, or instructions to add.
struct PreCompactVerdict {
  std::optional<std::string> refused;
  std::vector<std::string> instructions;
};

class RunHooks {
 public:
  virtual ~RunHooks() = default;
  /// The hooks of a submitted message, on its text as submitted (`prompt_id` its id): as
  /// stop().
  virtual std::unique_ptr<Waiting> prompt_submitted(const std::string& text,
                                                    const std::string& prompt_id,
                                                    std::function<void(PromptVerdict)> done) {
    (void)text;
    (void)prompt_id;
    (void)done;
    return nullptr;
  }
  /// nullptr when there is nothing to wait for (`done` is never called: the run ends);
  /// otherwise `done` runs once, later on the loop, unless the handle is destroyed first (an
  /// abort).
  /// A session starts (`source`: startup, resume, clear; `model_id` empty without a model):
  /// texts for its system prompt, which its first LLM request waits for. As stop().
  virtual std::unique_ptr<Waiting> session_start(
      std::string_view source, const std::string& model_id,
      std::function<void(std::vector<std::string>)> done) {
    (void)source;
    (void)model_id;
    (void)done;
    return nullptr;
  }
  /// A compaction is about to summarise (`manual` for compact, else `auto`): as stop().
  virtual std::unique_ptr<Waiting> pre_compact(std::string_view trigger,
                                               const std::optional<std::string>& custom,
                                               std::function<void(PreCompactVerdict)> done) {
    (void)trigger;
    (void)custom;
    (void)done;
    return nullptr;
  }
  /// The session became idle after a run or a compaction (no run, backoff, compaction or
  /// queued message), and stopped being idle: the Notification hooks' idle_prompt timer.
  virtual void idle_began() {}
  virtual void idle_ended() {}
  /// A session ends (`reason`: clear, resume, other); nothing waits.
  virtual void session_end(std::string_view reason) { (void)reason; }
  /// Runs `ended` once the hooks session_end() started have ended (at once without any).
  virtual void when_ended(std::function<void()> ended) { ended(); }
  /// Kills what session_end() started (a one-shot run's deadline came first); no `ended` runs.
  virtual void cut_ended() {}
  /// The session gave up on a run that ended in error: its error class and final message;
  /// nothing waits (StopFailure).
  virtual void run_failed(std::string_view error, const std::string& last_message) {
    (void)error;
    (void)last_message;
  }
  virtual std::unique_ptr<Waiting> stop(const StopCall& call,
                                        std::function<void(StopVerdict)> done) = 0;
};

/// Passes every question to `inner` (none: the answers of a session without hooks); a wrapper
/// overrides what it changes.
class ForwardingRunHooks : public RunHooks {
 public:
  explicit ForwardingRunHooks(RunHooks* inner) : inner_(inner) {}
  std::unique_ptr<Waiting> prompt_submitted(const std::string& text, const std::string& prompt_id,
                                            std::function<void(PromptVerdict)> done) override {
    return inner_ ? inner_->prompt_submitted(text, prompt_id, std::move(done)) : nullptr;
  }
  std::unique_ptr<Waiting> session_start(
      std::string_view source, const std::string& model_id,
      std::function<void(std::vector<std::string>)> done) override {
    return inner_ ? inner_->session_start(source, model_id, std::move(done)) : nullptr;
  }
  std::unique_ptr<Waiting> pre_compact(std::string_view trigger,
                                       const std::optional<std::string>& custom,
                                       std::function<void(PreCompactVerdict)> done) override {
    return inner_ ? inner_->pre_compact(trigger, custom, std::move(done)) : nullptr;
  }
  void idle_began() override {
    if (inner_) inner_->idle_began();
  }
  void idle_ended() override {
    if (inner_) inner_->idle_ended();
  }
  void session_end(std::string_view reason) override {
    if (inner_) inner_->session_end(reason);
  }
  void when_ended(std::function<void()> ended) override {
    if (!inner_) return ended();
    inner_->when_ended(std::move(ended));
  }
  void cut_ended() override {
    if (inner_) inner_->cut_ended();
  }
  void run_failed(std::string_view error, const std::string& last_message) override {
    if (inner_) inner_->run_failed(error, last_message);
  }
  std::unique_ptr<Waiting> stop(const StopCall& call,
                                std::function<void(StopVerdict)> done) override {
    return inner_ ? inner_->stop(call, std::move(done)) : nullptr;
  }

 protected:
  RunHooks* inner() const { return inner_; }

 private:
  RunHooks* inner_;
};

}  // namespace rebound::session
