#pragma once
// The session file format of runtime.md section 4 (JSONL, version 3, as the pi agent writes it):
// the header, the entries, parsing a file's text with the crash rules (a torn last line, a
// malformed line elsewhere), and rebuilding the runtime context from the path to the leaf.
// Pure: the bytes come from and go to SessionStorage.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/json.h"
#include "protocol/messages.h"
#include "protocol/wire_types.h"
#include "session/error.h"
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

/// What an entry is, as far as the commands that copy a file's lines need to know (fork, clone).
enum class EntryKind : std::uint8_t {
  user_message,
  assistant_message,
  other_message,  // a message entry of another role
  custom_message,
  compaction,
  session_info,
  model_change,
  thinking_level_change,
  other,
};
EntryKind entry_kind(const protocol::Json& entry);

/// Where an entry's line is in its file (the JSON text, without its LF).
struct EntryLine {
  std::uint64_t offset = 0;
  std::uint32_t length = 0;
  EntryKind kind = EntryKind::other;
};

/// What a file's first bytes were when it was read: a 64-bit hash of them, taken as they
/// stream by. A later reader checks its copy against it before taking lines by their places.
class FileFingerprint {
 public:
  /// Folds more bytes in.
  void add(std::string_view bytes);
  /// add() of a line and its LF.
  void add_line(std::string_view line);
  /// How many bytes were folded in.
  std::uint64_t bytes() const { return bytes_; }
  /// Whether `read` was taken of the same bytes (and every line read was whole).
  bool matches(const FileFingerprint& read) const;

  bool complete = true;  // every line read ended in LF (else places are not taken)

 private:
  static constexpr std::size_t kBlock = 32;  // four words, folded in four lanes side by side
  void fold_block(const char* block);
  std::uint64_t value() const;
  std::uint64_t lanes_[4] = {1, 2, 3, 4};
  std::uint64_t bytes_ = 0;
  char carry_[kBlock] = {};  // the bytes of a block begun (carry_bytes_ of them)
  std::size_t carry_bytes_ = 0;
};

struct LoadedSession {
  SessionHeader header;
  std::vector<protocol::Json> entries;  // the valid entry lines, in file order
  std::vector<EntryLine> lines;         // where each of `entries` is in the file
  FileFingerprint fingerprint;          // of every line read
  /// The messages of slim message entries (parse_session_file without keep_messages), in file
  /// order: for a linear file, the restore takes the whole vector as its history.
  std::vector<protocol::AgentMessage> messages;
  std::vector<std::string> warnings;  // what was skipped, with line numbers
  /// restore_session(entries), when the loader computed it already (off the event loop).
  std::optional<RestoredSession> restored;
  /// The file's writer lock (amendments A3), taken by a load for taking the session up; held
  /// by its recorder until it lets go of the file. Null from a storage without locks.
  std::shared_ptr<void> lock;
};

/// Parses a session file's text. The error text says why a file cannot be used at all (no
/// header, a header that is not a session header, a version other than 3).
/// `cancelled`, checked per line, ends the parse early with an error ("cancelled"). Without
/// `keep_messages`, a message entry keeps only its type and ids, and its message (converted to
/// check it anyway) goes to LoadedSession::messages: a loader's way to hold the conversation
/// once, as messages, instead of every entry's JSON tree.
Result<LoadedSession> parse_session_file(std::string_view text,
                                         const std::atomic<bool>* cancelled = nullptr,
                                         bool keep_messages = true);

/// parse_session_file a line at a time, for a loader that reads the file in pieces.
class SessionFileParser {
 public:
  /// `size_hint`: the file's size, for reserving room for its messages at once.
  explicit SessionFileParser(const std::atomic<bool>* cancelled = nullptr,
                             bool keep_messages = true, std::size_t size_hint = 0);
  /// One line without its LF (`complete`: it had one; only the file's last line may not).
  /// False once the file cannot be used (or `cancelled`): further lines are not read.
  bool line(std::string_view line, bool complete);
  /// The session, or why the file cannot be used.
  Result<LoadedSession> finish();

 private:
  const std::atomic<bool>* cancelled_;
  bool keep_messages_;
  bool have_header_ = false;
  std::size_t line_no_ = 0;
  std::uint64_t offset_ = 0;  // where the next line begins
  std::optional<std::string> error_;
  LoadedSession out_;
  // Slim message entries, made at finish(): made line by line, their small allocations lay
  // among the messages' strings and, freed once the session is taken up, left holes no page of
  // which could go back to the system (about 370 bytes a message held for nothing).
  struct Slim {
    std::size_t entry = 0;  // its place in out_.entries
    std::string id;
    std::optional<std::string> parent_id;
  };
  std::vector<Slim> slim_;
};

/// Rebuilds the session from the path root → leaf (the last entry): from the last compaction
/// on, its summary then the kept messages; leaving out an error message with no content or
/// followed by another assistant message (it was retried) and the message an overflow
/// compaction removed.
RestoredSession restore_session(const std::vector<protocol::Json>& entries);
/// The same, freeing each message entry's `message` as it is converted (the entries keep their
/// ids and types) and taking slim entries' messages out of `loaded.messages`: a loader's way to
/// hold the conversation once, not twice.
RestoredSession restore_session_releasing(LoadedSession& loaded);

}  // namespace rebound::session
