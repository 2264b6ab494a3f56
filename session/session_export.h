#pragma once
// export_html (sessions.md section 12) from the session's side: what the page needs, handed to
// the application's writer (it renders and writes the file; the session touches no file).

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "protocol/json.h"
#include "session/error.h"
#include "session/session_file.h"

namespace rebound::session {

struct ExportRequest {
  /// The active path, root first: `count` entries as stored, read one at a time through
  /// `entry` (valid during the writer's call only), `kinds` saying what each is.
  std::size_t count = 0;
  std::function<protocol::Json(std::size_t)> entry;
  std::vector<EntryKind> kinds;
  std::size_t size_hint = 0;  // about how many bytes the entries take as stored
  std::string session_id;
  std::optional<std::string> session_file;
  std::optional<std::string> session_name;
  std::string cwd;
  std::string model;                       // "provider/modelId"
  std::optional<std::string> output_path;  // as the command gave it
  std::int64_t now_ms = 0;
};

/// Renders and writes the page; the absolute path written, or the error (`<CODE>: <reason>,
/// open '<abs>'`).
using ExportWriter = std::function<Result<std::string>(ExportRequest)>;

}  // namespace rebound::session
