#pragma once
// Reading and atomically writing JSON files of the agent directory. Errors are returned, never
// thrown. Thread-safe (no shared state).

#include <cstddef>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "protocol/json.h"
#include "session/size_text.h"

namespace rebound::config {

enum class JsonFileStatus { ok, missing, malformed };

struct JsonFileRead {
  JsonFileStatus status = JsonFileStatus::missing;
  protocol::Json value;  // an object when ok
  std::string error;     // why it is malformed (or unreadable)
};

/// How large a settings, models, auth or script file may be (docs/decisions.md "Limits on
/// hostile input").
inline constexpr std::size_t kMaxConfigFileBytes = 64u << 20;

enum class FileReadStatus { ok, missing, failed };

struct FileRead {
  FileReadStatus status = FileReadStatus::missing;
  std::string text;      // when ok
  std::string error;     // when failed: "is a directory", "is not a regular file", "is larger
                         // than 64 MiB" or the system's reason; never any of the content
  bool refused = false;  // failed because of what the file is (the first three), not the system
};

/// The whole content of a regular file of at most `max_bytes`. Opened without blocking and
/// refused unless it is a regular file, so a FIFO, a device (/dev/zero) or a directory is an
/// error at once instead of a hang or an endless read.
FileRead read_regular_file(const std::filesystem::path& path,
                           std::size_t max_bytes = kMaxConfigFileBytes);

/// How much read_regular_file_in_pieces reads at a time.
inline constexpr std::size_t kReadPieceBytes = 1u << 20;

/// read_regular_file handing the content to `take` in pieces of at most kReadPieceBytes as they
/// are read, instead of in FileRead::text (left empty). `take` returns false to stop reading
/// (the status is ok then). On a failure, `take` may have seen some of the content.
FileRead read_regular_file_in_pieces(const std::filesystem::path& path, std::size_t max_bytes,
                                     const std::function<bool(std::string_view)>& take);

/// Where read_regular_file_into puts a file's bytes, read straight into it (no copy).
class ReadTarget {
 public:
  virtual ~ReadTarget() = default;
  /// Room for the next read, given the size the file had when opened: empty to stop (ok).
  virtual std::pair<char*, std::size_t> room(std::size_t file_size) = 0;
  /// `n` bytes landed in the last room.
  virtual void filled(std::size_t n) = 0;
};

/// read_regular_file with the same refusals, each read landing in `target`'s room.
FileRead read_regular_file_into(const std::filesystem::path& path, std::size_t max_bytes,
                                ReadTarget& target);

/// Reads a file that must hold a JSON object. A malformed file's error names the line and
/// column only (the file may hold API keys), e.g. "invalid JSON at line 3, column 7".
JsonFileRead read_json_file(const std::filesystem::path& path);

/// A settings file's object, or {} when it is missing, malformed or not an object (a malformed
/// one is reported by the settings store that reads it too, runtime.md section 3).
protocol::Json settings_object(const std::filesystem::path& path);
/// A settings object's `key`, or null when absent.
protocol::Json settings_member(const protocol::Json& settings, const char* key);

using session::size_text;

/// Writes `value` pretty-printed to a temporary file beside `path`, then renames it over
/// `path`; creates missing parent directories. A symlinked `path` is written through: the
/// link's final target is replaced (atomically, in its own directory) and the link stays. Returns
/// an error text, or nullopt on success.
std::optional<std::string> write_json_file_atomically(const std::filesystem::path& path,
                                                      const protocol::Json& value,
                                                      std::filesystem::perms mode);

}  // namespace rebound::config
