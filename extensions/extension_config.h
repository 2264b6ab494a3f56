#pragma once
// Extension processes as configured (extensions.md sections 1.1, 1.3, 1.5): the entries of one
// settings file's `extensions` object, `--extension CMD` entries, the merge of the sources (a
// later entry replaces an earlier one of its name as a whole, in the first one's position; an
// untrusted project's replaces nothing) and the limit of 32. Pure: the caller reads the files.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "peer/peer_process.h"
#include "protocol/json.h"

namespace rebound::extensions {

enum class ExtensionSource { user, project, cli };
std::string_view source_name(ExtensionSource source);

struct ExtensionConfig {
  std::string name;
  std::string command;
  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> env;  // in the entry's order
  std::optional<std::string> cwd;                        // relative to the session cwd
  std::optional<std::int64_t> timeout_ms;                // none: interceptorTimeoutMs
  bool fail_open = false;
  bool disabled = false;  // `disabled:true`, or --no-extensions for sources 1 and 2
  bool trusted = true;    // a project entry without the user's opt-in: listed, never run
  ExtensionSource source = ExtensionSource::user;
  std::string settings_path;         // the file that defines it (`--extension`: the command line)
  std::optional<std::string> error;  // set: never started, `failed` with it
};

/// The entries of one file's `extensions` value, in key order, expanded (mcp.md section 1.3's
/// variables). A value that is not an object adds a warning and gives none.
std::vector<ExtensionConfig> read_extensions(const protocol::Json& extensions,
                                             ExtensionSource source, const std::string& path,
                                             bool trusted, bool disabled,
                                             const peer::Getenv& getenv,
                                             std::vector<std::string>& warnings);

/// `--extension CMD` entries: `/bin/sh -c CMD`, named cli-1, cli-2, … in order.
std::vector<ExtensionConfig> cli_extensions(const std::vector<std::string>& commands);

/// Appends `source` to `into` (section 1.3's merge).
void merge_extensions(std::vector<ExtensionConfig>& into, std::vector<ExtensionConfig> source);

/// Entries that would start past the 32nd become `failed`, `Too many extensions (limit 32)`.
inline constexpr std::size_t kMaxExtensions = 32;
void apply_extension_limit(std::vector<ExtensionConfig>& entries);

}  // namespace rebound::extensions
