#pragma once
// Paths in tool arguments and file-system errors in Node's style (tools.md section 3). Pure
// apart from reading $HOME.

#include <string>
#include <string_view>

namespace rebound::tools {

/// The absolute path a tool acts on: a leading `@` removed, `~` and `~/` expanded to $HOME,
/// Unicode spaces made plain, a relative path resolved against `cwd` (lexically: `.` and `..`
/// folded, symlinks not resolved, no trailing `/`).
std::string resolve_path(std::string_view path, const std::string& cwd);

/// `ENOENT` for ENOENT…; the name of any errno value (`E<number>` when it has none).
std::string errno_name(int err);
/// `<CODE>: <reason>, <operation> '<path>'`, or without the path part when `path` is empty.
std::string fs_error(int err, std::string_view operation, std::string_view path);

}  // namespace rebound::tools
