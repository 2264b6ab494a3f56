#pragma once
// One-shot mode (oneshot.md): the third front end on the process's session. stdin is the
// prompt's data, not commands; the prompt runs once, retries and compaction included, and the
// result is written exactly once, also at the deadline, on a signal or after a limit, in the
// `text`, `json` or `stream-json` format (stream-json: the session header, the rpc events, the
// heartbeats, then the result). The process's exit status says how it ended. Event loop only.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "server/events/event_output.h"
#include "server/io/front_end.h"
#include "server/io/stdio_transport.h"
#include "server/oneshot/json_schema.h"
#include "server/oneshot/oneshot_result.h"
#include "session/run_hooks.h"
#include "session/scheduler.h"
#include "session/session_host.h"
#include "session/session_services.h"
#include "session/tool.h"
#include "session/wait_board.h"

namespace rebound::server {

struct OneShotSettings {
  std::string format = "text";  // text, json, stream-json
  std::optional<std::string> prompt;
  std::optional<std::int64_t> timeout_ms;
  std::string timeout_text;
  std::optional<std::int64_t> max_turns;
  std::optional<double> max_budget_usd;
  std::string max_budget_text;
  std::optional<oneshot::JsonSchema> schema;  // --json-schema (section 11)
  std::int64_t schema_retries = 2;
  std::int64_t heartbeat_ms = 10000;
  std::size_t max_input_bytes = 64u * 1024 * 1024;
};

/// The name, description and prompt paragraph of section 11.1.
inline constexpr const char* kStructuredToolName = "structured_output";
/// The result of a `structured_output` call after one was accepted.
inline constexpr const char* kStructuredAlreadyGiven =
    "Not run: the structured output was already given.";
inline constexpr const char* kStructuredToolDescription =
    "Give the final answer of this task as structured data. Call it once, when the task is done, "
    "with arguments that match the schema. A plain-text answer is not read.";
inline constexpr const char* kStructuredPromptTail =
    "\n\nWhen the task is done, call the structured_output tool once with the final answer as its "
    "arguments. A plain-text answer is not accepted.";

/// What a one-shot run puts around its session (oneshot.md sections 10 and 11): a preflight in
/// front of every other (the structured output's calls, and once a limit is reached or the run
/// gives up on a structured output, the calls of the message are not run and the run ends after
/// them), what a run about to end does (a re-ask), and the `structured_output` tool.
class OneShotLimits {
 public:
  explicit OneShotLimits(session::Scheduler& s) : scheduler(&s) {}
  /// Set by the front end: the verdict of a call it decides itself (none: the preflights behind
  /// decide).
  std::function<std::optional<session::PreflightVerdict>(const session::PreflightCall&)> own;
  /// Set by the front end: what a run about to end normally does.
  struct AtEnd {
    enum class Kind { pass, end, reask } kind = Kind::pass;
    std::string message;  // reask: the user message
  };
  std::function<AtEnd()> at_end;
  /// Every call the preflights behind refused (the policy, the sandbox, a hook, an extension):
  /// its id, name, input and the text the model gets (oneshot.md section 15).
  std::function<void(const std::string&, const std::string&, const protocol::Json&,
                     const std::string&)>
      refused;
  session::Scheduler* scheduler;
  std::unique_ptr<session::ToolPreflight> preflight(session::ToolPreflight* inner);
  std::unique_ptr<session::RunHooks> run_hooks(session::RunHooks* inner);
  /// `inner`'s tools, then `structured_output` with `schema` as its parameters.
  std::unique_ptr<session::DynamicTools> tools(session::DynamicTools* inner,
                                               const protocol::Json& schema);
};

struct OneShotDeps {
  StdoutWriter& writer;
  session::Scheduler& scheduler;
  MakeSession make_session;
  /// The session's MCP servers, extension processes and policy (none configured: null).
  std::shared_ptr<session::SessionServices> services;
  std::shared_ptr<OneShotLimits> limits;
  std::shared_ptr<session::WaitBoard> waits;  // hooks, interceptors, MCP servers (may be null)
  OneShotSettings settings;
};

class OneShotFrontEnd : public FrontEnd, public session::EventSink {
 public:
  explicit OneShotFrontEnd(OneShotDeps deps);
  ~OneShotFrontEnd() override;

  void start() override;
  void handle_line(std::string_view) override {}
  void handle_too_long(std::size_t) override {}
  void shutdown() override;
  bool busy() const override;
  void when_idle(std::function<void()> idle) override;
  bool stops_processes() const override;
  bool reads_data() const override { return true; }
  void handle_input(std::string_view data) override;
  void handle_input_end() override;
  void set_finish(std::function<void()> finish) override { finish_ = std::move(finish); }
  void interrupted(int signo) override;
  int exit_code() const override { return exit_code_; }

  void on_event(const session::Event& event) override;
  /// A tool call the policy, the sandbox or a hook refused (oneshot.md section 15).
  void refused(const std::string& tool_call_id, const std::string& tool_name,
               const protocol::Json& input, const std::string& text);

 private:
  void run_prompt();
  /// The first reason to stop wins; the run is aborted and the result follows once it ended.
  void stop(oneshot::Stop why);
  void finish_run();
  /// The result, then the loop's end.
  void end_run();
  void write_result();
  void heartbeat();
  std::int64_t elapsed_ms() const;
  /// The limit (section 10) the run has reached, when one is: its stop and the calls' text.
  std::optional<std::pair<oneshot::Stop, std::string>> limit_reached() const;
  /// The front end's own verdict of a call (section 10, 11.2).
  std::optional<session::PreflightVerdict> own_verdict(const session::PreflightCall& call);
  OneShotLimits::AtEnd at_end();
  /// Section 11.2 on an assistant message that ended.
  void judge_structured(const protocol::AgentMessage& m);
  /// A failure of 11.2 (`problem`: its validation problem); past the re-asks the run gives up.
  void structured_failure(const std::string& problem);
  bool over_budget() const;

  StdoutWriter& writer_;
  session::Scheduler& scheduler_;
  std::shared_ptr<session::SessionServices> services_;
  std::shared_ptr<OneShotLimits> limits_;
  std::shared_ptr<session::WaitBoard> waits_;
  OneShotSettings settings_;
  EventOutput events_;
  MakeSession make_session_;
  session::SessionHost host_;
  session::SessionSlot slot_ = 0;
  std::function<void()> finish_;
  std::unique_ptr<session::Timer> deadline_, beat_, stdin_notice_;
  std::int64_t started_ms_;

  std::string input_;
  bool input_over_ = false;  // stdin passed the limit
  bool input_done_ = false;
  bool prompted_ = false;
  bool run_done_ = false;
  bool result_written_ = false;
  bool started_ = false;  // start() ran: the stream-json header is out
  // A start-up load's tool_outcome_unknown events (before the header): written right after it.
  struct EarlyUnknown {
    std::string id, name;
    std::int64_t started_at = 0;
  };
  std::vector<EarlyUnknown> early_unknown_;
  bool shutting_down_ = false;
  int exit_code_ = 0;
  oneshot::Tally tally_;
  oneshot::Ending ending_;
  // For num_turns (section 6): the last assistant message, counted once the run moves past it.
  bool pending_turn_ = false, pending_failed_ = false;
  // The heartbeat's view (section 9).
  std::int64_t beat_seq_ = 0;
  std::string waiting_ = "stdin";
  std::int64_t waiting_since_ = 0;
  std::vector<std::pair<std::string, std::string>> running_tools_;
  bool streaming_ = false;
  std::int64_t attempt_ = 0;
  std::string compaction_reason_;
  protocol::Json backoff_ = protocol::Json::object();
  // Section 11.2: the verdicts of the last message's structured_output calls, by call id;
  // failures so far; whether an output was accepted (a give-up is ending_.structured_error).
  std::map<std::string, session::PreflightVerdict> structured_verdicts_;
  std::int64_t structured_failures_ = 0;
  bool structured_given_ = false;
  std::optional<oneshot::Stop> limit_stop_;  // a limit stopped the run
  IdleWaiter idle_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace rebound::server
