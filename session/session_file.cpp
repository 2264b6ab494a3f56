#include "session/session_file.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <map>
#include <nlohmann/json.hpp>

#include "protocol/json_access.h"
#include "protocol/json_line.h"

namespace rebound::session {

using protocol::AgentMessage;
using protocol::Json;

namespace {

bool is_string_or_null(const Json& j) {
  return j.is_string() || j.is_null();
}

// A slim message entry's place in LoadedSession::messages (parse_session_file without
// keep_messages).
constexpr const char* kMessageKey = "_message";

// A usable entry: an object with string type and id, a parentId that is a string or null, and
// for a message entry a message that reads back.
// Why an entry line cannot be used, or nullopt; a message entry's message, converted to check
// it, is left in `message` when asked for.
std::optional<std::string> entry_problem(const Json& e,
                                         std::optional<AgentMessage>* message = nullptr) {
  if (!e.is_object()) return "not a JSON object";
  if (!protocol::get_value(e, "type").is_string()) return "no string 'type'";
  if (!protocol::get_value(e, "id").is_string()) return "no string 'id'";
  if (!e.contains("parentId") || !is_string_or_null(e["parentId"])) return "no 'parentId'";
  if (e["type"] == "message") {
    std::string error;
    auto m = protocol::message_from_json(protocol::get_value(e, "message"), &error);
    if (!m) return error;
    if (message) *message = std::move(m);
  }
  if (e["type"] == "custom_message") {
    if (!protocol::get_value(e, "customType").is_string()) return "no string 'customType'";
    const Json& content = protocol::get_value(e, "content");
    if (!content.is_string() && !content.is_array()) return "no 'content' string or array";
  }
  return std::nullopt;
}

// pi's custom_message entry (extensions.md section 7.4) as the custom message it holds.
Json custom_entry_message(const Json& e) {
  Json m = Json::object();
  m["role"] = "custom";
  for (const char* key : {"customType", "content", "display", "details"}) {
    if (const auto it = e.find(key); it != e.end()) m[key] = *it;
  }
  m["timestamp"] = parse_iso_timestamp(protocol::get_string(e, "timestamp")).value_or(0);
  return m;
}

bool is_error_message(const AgentMessage& m) {
  return m.is_assistant() && m.stop_reason == protocol::StopReason::error;
}

// One step of FileFingerprint's hash: a 64-bit word folded in by multiplication.
std::uint64_t fold_word(std::uint64_t h, std::uint64_t word) {
  h = (h ^ word) * 0x9E3779B97F4A7C15ull;
  return h ^ (h >> 29);
}

}  // namespace

EntryKind entry_kind(const Json& entry) {
  const std::string type = protocol::get_string(entry, "type");
  if (type == "message") {
    const std::string role = protocol::get_string(protocol::get_value(entry, "message"), "role");
    return role == "user"        ? EntryKind::user_message
           : role == "assistant" ? EntryKind::assistant_message
                                 : EntryKind::other_message;
  }
  if (type == "custom_message") return EntryKind::custom_message;
  if (type == "compaction") return EntryKind::compaction;
  if (type == "session_info") return EntryKind::session_info;
  if (type == "model_change") return EntryKind::model_change;
  if (type == "thinking_level_change") return EntryKind::thinking_level_change;
  return EntryKind::other;
}

void FileFingerprint::fold_block(const char* block) {
  for (std::size_t lane = 0; lane < 4; ++lane) {
    std::uint64_t word = 0;
    std::memcpy(&word, block + 8 * lane, 8);
    const std::uint64_t h = (lanes_[lane] ^ word) * 0x9E3779B97F4A7C15ull;
    lanes_[lane] = (h << 27) | (h >> 37);
  }
}

void FileFingerprint::add(std::string_view data) {
  std::size_t i = 0;
  bytes_ += data.size();
  if (carry_bytes_ > 0) {
    const std::size_t take = std::min(kBlock - carry_bytes_, data.size());
    std::memcpy(carry_ + carry_bytes_, data.data(), take);
    carry_bytes_ += take;
    i = take;
    if (carry_bytes_ < kBlock) return;
    fold_block(carry_);
    carry_bytes_ = 0;
  }
  for (; i + kBlock <= data.size(); i += kBlock)
    fold_block(data.data() + i);
  std::memcpy(carry_, data.data() + i, data.size() - i);
  carry_bytes_ = data.size() - i;
}

void FileFingerprint::add_line(std::string_view line) {
  add(line);
  add("\n");
}

std::uint64_t FileFingerprint::value() const {
  std::uint64_t h = bytes_;
  for (std::uint64_t lane : lanes_)
    h = fold_word(h, lane);
  for (std::size_t i = 0; i < carry_bytes_; i += 8) {
    std::uint64_t word = 0;
    std::memcpy(&word, carry_ + i, std::min<std::size_t>(8, carry_bytes_ - i));
    h = fold_word(h, word);
  }
  return h;
}

bool FileFingerprint::matches(const FileFingerprint& read) const {
  return complete && read.bytes_ == bytes_ && read.value() == value();
}

Json to_json(const SessionHeader& h) {
  Json j = Json::object();
  j["type"] = "session";
  j["version"] = kSessionFileVersion;
  j["id"] = h.id;
  j["timestamp"] = h.timestamp;
  j["cwd"] = h.cwd;
  if (h.parent_session) j["parentSession"] = *h.parent_session;
  return j;
}

std::string iso_timestamp(std::int64_t epoch_ms) {
  const std::time_t seconds = static_cast<std::time_t>(epoch_ms / 1000);
  std::tm tm{};
  ::gmtime_r(&seconds, &tm);
  char buf[96];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<int>(epoch_ms % 1000));
  return buf;
}

std::optional<std::int64_t> parse_iso_timestamp(std::string_view text) {
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0, ms = 0;
  const std::string copy(text.substr(0, 40));
  const int n =
      std::sscanf(copy.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d.%3dZ", &y, &mo, &d, &h, &mi, &s, &ms);
  if (n < 6) return std::nullopt;
  std::tm tm{};
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = s;
  const std::time_t t = ::timegm(&tm);
  if (t == static_cast<std::time_t>(-1)) return std::nullopt;
  return static_cast<std::int64_t>(t) * 1000 + (n == 7 ? ms : 0);
}

Json message_entry(const AgentMessage& message) {
  Json j = Json::object();
  if (message.role == protocol::Role::custom) {
    // pi's own entry for these: the message's keys, without role and timestamp.
    j["type"] = "custom_message";
    Json m = protocol::to_json(message);
    for (auto& [key, value] : m.items()) {
      if (key != "role" && key != "timestamp") j[key] = std::move(value);
    }
    return j;
  }
  j["type"] = "message";
  j["message"] = protocol::to_json(message);
  return j;
}

Json model_change_entry(const std::string& provider, const std::string& model_id) {
  Json j = Json::object();
  j["type"] = "model_change";
  j["provider"] = provider;
  j["modelId"] = model_id;
  return j;
}

Json thinking_level_change_entry(protocol::ThinkingLevel level) {
  Json j = Json::object();
  j["type"] = "thinking_level_change";
  j["thinkingLevel"] = protocol::to_string(level);
  return j;
}

Json compaction_entry(const std::string& summary, const std::string& first_kept_entry_id,
                      std::int64_t tokens_before, const std::string& reason) {
  Json j = Json::object();
  j["type"] = "compaction";
  j["summary"] = summary;
  j["firstKeptEntryId"] = first_kept_entry_id;
  j["tokensBefore"] = tokens_before;
  j["reason"] = reason;
  return j;
}

SessionFileParser::SessionFileParser(const std::atomic<bool>* cancelled, bool keep_messages,
                                     std::size_t size_hint)
    : cancelled_(cancelled), keep_messages_(keep_messages) {
  // Room for a message every 512 bytes (a message line is rarely shorter; more only moves them
  // once more), at most 256 Ki messages ahead: pages not yet written are not resident.
  if (!keep_messages) out_.messages.reserve(std::min<std::size_t>(size_hint / 512, 1u << 18));
}

bool SessionFileParser::line(std::string_view line, bool complete) {
  if (error_) return false;
  ++line_no_;
  const std::uint64_t at = offset_;
  offset_ += line.size() + (complete ? 1 : 0);
  if (complete) {
    out_.fingerprint.add_line(line);
  } else {
    out_.fingerprint.complete = false;
  }
  if (cancelled_ && cancelled_->load(std::memory_order_relaxed)) {
    error_ = "cancelled";
    return false;
  }
  if (line.find_first_not_of(" \t\r") == std::string_view::npos) return true;
  protocol::JsonLine parsed = protocol::parse_json_line(line);
  Json j = parsed.value ? std::move(*parsed.value) : Json(Json::value_t::discarded);
  LoadedSession& out = out_;
  if (!have_header_) {
    if (j.is_discarded() || !j.is_object() || protocol::get_string(j, "type") != "session") {
      error_ = "not a session file: line 1 is not a session header";
      return false;
    }
    const Json& version = protocol::get_value(j, "version");
    if (!version.is_number_integer() || version.get<std::int64_t>() != kSessionFileVersion) {
      error_ = "unsupported session file version " +
               (version.is_null() ? "(none)" : version.dump()) + " (this server reads version 3)";
      return false;
    }
    out.header.id = protocol::get_string(j, "id");
    out.header.timestamp = protocol::get_string(j, "timestamp");
    out.header.cwd = protocol::get_string(j, "cwd");
    if (const Json& p = protocol::get_value(j, "parentSession"); p.is_string()) {
      out.header.parent_session = p.get<std::string>();
    }
    if (out.header.id.empty()) {
      error_ = "not a session file: the header has no id";
      return false;
    }
    have_header_ = true;
    return true;
  }
  const std::string where = "line " + std::to_string(line_no_) + ": ";
  if (j.is_discarded() && !complete) {
    out.warnings.push_back(where + "torn last line skipped (" + std::to_string(line.size()) +
                           " bytes; the writer stopped mid-line)");
    return true;
  }
  if (j.is_discarded()) {
    // Invalid UTF-8 or nesting past protocol::kMaxJsonDepth is named; neither is read.
    const std::string why = parsed.what == protocol::kInvalidJson ? "not valid JSON" : parsed.what;
    out.warnings.push_back(where + why + ", skipped");
    return true;
  }
  std::optional<AgentMessage> message;
  if (auto problem = entry_problem(j, keep_messages_ ? nullptr : &message)) {
    out.warnings.push_back(where + "entry skipped: " + *problem);
    return true;
  }
  if (message) {
    // The message as converted to check it; its JSON tree is freed now, and its slim entry
    // made at the end.
    const Json& parent = j["parentId"];
    slim_.push_back({out.entries.size(), std::move(j["id"].get_ref<std::string&>()),
                     parent.is_string() ? std::optional<std::string>(parent.get<std::string>())
                                        : std::nullopt});
    const EntryKind kind = message->role == protocol::Role::user ? EntryKind::user_message
                           : message->role == protocol::Role::assistant
                               ? EntryKind::assistant_message
                               : EntryKind::other_message;
    out.lines.push_back({at, static_cast<std::uint32_t>(line.size()), kind});
    out.messages.push_back(std::move(*message));
    out.entries.emplace_back();
    return true;
  }
  out.lines.push_back({at, static_cast<std::uint32_t>(line.size()), entry_kind(j)});
  out.entries.push_back(std::move(j));  // moved: a copy doubled the peak of a large file
  return true;
}

Result<LoadedSession> SessionFileParser::finish() {
  if (error_) return failure(*error_);
  if (!have_header_) return failure("not a session file: it has no header");
  for (std::size_t k = 0; k < slim_.size(); ++k) {
    Json& slim = out_.entries[slim_[k].entry];
    slim = Json::object();
    slim["type"] = "message";
    slim["id"] = std::move(slim_[k].id);
    slim["parentId"] = slim_[k].parent_id ? Json(std::move(*slim_[k].parent_id)) : Json(nullptr);
    slim[kMessageKey] = k;
  }
  slim_ = {};
  return std::move(out_);
}

Result<LoadedSession> parse_session_file(std::string_view text, const std::atomic<bool>* cancelled,
                                         bool keep_messages) {
  SessionFileParser parser(cancelled, keep_messages);
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t lf = text.find('\n', pos);
    const bool complete = lf != std::string_view::npos;
    const std::string_view line = text.substr(pos, (complete ? lf : text.size()) - pos);
    pos = complete ? lf + 1 : text.size();
    if (!parser.line(line, complete)) break;
  }
  return parser.finish();
}

namespace {

// restore_session's work; with `release`, each message entry's "message" member is freed
// once converted (the entries then hold ids and types only).
RestoredSession restore_entries(const std::vector<Json>& entries, std::vector<Json>* release,
                                std::vector<AgentMessage>* converted) {
  RestoredSession out;
  if (entries.empty()) return out;
  std::map<std::string, std::size_t> by_id;
  for (std::size_t i = 0; i < entries.size(); ++i)
    by_id[entries[i]["id"].get<std::string>()] = i;

  // The path from the leaf back to the root; a parent seen before (a cycle) ends it.
  std::vector<const Json*> path;
  std::vector<bool> seen(entries.size(), false);
  for (std::size_t i = entries.size() - 1; !seen[i];) {
    seen[i] = true;
    path.push_back(&entries[i]);
    const Json& parent = entries[i]["parentId"];
    if (!parent.is_string()) break;
    auto it = by_id.find(parent.get<std::string>());
    if (it == by_id.end()) break;
    i = it->second;
  }
  std::reverse(path.begin(), path.end());
  // A linear file (its messages all on the path, in file order, no custom messages): the
  // converted messages are the history as they are, taken whole instead of moved one by one.
  bool in_place = converted != nullptr && !converted->empty();
  std::size_t expected = 0;
  for (std::size_t k = 0; in_place && k < path.size(); ++k) {
    const Json& type = (*path[k])["type"];
    if (type == "custom_message") in_place = false;
    if (type != "message") continue;
    const auto at = path[k]->find(kMessageKey);
    in_place = at != path[k]->end() && at->get<std::size_t>() == expected++;
  }
  in_place = in_place && expected == converted->size();
  if (in_place) {
    out.history = std::move(*converted);
    converted->clear();
  } else {
    out.history.reserve(path.size() + 1);  // the messages, and room for take_context's summary
  }
  std::size_t next_in_place = 0;

  struct Item {
    std::string id;
    std::size_t message = 0;                // its index in out.history
    std::optional<std::size_t> compaction;  // a compaction boundary (entry index), no message
  };
  std::vector<Item> messages;  // the path's messages, in order
  std::optional<std::size_t> last_compaction;
  std::vector<std::size_t> removed_by_overflow;
  for (const Json* e : path) {
    const std::string type = (*e)["type"].get<std::string>();
    if (in_place && type == "message") {
      AgentMessage& m = out.history[next_in_place];
      m.entry_id = (*e)["id"].get<std::string>();
      messages.push_back({m.entry_id, next_in_place++, std::nullopt});
      out.stats.add(m);
    } else if (type == "message" || type == "custom_message") {
      Json reparsed;
      const Json* body = &reparsed;
      std::optional<AgentMessage> m;
      if (type == "custom_message") {
        reparsed = custom_entry_message(*e);
      } else if (const auto at = e->find(kMessageKey); at != e->end()) {
        // A slim entry (parse_session_file without its messages): converted already.
        const auto index = at->get<std::size_t>();
        // Each slim entry names its own message, so each is taken once.
        if (converted && index < converted->size()) m = std::move((*converted)[index]);
      } else if (const auto message = e->find("message"); message != e->end()) {
        body = &*message;
      }
      if (!m) m = protocol::message_from_json(*body);
      if (!m) continue;  // only a slim entry without its message (never from the parser)
      m->entry_id = (*e)["id"].get<std::string>();
      messages.push_back({m->entry_id, out.history.size(), std::nullopt});
      out.stats.add(*m);
      out.history.push_back(std::move(*m));
      if (release) (*release)[static_cast<std::size_t>(e - &entries[0])].erase("message");
    } else if (type == "model_change") {
      out.provider = protocol::get_string(*e, "provider");
      out.model_id = protocol::get_string(*e, "modelId");
    } else if (type == "thinking_level_change") {
      if (auto l = protocol::thinking_level_from_string(protocol::get_string(*e, "thinkingLevel")))
        out.thinking_level = *l;
    } else if (type == "compaction") {
      last_compaction = static_cast<std::size_t>(e - &entries[0]);
      if (!messages.empty()) {
        const std::string reason = protocol::get_string(*e, "reason");
        const auto& before = messages.back();
        const bool overflow =
            reason == "overflow" ||
            (reason.empty() && !before.compaction && is_error_message(out.history[before.message]));
        if (overflow) removed_by_overflow.push_back(messages.size() - 1);
      }
      messages.push_back({{}, 0, last_compaction});
    }
  }

  // Which messages the live session would still have.
  std::vector<bool> keep(messages.size(), true);
  for (std::size_t i : removed_by_overflow)
    keep[i] = false;
  for (std::size_t i = 0; i < messages.size(); ++i) {
    if (messages[i].compaction) {
      keep[i] = false;
      continue;
    }
    const AgentMessage& m = out.history[messages[i].message];
    if (!is_error_message(m)) continue;
    std::size_t next = i + 1;
    while (next < messages.size() && messages[next].compaction)
      ++next;
    const bool retried =
        next < messages.size() && out.history[messages[next].message].is_assistant();
    if (m.content.empty() || retried) keep[i] = false;
  }

  std::size_t from = 0;
  if (last_compaction) {
    const Json& c = entries[*last_compaction];
    AgentMessage summary;
    summary.role = protocol::Role::compaction_summary;
    summary.summary = protocol::get_string(c, "summary");
    summary.tokens_before = protocol::get_int(c, "tokensBefore");
    summary.timestamp = parse_iso_timestamp(protocol::get_string(c, "timestamp")).value_or(0);
    out.summary = std::move(summary);
    std::size_t boundary = 0;
    while (messages[boundary].compaction != last_compaction)
      ++boundary;
    from = boundary + 1;
    const std::string first_kept = protocol::get_string(c, "firstKeptEntryId");
    for (std::size_t i = 0; i < boundary; ++i) {
      if (!messages[i].compaction && messages[i].id == first_kept) {
        from = i;
        break;
      }
    }
  }
  for (std::size_t i = from; i < messages.size(); ++i) {
    if (keep[i]) out.in_context.push_back(messages[i].message);
  }
  return out;
}

}  // namespace

std::vector<AgentMessage> RestoredSession::context() const {
  std::vector<AgentMessage> out;
  out.reserve(in_context.size() + (summary ? 1 : 0));
  if (summary) out.push_back(*summary);
  for (std::size_t i : in_context)
    out.push_back(history[i]);
  return out;
}

std::vector<AgentMessage> RestoredSession::take_context() {
  // In place: the context's messages are a subsequence of the history (indices ascending), and
  // the history has room for the summary in front; a second vector of a large conversation
  // would double the load's peak.
  std::size_t n = 0;
  for (std::size_t i : in_context) {
    if (i != n) history[n] = std::move(history[i]);
    ++n;
  }
  history.resize(n);
  if (summary) history.insert(history.begin(), std::move(*summary));
  summary.reset();
  in_context.clear();
  return std::move(history);
}

RestoredSession restore_session(const std::vector<Json>& entries) {
  return restore_entries(entries, nullptr, nullptr);
}

RestoredSession restore_session_releasing(LoadedSession& loaded) {
  auto out = restore_entries(loaded.entries, &loaded.entries, &loaded.messages);
  loaded.messages = {};  // the messages off the path
  return out;
}

}  // namespace rebound::session
