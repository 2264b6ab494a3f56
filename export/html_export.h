#pragma once
// export_html's page (sessions.md section 12): one self-contained HTML file of a session's
// active path, without any script and without a reference to anything outside the file.
// Every text is escaped; assistant Markdown is parsed with cmark and walked as a tree, so raw
// HTML stays text, links show their URL and images are never fetched. Pure.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/json.h"

namespace rebound::exporter {

/// What an entry of the path is, as far as marking retried attempts needs to know.
enum class PathKind : std::uint8_t { user, assistant, other_message, other };

struct ExportPage {
  /// The active path, root first, as stored: `entries`, or else `count` entries read one at a
  /// time through `entry` while the page is rendered (a long session is never held as JSON
  /// trees at once), `kinds` saying what each is.
  std::vector<protocol::Json> entries;
  std::size_t count = 0;
  std::function<protocol::Json(std::size_t)> entry;
  std::vector<PathKind> kinds;
  std::size_t size_hint = 0;  // about how many bytes the entries take as stored (room reserved)
  std::string title;          // the session name, else "Rebound session <id>"
  std::string session_id;
  std::optional<std::string> session_file;
  std::string cwd;
  std::string model;        // "provider/modelId"
  std::string exported_at;  // ISO 8601 UTC
  std::string version;      // Rebound's
};

std::string render_html(const ExportPage& page);

/// Markdown as HTML by section 12.2's rules (for tests and the page).
std::string render_markdown(std::string_view markdown);

/// `text` with invalid UTF-8 and NUL replaced by U+FFFD, then `&`, `<`, `>` escaped (and `"`,
/// `'` too when `attribute`).
std::string escape_html(std::string_view text, bool attribute = false);

}  // namespace rebound::exporter
