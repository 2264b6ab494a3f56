#pragma once
// The writer lock of a session file (amendments A3): a process that may append to
// `<file>.jsonl` holds an exclusive record lock (fcntl F_SETLK) on `<file>.jsonl.lock` (created
// 0600 beside it) from the load or creation until it lets go of the file. Holders inside one
// process share one lock, so a process never locks itself out (ACP sessions, a recorder reading its
// own file back); only this registry opens lock files, as closing any descriptor of the file would
// release the process's record lock. The lock file stays when released: removing it would race with
// a new holder. Thread-safe.

#include <memory>
#include <string>

#include "session/error.h"

namespace rebound::config {

/// What a refused load says (rpc, one-shot and ACP alike).
std::string session_in_use_text(const std::string& path);

/// Takes the lock of session file `path` for this process: the holder (release by dropping
/// every copy), or the failed Error with session_in_use_text when another process holds it. A lock
/// file that cannot be made (a read-only folder) is warned about and gives a holder that locks
/// nothing: such a file cannot be appended to either.
session::Result<std::shared_ptr<void>> lock_session_file(const std::string& path);

/// Whether another process holds the lock of `path` now (--continue skips such files).
bool session_file_locked_elsewhere(const std::string& path);

}  // namespace rebound::config
