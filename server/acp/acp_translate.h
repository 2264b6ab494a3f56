#pragma once
// ACP mode's translation of typed session events and turn endings into ACP messages (acp.md
// sections 6 to 9): pure functions of the event and what the connection knows (message and
// compaction ids, the announced call), each building one `session/update` body or result.
// The connection decides when to send them; tests/server/acp_translate_test.cpp checks them.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/json.h"
#include "protocol/messages.h"
#include "server/acp/acp_session.h"
#include "server/acp/acp_updates.h"
#include "session/event.h"

namespace rebound::server::acp {

/// `session/update` params: `{"sessionId","update"}`.
Json session_update(const std::string& session_id, Json body);
/// A `_rebound/*` notification's params: `sessionId`, then the rpc event's fields but `type`.
Json rebound_params(const std::string& session_id, const Json& rpc_event);

/// agent_message_chunk / agent_thought_chunk of a text or thinking delta; none for another
/// kind of update or an empty delta.
std::optional<Json> delta_chunk(const session::ev::MessageUpdate& e, const std::string& message_id);
/// The `tool_call` update (status pending) announcing a call the model finished writing.
Json tool_call_pending(const protocol::ContentBlock& call, const ToolCallInfo& info);
/// usage_update after an assistant message that did not fail.
Json usage_update(const protocol::AgentMessage& message, std::int64_t context_window,
                  double cost_total);
/// tool_call_update with status in_progress.
Json in_progress_update(const std::string& tool_call_id);
/// tool_call_update with the partial result's text; none when it has no text.
std::optional<Json> tool_progress_update(const session::ev::ToolExecutionUpdate& e);
/// The final tool_call_update: a diff of `state`'s before and after for a successful edit or
/// write whose after is known, the result's content otherwise; rawOutput the pi result.
Json tool_end_update(const session::ev::ToolExecutionEnd& e, const ToolState* state);

/// The notices of section 8 (when the client takes notices).
Json retry_start_notice(const session::ev::AutoRetryStart& e);
/// Only a successful end has a notice.
std::optional<Json> retry_end_notice(const session::ev::AutoRetryEnd& e);
/// Section 9: compaction_update in_progress, the notice for clients without compaction
/// updates, and the final compaction_update.
Json compaction_started(const std::string& compaction_id);
Json compaction_notice(session::CompactionReason reason);
Json compaction_ended(const session::ev::AutoCompactionEnd& e, const std::string& compaction_id);

/// The notices of an extension's failure and of its ui/notify (extensions.md sections 6.2, 9).
Json extension_error_notice(const session::ev::ExtensionError& e);
/// `fields` of a `notify` extension_ui_request; none for another dialog.
std::optional<Json> extension_notify_notice(const Json& fields);

/// available_commands_update (sessions.md section 15) of ACP `AvailableCommand` entries
/// (`name`, `description`, `input`?).
Json available_commands_update(std::vector<Json> commands);

/// An agent_message_chunk of `text` (a hook's refusal, extensions.md section 9).
Json text_chunk(const std::string& text, const std::string& message_id);

/// The agent_message_chunk that tells why a turn ended in an error (section 6.4).
Json error_chunk(const std::string& message, bool after_text, const std::string& message_id);
/// A session/prompt's result: stopReason and `_meta.rebound` (outcome, retries, errorMessage).
Json turn_result(const TurnEnding& ending, std::int64_t retries,
                 const std::optional<std::string>& error_message);
/// A prompt that never ran: `cancelled`, no retries.
Json cancelled_result();

/// session/request_permission's options: Allow, Always allow (only when `offer_always`), Reject.
Json permission_options(bool offer_always);
/// session/request_permission's params for a call (section 7.3); `allow_always` only when
/// `offer_always` (policy.md section 6).
Json permission_request(const std::string& session_id, const std::string& tool_call_id,
                        const ToolCallInfo& info, const Json& args, bool offer_always);

/// A session's `modes` (policy.md section 7): the five permission modes, `current` selected.
Json session_modes(const std::string& current);
/// The methods of section 11 this build serves (all of them: the rpc commands exist).
const std::vector<std::string>& rebound_methods();
/// initialize's result (section 3).
Json initialize_result(bool no_session, const std::string& version);

}  // namespace rebound::server::acp
