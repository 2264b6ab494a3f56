// AgentSession: the agent loop of runtime.md section 1 (runs, turns, streaming) and the tool
// batch of tools.md section 6 (calls started in order, run concurrently, results in order).

#include <algorithm>
#include <nlohmann/json.hpp>
#include <utility>

#include "protocol/json_access.h"
#include "protocol/json_line.h"
#include "session/agent_run.h"
#include "session/tool_arguments.h"
#include "session/tool_spool.h"

namespace rebound::session {

using protocol::AgentMessage;
using protocol::ContentBlock;
using protocol::StopReason;
using Kind = llm::StreamEvent::Kind;
using Update = AssistantUpdateKind;

namespace {

// One request's time: from sending to its end, failure or cancel, whichever comes first.
struct RequestClock {
  std::shared_ptr<RequestSpend> spend;
  Scheduler* scheduler;
  std::int64_t started;
  bool ended = false;

  void end() {
    if (ended) return;
    ended = true;
    spend->api_ms += std::max<std::int64_t>(0, scheduler->now_epoch_ms() - started);
  }
};

class TimedStream final : public llm::StreamHandle {
 public:
  TimedStream(std::shared_ptr<RequestClock> clock, std::unique_ptr<llm::StreamHandle> inner)
      : clock_(std::move(clock)), inner_(std::move(inner)) {}
  ~TimedStream() override { clock_->end(); }  // dropped mid-request: cancelled
  void cancel() override {
    if (inner_) inner_->cancel();
    clock_->end();
  }

 private:
  std::shared_ptr<RequestClock> clock_;
  std::unique_ptr<llm::StreamHandle> inner_;
};

}  // namespace

std::unique_ptr<llm::StreamHandle> AgentSession::timed_stream(const llm::LlmRequest& request,
                                                              llm::StreamHandler handler) {
  auto clock = std::make_shared<RequestClock>(
      RequestClock{spend_, &deps_.scheduler, deps_.scheduler.now_epoch_ms()});
  auto inner =
      deps_.provider.stream(request, [clock, handler = std::move(handler)](llm::StreamEvent&& e) {
        if (e.kind == Kind::done || e.kind == Kind::error) clock->end();
        handler(std::move(e));
      });
  return std::make_unique<TimedStream>(std::move(clock), std::move(inner));
}

void AgentSession::start_run(std::vector<Queued> inputs) {
  if (run_hooks_) run_hooks_->idle_ended();
  overflow_compacted_ = false;  // new user messages: a new prompt
  run_ = std::make_unique<Run>();
  emit(ev::AgentStart{});
  emit(ev::TurnStart{});
  add_user_messages(std::move(inputs));
  request_assistant();
}

void AgentSession::continue_run() {
  // `continue` needs a context whose last message is not an assistant message.
  if (context_.empty() || context_.back().is_assistant()) {
    end_chain(false, "Cannot continue: the context does not end with a user message",
              "non_retryable");
    settle();
    return;
  }
  if (run_hooks_) run_hooks_->idle_ended();
  run_ = std::make_unique<Run>();
  emit(ev::AgentStart{});
  emit(ev::TurnStart{});
  request_assistant();
}

void AgentSession::add_user_messages(std::vector<Queued> inputs) {
  // Delivered from a queue: the remaining state, right before the first message_start.
  if (std::exchange(queue_taken_, false) && !inputs.empty()) emit_queue_update();
  for (auto& q : inputs) {
    AgentMessage m = user_message(q.input);
    emit(ev::MessageStart{m});
    record(m);
    emit(ev::MessageEnd{m});
    run_->produced.push_back(std::move(m));
    if (!q.input.prompt_id.empty()) prompt_id_ = q.input.prompt_id;
    emit_context_notes(std::move(q.input.context));  // its UserPromptSubmit texts
    if (q.done) completions_.push_back(std::move(q.done));
  }
}

void AgentSession::request_assistant() {
  Run& run = *run_;
  run.generation = ++generation_;
  run.message_started = false;
  run.tool_results.clear();
  run.batch.clear();
  run.partial = AgentMessage{};
  run.partial.role = protocol::Role::assistant;
  run.partial.api = model_.api;
  run.partial.provider = model_.provider;
  run.partial.model = model_.id;
  run.partial.timestamp = deps_.scheduler.now_epoch_ms();
  ++partial_version_;
  if (run.aborting) {
    // Abort arrived during the tool batch: this turn's request is never sent (tools.md 7).
    finish_message(StopReason::aborted, "Request was aborted");
    return;
  }

  // The session's first request waits for its SessionStart hooks' texts (extensions.md 3.9);
  // their end resumes it (request_when_started).
  if (session_start_wait_) {
    run.held_for_session_start = true;
    return;
  }
  request_when_started(run.generation);
}

void AgentSession::request_when_started(std::uint64_t generation) {
  Run& run = *run_;
  if (deps_.dynamic_tools) {
    std::weak_ptr<bool> alive = alive_;
    run.waiting = deps_.dynamic_tools->when_settled([this, alive, generation] {
      if (alive.expired() || !run_ || run_->generation != generation) return;
      run_->waiting.reset();
      send_request();
    });
    if (run.waiting) return;  // streaming meanwhile; abort drops the wait
  }
  send_request();
}

std::vector<ToolDefinition> AgentSession::offered_tools(
    std::vector<std::shared_ptr<Tool>>* dynamic) const {
  std::vector<ToolDefinition> out = deps_.tools.definitions();
  if (out.size() > kMaxOfferedTools) out.resize(kMaxOfferedTools);
  if (!deps_.dynamic_tools) return out;
  auto extra = deps_.dynamic_tools->offered(kMaxOfferedTools - out.size());
  // A name is offered once: every API refuses two tools of one name (issue 50: an extension's
  // tool named like the one-shot structured_output tool). The first holds it, as a call finds
  // it (find_offered: the registry, then the dynamic tools in order).
  std::erase_if(extra, [&](const std::shared_ptr<Tool>& tool) {
    const std::string& name = tool->definition().name;
    const bool taken = std::any_of(out.begin(), out.end(),
                                   [&](const ToolDefinition& d) { return d.name == name; });
    if (!taken) out.push_back(tool->definition());
    return taken;
  });
  if (dynamic) *dynamic = std::move(extra);
  return out;
}

std::vector<ToolDefinition> AgentSession::tool_definitions() const {
  return offered_tools(nullptr);
}

void AgentSession::send_request() {
  Run& run = *run_;
  llm::LlmRequest request;
  request.model = model_;
  request.system_prompt = system_prompt_ + session_context_;
  request.thinking_level = thinking_level_;
  request.session_id = session_id_;
  request.cache_retention = settings_.cache_retention;
  request.tool_calls_before = std::max(stats_.tool_calls, stats_.highest_call_number);
  run.offered.clear();
  request.tools = offered_tools(&run.offered);
  for (const auto& m : context_) {
    // Assistant messages that ended in error or abort would be empty turns.
    if (!m.failed()) request.messages.push_back(m);
  }
  const std::uint64_t generation = run.generation;
  std::weak_ptr<bool> alive = alive_;
  run.stream = timed_stream(request, [this, alive, generation](llm::StreamEvent&& e) {
    if (!alive.expired()) on_stream_event(generation, std::move(e));
  });
}

void AgentSession::ensure_message_started() {
  if (run_->message_started) return;
  run_->message_started = true;
  emit(ev::MessageStart{run_->partial});
}

void AgentSession::on_stream_event(std::uint64_t generation, llm::StreamEvent&& e) {
  if (!run_ || run_->generation != generation) return;  // a stale completion
  Run& run = *run_;
  AgentMessage& m = run.partial;
  auto update = [&](Update kind, std::string_view delta = {}) {
    emit(ev::MessageUpdate{m, kind, m.content.size() - 1, delta, partial_version_, usage_version_});
  };
  switch (e.kind) {
    case Kind::text_start:
    case Kind::thinking_start:
      ensure_message_started();
      m.content.push_back(e.kind == Kind::text_start ? ContentBlock::make_text("")
                                                     : ContentBlock::make_thinking(""));
      ++partial_version_;
      update(e.kind);
      return;
    case Kind::text_delta:
    case Kind::thinking_delta:
      if (m.content.empty()) return;
      ensure_message_started();
      m.content.back().text += e.text;
      update(e.kind, e.text);
      return;
    case Kind::text_end:
    case Kind::thinking_end:
      if (m.content.empty()) return;
      ensure_message_started();
      if (!e.signature.empty() || e.redacted) {
        m.content.back().signature = std::move(e.signature);
        m.content.back().redacted = e.redacted;
        ++partial_version_;
      }
      update(e.kind);
      return;
    case Kind::toolcall_start:
      ensure_message_started();
      m.content.push_back(
          ContentBlock::make_tool_call(e.tool_id, e.tool_name, protocol::Json::object()));
      ++partial_version_;
      run.tool_arguments.clear();
      update(Update::toolcall_start);
      return;
    case Kind::toolcall_delta:
      if (m.content.empty()) return;
      ensure_message_started();
      run.tool_arguments += e.text;
      update(Update::toolcall_delta, e.text);
      return;
    case Kind::toolcall_end:
      if (m.content.empty()) return;
      ensure_message_started();
      m.content.back().arguments = e.arguments.is_object() ? e.arguments : protocol::Json::object();
      if (!e.signature.empty()) m.content.back().signature = std::move(e.signature);
      ++partial_version_;
      update(Update::toolcall_end);
      return;
    case Kind::usage:
      m.usage = e.usage;
      ++usage_version_;
      return;
    case Kind::done:
      m.response_id = std::move(e.response_id);
      finish_message(e.stop_reason, std::nullopt);
      return;
    case Kind::error:
      m.response_id = std::move(e.response_id);
      finish_message(StopReason::error, e.text.empty() ? "Unknown provider error" : e.text);
      return;
  }
}

void AgentSession::finish_message(StopReason reason, std::optional<std::string> error) {
  Run& run = *run_;
  run.stream.reset();
  run.waiting.reset();
  AgentMessage& m = run.partial;
  m.stop_reason = reason;
  m.error_message = std::move(error);
  if (reason == StopReason::error || reason == StopReason::aborted) {
    // Half-streamed tool calls are dropped from a failed message.
    std::erase_if(m.content,
                  [](const ContentBlock& b) { return b.kind == ContentBlock::Kind::tool_call; });
  }
  ensure_message_started();
  // On disk before the client sees it end: a message_end it read is never lost.
  record(m);
  emit(ev::MessageEnd{m});
  run.produced.push_back(m);

  if (!m.failed() && has_tool_calls(m)) {
    start_tool_batch();  // the turn ends when its last call has
    return;
  }
  finish_turn();
}

bool AgentSession::has_tool_calls(const AgentMessage& m) {
  for (const auto& b : m.content) {
    if (b.kind == ContentBlock::Kind::tool_call) return true;
  }
  return false;
}

void AgentSession::finish_turn() {
  Run& run = *run_;
  const AgentMessage& m = run.partial;
  emit(ev::TurnEnd{m, run.tool_results});
  // A hook's continue:false ends the run once the batch is done (extensions.md section 3.7).
  if (!m.failed() && !run.stop_requested && (has_tool_calls(m) || !steering_.empty())) {
    next_turn();
  } else if (!start_stop_hooks()) {
    end_run();
  }
}

bool AgentSession::start_stop_hooks() {
  // Only a normal end: an assistant message without tool calls that stopped or hit its length,
  // no abort, no hook's continue:false (extensions.md section 5.3).
  Run& run = *run_;
  const AgentMessage& m = run.partial;
  if (!run_hooks_ || run.aborting || run.stop_requested || has_tool_calls(m) ||
      (m.stop_reason != StopReason::stop && m.stop_reason != StopReason::length))
    return false;
  std::weak_ptr<bool> alive = alive_;
  const std::uint64_t generation = run.generation;
  const std::string last = m.text();
  run.stop_wait = run_hooks_->stop(StopCall(run.stop_continuations, last),
                                   [this, alive, generation](StopVerdict verdict) {
                                     if (!alive.expired())
                                       stop_hooks_done(generation, std::move(verdict));
                                   });
  return run.stop_wait != nullptr;
}

void AgentSession::stop_hooks_done(std::uint64_t generation, StopVerdict verdict) {
  if (!run_ || run_->generation != generation || !run_->stop_wait) return;
  // The handle may be inside its own completion now: it goes once this call stack is done.
  deps_.scheduler.post([done = std::shared_ptr<Waiting>(std::move(run_->stop_wait))] {});
  if (verdict.user_message) {
    // The same run goes on with a user message (a re-ask; a steer that arrived meanwhile
    // follows it).
    UserInput input;
    input.text = std::move(*verdict.user_message);
    std::vector<Queued> asked;
    asked.push_back(Queued{std::move(input), {}});
    next_turn(std::move(asked));
  } else if (verdict.continue_run) {
    // The same run goes on: the hooks' texts, then a new turn (a steer that arrived meanwhile
    // is delivered there too).
    ++run_->stop_continuations;
    emit_context_notes(std::move(verdict.context));
    next_turn();
  } else if (!steering_.empty()) {
    next_turn();
  } else {
    end_run();
  }
}

void AgentSession::start_tool_batch() {
  Run& run = *run_;
  for (const auto& block : run.partial.content) {
    if (block.kind != ContentBlock::Kind::tool_call) continue;
    Run::Call call;
    call.block = block;
    run.batch.push_back(std::move(call));
  }
  run.batch_open = run.batch.size();
  run.batch_starting = true;
  run.next_preflight = 0;
  preflight_calls(run.generation);
}

void AgentSession::preflight_calls(std::uint64_t generation) {
  std::weak_ptr<bool> alive = alive_;
  while (run_ && run_->generation == generation && run_->next_preflight < run_->batch.size()) {
    Run& run = *run_;
    const std::size_t i = run.next_preflight++;
    Run::Call& call = run.batch[i];
    emit(ev::ToolExecutionStart{call.block.id, call.block.name, call.block.arguments});
    Tool* tool = find_offered(run, call.block.name);
    if (!tool) {
      end_tool_call(generation, i, ToolResult::error("Tool " + call.block.name + " not found"));
      continue;
    }
    auto input = tool_input(*tool, call.block.arguments);
    if (!input) {
      end_tool_call(generation, i, ToolResult::error(input.error().message));
      continue;
    }
    call.tool = tool;
    call.input = std::move(*input);
    if (!preflight_) continue;
    // The next call waits for this one's verdict (extensions.md section 5.2).
    PreflightCall asked(call.block.id, call.block.name, call.block.arguments,
                        tool->definition().mcp_server);
    asked.extension = tool->definition().extension;
    asked.read_only_hint = tool->read_only_hint();
    asked.repeats_unknown = !unknown_calls_.empty() &&
                            unknown_calls_.count(call_key(call.block.name, call.block.arguments));
    // Each replacement of the input is checked as the model's was (extensions.md section 4.4).
    asked.validate = [tool](const protocol::Json& replaced) -> std::optional<std::string> {
      auto checked = tool_input(*tool, replaced);
      if (!checked) return checked.error().message;
      return std::nullopt;
    };
    run.preflight =
        preflight_->check(asked, [this, alive, generation, i](PreflightVerdict verdict) {
          if (!alive.expired()) preflighted(generation, i, std::move(verdict));
        });
    if (run.preflight) return;
  }
  if (run_ && run_->generation == generation) start_calls(generation);
}

void AgentSession::preflighted(std::uint64_t generation, std::size_t index,
                               PreflightVerdict verdict) {
  if (!call_open(generation, index)) return;
  // The handle may be inside its own completion now: it goes once this call stack is done.
  if (auto done = std::shared_ptr<Waiting>(std::move(run_->preflight)))
    deps_.scheduler.post([done] {});
  Run::Call& call = run_->batch[index];
  for (auto& note : verdict.context)
    call.context.push_back(std::move(note));
  if (verdict.stop_run && !run_->stop_requested) run_->stop_requested = verdict.stop_run;
  if (verdict.refused) {
    call.tool = nullptr;
    end_tool_call(generation, index, std::move(*verdict.refused));
  } else if (verdict.input) {
    // A replaced input is validated again; an invalid one fails the call with its text.
    auto input = tool_input(*call.tool, *verdict.input);
    if (!input) {
      call.tool = nullptr;
      end_tool_call(generation, index, ToolResult::error(input.error().message));
    } else {
      call.input = std::move(*input);
    }
  }
  preflight_calls(generation);
}

void AgentSession::start_calls(std::uint64_t generation) {
  Run& run = *run_;
  ToolContext context;
  context.cwd = deps_.storage.cwd();
  context.model_images = model_.takes_images();
  if (walk_filter_) context.hidden = walk_filter_();
  if (file_opener_) context.open_file = file_opener_();
  context.spool_dir = spool_dir();
  std::weak_ptr<bool> alive = alive_;
  context.skip_for_steering = [this, alive] {
    return !alive.expired() && interrupt_mode_ == protocol::InterruptMode::immediate &&
           !steering_.empty();
  };
  for (std::size_t i = 0; i < run.batch.size(); ++i) {
    Run::Call& call = run.batch[i];
    if (call.result || !call.tool) continue;  // ended in its preflight
    context.tool_call_id = call.block.id;
    call.ran = true;
    call.started_ms = deps_.scheduler.now_epoch_ms();
    // What a tool gets holds U+FFFD where a client's lone surrogate was (never the marker).
    Json input = call.input;
    protocol::replace_surrogate_markers(input);
    call.handle = call.tool->start(
        input, context,
        [this, alive, generation, i](ToolResult partial) {
          if (alive.expired()) return;
          if (!call_open(generation, i)) return;
          const auto& b = run_->batch[i].block;
          if (deps_.secrets) deps_.secrets->redact(partial);
          emit(ev::ToolExecutionUpdate{b.id, b.name, b.arguments, partial});
        },
        [this, alive, generation, i](ToolResult result) {
          if (!alive.expired()) end_tool_call(generation, i, std::move(result));
        });
  }
  run.batch_starting = false;
  if (run.batch_open == 0) complete_tool_batch();
}

Tool* AgentSession::find_offered(const Run& run, std::string_view name) const {
  if (Tool* tool = deps_.tools.find(name)) return tool;
  for (const auto& tool : run.offered) {
    if (tool->definition().name == name) return tool.get();
  }
  return nullptr;
}

bool AgentSession::call_open(std::uint64_t generation, std::size_t index) const {
  // A call that ended takes no more updates and no second end.
  return run_ && run_->generation == generation && index < run_->batch.size() &&
         !run_->batch[index].result;
}

void AgentSession::end_tool_call(std::uint64_t generation, std::size_t index, ToolResult result) {
  if (!call_open(generation, index)) return;  // stale, or ended already
  Run::Call& call = run_->batch[index];
  if (call.after) return;  // in its after-call hooks: it has its result
  if (deps_.secrets) deps_.secrets->redact(result);
  // A call that ran gets its after-call hooks before its end; one an abort ended gets none
  // (extensions.md section 8).
  if (preflight_ && call.ran && !run_->aborting) {
    std::weak_ptr<bool> alive = alive_;
    call.held = std::move(result);
    FinishedCall finished(
        call.block.id, call.block.name, call.input, *call.held,
        std::max<std::int64_t>(0, deps_.scheduler.now_epoch_ms() - call.started_ms),
        call.tool->definition().mcp_server);
    finished.extension = call.tool->definition().extension;
    call.after = preflight_->after_call(finished,
                                        [this, alive, generation, index](AfterCallVerdict verdict) {
                                          if (!alive.expired())
                                            after_call_done(generation, index, std::move(verdict));
                                        });
    if (call.after) return;
    result = std::move(*call.held);
    call.held.reset();
  }
  close_tool_call(index, std::move(result));
}

void AgentSession::after_call_done(std::uint64_t generation, std::size_t index,
                                   AfterCallVerdict verdict) {
  if (!call_open(generation, index) || !run_->batch[index].after) return;
  Run::Call& call = run_->batch[index];
  // The handle may be inside its own completion now: it goes once this call stack is done.
  deps_.scheduler.post([done = std::shared_ptr<Waiting>(std::move(call.after))] {});
  for (auto& note : verdict.context)
    call.context.push_back(std::move(note));
  if (verdict.stop_run && !run_->stop_requested) run_->stop_requested = verdict.stop_run;
  ToolResult result = std::move(*call.held);
  call.held.reset();
  close_tool_call(index, std::move(result));
}

void AgentSession::close_tool_call(std::size_t index, ToolResult result) {
  Run& run = *run_;
  Run::Call& call = run.batch[index];
  call.result = std::move(result);
  emit(ev::ToolExecutionEnd{call.block.id, call.block.name, *call.result});
  --run.batch_open;
  if (!run.batch_starting && run.batch_open == 0) complete_tool_batch();
}

void AgentSession::complete_tool_batch() {
  Run& run = *run_;
  // The handles may be inside their own completion now: they go once this call stack is done.
  auto handles = std::make_shared<std::vector<std::unique_ptr<ToolCall>>>();
  const std::string spool = spool_dir();
  for (auto& call : run.batch) {
    if (call.handle) handles->push_back(std::move(call.handle));
    AgentMessage r;
    r.role = protocol::Role::tool_result;
    r.tool_call_id = call.block.id;
    r.tool_name = call.block.name;
    r.content = call.result->content;
    r.details = call.result->details.value_or(protocol::Json());
    r.is_error = call.result->is_error;
    r.timestamp = deps_.scheduler.now_epoch_ms();
    emit(ev::MessageStart{r});
    record(r);  // the results follow the assistant message in the context
    // Its spool file goes now that its result is on file, unless the result names it.
    if (call.ran && !spool.empty())
      if (const std::string path = spool_path(spool, r.tool_call_id);
          path != protocol::get_string(r.details, "fullOutputPath"))
        deps_.storage.remove_spool(path);
    emit(ev::MessageEnd{r});
    run.tool_results.push_back(r);
    run.produced.push_back(std::move(r));
  }
  // Then the hooks' texts, per call in call order (extensions.md section 5.2); an abort drops
  // them.
  std::vector<ContextNote> notes;
  for (auto& call : run.batch) {
    for (auto& note : call.context) {
      if (!run.aborting) notes.push_back(std::move(note));
    }
  }
  run.batch.clear();
  emit_context_notes(std::move(notes));
  if (!handles->empty()) deps_.scheduler.post([handles] { handles->clear(); });
  finish_turn();
}

void AgentSession::emit_context_notes(std::vector<ContextNote> notes) {
  for (auto& note : notes) {
    AgentMessage m =
        protocol::make_custom_message(std::move(note.custom_type), std::move(note.content),
                                      std::move(note.details), deps_.scheduler.now_epoch_ms());
    emit(ev::MessageStart{m});
    record(m);
    emit(ev::MessageEnd{m});
    run_->produced.push_back(std::move(m));
  }
}

void AgentSession::record(const AgentMessage& message, bool in_context) {
  AgentMessage recorded = message;
  recorded.entry_id = recorder_->append_message(message);
  stats_.add(recorded);
  if (in_context) context_.push_back(std::move(recorded));
}

void AgentSession::next_turn(std::vector<Queued> first) {
  emit(ev::TurnStart{});
  if (!first.empty()) add_user_messages(std::move(first));
  if (!run_->aborting) add_user_messages(take(steering_, steering_mode_));
  request_assistant();
}

bool AgentSession::abort_run(Completion done) {
  if (!run_) return true;
  if (run_->batch_open > 0) {
    // Running calls end with their own abort results; the run then ends as tools.md section 7
    // says, and `done` runs after agent_end.
    Run& run = *run_;
    run.aborting = true;
    if (done) run.abort_waiters.push_back(std::move(done));
    if (run.batch_starting) {
      // Still in the preflight: nothing runs yet, every call ends aborted.
      force_end_tool_batch();
      return false;
    }
    const std::uint64_t generation = run.generation;
    std::vector<std::size_t> in_hooks;
    for (std::size_t i = 0; i < run.batch.size(); ++i) {
      Run::Call& call = run.batch[i];
      if (call.after) {
        in_hooks.push_back(i);
      } else if (!call.result && call.handle) {
        call.handle->cancel();
      }
    }
    // A call in its after-call hooks ends now with its result: the hooks are killed, their
    // texts dropped. Ending the last call ends the run (run_ is then gone).
    for (std::size_t i : in_hooks) {
      if (!run_ || run_->generation != generation) break;
      Run::Call& call = run_->batch[i];
      call.after.reset();
      ToolResult result = std::move(*call.held);
      call.held.reset();
      close_tool_call(i, std::move(result));
    }
    return false;
  }
  if (run_->stop_wait) {
    // The run's last message ended normally; its Stop hooks are killed, the run ends.
    run_->aborting = true;
    run_->stop_wait.reset();
    end_run();
    return true;
  }
  run_->stream.reset();
  finish_message(StopReason::aborted, "Request was aborted");
  return true;
}

void AgentSession::force_end_tool_batch() {
  if (!run_ || run_->batch_open == 0) return;
  const std::uint64_t generation = run_->generation;
  run_->aborting = true;
  // A running preflight (its hooks, a question) ends without a verdict; its call may end with
  // the preflight's own text.
  std::optional<std::string> closing;
  if (run_->preflight) closing = run_->preflight->abort_text();
  run_->preflight.reset();
  run_->batch_starting = false;
  const std::size_t announced = run_->next_preflight;
  run_->next_preflight = run_->batch.size();
  // Ending the last call ends the run (run_ is then gone).
  for (std::size_t i = 0; run_ && run_->generation == generation && i < run_->batch.size(); ++i) {
    if (run_->batch[i].result) continue;
    const auto& b = run_->batch[i].block;
    // A call the preflight had not reached yet still starts before it ends.
    if (i >= announced) emit(ev::ToolExecutionStart{b.id, b.name, b.arguments});
    run_->batch[i].handle.reset();  // stopped without a completion
    const bool in_preflight = closing && i + 1 == announced;
    end_tool_call(generation, i, ToolResult::error(in_preflight ? *closing : "Operation aborted"));
  }
}

void AgentSession::end_run() {
  std::unique_ptr<Run> run = std::move(run_);
  const AgentMessage* last = nullptr;
  for (auto it = run->produced.rbegin(); it != run->produced.rend() && !last; ++it) {
    if (it->is_assistant()) last = &*it;
  }
  // Decided before agent_end, so that its willRetry is what happens next.
  const RetryDecision decision = last ? retry_decision(*last) : RetryDecision::not_retryable;
  stopped_by_hook_ = run->stop_requested;
  emit(ev::AgentEnd{run->produced, decision == RetryDecision::retry});
  if (last) after_run(*last, decision);
  if (!retry_.active()) settle();
  for (auto& waiter : run->abort_waiters)
    waiter();
}

}  // namespace rebound::session
