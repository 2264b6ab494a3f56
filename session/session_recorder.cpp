#include "session/session_recorder.h"

#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>
#include <random>

#include "protocol/json_line.h"

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
  // The file's entries stay on disk: only their ids (unique ids for new entries) and the
  // leaf's are kept, not a second copy of the whole conversation.
  for (const auto& e : loaded.entries)
    ids_.insert(e["id"].get<std::string>());
  if (!loaded.entries.empty()) loaded_leaf_ = loaded.entries.back()["id"].get<std::string>();
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
  const bool assistant = entry["type"] == "message" && entry["message"]["role"] == "assistant";
  entries_.push_back(std::move(entry));
  if (on_disk_ || assistant) write_pending();
  return id;
}

std::string SessionRecorder::append_message(const protocol::AgentMessage& message) {
  return append(message_entry(message));
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
