// AgentSession: the session tree's commands (sessions.md sections 3 to 8): get_fork_messages,
// get_entries, fork, clone, set_session_name, and the queue_update event.

#include <spdlog/spdlog.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "protocol/json_access.h"
#include "session/agent_run.h"
#include "session/session_id.h"
#include "session/session_tree.h"

namespace rebound::session {

using protocol::Json;

namespace {

constexpr const char* kInvalidForkEntry = "Invalid entry ID for forking";
constexpr const char* kNothingToClone = "Cannot clone session: no current entry selected";

bool path_has_message(const std::vector<Json>& entries, const std::vector<std::size_t>& path) {
  for (std::size_t i : path) {
    if (is_message_entry(entries[i])) return true;
  }
  return false;
}

std::vector<Json> take_path(std::vector<Json>& entries, const std::vector<std::size_t>& path) {
  std::vector<Json> out;
  out.reserve(path.size());
  for (std::size_t i : path)
    out.push_back(std::move(entries[i]));
  return out;
}

}  // namespace

Result<std::vector<ForkMessage>> AgentSession::fork_messages() const {
  auto all = recorder_->all_entries();
  if (!all) return all.error();
  std::vector<ForkMessage> out;
  for (std::size_t i : active_path(*all)) {
    auto text = user_entry_text((*all)[i]);
    if (!text || text->empty()) continue;  // not a user message, or images only
    out.push_back({protocol::get_string((*all)[i], "id"), std::move(*text)});
  }
  return out;
}

Result<EntriesPage> AgentSession::entries(const std::optional<std::string>& since) const {
  auto all = recorder_->all_entries();
  if (!all) return all.error();
  EntriesPage page;
  if (!all->empty()) page.leaf_id = protocol::get_string(all->back(), "id");
  std::size_t from = 0;
  if (since) {
    const auto at = find_entry(*all, *since);
    if (!at) return Error{ErrorKind::not_found, "Entry not found: " + *since};
    from = *at + 1;
  }
  page.entries.assign(std::make_move_iterator(all->begin() + static_cast<std::ptrdiff_t>(from)),
                      std::make_move_iterator(all->end()));
  return page;
}

void AgentSession::fork(const std::string& entry_id,
                        std::function<void(Result<std::string>)> done) {
  // Validated before anything settles (section 4.1 step 1).
  auto all = recorder_->all_entries();
  if (!all) return done(all.error());
  const auto at = find_entry(*all, entry_id);
  auto text = at ? user_entry_text((*all)[*at]) : std::nullopt;
  if (!text) return done(Error{ErrorKind::failed, kInvalidForkEntry});
  auto copy = [entry_id](std::vector<Json> entries) -> Result<std::vector<Json>> {
    const auto selected = find_entry(entries, entry_id);
    if (!selected) return Error{ErrorKind::failed, kInvalidForkEntry};
    const Json& parent = protocol::get_value(entries[*selected], "parentId");
    if (!parent.is_string()) return std::vector<Json>{};
    const auto p = find_entry(entries, parent.get_ref<const std::string&>());
    if (!p) return std::vector<Json>{};
    return take_path(entries, chain_to(entries, *p));
  };
  fork_into_copy(std::move(*all), std::move(copy),
                 [done = std::move(done), text = std::move(*text)](Status s) {
                   if (!s) return done(s.error());
                   done(text);
                 });
}

void AgentSession::clone(std::function<void(Status)> done) {
  auto all = recorder_->all_entries();
  if (!all) return done(all.error());
  if (!path_has_message(*all, active_path(*all))) {
    return done(Error{ErrorKind::failed, kNothingToClone});
  }
  fork_into_copy(
      std::move(*all),
      [](std::vector<Json> entries) -> Result<std::vector<Json>> {
        const auto path = active_path(entries);
        return take_path(entries, path);
      },
      std::move(done));
}

void AgentSession::fork_into_copy(std::vector<Json> read, CopyEntries copy,
                                  std::function<void(Status)> done) {
  std::weak_ptr<bool> alive = alive_;
  // The entries read to validate are the ones to copy unless settling appends one (an aborted
  // answer): then the file is read again (one read of the file instead of two otherwise).
  auto entries = std::make_shared<std::vector<Json>>(std::move(read));
  const auto count = recorder_->entry_count();
  auto leaf = recorder_->leaf_id();
  // A running tool batch ends first (its calls' abort results, the aborted turn, agent_end),
  // then the rest of the running work settles as new_session settles it (section 4.1 step 2).
  after_batch_aborted([this, alive, count, leaf = std::move(leaf), entries, copy = std::move(copy),
                       done = std::move(done)] {
    if (alive.expired()) return;
    cancel_everything();
    if (recorder_->entry_count() != count || recorder_->leaf_id() != leaf) {
      auto all = recorder_->all_entries();
      if (!all) return done(all.error());
      *entries = std::move(*all);
    }
    auto copied = copy(std::move(*entries));
    if (!copied) return done(copied.error());
    take_up_copy(std::move(*copied));
    done(ok());
  });
}

void AgentSession::take_up_copy(std::vector<Json> copied) {
  end_session_hooks("fork");  // the old session's, with its id
  // parentSession names the file the command copied from, when there is one on disk.
  const std::optional<std::string> source = recorder_->on_disk() ? recorder_->path() : std::nullopt;
  const std::int64_t now = deps_.scheduler.now_epoch_ms();
  session_id_ = new_session_id();
  prompt_id_.reset();
  RestoredSession restored = restore_session(copied);
  stats_ = restored.stats;
  context_ = restored.take_context();
  // The new file goes beside the one it was copied from (section 4.2).
  std::optional<std::string> path = deps_.storage.new_session_path(session_id_, now);
  if (path && source) {
    path = (std::filesystem::path(*source).parent_path() / std::filesystem::path(*path).filename())
               .string();
  }
  SessionHeader header{session_id_, iso_timestamp(now), deps_.storage.cwd(), source};
  recorder_ = std::make_unique<SessionRecorder>(
      deps_.storage, [this] { return deps_.scheduler.now_epoch_ms(); }, std::move(header),
      std::move(path));
  recorder_->adopt(std::move(copied));
  // The model and level the session really has, where the copied path says otherwise.
  if (restored.provider != model_.provider || restored.model_id != model_.id) {
    recorder_->append(model_change_entry(model_.provider, model_.id));
  }
  if (restored.thinking_level != thinking_level_) {
    recorder_->append(thinking_level_change_entry(thinking_level_));
  }
  refresh_system_prompt();
  start_session_hooks("fork");
}

Result<std::string> AgentSession::export_html(const std::optional<std::string>& output_path) const {
  auto all = recorder_->all_entries();
  if (!all) return all.error();
  const auto path = active_path(*all);
  if (!path_has_message(*all, path)) {
    return Error{ErrorKind::failed, "Nothing to export yet - start a conversation first"};
  }
  if (!deps_.export_html) return Error{ErrorKind::failed, "Export is not available"};
  ExportRequest request;
  request.entries = take_path(*all, path);
  request.session_id = session_id_;
  request.session_file = recorder_->path();
  request.session_name = recorder_->name();
  request.cwd = deps_.storage.cwd();
  request.model = model_.provider + "/" + model_.id;
  request.output_path = output_path;
  request.now_ms = deps_.scheduler.now_epoch_ms();
  return deps_.export_html(std::move(request));
}

Status AgentSession::set_session_name(const std::string& name, bool announce) {
  const std::string trimmed = trim_unicode_space(name);
  if (trimmed.empty()) return Error{ErrorKind::failed, "Session name cannot be empty"};
  recorder_->append(session_info_entry(trimmed));
  if (announce) emit(ev::SessionInfoChanged{trimmed});
  return ok();
}

void AgentSession::expand_prompt(UserInput& input) const {
  if (prompts_.empty() || input.text.empty() || input.text[0] != '/') return;
  std::string warning;
  if (auto expanded = prompts_.expand(input.text, deps_.read_prompt_file, &warning)) {
    input.text = std::move(*expanded);
  } else if (!warning.empty()) {
    spdlog::warn("{}; the message is sent unchanged", warning);
  }
}

std::vector<Json> AgentSession::command_list() const {
  std::vector<Json> out;
  if (commands_) out = commands_->list();
  for (auto& entry : prompts_.command_entries())
    out.push_back(std::move(entry));
  return out;
}

void AgentSession::emit_queue_update() {
  std::vector<std::string> steering, follow_up;
  for (const auto& q : steering_)
    steering.push_back(q.input.text);
  for (const auto& q : follow_up_)
    follow_up.push_back(q.input.text);
  emit(ev::QueueUpdate{steering, follow_up});
}

}  // namespace rebound::session
