#include "session/session_recorder.h"

#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>
#include <random>
#include <unordered_map>

#include "protocol/json_access.h"
#include "protocol/json_line.h"
#include "session/session_tree.h"

namespace rebound::session {

using protocol::Json;

SessionRecorder::SessionRecorder(SessionStorage& storage, Clock now, SessionHeader header,
                                 std::optional<std::string> path)
    : storage_(storage), now_(std::move(now)), header_(std::move(header)), path_(std::move(path)) {
  header_pending_ = true;
}

SessionRecorder::SessionRecorder(SessionStorage& storage, Clock now, std::string path,
                                 LoadedSession loaded)
    : storage_(storage),
      now_(std::move(now)),
      header_(std::move(loaded.header)),
      path_(std::move(path)),
      on_disk_(true) {
  lock_ = std::move(loaded.lock);
  // The file's entries stay on disk: only their ids (unique ids for new entries) and the
  // leaf's are kept, not a second copy of the whole conversation.
  for (const auto& e : loaded.entries)
    ids_.insert(e["id"].get<std::string>());
  if (!loaded.entries.empty()) loaded_leaf_ = loaded.entries.back()["id"].get<std::string>();
  loaded_count_ = loaded.entries.size();
  // Slim message entries keep their ids and type, and session_info entries are whole.
  name_ = path_session_name(loaded.entries, active_path(loaded.entries));
  if (loaded.lines.size() != loaded_count_ || !loaded.fingerprint.complete ||
      ids_.size() != loaded_count_) {
    return;  // fork and clone read the file's entries as JSON
  }
  file_entries_.reserve(loaded_count_);
  for (std::size_t i = 0; i < loaded_count_; ++i)
    file_entries_.push_back({loaded.entries[i]["id"].get<std::string>(), -1, loaded.lines[i]});
  std::unordered_map<std::string_view, std::int32_t> by_id;  // the ids are unique here
  by_id.reserve(loaded_count_);
  for (std::size_t i = 0; i < loaded_count_; ++i)
    by_id.emplace(file_entries_[i].id, static_cast<std::int32_t>(i));
  for (std::size_t i = 0; i < loaded_count_; ++i) {
    const Json& parent = protocol::get_value(loaded.entries[i], "parentId");
    if (!parent.is_string()) continue;
    if (const auto it = by_id.find(parent.get_ref<const std::string&>()); it != by_id.end())
      file_entries_[i].parent = it->second;
  }
  fingerprint_ = loaded.fingerprint;
}

namespace {

// Nodes for entries held as JSON, after those `t` has, their parents linked.
void add_json_nodes(EntryTree& t, const std::vector<Json>& entries) {
  const std::size_t first = t.nodes.size();
  std::vector<std::optional<std::string_view>> parents;
  parents.reserve(entries.size());
  t.nodes.reserve(first + entries.size());
  for (const Json& e : entries) {
    const Json& parent = protocol::get_value(e, "parentId");
    parents.push_back(parent.is_string()
                          ? std::optional<std::string_view>(parent.get_ref<const std::string&>())
                          : std::nullopt);
    t.nodes.push_back(
        {protocol::get_value(e, "id").get_ref<const std::string&>(), {}, entry_kind(e), {}, &e});
  }
  t.link_from(first, parents);
}

}  // namespace

std::unique_ptr<SessionRecorder> SessionRecorder::write_copy(
    SessionStorage& storage, Clock now, SessionHeader header, std::string path,
    const std::vector<std::string_view>& lines, std::vector<FileEntry> entries,
    std::optional<std::string> name) {
  auto r = std::make_unique<SessionRecorder>(storage, std::move(now), std::move(header), path);
  std::string error;
  r->sink_ = storage.open_for_append(path, error);
  if (!r->sink_) return nullptr;
  r->take_lock();
  const std::string head = protocol::to_line(to_json(r->header_));
  std::vector<std::string_view> parts;
  parts.reserve(lines.size() + 1);
  parts.push_back(head);
  parts.insert(parts.end(), lines.begin(), lines.end());
  if (!r->sink_->append_parts(parts)) return nullptr;
  for (auto part : parts)
    r->fingerprint_.add(part);
  r->header_pending_ = false;
  r->on_disk_ = true;
  r->name_ = std::move(name);
  r->loaded_count_ = entries.size();
  if (!entries.empty()) r->loaded_leaf_ = entries.back().id;
  for (auto& e : entries) {
    e.line.offset += head.size();
    r->ids_.insert(e.id);
  }
  r->file_entries_ = std::move(entries);
  return r;
}

Result<EntryTree> SessionRecorder::tree(std::shared_ptr<const FileBytes> text) const {
  EntryTree t;
  if (loaded_count_ > 0) {
    bool by_place = path_ && file_entries_.size() == loaded_count_;
    if (by_place && !text) text = storage_.read_back(*path_, fingerprint_.bytes());
    by_place = by_place && text && fingerprint_.matches(text->fingerprint);
    if (!by_place) {
      // As JSON: the file's entries read again, then copies of the ones held.
      auto all = all_entries();
      if (!all) return all.error();
      t.owned = std::move(*all);
      add_json_nodes(t, t.owned);
      return t;
    }
    t.text = std::move(text);
    const std::string_view bytes = t.text->view();
    t.nodes.reserve(loaded_count_ + entries_.size());
    for (const FileEntry& e : file_entries_) {
      t.nodes.push_back({e.id,
                         e.parent < 0
                             ? std::nullopt
                             : std::optional<std::size_t>(static_cast<std::size_t>(e.parent)),
                         e.line.kind, bytes.substr(e.line.offset, e.line.length), nullptr});
    }
  }
  add_json_nodes(t, entries_);
  return t;
}

Result<std::vector<Json>> SessionRecorder::all_entries() const {
  std::vector<Json> out;
  if (loaded_count_ > 0 && path_) {
    auto loaded = storage_.load(*path_);
    if (!loaded) return loaded.error();
    auto& entries = loaded->entries;
    if (entries.size() < loaded_count_) {
      return Error{ErrorKind::failed, "The session file " + *path_ + " changed on disk"};
    }
    entries.resize(loaded_count_);
    out = std::move(entries);
  }
  out.reserve(out.size() + entries_.size());
  out.insert(out.end(), entries_.begin(), entries_.end());
  return out;
}

void SessionRecorder::adopt(std::vector<Json> entries) {
  bool assistant = false;
  for (auto& e : entries) {
    ids_.insert(protocol::get_string(e, "id"));
    assistant = assistant ||
                (protocol::get_string(e, "type") == "message" &&
                 protocol::get_string(protocol::get_value(e, "message"), "role") == "assistant");
    entries_.push_back(std::move(e));
  }
  name_ = path_session_name(entries_, active_path(entries_));
  if (assistant) write_pending();
}

std::string SessionRecorder::leaf_id() const {
  return entries_.empty() ? loaded_leaf_ : entries_.back()["id"].get<std::string>();
}

std::string SessionRecorder::new_id() {
  thread_local std::mt19937 rng{std::random_device{}()};
  static constexpr char kHex[] = "0123456789abcdef";
  for (;;) {
    std::string id(8, '0');
    const std::uint32_t r = rng();
    for (int i = 0; i < 8; ++i)
      id[i] = kHex[(r >> (4 * i)) & 0xF];
    if (ids_.insert(id).second) return id;
  }
}

std::string SessionRecorder::append(Json body) {
  Json entry = Json::object();
  entry["type"] = body["type"];
  entry["id"] = new_id();
  const std::string parent = leaf_id();
  entry["parentId"] = parent.empty() ? Json(nullptr) : Json(parent);
  entry["timestamp"] = iso_timestamp(now_());
  for (auto& [key, value] : body.items()) {
    if (key != "type") entry[key] = std::move(value);
  }
  const std::string id = entry["id"].get<std::string>();
  if (entry["type"] == "session_info") {
    const std::string name = protocol::get_string(entry, "name");
    name_ = name.empty() ? std::nullopt : std::optional<std::string>(name);
  }
  const bool assistant = entry["type"] == "message" && entry["message"]["role"] == "assistant";
  entries_.push_back(std::move(entry));
  if (on_disk_ || assistant) write_pending();
  return id;
}

std::string SessionRecorder::append_message(const protocol::AgentMessage& message) {
  return append(message_entry(message));
}

void SessionRecorder::take_lock() {
  if (lock_ || !path_) return;
  auto lock = storage_.lock(*path_);
  if (!lock) {
    // A new file's name: nobody else's to hold.
    spdlog::warn("{}; writing it anyway", lock.error().message);
    return;
  }
  lock_ = std::move(*lock);
}

void SessionRecorder::write_pending() {
  if (!path_) return;  // --no-session
  if (!sink_) {
    std::string error;
    sink_ = storage_.open_for_append(*path_, error);
    if (!sink_) {
      if (!warned_) spdlog::error("cannot write the session file {}: {}", *path_, error);
      warned_ = true;
      return;
    }
    take_lock();
  }
  std::string lines;
  if (header_pending_) lines += protocol::to_line(to_json(header_));
  for (std::size_t i = written_; i < entries_.size(); ++i)
    lines += protocol::to_line(entries_[i]);
  if (lines.empty()) return;
  if (!sink_->append(lines)) {
    if (!warned_) {
      spdlog::error(
          "cannot append to the session file {}; the entries are kept in memory and "
          "written with the next one",
          *path_);
    }
    warned_ = true;
    return;
  }
  if (warned_) spdlog::info("the session file {} is written again", *path_);
  warned_ = false;
  header_pending_ = false;
  on_disk_ = true;
  written_ = entries_.size();
}

}  // namespace rebound::session
