#pragma once
// Session files on disk (runtime.md section 4): where a new session's file goes (the agent
// directory's sessions/ folder per working directory, or --session-dir), loading with the
// crash rules, and appending whole lines with single write(2) calls on an O_APPEND descriptor.
// Used on the session's event loop.

#include <cstddef>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "session/scheduler.h"
#include "session/session_storage.h"

namespace rebound::config {

/// The largest session file that is loaded (docs/decisions.md "Limits on hostile input"); only
/// regular files are read or written, opened without blocking.
inline constexpr std::size_t kMaxSessionFileBytes = std::size_t{1} << 30;

struct SessionStorageOptions {
  std::filesystem::path agent_dir;
  std::filesystem::path cwd;                         // absolute
  std::optional<std::filesystem::path> session_dir;  // --session-dir
  bool no_session = false;                           // --no-session
  /// Where load_async's results are posted (its post() must be callable from any thread);
  /// none: load_async works on the caller's thread.
  session::Scheduler* scheduler = nullptr;
};

/// `--<cwd without its leading slash, each / replaced by ->--` (the per-directory folder).
std::string encode_cwd(const std::filesystem::path& cwd);
/// `<ISO timestamp with : and . replaced by ->_<sessionId>.jsonl`.
std::string session_file_name(const std::string& session_id, std::int64_t epoch_ms);

class FileSessionStorage : public session::SessionStorage {
 public:
  explicit FileSessionStorage(SessionStorageOptions options);
  /// Asks running loads to stop and waits for their threads.
  ~FileSessionStorage() override;

  std::optional<std::string> new_session_path(const std::string& session_id,
                                              std::int64_t epoch_ms) override;
  std::string cwd() const override { return options_.cwd.string(); }
  session::Result<session::LoadedSession> load(const std::string& path) override;
  session::Result<session::LoadedSession> load_restored(const std::string& path) override;
  /// On a thread of its own (with a scheduler): read, parse and restore, then `done` posted.
  void load_async(const std::string& path, LoadDone done) override;
  void cancel_loads() override;
  /// Read into memory mapped and populated at once (no fault per page), a piece at a time with
  /// the fingerprint taken of each piece while it is in the cache; null when the file cannot
  /// be read or grows past its size and 64 KiB while being read.
  std::shared_ptr<const session::FileBytes> read_back(const std::string& path,
                                                      std::uint64_t fingerprint_bytes) override;
  /// The spool files: statx's birth time, and unlink.
  std::optional<std::int64_t> spool_birth_ms(const std::string& path) override;
  void remove_spool(const std::string& path) override;
  /// lock_session_file (config/session_lock.h).
  session::Result<std::shared_ptr<void>> lock(const std::string& path) override;
  std::unique_ptr<session::SessionFileSink> open_for_append(const std::string& path,
                                                            std::string& error) override;

  /// The file of session `session_id` in this cwd's session directory (or --session-dir): a
  /// regular file named `*_<session_id>.jsonl`; the newest name when several match. None when
  /// there is none, or sessions are not kept.
  std::optional<std::string> find_session_file(const std::string& session_id) const;
  /// The most recent session of this cwd (oneshot.md section 14, --continue): among the
  /// folder's `*.jsonl` files whose header reads and names this cwd, the one modified last (ties:
  /// the greater name). `folder` gets the folder searched.
  std::optional<std::string> most_recent_session(std::string& folder) const;

 private:
  struct Loads;
  SessionStorageOptions options_;
  std::shared_ptr<Loads> loads_;
};

}  // namespace rebound::config
