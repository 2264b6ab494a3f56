#include "server/oneshot/oneshot_front_end.h"

#include <signal.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdio>
#include <filesystem>

#include "protocol/json_line.h"
#include "session/retry_policy.h"
#include "session/session_file.h"

namespace rebound::server {

using protocol::Json;
namespace ev = session::ev;

namespace {

session::PreflightVerdict result_of(std::string text, bool error) {
  session::PreflightVerdict v;
  v.refused = session::ToolResult::error(std::move(text));
  v.refused->is_error = error;
  return v;
}

std::int64_t steady_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

bool blank(const std::string& s) {
  return s.find_first_not_of(" \t\r\n") == std::string::npos;
}

}  // namespace

OneShotFrontEnd::OneShotFrontEnd(OneShotDeps deps)
    : writer_(deps.writer),
      scheduler_(deps.scheduler),
      services_(std::move(deps.services)),
      limits_(std::move(deps.limits)),
      waits_(std::move(deps.waits)),
      settings_(std::move(deps.settings)),
      events_(deps.writer, EnvelopeMode::pi),
      make_session_(std::move(deps.make_session)),
      started_ms_(steady_ms()) {
  slot_ = host_.add([this](session::SessionSlot slot) { return make_session_(slot, *this); });
  session::AgentSession* s = host_.find(slot_);
  // The retry events carry their typed fields from the start (oneshot.md section 12).
  s->enable_retry_control();
  const auto state = s->state();
  if (state.model) tally_.model = state.model->provider + "/" + state.model->id;
  ending_.max_turns = settings_.max_turns.value_or(0);
  ending_.max_budget_text = settings_.max_budget_text;
  ending_.timeout_text = settings_.timeout_text;
  ending_.context_window = state.model ? state.model->context_window : 0;
  limits_->own = [this](const session::PreflightCall& call) { return own_verdict(call); };
  limits_->at_end = [this] { return at_end(); };
  limits_->refused = [this](const std::string& id, const std::string& name, const Json& input,
                            const std::string& text) { refused(id, name, input, text); };
}

OneShotFrontEnd::~OneShotFrontEnd() {
  *alive_ = false;
  limits_->own = nullptr;
  limits_->at_end = nullptr;
  limits_->refused = nullptr;
}

std::int64_t OneShotFrontEnd::elapsed_ms() const {
  return steady_ms() - started_ms_;
}

void OneShotFrontEnd::start() {
  // Phase 2 (section 4): the header first, then the deadline and the heartbeat run.
  started_ = true;
  if (settings_.format == "stream-json") {
    const session::AgentSession* s = host_.find(slot_);
    writer_.write_line(protocol::to_line(session::to_json(s->recorder().header())));
    for (const auto& u : early_unknown_)
      events_.on_event(session::Event{slot_, ev::ToolOutcomeUnknown{u.id, u.name, u.started_at}});
  }
  early_unknown_.clear();
  if (services_) services_->start();
  std::weak_ptr<bool> alive = alive_;
  if (settings_.timeout_ms) {
    deadline_ = scheduler_.make_timer();
    const std::int64_t left = std::max<std::int64_t>(0, *settings_.timeout_ms - elapsed_ms());
    // Retry decisions look ahead at it (section 12).
    host_.find(slot_)->set_run_deadline(scheduler_.now_epoch_ms() + left);
    deadline_->start(std::chrono::milliseconds(left), [this, alive] {
      if (!alive.expired()) stop(oneshot::Stop::timeout);
    });
  }
  // About 3 s into reading stdin without a byte, one line says what the run waits for (section
  // 8); none once a byte or the end came.
  stdin_notice_ = scheduler_.make_timer();
  stdin_notice_->start(std::chrono::milliseconds(3000), [this, alive] {
    if (alive.expired() || input_done_ || !input_.empty()) return;
    std::fputs("rebound: waiting for stdin (close it, or give </dev/null when there is no input)\n",
               stderr);
  });
  if (settings_.format == "stream-json" && settings_.heartbeat_ms > 0) {
    beat_ = scheduler_.make_timer();
    beat_->start(std::chrono::milliseconds(settings_.heartbeat_ms), [this, alive] {
      if (!alive.expired()) heartbeat();
    });
  }
}

void OneShotFrontEnd::handle_input(std::string_view data) {
  if (input_done_ || input_over_) return;
  if (input_.size() + data.size() > settings_.max_input_bytes) {
    input_over_ = true;
    ending_.invalid_input =
        "Prompt on stdin exceeds " + std::to_string(settings_.max_input_bytes) + " bytes";
    input_done_ = true;
    return finish_run();
  }
  input_.append(data);
}

void OneShotFrontEnd::handle_input_end() {
  if (input_done_) return;
  input_done_ = true;
  if (ending_.stop != oneshot::Stop::none) return finish_run();
  run_prompt();
}

void OneShotFrontEnd::run_prompt() {
  // Section 3: PROMPT, a line feed, then stdin as read; either alone; neither is exit 2.
  std::string text;
  const bool has_stdin = !blank(input_);
  if (settings_.prompt && has_stdin) {
    text = *settings_.prompt + "\n" + input_;
  } else if (settings_.prompt) {
    text = *settings_.prompt;
  } else if (has_stdin) {
    text = input_;
  } else {
    ending_.invalid_input = "No prompt: give PROMPT or pipe text on stdin";
    return finish_run();
  }
  input_.clear();
  waiting_ = "model";
  waiting_since_ = elapsed_ms();
  session::UserInput input;
  input.text = std::move(text);
  prompted_ = true;
  std::weak_ptr<bool> alive = alive_;
  session::AgentSession* s = host_.find(slot_);
  s->submit(
      std::move(input), session::SubmitKind::prompt, std::nullopt,
      [this, alive](session::Status status) {
        if (alive.expired() || status) return;
        // Refused before any request: a UserPromptSubmit hook's refusal ends the run (section
        // 15); anything else is the run failing.
        const std::string& why = status.error().message;
        if (ending_.stop == oneshot::Stop::none) {
          if (why.rfind("Operation aborted", 0) != 0) ending_.hook_stop = why;
        }
        finish_run();
      },
      [this, alive] {
        if (!alive.expired()) finish_run();
      });
}

std::optional<std::pair<oneshot::Stop, std::string>> OneShotFrontEnd::limit_reached() const {
  const std::int64_t turns = tally_.num_turns + (pending_turn_ && !pending_failed_ ? 1 : 0);
  if (settings_.max_turns && turns >= *settings_.max_turns)
    return std::pair{oneshot::Stop::max_turns, "Not run: the run reached --max-turns " +
                                                   std::to_string(*settings_.max_turns) + "."};
  if (over_budget())
    return std::pair{oneshot::Stop::max_budget, "Not run: the run reached --max-budget-usd " +
                                                    settings_.max_budget_text + "."};
  return std::nullopt;
}

std::optional<session::PreflightVerdict> OneShotFrontEnd::own_verdict(
    const session::PreflightCall& call) {
  const bool gave_up = ending_.structured_error.has_value();
  std::optional<session::PreflightVerdict> v;
  if (const auto it = structured_verdicts_.find(call.id); it != structured_verdicts_.end()) {
    v = it->second;
  } else if (structured_given_) {
    v = result_of(kStructuredAlreadyGiven, true);
  } else if (gave_up) {
    v = result_of("Not run: no valid structured output after " +
                      std::to_string(settings_.schema_retries) + " re-asks.",
                  true);
  } else if (auto limit = limit_reached()) {
    // Section 10: the calls are not run, the run stops after them.
    limit_stop_ = limit->first;
    v = result_of(std::move(limit->second), true);
  }
  if (v && (structured_given_ || gave_up || limit_stop_)) v->stop_run = "the run ends";
  return v;
}

OneShotLimits::AtEnd OneShotFrontEnd::at_end() {
  using Kind = OneShotLimits::AtEnd::Kind;
  if (!settings_.schema || structured_given_) return {};
  // A message without a tool call: a failure (judged at its end), then a re-ask unless the
  // run gave up or a limit stops it (section 11.2, checked after the failure rule).
  if (ending_.structured_error) return {Kind::end, {}};
  if (auto limit = limit_reached()) {
    limit_stop_ = limit->first;
    return {Kind::end, {}};
  }
  return {Kind::reask,
          "Give the final answer by calling the structured_output tool with arguments that match "
          "its schema. Plain text is not accepted."};
}

bool OneShotFrontEnd::over_budget() const {
  if (!settings_.max_budget_usd) return false;
  const session::AgentSession* s = host_.find(slot_);
  const double summaries = s ? s->request_spend().summaries.cost_total : 0;
  return tally_.cost + summaries >= *settings_.max_budget_usd;
}

void OneShotFrontEnd::structured_failure(const std::string& problem) {
  if (++structured_failures_ <= settings_.schema_retries) return;
  ending_.structured_error = "No valid structured output after " +
                             std::to_string(settings_.schema_retries) + " re-asks: " + problem;
}

void OneShotFrontEnd::judge_structured(const protocol::AgentMessage& m) {
  structured_verdicts_.clear();
  if (m.failed()) return;
  bool any_call = false, any_structured = false;
  std::string last_invalid;
  for (const auto& b : m.content) {
    if (b.kind != protocol::ContentBlock::Kind::tool_call) continue;
    any_call = true;
    if (b.name != kStructuredToolName) continue;
    any_structured = true;
    if (structured_given_) continue;  // own_verdict(): already given
    const auto problems = settings_.schema->validate(b.arguments);
    if (problems.empty()) {
      structured_given_ = true;
      tally_.structured = b.arguments;
      structured_verdicts_[b.id] = result_of("Structured output accepted.", false);
    } else {
      structured_verdicts_[b.id] = result_of(oneshot::problems_text(problems), true);
      last_invalid = problems.front().pointer + ": " + problems.front().text;
    }
  }
  if (structured_given_) return;
  if (any_structured) {
    structured_failure(last_invalid);
  } else if (!any_call) {
    structured_failure("the model answered without calling structured_output");
  }
}

void OneShotFrontEnd::on_event(const session::Event& event) {
  if (result_written_) return;
  const std::int64_t now = elapsed_ms();
  bool budget_stop = false;
  auto wait = [this, now](const char* what) {
    if (waiting_ != what) waiting_since_ = now;
    waiting_ = what;
  };
  std::visit(
      [&](const auto& e) {
        using E = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<E, ev::MessageStart>) {
          if (e.message.is_assistant()) streaming_ = true;
        } else if constexpr (std::is_same_v<E, ev::MessageEnd>) {
          if (e.message.is_assistant()) {
            const auto& m = e.message;
            if (settings_.schema && !structured_given_) judge_structured(m);
            tally_.cost += m.usage.cost_total;
            tally_.input += m.usage.input;
            tally_.output += m.usage.output;
            tally_.cache_read += m.usage.cache_read;
            tally_.cache_write += m.usage.cache_write;
            tally_.model = m.provider + "/" + m.model;
            tally_.last = m;
            if (pending_turn_) ++tally_.num_turns;  // an earlier one the run moved past
            pending_turn_ = true;
            pending_failed_ = m.stop_reason == protocol::StopReason::error;
            streaming_ = false;
          }
        } else if constexpr (std::is_same_v<E, ev::TurnEnd>) {
          if (pending_turn_ && !pending_failed_) {
            ++tally_.num_turns;
            pending_turn_ = false;
          }
        } else if constexpr (std::is_same_v<E, ev::AgentEnd>) {
          // A failed attempt that is retried is not a turn (section 6).
          if (pending_turn_ && e.will_retry) pending_turn_ = false;
          // The budget also after every failed attempt the run would go on from (section 10).
          if (e.will_retry && over_budget()) budget_stop = true;
        } else if constexpr (std::is_same_v<E, ev::AutoRetryStart>) {
          tally_.retry_active = true;
          Json r = Json::object();
          r["attempt"] = e.attempt;
          r["delayMs"] = e.delay_ms;
          r["errorMessage"] = e.error_message;
          if (e.details) {
            r["errorClass"] = e.details->error_class;
            if (e.details->http_status) r["httpStatus"] = *e.details->http_status;
            r["delaySource"] = e.details->delay_source;
            tally_.chain_error_class = std::string(e.details->error_class);
          }
          tally_.retries.push_back(std::move(r));
          attempt_ = e.attempt;
          backoff_ = Json{{"attempt", e.attempt},
                          {"maxAttempts", e.max_attempts},
                          {"errorClass", tally_.chain_error_class.value_or("unknown")},
                          {"nextAttemptAt", now + e.delay_ms}};
          wait("backoff");
        } else if constexpr (std::is_same_v<E, ev::AutoRetryEnd>) {
          tally_.retry_active = false;
          tally_.chain_end_reason =
              e.success ? std::string("success") : std::string(e.reason.value_or("exhausted"));
          attempt_ = 0;
        } else if constexpr (std::is_same_v<E, ev::AgentStart>) {
          wait("model");
        } else if constexpr (std::is_same_v<E, ev::AutoCompactionStart>) {
          // The failed message an overflow compaction handles is not a turn.
          if (e.reason == session::CompactionReason::overflow && pending_turn_ && pending_failed_)
            pending_turn_ = false;
          if (over_budget()) budget_stop = true;
          compaction_reason_ = session::compaction_reason_name(e.reason);
          wait("compaction");
        } else if constexpr (std::is_same_v<E, ev::AutoCompactionEnd>) {
          if (e.result) ++tally_.compactions;
          if (e.error_message && !e.aborted) tally_.overflow_error = std::string(*e.error_message);
          // The summary request spent too: the retry after it is checked (section 10).
          if (e.will_retry && over_budget()) budget_stop = true;
          wait("model");
        } else if constexpr (std::is_same_v<E, ev::ToolExecutionStart>) {
          running_tools_.emplace_back(e.tool_call_id, e.tool_name);
          wait("tool");
        } else if constexpr (std::is_same_v<E, ev::ToolExecutionEnd>) {
          std::erase_if(running_tools_, [&](const auto& t) { return t.first == e.tool_call_id; });
          if (running_tools_.empty()) wait("model");
        } else if constexpr (std::is_same_v<E, ev::ToolOutcomeUnknown>) {
          tally_.unknown_outcomes.push_back(e.tool_call_id);
        }
      },
      event.body);
  if (settings_.format == "stream-json") {
    const auto* unknown = std::get_if<ev::ToolOutcomeUnknown>(&event.body);
    if (unknown && !started_) {  // after the header (amendments A7)
      early_unknown_.push_back({std::string(unknown->tool_call_id), std::string(unknown->tool_name),
                                unknown->started_at});
    } else {
      events_.on_event(event);
    }
  }
  // After the event is out: the retry or compaction it announced does not go on.
  if (budget_stop && !run_done_) stop(oneshot::Stop::max_budget);
}

void OneShotFrontEnd::refused(const std::string& tool_call_id, const std::string& tool_name,
                              const Json& input, const std::string& text) {
  Json d = Json::object();
  d["tool_name"] = tool_name;
  d["tool_use_id"] = tool_call_id;
  d["tool_input"] = input;
  d["message"] = text;
  tally_.denials.push_back(std::move(d));
}

void OneShotFrontEnd::interrupted(int signo) {
  stop(signo == SIGHUP    ? oneshot::Stop::sighup
       : signo == SIGINT  ? oneshot::Stop::sigint
       : signo == SIGPIPE ? oneshot::Stop::stdout_gone
                          : oneshot::Stop::sigterm);
}

void OneShotFrontEnd::stop(oneshot::Stop why) {
  // During the SessionEnd hooks the run is over already: its result is written now.
  if (run_done_) return end_run();
  if (ending_.stop != oneshot::Stop::none) return;
  ending_.stop = why;
  if (!prompted_) {
    // Still reading stdin (or before it): nothing to abort.
    input_done_ = true;
    return finish_run();
  }
  // The shutdown of protocol.md section 1: a backoff cancelled, the request and the tool batch
  // aborted; the result follows once the prompt's work is over (its `done`).
  session::AgentSession* s = host_.find(slot_);
  std::weak_ptr<bool> alive = alive_;
  s->abort([this, alive] {
    if (!alive.expired()) finish_run();
  });
}

void OneShotFrontEnd::finish_run() {
  if (run_done_) return;
  session::AgentSession* s = host_.find(slot_);
  run_done_ = true;
  if (pending_turn_) {
    ++tally_.num_turns;
    pending_turn_ = false;
  }
  // A backoff that could only end after the deadline was not started: the run's deadline.
  if (ending_.stop == oneshot::Stop::none && s && s->run_deadline_hit())
    ending_.stop = oneshot::Stop::timeout;
  // What ended the run besides a stop: an accepted structured output or a give-up (section 11),
  // a limit (section 10), a hook's stop (section 15).
  if (ending_.stop == oneshot::Stop::none && !structured_given_ && !ending_.structured_error) {
    if (limit_stop_) {
      ending_.stop = *limit_stop_;
    } else if (s && s->last_run_stopped_by_hook()) {
      ending_.hook_stop = s->last_run_stop_text();
    }
  }
  if (!s) return end_run();
  // Section 4 step 5: the SessionEnd hooks (`other`) run before the result, bounded by their
  // timeouts and by the deadline or a signal (which write the result at once).
  s->shutdown("other");
  std::weak_ptr<bool> alive = alive_;
  s->when_session_ended([this, alive] {
    if (!alive.expired()) end_run();
  });
}

void OneShotFrontEnd::end_run() {
  if (result_written_) return;
  // Cut short by the deadline or a signal: SessionEnd hooks still running are killed.
  if (session::AgentSession* s = host_.find(slot_)) s->cut_session_end();
  write_result();
  if (finish_) finish_();
}

void OneShotFrontEnd::write_result() {
  if (result_written_) return;
  result_written_ = true;
  if (deadline_) deadline_->cancel();
  if (beat_) beat_->cancel();
  if (stdin_notice_) stdin_notice_->cancel();
  const session::AgentSession* s = host_.find(slot_);
  if (s) {  // the requests' time, and what the summary requests spent (section 6)
    const session::RequestSpend& spend = s->request_spend();
    tally_.api_ms = spend.api_ms;
    tally_.cost += spend.summaries.cost_total;
    tally_.input += spend.summaries.input;
    tally_.output += spend.summaries.output;
    tally_.cache_read += spend.summaries.cache_read;
    tally_.cache_write += spend.summaries.cache_write;
  }
  const oneshot::Outcome outcome = oneshot::decide(tally_, ending_);
  exit_code_ = outcome.exit_code;
  if (ending_.stop == oneshot::Stop::stdout_gone) return;  // nowhere to write it (exit 141)
  oneshot::ResultContext context;
  context.duration_ms = elapsed_ms();
  context.session_id = s ? s->session_id() : std::string();
  if (s && s->session_file()) {
    std::error_code ec;
    if (std::filesystem::exists(*s->session_file(), ec))
      context.session_file = std::filesystem::absolute(*s->session_file(), ec).lexically_normal();
  }
  const Json result = oneshot::result_json(tally_, outcome, context);
  if (settings_.format != "text") {
    writer_.write_line(protocol::to_line(result));
  } else if (outcome.subtype == "success") {
    writer_.write_line(result["result"].get<std::string>() + "\n");
  }
  // The stderr lines of section 5.1, as the spec words them (not log lines).
  std::string line;
  if (outcome.subtype != "success" && outcome.error) line = "rebound: " + *outcome.error + "\n";
  if (outcome.exit_code == 9)
    line += ending_.hook_stop
                ? "rebound: stopped by a hook: " + *ending_.hook_stop + "\n"
                : "rebound: " + std::to_string(tally_.denials.size()) + " tool call(s) refused\n";
  if (!line.empty()) std::fputs(line.c_str(), stderr);
  if (idle_.waiting()) idle_.check(busy());
}

void OneShotFrontEnd::heartbeat() {
  if (result_written_) return;
  ++beat_seq_;
  const std::int64_t now = elapsed_ms();
  Json h = Json::object();
  h["type"] = "heartbeat";
  h["seq"] = beat_seq_;
  h["elapsedMs"] = now;
  // The first row of section 9's table that holds: the events tell a compaction, a backoff, a
  // tool batch or the model; the board a hook, an interceptor or MCP servers still starting.
  std::string waiting = !input_done_ ? "stdin" : waiting_;
  std::int64_t lasted = waiting == "stdin" ? now : now - waiting_since_;
  std::optional<session::WaitBoard::Seen> seen;
  auto on_board = [&](session::WaitBoard::Kind kind, const char* name) {
    if (!waits_ || !(seen = waits_->oldest(kind))) return false;
    waiting = name;
    lasted = scheduler_.now_epoch_ms() - seen->since_ms;
    return true;
  };
  if (waiting == "model" || waiting == "tool") {
    if (!on_board(session::WaitBoard::Kind::hook, "hook") &&
        !on_board(session::WaitBoard::Kind::extension, "extension") && waiting == "model")
      on_board(session::WaitBoard::Kind::mcp, "mcp");
  }
  h["waiting"] = waiting;
  h["sinceMs"] = std::max<std::int64_t>(0, lasted);
  if (seen) {
    for (const auto& [k, v] : seen->keys.items())
      h[k] = v;
  } else if (waiting == "compaction") {
    h["reason"] = compaction_reason_;
  } else if (waiting == "stdin") {
    h["bytes"] = input_.size();
  } else if (waiting == "backoff") {
    h["attempt"] = backoff_.value("attempt", 0);
    h["maxAttempts"] = backoff_.value("maxAttempts", 0);
    h["errorClass"] = backoff_.value("errorClass", "unknown");
    h["nextAttemptInMs"] =
        std::max<std::int64_t>(0, backoff_.value("nextAttemptAt", std::int64_t{0}) - now);
  } else if (waiting == "tool") {
    Json tools = Json::array();
    for (const auto& [id, name] : running_tools_)
      tools.push_back(Json{{"toolCallId", id}, {"toolName", name}});
    h["tools"] = std::move(tools);
  } else if (waiting == "model") {
    const std::size_t slash = tally_.model.find('/');
    h["provider"] = tally_.model.substr(0, slash);
    h["model"] = slash == std::string::npos ? "" : tally_.model.substr(slash + 1);
    h["attempt"] = attempt_;
    h["streaming"] = streaming_;
  }
  if (settings_.timeout_ms)
    h["deadlineInMs"] = std::max<std::int64_t>(0, *settings_.timeout_ms - now);
  writer_.write_line(protocol::to_line(h));
  std::weak_ptr<bool> alive = alive_;
  // A fixed schedule: the next beat at (seq + 1) × the interval.
  const std::int64_t next = (beat_seq_ + 1) * settings_.heartbeat_ms - elapsed_ms();
  beat_->start(std::chrono::milliseconds(std::max<std::int64_t>(0, next)), [this, alive] {
    if (!alive.expired()) heartbeat();
  });
}

void OneShotFrontEnd::shutdown() {
  // The loop's shutdown: after the result (the run's own end), or a signal or a closed stdout
  // (interrupted() came first and stopped the run).
  if (shutting_down_) return;
  shutting_down_ = true;
  if (!run_done_) {
    if (ending_.stop == oneshot::Stop::none) stop(oneshot::Stop::sigterm);
  }
  std::weak_ptr<bool> alive = alive_;
  if (services_)
    services_->stop("quit", [this, alive] {
      if (!alive.expired()) idle_.check(busy());
    });
}

bool OneShotFrontEnd::busy() const {
  const session::AgentSession* session = host_.find(slot_);
  return !result_written_ || (session && session->is_bash_running()) || stops_processes();
}

void OneShotFrontEnd::when_idle(std::function<void()> idle) {
  idle_.wait(std::move(idle), busy());
}

bool OneShotFrontEnd::stops_processes() const {
  return services_ && services_->running();
}

}  // namespace rebound::server
