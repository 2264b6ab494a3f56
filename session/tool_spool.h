#pragma once
// Where a running tool call spools its output beside the session file (runtime.md section 8,
// amendments A4): `<session file without .jsonl>.d/<name>.out`, the folder 0700, the file 0600;
// `<name>` is the call id with each byte outside [A-Za-z0-9_.-] written %XX, cut to 200 bytes
// and then `-` and the FNV-1a-32 of the whole id in 8 hex digits when longer. Created with the
// call (the bash tool), removed when its result entry is written unless the result names it as
// its full output; what a crash leaves is read when the session is loaded again. The names
// only: the files themselves go through SessionStorage (session_storage.h). Pure.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace rebound::session {

/// A spool file stops growing here: later bytes are counted, not written.
inline constexpr std::uint64_t kSpoolMaxBytes = std::uint64_t{256} << 20;

/// The spool folder of session file `session_path`.
std::string spool_dir_of(const std::string& session_path);
/// `<name>.out` of a call id.
std::string spool_file_name(std::string_view tool_call_id);
/// spool_dir + "/" + spool_file_name.
std::string spool_path(const std::string& spool_dir, std::string_view tool_call_id);

}  // namespace rebound::session
