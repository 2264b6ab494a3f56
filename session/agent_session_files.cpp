// AgentSession: session files, new_session and switch_session (runtime.md section 4,
// protocol.md section 2), and the bash command.

#include <spdlog/spdlog.h>

#include <malloc.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "protocol/json_access.h"
#include "protocol/json_line.h"
#include "session/agent_run.h"
#include "session/session_file.h"
#include "session/session_id.h"
#include "session/tool_spool.h"

namespace rebound::session {

using protocol::AgentMessage;

void AgentSession::start_new_recorder(std::optional<std::string> file,
                                      std::optional<std::string> parent) {
  const std::int64_t now = deps_.scheduler.now_epoch_ms();
  SessionHeader header{session_id_, iso_timestamp(now), deps_.storage.cwd(), std::move(parent)};
  std::optional<std::string> path =
      file ? std::move(file) : deps_.storage.new_session_path(session_id_, now);
  recorder_ = std::make_unique<SessionRecorder>(
      deps_.storage, [this] { return deps_.scheduler.now_epoch_ms(); }, std::move(header),
      std::move(path));
  append_model_state();
}

void AgentSession::append_model_state() {
  recorder_->append(model_change_entry(model_.provider, model_.id));
  recorder_->append(thinking_level_change_entry(chosen_thinking_level_));
}

void AgentSession::take_up(std::string path, LoadedSession loaded, bool restore_model) {
  RestoredSession restored =
      loaded.restored ? std::move(*loaded.restored) : restore_session(loaded.entries);
  loaded.restored.reset();
  session_id_ = loaded.header.id;
  stats_ = restored.stats;
  context_ = restored.take_context();  // the history's other messages are freed with `restored`
  recorder_ = std::make_unique<SessionRecorder>(
      deps_.storage, [this] { return deps_.scheduler.now_epoch_ms(); }, std::move(path),
      std::move(loaded));
  settle_unknown_outcomes();
  // A large load freed most of what it allocated (the file's text, its entries, the messages
  // left out of the context), much of it in the loading thread's malloc arena: handed back to
  // the system now rather than held as resident memory for the session's life.
  malloc_trim(0);
  if (!restore_model) return;
  // The model and level the session last used, where this server still offers them.
  if (restored.provider && restored.model_id) {
    const protocol::Model* model = models_.find(*restored.provider, *restored.model_id);
    if (model && (!provider_available_ || provider_available_(model->provider))) {
      model_ = *model;
    } else {
      spdlog::warn("the session's model {}/{} is not available; keeping {}/{}", *restored.provider,
                   *restored.model_id, model_.provider, model_.id);
    }
  }
  chosen_thinking_level_ = restored.thinking_level.value_or(chosen_thinking_level_);
  thinking_level_ = clamped_thinking_level(chosen_thinking_level_);
}

void AgentSession::settle_unknown_outcomes() {
  // The calls Rebound may have been running when it stopped: those of an assistant message that
  // asked for tools (or was cut at its length) with no result after it (A8: an error's or an
  // abort's calls keep runtime.md section 2's "No result provided").
  struct Open {
    std::string id, name;
    std::int64_t started_at;
  };
  std::vector<Open> open;
  std::set<std::string> answered;
  std::map<std::string, std::string> keys;  // call id -> call_key, for the repeat rule
  unknown_calls_.clear();
  settled_.clear();
  for (const auto& m : context_) {
    if (m.role == protocol::Role::tool_result) {
      answered.insert(m.tool_call_id);
      // One settled by an earlier load still counts.
      if (protocol::get_string(m.details, "outcome") == "unknown")
        if (auto k = keys.find(m.tool_call_id); k != keys.end()) unknown_calls_.insert(k->second);
    }
    if (!m.is_assistant() || (m.stop_reason != protocol::StopReason::tool_use &&
                              m.stop_reason != protocol::StopReason::length))
      continue;
    for (const auto& b : m.content)
      if (b.kind == protocol::ContentBlock::Kind::tool_call) {
        open.push_back({b.id, b.name, m.timestamp});
        keys[b.id] = call_key(b.name, b.arguments);
      }
  }
  const std::string spool = spool_dir();
  for (const auto& call : open) {
    if (answered.count(call.id)) continue;
    answered.insert(call.id);  // a repeated id is answered once
    // What the call spooled before the stop: its start time, and (bash) its output.
    std::int64_t started_at = call.started_at;
    std::optional<Tool::SpooledOutput> output;
    std::string spool_file;
    if (!spool.empty()) {
      spool_file = spool_path(spool, call.id);
      if (auto born = deps_.storage.spool_birth_ms(spool_file)) started_at = *born;
      if (const Tool* tool = deps_.tools.find(call.name)) output = tool->spooled_output(spool_file);
    }
    std::string text = "Outcome unknown: Rebound stopped while this call was running (started " +
                       iso_timestamp(started_at) +
                       "). It may have taken effect, fully or in part. Check the current state "
                       "before repeating it.";
    if (output && !output->text.empty()) text += "\n\n" + output->text;
    AgentMessage m;
    m.role = protocol::Role::tool_result;
    m.tool_call_id = call.id;
    m.tool_name = call.name;
    m.is_error = true;
    m.details = Json{{"outcome", "unknown"}};
    m.timestamp = deps_.scheduler.now_epoch_ms();
    m.content.push_back(protocol::ContentBlock::make_text(std::move(text)));
    record(m);
    settled_.push_back(m);
    unknown_calls_.insert(keys[call.id]);
    if (!spool_file.empty() && !(output && output->keep_file))
      deps_.storage.remove_spool(spool_file);
    emit(ev::ToolOutcomeUnknown{call.id, call.name, started_at});
  }
  // A stop between a bash result's entry and its spool's removal left the spool: it goes now
  // (unless the result names it as its full output).
  if (spool.empty()) return;
  for (const auto& m : context_) {
    if (m.role != protocol::Role::tool_result || m.tool_name != "bash" ||
        protocol::get_value(m.details, "outcome").is_string())
      continue;
    if (const std::string path = spool_path(spool, m.tool_call_id);
        path != protocol::get_string(m.details, "fullOutputPath"))
      deps_.storage.remove_spool(path);
  }
}

std::string AgentSession::call_key(const std::string& name, const protocol::Json& arguments) {
  // nlohmann's unordered json keeps its object keys sorted.
  const nlohmann::json sorted = nlohmann::json::parse(protocol::to_line(arguments), nullptr, false);
  return name + '\n' + sorted.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string AgentSession::spool_dir() const {
  const auto& path = recorder_->path();
  return path ? spool_dir_of(*path) : std::string();
}

void AgentSession::cancel_everything() {
  force_end_tool_batch();
  abort();  // the backoff's auto_retry_end, the aborted run's events, the queues
  if (auto it = bash_jobs_.find(bash_generation_); it != bash_jobs_.end()) {
    ++bash_generation_;  // its result belongs to the session being left
    it->second->cancel();
  }
  pending_bash_.clear();
}

void AgentSession::new_session(std::optional<std::string> parent_session) {
  cancel_everything();
  end_session_hooks("clear");  // the old session's, with its id
  session_id_ = new_session_id();
  prompt_id_.reset();
  context_.clear();
  unknown_calls_.clear();
  stats_ = {};
  start_new_recorder(std::nullopt, std::move(parent_session));
  refresh_system_prompt();
  start_session_hooks("clear");
}

Status AgentSession::switch_session(const std::string& path) {
  auto loaded = deps_.storage.load_restored(path);
  if (!loaded) return loaded.error();
  take_up_switched(path, std::move(*loaded));
  return ok();
}

void AgentSession::take_up_switched(const std::string& path, LoadedSession session) {
  for (const auto& w : session.warnings)
    spdlog::warn("{}: {}", path, w);
  cancel_everything();
  end_session_hooks("resume");
  prompt_id_.reset();
  take_up(path, std::move(session), true);
  refresh_system_prompt();
  start_session_hooks("resume");
}

void AgentSession::after_batch_aborted(Completion next) {
  if (run_ && run_->batch_open > 0) {
    abort(std::move(next));  // `next` runs after the aborted run's agent_end
    return;
  }
  next();
}

void AgentSession::new_session(std::optional<std::string> parent_session, Completion done) {
  std::weak_ptr<bool> alive = alive_;
  after_batch_aborted([this, alive, parent = std::move(parent_session), done = std::move(done)] {
    if (alive.expired()) return;
    new_session(parent);
    if (done) done();
  });
}

void AgentSession::switch_session(const std::string& path, std::function<void(Status)> done) {
  // Read and parsed off the loop where the storage can: other commands answer meanwhile.
  std::weak_ptr<bool> alive = alive_;
  ++loads_pending_;
  deps_.storage.load_async(
      path, [this, alive, path, done = std::move(done)](Result<LoadedSession> loaded) mutable {
        if (alive.expired()) return;
        --loads_pending_;
        if (!loaded) {
          done(loaded.error());  // nothing changes, a running batch goes on
          return;
        }
        auto session = std::make_shared<LoadedSession>(std::move(*loaded));
        after_batch_aborted([this, alive, path, session, done = std::move(done)] {
          if (alive.expired()) return;
          take_up_switched(path, std::move(*session));
          done(ok());
        });
      });
}

Status AgentSession::bash(const std::string& command, BashDone done) {
  if (bash_jobs_.count(bash_generation_)) {
    return Error{ErrorKind::busy, "A bash command is already running"};
  }
  const std::uint64_t generation = ++bash_generation_;
  std::weak_ptr<bool> alive = alive_;
  std::string error;
  auto on_done = [this, alive, generation, command, done = std::move(done)](ShellResult r) {
    if (alive.expired()) return;
    AgentMessage m;
    m.role = protocol::Role::bash_execution;
    m.command = command;
    m.output = std::move(r.output);
    if (deps_.secrets) deps_.secrets->redact(m.output);
    m.exit_code = r.exit_code;
    m.cancelled = r.cancelled;
    m.truncated = r.truncated;
    m.full_output_path = std::move(r.full_output_path);
    m.timestamp = deps_.scheduler.now_epoch_ms();
    if (generation == bash_generation_) add_bash_result(m);
    bash_jobs_.erase(generation);  // the runner allows this from inside its completion
    done(m);
  };
  // A lone surrogate the client sent runs as U+FFFD, never as the protocol's private marker.
  std::string runs = command;
  protocol::replace_surrogate_markers(runs);
  auto job = deps_.shell.start(runs, std::move(on_done), error);
  if (!job) return Error{ErrorKind::failed, error.empty() ? std::string("Cannot run bash") : error};
  bash_jobs_[generation] = std::move(job);
  return ok();
}

void AgentSession::add_bash_result(AgentMessage message) {
  // Inside a run it would land between a tool call and its result; it waits for idle.
  if (run_ || retry_.active() || compaction_) {
    pending_bash_.push_back(std::move(message));
  } else {
    record(message);
  }
}

void AgentSession::abort_bash() {
  if (auto it = bash_jobs_.find(bash_generation_); it != bash_jobs_.end()) {
    it->second->cancel();
  } else {
    deps_.shell.kill_background();  // what earlier commands left running
  }
}

}  // namespace rebound::session
