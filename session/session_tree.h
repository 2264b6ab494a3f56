#pragma once
// The session file as a tree (sessions.md section 1): entries linked by `parentId`, the active
// path from the leaf (the last entry) up to a root, the session's name on that path, and what
// get_fork_messages, fork and clone read from it. Pure: works on entries as stored.

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/json.h"
#include "session/session_file.h"
#include "session/session_storage.h"

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

/// A session's entries as fork, clone and get_fork_messages read them (sessions.md sections 3
/// and 4): each with its id, parent and kind, and either its line in the file as read back (the
/// entries of a resumed or copied file: no JSON tree is built for them unless asked) or its JSON.
struct EntryTree {
  struct Node {
    std::string_view id;
    std::optional<std::size_t> parent;  // the first entry with the parentId, if any
    EntryKind kind = EntryKind::other;
    std::string_view line;                 // in `text`, for an entry read back from the file
    const protocol::Json* json = nullptr;  // otherwise
  };
  std::shared_ptr<const FileBytes> text;  // the file as read back, when its lines are used
  std::vector<protocol::Json> owned;      // entries read back as JSON (no places were kept)
  std::vector<Node> nodes;                // in append order

  /// The first node with id `id`.
  std::optional<std::size_t> find(std::string_view id) const;
  /// The chain from `leaf` up to a root, root first (a cycle ends it), as chain_to.
  std::vector<std::size_t> chain_to(std::size_t leaf) const;
  /// The chain to the last node.
  std::vector<std::size_t> active_path() const;
  /// The entry as JSON: its line parsed, or a copy. Null for a line that no longer parses.
  protocol::Json entry(std::size_t i) const;
  /// Its line with its LF: in `text`, or serialised into `held` (for an entry held as JSON).
  std::string_view line_of(std::size_t i, std::string& held) const;
  /// Sets the parents of the nodes from `first` on from their parentIds (`parent_ids[k]` for
  /// node `first + k`): the first node with that id.
  void link_from(std::size_t first, const std::vector<std::optional<std::string_view>>& parent_ids);
};

}  // namespace rebound::session
