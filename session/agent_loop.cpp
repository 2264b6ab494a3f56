// AgentSession: the agent loop of runtime.md section 1 (runs, turns, streaming, tool calls).

#include <nlohmann/json.hpp>

#include "protocol/events.h"
#include "session/agent_run.h"

namespace rebound::session {

using protocol::AgentMessage;
using protocol::ContentBlock;
using protocol::StopReason;
using Kind = llm::StreamEvent::Kind;
namespace events = protocol::events;

void AgentSession::start_run(std::vector<Queued> inputs) {
  overflow_compacted_ = false;  // new user messages: a new prompt
  run_ = std::make_unique<Run>();
  emit(events::agent_start());
  emit(events::turn_start());
  add_user_messages(std::move(inputs));
  request_assistant();
}

void AgentSession::continue_run() {
  // `continue` needs a context whose last message is not an assistant message.
  if (context_.empty() || context_.back().is_assistant()) {
    end_chain(false, "Cannot continue: the context does not end with a user message");
    settle();
    return;
  }
  run_ = std::make_unique<Run>();
  emit(events::agent_start());
  emit(events::turn_start());
  request_assistant();
}

void AgentSession::add_user_messages(std::vector<Queued> inputs) {
  for (auto& q : inputs) {
    AgentMessage m = user_message(q.input);
    emit(events::message_start(m));
    record(m);
    emit(events::message_end(m));
    run_->produced.push_back(std::move(m));
    if (q.done) completions_.push_back(std::move(q.done));
  }
}

void AgentSession::request_assistant() {
  Run& run = *run_;
  run.generation = ++generation_;
  run.message_started = false;
  run.tool_results.clear();
  run.partial = AgentMessage{};
  run.partial.role = protocol::Role::assistant;
  run.partial.api = model_.api;
  run.partial.provider = model_.provider;
  run.partial.model = model_.id;
  run.partial.timestamp = deps_.scheduler.now_epoch_ms();
  run.lines.reset(run.partial);

  llm::LlmRequest request;
  request.model = model_;
  request.system_prompt = settings_.system_prompt;
  request.thinking_level = thinking_level_;
  request.session_id = session_id_;
  for (const auto& m : context_) {
    // Assistant messages that ended in error or abort would be empty turns.
    if (!m.failed()) request.messages.push_back(m);
  }
  const std::uint64_t generation = run.generation;
  std::weak_ptr<bool> alive = alive_;
  run.stream = deps_.provider.stream(request, [this, alive, generation](llm::StreamEvent e) {
    if (!alive.expired()) on_stream_event(generation, std::move(e));
  });
}

void AgentSession::ensure_message_started() {
  if (run_->message_started) return;
  run_->message_started = true;
  emit(events::message_start(run_->partial));
}

void AgentSession::on_stream_event(std::uint64_t generation, llm::StreamEvent e) {
  if (!run_ || run_->generation != generation) return;  // a stale completion
  Run& run = *run_;
  AgentMessage& m = run.partial;
  auto update = [&](std::string_view type, std::optional<std::string> delta = std::nullopt,
                    std::optional<std::string> content = std::nullopt,
                    const ContentBlock* tool_call = nullptr) {
    events_.emit_line(run.lines.line(
        {type, m.content.size() - 1, std::move(delta), std::move(content), tool_call}));
  };
  switch (e.kind) {
    case Kind::text_start:
    case Kind::thinking_start:
      ensure_message_started();
      m.content.push_back(e.kind == Kind::text_start ? ContentBlock::make_text("")
                                                     : ContentBlock::make_thinking(""));
      run.lines.reset(m);
      update(e.kind == Kind::text_start ? "text_start" : "thinking_start");
      return;
    case Kind::text_delta:
    case Kind::thinking_delta:
      if (m.content.empty()) return;
      ensure_message_started();
      m.content.back().text += e.text;
      if (run.lines.appendable()) {
        run.lines.append_to_last_block(e.text);
      } else {
        run.lines.reset(m);
      }
      update(e.kind == Kind::text_delta ? "text_delta" : "thinking_delta", e.text);
      return;
    case Kind::text_end:
    case Kind::thinking_end:
      if (m.content.empty()) return;
      ensure_message_started();
      update(e.kind == Kind::text_end ? "text_end" : "thinking_end", std::nullopt,
             m.content.back().text);
      return;
    case Kind::toolcall_start:
      ensure_message_started();
      m.content.push_back(
          ContentBlock::make_tool_call(e.tool_id, e.tool_name, protocol::Json::object()));
      run.lines.reset(m);
      run.tool_arguments.clear();
      update("toolcall_start");
      return;
    case Kind::toolcall_delta:
      if (m.content.empty()) return;
      ensure_message_started();
      run.tool_arguments += e.text;
      update("toolcall_delta", e.text);
      return;
    case Kind::toolcall_end:
      if (m.content.empty()) return;
      ensure_message_started();
      m.content.back().arguments = e.arguments.is_object() ? e.arguments : protocol::Json::object();
      run.lines.reset(m);
      update("toolcall_end", std::nullopt, std::nullopt, &m.content.back());
      return;
    case Kind::usage:
      m.usage = e.usage;
      run.lines.reset(m);
      return;
    case Kind::done:
      finish_message(e.stop_reason, std::nullopt);
      return;
    case Kind::error:
      finish_message(StopReason::error, e.text.empty() ? "Unknown provider error" : e.text);
      return;
  }
}

void AgentSession::finish_message(StopReason reason, std::optional<std::string> error) {
  Run& run = *run_;
  run.stream.reset();
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
  emit(events::message_end(m));
  run.produced.push_back(m);

  bool has_tool_calls = false;
  for (const auto& b : m.content)
    has_tool_calls |= b.kind == ContentBlock::Kind::tool_call;
  if (has_tool_calls && !m.failed()) run_tool_calls();
  emit(events::turn_end(m, run.tool_results));
  if (!m.failed() && (has_tool_calls || !steering_.empty())) {
    next_turn();
  } else {
    end_run();
  }
}

void AgentSession::run_tool_calls() {
  Run& run = *run_;
  const AgentMessage assistant = run.partial;
  for (const auto& call : assistant.content) {
    if (call.kind != ContentBlock::Kind::tool_call) continue;
    // The session offers no tools yet: every call gets the not-found error result.
    const std::string text = "Tool " + call.name + " not found";
    emit(events::tool_execution_start(call.id, call.name, call.arguments));
    protocol::Json result = protocol::Json::object();
    result["content"] = protocol::Json::array({to_json(ContentBlock::make_text(text))});
    result["details"] = protocol::Json::object();
    emit(events::tool_execution_end(call.id, call.name, result, true));
    AgentMessage r;
    r.role = protocol::Role::tool_result;
    r.tool_call_id = call.id;
    r.tool_name = call.name;
    r.content.push_back(ContentBlock::make_text(text));
    r.details = protocol::Json::object();
    r.is_error = true;
    r.timestamp = deps_.scheduler.now_epoch_ms();
    emit(events::message_start(r));
    record(r);  // the results follow the assistant message in the context
    emit(events::message_end(r));
    run.tool_results.push_back(r);
    run.produced.push_back(std::move(r));
  }
}

void AgentSession::record(const AgentMessage& message, bool in_context) {
  recorder_->append_message(message);
  history_.push_back(message);
  if (in_context) context_.push_back(message);
}

void AgentSession::next_turn() {
  emit(events::turn_start());
  add_user_messages(take(steering_, steering_mode_));
  request_assistant();
}

void AgentSession::abort_run() {
  if (!run_) return;
  run_->stream.reset();
  finish_message(StopReason::aborted, "Request was aborted");
}

void AgentSession::end_run() {
  std::unique_ptr<Run> run = std::move(run_);
  const AgentMessage* last = nullptr;
  for (auto it = run->produced.rbegin(); it != run->produced.rend() && !last; ++it) {
    if (it->is_assistant()) last = &*it;
  }
  const bool retry = last && will_retry(*last);
  emit(events::agent_end(run->produced, retry));
  if (last) after_run(*last, retry);
  if (!retry_.active()) settle();
}

}  // namespace rebound::session
