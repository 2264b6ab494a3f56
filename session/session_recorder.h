#pragma once
// Records a session's entries (runtime.md section 4): each new entry gets an 8-character id,
// the previous entry as its parent and a timestamp. A new session's entries wait in memory until
// the first assistant message (an error counts) exists; then the header and everything so far
// are written, and from then on each entry is appended as one line with a single write. A write
// that fails is logged and retried with the next entry, so nothing is dropped while the
// process lives. On the session's event loop only.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "protocol/json.h"
#include "protocol/messages.h"
#include "session/error.h"
#include "session/session_file.h"
#include "session/session_storage.h"
#include "session/session_tree.h"

namespace rebound::session {

class SessionRecorder {
 public:
  using Clock = std::function<std::int64_t()>;  // epoch milliseconds

  /// A new session whose file (if `path`) is written once an assistant message exists.
  SessionRecorder(SessionStorage& storage, Clock now, SessionHeader header,
                  std::optional<std::string> path);
  /// A session resumed from `path`: its entries are on disk already.
  SessionRecorder(SessionStorage& storage, Clock now, std::string path, LoadedSession loaded);

  /// A resumed or copied file's entry, held as its place in the file instead of its JSON.
  struct FileEntry {
    std::string id;
    std::int32_t parent = -1;  // the index of its parent among the file's entries
    EntryLine line;
  };
  /// A fork's or clone's copy (sessions.md section 4.2) written at once in one write: the
  /// header, then `lines` (the copied entries' lines, each with its LF, as read; adjacent ones
  /// may be one part), `entries` their places in them taken as one text. Null when the file
  /// cannot be written: copy the entries as JSON then (adopt()), which keeps them in memory
  /// until a write succeeds.
  static std::unique_ptr<SessionRecorder> write_copy(SessionStorage& storage, Clock now,
                                                     SessionHeader header, std::string path,
                                                     const std::vector<std::string_view>& lines,
                                                     std::vector<FileEntry> entries,
                                                     std::optional<std::string> name);

  /// The file's path: where it is, or will be once written. None with --no-session.
  const std::optional<std::string>& path() const { return path_; }
  const SessionHeader& header() const { return header_; }
  /// The entries this recorder appended (a resumed file's own entries are not held).
  const std::vector<protocol::Json>& entries() const { return entries_; }
  /// The id of the last entry (the leaf), or "" when there is none.
  std::string leaf_id() const;
  /// Whether the file exists (written or resumed).
  bool on_disk() const { return on_disk_; }

  /// Every entry of the session in append order, as stored (sessions.md section 6): a resumed
  /// file's own entries are read from it again, then those this recorder appended. The error
  /// when the file cannot be read back.
  Result<std::vector<protocol::Json>> all_entries() const;
  /// The session's entries for fork, clone and get_fork_messages: a resumed or copied file's
  /// entries as their lines in `text` (the file read back when null), after checking that the
  /// file still begins with the lines it had when read (else, and for a storage that cannot read
  /// back, as JSON, as all_entries() reads them); the entries appended since, as JSON. The
  /// tree points into this recorder: use it before anything is appended. The error when the
  /// file cannot be read back.
  Result<EntryTree> tree(std::shared_ptr<const FileBytes> text = nullptr) const;
  /// How many entries the session has.
  std::size_t entry_count() const { return loaded_count_ + entries_.size(); }
  /// The session's name: the last `session_info` entry's on the active path (sessions.md 5).
  const std::optional<std::string>& name() const { return name_; }

  /// Appends an entry body (see session_file.h); returns its id.
  std::string append(protocol::Json body);
  /// A fork's or clone's copied entries (sessions.md section 4.2), taken verbatim with their
  /// ids, before anything is appended: written at once when one is an assistant message.
  void adopt(std::vector<protocol::Json> entries);
  std::string append_message(const protocol::AgentMessage& message);

 private:
  std::string new_id();
  void write_pending();
  /// A file this recorder creates: its writer lock (amendments A3), taken once it exists.
  void take_lock();

  SessionStorage& storage_;
  Clock now_;
  SessionHeader header_;
  std::optional<std::string> path_;
  std::vector<protocol::Json> entries_;
  std::set<std::string> ids_;
  std::string loaded_leaf_;       // a resumed file's last entry id
  std::size_t loaded_count_ = 0;  // a resumed file's entries (on disk, not held)
  // Their places in the file (empty when they cannot be used: a storage that does not give
  // them, a last line without LF, an id used twice), and what the file's lines were.
  std::vector<FileEntry> file_entries_;
  FileFingerprint fingerprint_;
  std::optional<std::string> name_;
  bool on_disk_ = false;         // the file exists with its header
  bool header_pending_ = false;  // a new file: the header goes first
  std::size_t written_ = 0;      // entries_[0, written_) are on disk
  std::unique_ptr<SessionFileSink> sink_;
  bool warned_ = false;
  std::shared_ptr<void> lock_;  // the file's writer lock while this recorder may append
};

}  // namespace rebound::session
