#pragma once
// The session file format of runtime.md section 4 (JSONL, version 3, as the pi agent writes it):
// the header, the entries, parsing a file's text with the crash rules (a torn last line, a
// malformed line elsewhere), and rebuilding the runtime context from the path to the leaf.
// Pure: the bytes come from and go to SessionStorage.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "protocol/json.h"
#include "protocol/messages.h"
#include "protocol/wire_types.h"
#include "session/message_stats.h"

namespace rebound::session {

inline constexpr int kSessionFileVersion = 3;

struct SessionHeader {
  std::string id;         // the session id
  std::string timestamp;  // ISO 8601
  std::string cwd;        // absolute
  std::optional<std::string> parent_session;
};

protocol::Json to_json(const SessionHeader& header);

/// ISO 8601 in UTC with milliseconds ("2026-11-30T08:38:02.123Z").
std::string iso_timestamp(std::int64_t epoch_ms);
/// The epoch milliseconds of such a timestamp, or nullopt.
std::optional<std::int64_t> parse_iso_timestamp(std::string_view text);

/// Entry bodies (without id, parentId and timestamp, which the recorder adds).
protocol::Json message_entry(const protocol::AgentMessage& message);
protocol::Json model_change_entry(const std::string& provider, const std::string& model_id);
protocol::Json thinking_level_change_entry(protocol::ThinkingLevel level);
/// `reason` ("overflow", "threshold", "manual") is an addition over pi's entry: an overflow
/// compaction removed the message before it from the context, and resuming must know that.
protocol::Json compaction_entry(const std::string& summary, const std::string& first_kept_entry_id,
                                std::int64_t tokens_before, const std::string& reason);

struct RestoredSession {
  std::vector<protocol::AgentMessage> history;  // every message on the path, failures included
  /// What the model sees next: `summary` (the last compaction's) then these messages of
  /// `history`, by index, in order. Indices, not copies: a loaded conversation is held once.
  std::optional<protocol::AgentMessage> summary;
  std::vector<std::size_t> in_context;
  MessageStats stats;                                     // over `history`
  std::optional<std::string> provider, model_id;          // the last model_change on the path
  std::optional<protocol::ThinkingLevel> thinking_level;  // the last thinking_level_change

  /// The context, copied.
  std::vector<protocol::AgentMessage> context() const;
  /// The context, moved out of the history in place (the history is left empty): use it last.
  std::vector<protocol::AgentMessage> take_context();
};

struct LoadedSession {
  SessionHeader header;
  std::vector<protocol::Json> entries;  // the valid entry lines, in file order
  std::vector<std::string> warnings;    // what was skipped, with line numbers
  /// restore_session(entries), when the loader computed it already (off the event loop).
  std::optional<RestoredSession> restored;
};

/// Parses a session file's text. The error text says why a file cannot be used at all (no
/// header, a header that is not a session header, a version other than 3).
/// `cancelled`, checked per line, ends the parse early with an error ("cancelled"). Without
/// `keep_messages`, a message entry keeps only its type, ids and where its line is in `text`
/// (restore_session_releasing parses it again then): a loader's way to hold the file's bytes
/// and a small index instead of every entry's JSON tree.
std::variant<LoadedSession, std::string> parse_session_file(
    std::string_view text, const std::atomic<bool>* cancelled = nullptr, bool keep_messages = true);

/// Rebuilds the session from the path root → leaf (the last entry): from the last compaction
/// on, its summary then the kept messages; leaving out an error message with no content or
/// followed by another assistant message (it was retried) and the message an overflow
/// compaction removed.
RestoredSession restore_session(const std::vector<protocol::Json>& entries);
/// The same, freeing each message entry's `message` as it is converted (the entries keep their
/// ids and types): a loader's way to hold the conversation once, not twice.
/// Slim entries are parsed again from `text`, the file's text they were parsed from.
RestoredSession restore_session_releasing(std::vector<protocol::Json>& entries,
                                          std::string_view text = {});

}  // namespace rebound::session
