#pragma once
// The session file as a tree (sessions.md section 1): entries linked by `parentId`, the active
// path from the leaf (the last entry) up to a root, the session's name on that path, and what
// get_fork_messages, fork and clone read from it. Pure: works on entries as stored.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/json.h"

namespace rebound::session {

/// The indices of the chain from `entries[leaf]` up through `parentId` to a root, root first.
/// A parent that is missing ends the chain; one seen before (a cycle) too.
std::vector<std::size_t> chain_to(const std::vector<protocol::Json>& entries, std::size_t leaf);
/// The active path: the chain to the last entry (empty without entries).
std::vector<std::size_t> active_path(const std::vector<protocol::Json>& entries);

/// The name of the last `session_info` entry among `path`'s (an empty name clears it).
std::optional<std::string> path_session_name(const std::vector<protocol::Json>& entries,
                                             const std::vector<std::size_t>& path);

/// A `session_info` entry body (sessions.md section 1.1).
protocol::Json session_info_entry(const std::string& name);

/// The text of a `message` entry whose message has role `user` (its text blocks joined without
/// separator, a string content as it is); nullopt for any other entry.
std::optional<std::string> user_entry_text(const protocol::Json& entry);

/// Whether the entry is a `message` entry (any role).
bool is_message_entry(const protocol::Json& entry);

/// `text` trimmed of leading and trailing Unicode White_Space (sessions.md section 5).
std::string trim_unicode_space(std::string_view text);

/// The index of the entry with id `id`, or nullopt.
std::optional<std::size_t> find_entry(const std::vector<protocol::Json>& entries,
                                      std::string_view id);

}  // namespace rebound::session
