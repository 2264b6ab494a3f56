// AgentSession: the session tree's commands (sessions.md sections 3 to 8): get_fork_messages,
// get_entries, fork, clone, set_session_name, and the queue_update event.

#include <spdlog/spdlog.h>

#include <algorithm>
#include <deque>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <unordered_set>

#include "protocol/json_access.h"
#include "session/agent_run.h"
#include "session/session_id.h"
#include "session/session_tree.h"

namespace rebound::session {

using protocol::AgentMessage;
using protocol::Json;

namespace {

constexpr const char* kInvalidForkEntry = "Invalid entry ID for forking";
constexpr const char* kNothingToClone = "Cannot clone session: no current entry selected";

bool is_message_kind(EntryKind kind) {
  return kind == EntryKind::user_message || kind == EntryKind::assistant_message ||
         kind == EntryKind::other_message;
}

bool path_has_message(const EntryTree& tree, const std::vector<std::size_t>& path) {
  return std::any_of(path.begin(), path.end(),
                     [&](std::size_t i) { return is_message_kind(tree.nodes[i].kind); });
}

// The last entry of `path` of `kind`, as JSON (null when there is none).
Json last_of_kind(const EntryTree& tree, const std::vector<std::size_t>& path, EntryKind kind) {
  for (auto it = path.rbegin(); it != path.rend(); ++it) {
    if (tree.nodes[*it].kind == kind) return tree.entry(*it);
  }
  return Json();
}

std::optional<AgentMessage> message_of(const EntryTree& tree, std::size_t i) {
  return protocol::message_from_json(protocol::get_value(tree.entry(i), "message"));
}

bool ended_in_error(const AgentMessage& m) {
  return m.is_assistant() && m.stop_reason == protocol::StopReason::error;
}

}  // namespace

Result<std::vector<ForkMessage>> AgentSession::fork_messages() const {
  auto tree = recorder_->tree();
  if (!tree) return tree.error();
  std::vector<ForkMessage> out;
  for (std::size_t i : tree->active_path()) {
    if (tree->nodes[i].kind != EntryKind::user_message) continue;
    auto text = user_entry_text(tree->entry(i));
    if (!text || text->empty()) continue;  // images only
    out.push_back({std::string(tree->nodes[i].id), std::move(*text)});
  }
  return out;
}

Result<EntriesText> AgentSession::entries(const std::optional<std::string>& since) const {
  auto tree = recorder_->tree();
  if (!tree) return tree.error();
  EntriesText page{std::move(*tree), 0};
  if (since) {
    const auto at = page.tree.find(*since);
    if (!at) return Error{ErrorKind::not_found, "Entry not found: " + *since};
    page.from = *at + 1;
  }
  return page;
}

void EntriesText::append_json(std::string& out) const {
  // The answer is as large as the entries: sized once, then each line copied in.
  // The brackets, the leaf id and what the envelope closes with, beside the entries.
  std::size_t size = 64 + (tree.nodes.empty() ? 0 : 2 * tree.nodes.back().id.size());
  for (std::size_t i = from; i < tree.nodes.size(); ++i)
    size += tree.nodes[i].json ? 256 : tree.nodes[i].line.size() + 1;
  out.reserve(out.size() + size);
  out += "{\"entries\":[";
  std::string held;
  for (std::size_t i = from; i < tree.nodes.size(); ++i) {
    if (i != from) out += ',';
    held.clear();
    std::string_view line = tree.line_of(i, held);
    if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
    out += line;
  }
  out += "],\"leafId\":";
  out += tree.nodes.empty() ? std::string("null") : Json(std::string(tree.nodes.back().id)).dump();
  out += '}';
}

void AgentSession::fork(const std::string& entry_id,
                        std::function<void(Result<std::string>)> done) {
  // Validated before anything settles (section 4.1 step 1).
  auto tree = recorder_->tree();
  if (!tree) return done(tree.error());
  const auto at = tree->find(entry_id);
  auto text = at ? user_entry_text(tree->entry(*at)) : std::nullopt;
  if (!text) return done(Error{ErrorKind::failed, kInvalidForkEntry});
  // The copy ends at the selected message's parent (nothing when it has none on file).
  auto point = [entry_id](const EntryTree& t) -> Result<std::optional<std::size_t>> {
    const auto selected = t.find(entry_id);
    if (!selected) return Error{ErrorKind::failed, kInvalidForkEntry};
    return t.nodes[*selected].parent;
  };
  fork_into_copy(std::move(tree->text), std::move(point),
                 [done = std::move(done), text = std::move(*text)](Status s) {
                   if (!s) return done(s.error());
                   done(text);
                 });
}

void AgentSession::clone(std::function<void(Status)> done) {
  auto tree = recorder_->tree();
  if (!tree) return done(tree.error());
  if (!path_has_message(*tree, tree->active_path())) {
    return done(Error{ErrorKind::failed, kNothingToClone});
  }
  auto leaf = [](const EntryTree& t) -> Result<std::optional<std::size_t>> {
    if (t.nodes.empty()) return std::optional<std::size_t>();
    return std::optional<std::size_t>(t.nodes.size() - 1);
  };
  fork_into_copy(std::move(tree->text), std::move(leaf), std::move(done));
}

void AgentSession::fork_into_copy(std::shared_ptr<const FileBytes> text, CopyPoint point,
                                  std::function<void(Status)> done) {
  std::weak_ptr<bool> alive = alive_;
  // A running tool batch ends first (its calls' abort results, the aborted turn, agent_end),
  // then the rest of the running work settles as new_session settles it (section 4.1 step 2).
  // The file was read once to validate: entries appended while settling are held in memory.
  after_batch_aborted([this, alive, text = std::move(text), point = std::move(point),
                       done = std::move(done)]() mutable {
    if (alive.expired()) return;
    cancel_everything();
    auto tree = recorder_->tree(std::move(text));
    if (!tree) return done(tree.error());
    auto at = point(*tree);
    if (!at) return done(at.error());
    take_up_copy(*tree, *at ? tree->chain_to(**at) : std::vector<std::size_t>());
    done(ok());
  });
}

std::optional<AgentSession::LiveCopy> AgentSession::live_copy(
    const EntryTree& tree, const std::vector<std::size_t>& kept) const {
  // The copy's context and counts are the live session's, less what comes after the fork
  // point, when that is what restoring the copied entries would give: the copy is the start of
  // the active path, no compaction is on that path, and the part left out is no longer than
  // the part kept (its messages are read to take their counts off).
  const auto active = tree.active_path();
  if (kept.size() > active.size() || !std::equal(kept.begin(), kept.end(), active.begin()) ||
      active.size() - kept.size() > kept.size()) {
    return std::nullopt;
  }
  LiveCopy out;
  out.stats = stats_;
  MessageStats dropped;
  std::unordered_set<std::string_view> dropped_ids;
  for (std::size_t k = 0; k < active.size(); ++k) {
    const auto& node = tree.nodes[active[k]];
    if (node.kind == EntryKind::compaction) return std::nullopt;
    if (k < kept.size()) continue;
    if (node.kind == EntryKind::custom_message) return std::nullopt;
    if (!is_message_kind(node.kind)) continue;
    auto m = message_of(tree, active[k]);
    if (!m) return std::nullopt;
    dropped.add(*m);
    dropped_ids.insert(node.id);
  }
  // What restore_session keeps of the copy's messages, beside the live context less the part
  // left out: the same messages in the same order, or the restore decides.
  out.keep.assign(context_.size(), false);
  std::size_t c = 0;  // the next message of the context
  auto next_kept = [&] {
    while (c < context_.size() && dropped_ids.count(context_[c].entry_id))
      ++c;
  };
  std::vector<std::size_t> messages;
  for (std::size_t i : kept) {
    const EntryKind kind = tree.nodes[i].kind;
    if (is_message_kind(kind) || kind == EntryKind::custom_message) messages.push_back(i);
  }
  for (std::size_t k = 0; k < messages.size(); ++k) {
    const bool retried =
        k + 1 < messages.size() && tree.nodes[messages[k + 1]].kind == EntryKind::assistant_message;
    const auto restored_keeps = [&](const AgentMessage& m) {
      return !ended_in_error(m) || (!m.content.empty() && !retried);
    };
    next_kept();
    const auto& node = tree.nodes[messages[k]];
    if (c < context_.size() && context_[c].entry_id == node.id) {
      if (!restored_keeps(context_[c])) return std::nullopt;
      out.keep[c++] = true;
      continue;
    }
    // Not in the live context: a failed attempt the restore must leave out too.
    if (node.kind != EntryKind::assistant_message) return std::nullopt;
    auto m = message_of(tree, messages[k]);
    if (!m || restored_keeps(*m)) return std::nullopt;
  }
  next_kept();
  if (c != context_.size()) return std::nullopt;  // a message of the context not on the path
  out.stats.subtract(dropped);
  return out;
}

void AgentSession::take_up_copy(const EntryTree& tree, const std::vector<std::size_t>& kept) {
  std::optional<LiveCopy> live = live_copy(tree, kept);
  const bool has_assistant = std::any_of(kept.begin(), kept.end(), [&](std::size_t i) {
    return tree.nodes[i].kind == EntryKind::assistant_message;
  });
  // The copied entries' lines (each file entry's line as read, adjacent ones as one part), when
  // the copy is written at once: it holds an assistant message (else it waits in memory as a
  // new session does).
  std::vector<std::string_view> lines;
  std::deque<std::string> serialised;  // the lines of entries held as JSON
  std::vector<SessionRecorder::FileEntry> places;
  if (has_assistant) {
    places.reserve(kept.size());
    std::uint64_t at = 0;
    for (std::size_t k = 0; k < kept.size(); ++k) {
      std::string held;
      std::string_view line = tree.line_of(kept[k], held);
      if (!held.empty()) line = serialised.emplace_back(std::move(held));
      if (!lines.empty() && lines.back().data() + lines.back().size() == line.data()) {
        lines.back() = {lines.back().data(), lines.back().size() + line.size()};
      } else {
        lines.push_back(line);
      }
      places.push_back(
          {std::string(tree.nodes[kept[k]].id),
           static_cast<std::int32_t>(k) - 1,
           {at, static_cast<std::uint32_t>(line.size() - 1), tree.nodes[kept[k]].kind}});
      at += line.size();
    }
  }
  // The copied entries as JSON, made when needed (a restore, or a copy not written at once).
  std::vector<Json> copied;
  bool have_json = false;
  auto as_json = [&] {
    if (have_json) return;
    have_json = true;
    copied.reserve(kept.size());
    for (std::size_t i : kept)
      copied.push_back(tree.entry(i));
  };
  const Json model = last_of_kind(tree, kept, EntryKind::model_change);
  std::optional<protocol::ThinkingLevel> copied_level;  // the last one that reads, as restored
  for (auto it = kept.rbegin(); it != kept.rend() && !copied_level; ++it) {
    if (tree.nodes[*it].kind != EntryKind::thinking_level_change) continue;
    copied_level = protocol::thinking_level_from_string(
        protocol::get_string(tree.entry(*it), "thinkingLevel"));
  }
  std::optional<std::string> name;
  if (const Json info = last_of_kind(tree, kept, EntryKind::session_info); !info.is_null()) {
    if (auto n = protocol::get_string(info, "name"); !n.empty()) name = std::move(n);
  }

  end_session_hooks("fork");  // the old session's, with its id
  // parentSession names the file the command copied from, when there is one on disk.
  const std::optional<std::string> source = recorder_->on_disk() ? recorder_->path() : std::nullopt;
  const std::int64_t now = deps_.scheduler.now_epoch_ms();
  session_id_ = new_session_id();
  prompt_id_.reset();
  if (live) {
    std::size_t n = 0;
    for (std::size_t i = 0; i < context_.size(); ++i) {
      if (!live->keep[i]) continue;
      if (i != n) context_[n] = std::move(context_[i]);
      ++n;
    }
    context_.resize(n);
    stats_ = live->stats;
  } else {
    as_json();
    RestoredSession restored = restore_session(copied);
    stats_ = restored.stats;
    context_ = restored.take_context();
  }
  // The new file goes beside the one it was copied from (section 4.2).
  std::optional<std::string> path = deps_.storage.new_session_path(session_id_, now);
  if (path && source) {
    path = (std::filesystem::path(*source).parent_path() / std::filesystem::path(*path).filename())
               .string();
  }
  SessionHeader header{session_id_, iso_timestamp(now), deps_.storage.cwd(), source};
  auto clock = [this] { return deps_.scheduler.now_epoch_ms(); };
  std::unique_ptr<SessionRecorder> written;
  if (path && has_assistant) {
    written = SessionRecorder::write_copy(deps_.storage, clock, header, *path, lines,
                                          std::move(places), name);
  }
  if (written) {
    recorder_ = std::move(written);
  } else {
    as_json();
    recorder_ =
        std::make_unique<SessionRecorder>(deps_.storage, clock, std::move(header), std::move(path));
    recorder_->adopt(std::move(copied));
  }
  // The model and level the session really has, where the copied path says otherwise (none on
  // it counts as otherwise).
  if (model.is_null() || protocol::get_string(model, "provider") != model_.provider ||
      protocol::get_string(model, "modelId") != model_.id) {
    recorder_->append(model_change_entry(model_.provider, model_.id));
  }
  if (copied_level != chosen_thinking_level_) {
    recorder_->append(thinking_level_change_entry(chosen_thinking_level_));
  }
  settle_unknown_outcomes();  // a copy that ends with calls without results (runtime.md 8)
  refresh_system_prompt();
  start_session_hooks("fork");
}

Result<std::string> AgentSession::export_html(const std::optional<std::string>& output_path) const {
  auto read = recorder_->tree();
  if (!read) return read.error();
  auto tree = std::make_shared<EntryTree>(std::move(*read));
  auto path = tree->active_path();
  if (!path_has_message(*tree, path)) {
    return Error{ErrorKind::failed, "Nothing to export yet - start a conversation first"};
  }
  if (!deps_.export_html) return Error{ErrorKind::failed, "Export is not available"};
  ExportRequest request;
  // The page is rendered an entry at a time: each is read (its line parsed) when its turn comes.
  request.count = path.size();
  request.kinds.reserve(path.size());
  for (std::size_t i : path)
    request.kinds.push_back(tree->nodes[i].kind);
  if (tree->text) request.size_hint = tree->text->view().size();
  request.entry = [tree, path = std::move(path)](std::size_t k) { return tree->entry(path[k]); };
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
