#pragma once
// Where session files live and how their bytes reach the disk (runtime.md section 4), behind an
// interface so the session never touches the file system itself. The server's implementation is
// config::FileSessionStorage; tests use an in-memory one.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "session/error.h"
#include "session/session_file.h"

namespace rebound::session {

/// A file's bytes as read back (SessionStorage::read_back), held as the storage chose.
class FileBytes {
 public:
  virtual ~FileBytes() = default;
  virtual std::string_view view() const = 0;
  /// Of the bytes read_back was asked to take it of (fewer if the file is shorter).
  FileFingerprint fingerprint;
};

/// An open session file. Each append is one write of complete lines: it either lands whole or
/// not at all (a failed write is cut back off), so a crash leaves at most a torn last line.
class SessionFileSink {
 public:
  virtual ~SessionFileSink() = default;
  /// Appends `lines` (each ending in LF) in a single write; false when it could not.
  virtual bool append(std::string_view lines) = 0;
  /// append() of `parts` one after another (whole lines in all), still in a single write.
  virtual bool append_parts(const std::vector<std::string_view>& parts) {
    std::size_t size = 0;
    for (auto p : parts)
      size += p.size();
    std::string lines;
    lines.reserve(size);
    for (auto p : parts)
      lines.append(p);
    return append(lines);
  }
};

class SessionStorage {
 public:
  virtual ~SessionStorage() = default;
  /// The path of a new session's file, or nullopt when sessions are not kept (--no-session).
  virtual std::optional<std::string> new_session_path(const std::string& session_id,
                                                      std::int64_t epoch_ms) = 0;
  /// The absolute working directory for a new session's header.
  virtual std::string cwd() const = 0;
  /// Reads and parses a session file; the error text when it does not exist or cannot be used.
  virtual Result<LoadedSession> load(const std::string& path) = 0;
  /// load() with its result restored (LoadedSession::restored), for taking the session up: a
  /// storage that can keeps only ids, types and line places of the message entries then, and
  /// one with locks takes the file's (LoadedSession::lock) or fails when another process
  /// holds it.
  virtual Result<LoadedSession> load_restored(const std::string& path) {
    auto loaded = load(path);
    if (loaded) loaded->restored = restore_session_releasing(*loaded);
    return loaded;
  }
  /// load_restored() with its result handed to `done` on the event loop; a storage that can,
  /// does the work on another thread so the loop goes on. This one runs it at once.
  using LoadDone = std::function<void(Result<LoadedSession>)>;
  virtual void load_async(const std::string& path, LoadDone done) { done(load_restored(path)); }
  /// A session file's bytes as they are now, for taking its entries by their lines' places
  /// (LoadedSession::lines), with the fingerprint of the first `fingerprint_bytes`; null when
  /// it cannot be read or the storage does not offer it.
  virtual std::shared_ptr<const FileBytes> read_back(const std::string& /*path*/,
                                                     std::uint64_t /*fingerprint_bytes*/) {
    return nullptr;
  }
  /// The loads running now end soon with an error ("cancelled"), still through their `done`.
  virtual void cancel_loads() {}
  /// A tool call's spool file (tool_spool.h): its birth time in epoch milliseconds where the file
  /// system keeps one, and its removal. None here: a storage without files spools nothing.
  virtual std::optional<std::int64_t> spool_birth_ms(const std::string& /*path*/) {
    return std::nullopt;
  }
  virtual void remove_spool(const std::string& /*path*/) {}
  /// The writer lock of a file this process is about to create (amendments A3): the holder,
  /// or why it cannot be used (another process holds it). This one locks nothing.
  virtual Result<std::shared_ptr<void>> lock(const std::string& /*path*/) {
    return std::shared_ptr<void>();
  }
  /// Opens a file for appending, creating it and its directory. An existing file's torn last
  /// line is cut off first, and a complete last line without LF gets one.
  virtual std::unique_ptr<SessionFileSink> open_for_append(const std::string& path,
                                                           std::string& error) = 0;
};

}  // namespace rebound::session
