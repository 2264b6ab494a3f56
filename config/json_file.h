#pragma once
// Reading and atomically writing JSON files of the agent directory. Errors are returned, never
// thrown. Thread-safe (no shared state).

#include <filesystem>
#include <optional>
#include <string>

#include "protocol/json.h"

namespace rebound::config {

enum class JsonFileStatus { ok, missing, malformed };

struct JsonFileRead {
  JsonFileStatus status = JsonFileStatus::missing;
  protocol::Json value;  // an object when ok
  std::string error;     // why it is malformed (or unreadable)
};

/// The whole content of a file, or nullopt when it cannot be read.
std::optional<std::string> read_text_file(const std::filesystem::path& path);

/// Reads a file that must hold a JSON object.
JsonFileRead read_json_file(const std::filesystem::path& path);

/// Writes `value` pretty-printed to a temporary file beside `path`, then renames it over
/// `path`; creates missing parent directories. Returns an error text, or nullopt on success.
std::optional<std::string> write_json_file_atomically(const std::filesystem::path& path,
                                                      const protocol::Json& value,
                                                      std::filesystem::perms mode);

}  // namespace rebound::config
