#pragma once
// The pure pieces of ACP mode (acp.md): a tool call's kind, title and locations (section 7.2),
// its final content, a prompt's content blocks as one user input (section 6.1), the retry
// notices' titles (section 8) and the turn's stop reason and outcome (section 6.4). No I/O;
// the connection (acp_connection.h) puts them on the wire.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "protocol/json.h"
#include "protocol/messages.h"
#include "session/agent_session.h"
#include "session/error.h"
#include "session/tool.h"

namespace rebound::server::acp {

using protocol::Json;

/// What the `tool_call` update announces about a call.
struct ToolCallInfo {
  std::string kind;         // read, edit, execute, search, other
  std::string title;        // as section 7.2 builds it
  Json locations;           // an array, or null when the call has none
  std::string path;         // the absolute path of a read, write or edit ("" otherwise)
  bool edits_file = false;  // write and edit: the final update carries a diff
};

/// Section 7.2 for one call of `name` with `args` (the call's arguments as parsed), relative
/// paths resolved against `cwd`.
ToolCallInfo tool_call_info(std::string_view name, const Json& args, const std::string& cwd);

/// The text blocks of a result joined with "\n" (tool_call_update's content text).
std::string result_text(const session::ToolResult& result);
/// Whether the result has at least one text block.
bool has_text(const session::ToolResult& result);

/// ACP content blocks: `{"type":"text","text"}`, `{"type":"image","data","mimeType"}` of an image
/// block, and a tool call's `{"type":"content","content":<block>}`.
Json text_content(std::string text);
Json image_content(const protocol::ContentBlock& image);
Json content_entry(Json block);

/// The `content` array of a final or partial tool_call_update: one text content entry, plus one
/// image entry per image block.
Json content_of(const session::ToolResult& result);
/// `{"type":"diff","path","oldText","newText"}` (oldText null when the file did not exist).
Json diff_content(const std::string& path, const std::optional<std::string>& old_text,
                  const std::string& new_text);

/// Section 6.1: the prompt's content blocks as one user input, or the -32602 message.
session::Result<session::UserInput> prompt_input(const Json& blocks);

/// "Retrying (<attempt>/<max>) in <delay>" (section 8).
std::string retry_notice_title(std::int64_t attempt, std::int64_t max_attempts,
                               std::int64_t delay_ms);
/// "Recovered after <n> retry|retries".
std::string recovered_notice_title(std::int64_t attempt);

/// `stopReason` and `_meta.rebound.outcome` of a turn (section 6.4).
struct TurnEnding {
  std::string_view stop_reason;
  std::string_view outcome;
};
TurnEnding turn_ending(bool cancelled, std::optional<protocol::StopReason> last, bool error);

/// 16 random lowercase hex digits (a compaction's id, section 9).
std::string random_hex_id();

}  // namespace rebound::server::acp
