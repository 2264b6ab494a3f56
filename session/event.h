#pragma once
// Typed session events: what happened in a session, for whichever front end listens (the rpc
// mode's pi-dialect encoder in server/, later ACP or an event filter). The session emits them
// through its EventSink on the event loop, in order. Payloads refer into the session's state
// and are valid only during the EventSink call: a sink that keeps an event encodes it first.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "protocol/json.h"
#include "protocol/messages.h"
#include "session/stream_kind.h"
#include "session/tool.h"

namespace rebound::session {

/// The host's handle of a session (SessionHost); 0 for a session outside any host.
using SessionSlot = std::uint32_t;

/// A message_update's kind: one of the nine block kinds of StreamKind (text, thinking or tool
/// call; start, delta or end), never usage, done or error.
using AssistantUpdateKind = StreamKind;

enum class CompactionReason { overflow, threshold, manual };

inline constexpr protocol::Named<CompactionReason> kCompactionReasonNames[] = {
    {CompactionReason::overflow, "overflow"},
    {CompactionReason::threshold, "threshold"},
    {CompactionReason::manual, "manual"}};

/// "overflow", "threshold" or "manual" (the session file's and the events' word).
inline std::string_view compaction_reason_name(CompactionReason reason) {
  return protocol::name_of(reason, kCompactionReasonNames);
}

/// What a finished compaction produced (the `compact` result, auto_compaction_end's result).
struct CompactionResult {
  std::string summary;
  std::string first_kept_entry_id;
  std::int64_t tokens_before = 0;
};

namespace ev {

struct AgentStart {
  static constexpr std::string_view kName = "agent_start";
};
struct AgentEnd {
  static constexpr std::string_view kName = "agent_end";
  const std::vector<protocol::AgentMessage>& messages;
  bool will_retry;
};
struct TurnStart {
  static constexpr std::string_view kName = "turn_start";
};
struct TurnEnd {
  static constexpr std::string_view kName = "turn_end";
  const protocol::AgentMessage& message;
  const std::vector<protocol::AgentMessage>& tool_results;
};
struct MessageStart {
  static constexpr std::string_view kName = "message_start";
  const protocol::AgentMessage& message;
};
/// The partial assistant message changed. `delta` is the appended text for the *_delta kinds.
/// `partial_version` changes whenever the partial message's content changed other than by
/// appending `delta` to its last block since the previous update, and `usage_version` whenever
/// its usage changed, so an encoder may serialise incrementally.
struct MessageUpdate {
  static constexpr std::string_view kName = "message_update";
  const protocol::AgentMessage& partial;
  AssistantUpdateKind kind;
  std::size_t content_index;
  std::string_view delta;
  std::uint64_t partial_version;
  std::uint64_t usage_version = 0;
};
struct MessageEnd {
  static constexpr std::string_view kName = "message_end";
  const protocol::AgentMessage& message;
};
struct ToolExecutionStart {
  static constexpr std::string_view kName = "tool_execution_start";
  const std::string& tool_call_id;
  const std::string& tool_name;
  const protocol::Json& args;
};
struct ToolExecutionUpdate {
  static constexpr std::string_view kName = "tool_execution_update";
  const std::string& tool_call_id;
  const std::string& tool_name;
  const protocol::Json& args;
  const ToolResult& partial_result;
};
struct ToolExecutionEnd {
  static constexpr std::string_view kName = "tool_execution_end";
  const std::string& tool_call_id;
  const std::string& tool_name;
  const ToolResult& result;  // isError is result.is_error
};
/// The typed fields of retry-control mode (retry.md section 12).
struct RetryStartDetails {
  std::string_view error_class;
  std::optional<int> http_status;
  std::string_view delay_source;
  std::int64_t next_attempt_at;
};
struct AutoRetryStart {
  static constexpr std::string_view kName = "auto_retry_start";
  std::int64_t attempt;
  std::int64_t max_attempts;
  std::int64_t delay_ms;
  const std::string& error_message;
  std::optional<RetryStartDetails> details = std::nullopt;  // retry-control mode only
};
struct AutoRetryEnd {
  static constexpr std::string_view kName = "auto_retry_end";
  bool success;
  std::int64_t attempt;
  std::optional<std::string_view> final_error;            // when !success
  std::optional<std::string_view> reason = std::nullopt;  // retry-control mode only
};
struct AutoCompactionStart {
  static constexpr std::string_view kName = "auto_compaction_start";
  CompactionReason reason;  // overflow or threshold
};
struct AutoCompactionEnd {
  static constexpr std::string_view kName = "auto_compaction_end";
  const CompactionResult* result;  // when it succeeded
  bool aborted;
  bool will_retry;
  std::optional<std::string_view> error_message;
};
/// An MCP server's status, error or tools changed (mcp.md section 8); not a session's own event:
/// the server's MCP set emits it, in rpc mode only.
struct McpServerUpdate {
  static constexpr std::string_view kName = "mcp_server_update";
  const protocol::Json* fields;  // name, status, tools, error?
};

/// A hook or an extension failed (extensions.md section 7.3): pi's event. `extension_path` is
/// `hook:<command>` for a hook, else the extension's name; `event` the hook event or the method.
struct ExtensionError {
  static constexpr std::string_view kName = "extension_error";
  std::string_view extension_path;
  std::string_view event;
  std::string_view error;
};

/// A dialog or notice for the client (extensions.md section 6.1): pi's `extension_ui_request`,
/// `fields` its keys after `type` (`id`, `method`, the request's params). Never filtered.
struct ExtensionUiRequest {
  static constexpr std::string_view kName = "extension_ui_request";
  const protocol::Json* fields;
};

/// The steering or the follow-up queue changed (sessions.md section 8): pi's event, every
/// queued message's text, oldest first.
struct QueueUpdate {
  static constexpr std::string_view kName = "queue_update";
  const std::vector<std::string>& steering;
  const std::vector<std::string>& follow_up;
};

/// set_session_name named the session (sessions.md section 5).
struct SessionInfoChanged {
  static constexpr std::string_view kName = "session_info_changed";
  std::string_view name;
};

/// A loaded session had a tool call without a result: Rebound stopped while it ran, and its
/// result entry now says the outcome is unknown (runtime.md section 8, amendment A7).
struct ToolOutcomeUnknown {
  static constexpr std::string_view kName = "tool_outcome_unknown";
  std::string_view tool_call_id, tool_name;
  std::int64_t started_at = 0;  // epoch ms
};

}  // namespace ev

/// One alternative per event of protocol.md section 5 (and tool updates of tools.md section 6).
using EventBody =
    std::variant<ev::AgentStart, ev::AgentEnd, ev::TurnStart, ev::TurnEnd, ev::MessageStart,
                 ev::MessageUpdate, ev::MessageEnd, ev::ToolExecutionStart, ev::ToolExecutionUpdate,
                 ev::ToolExecutionEnd, ev::AutoRetryStart, ev::AutoRetryEnd,
                 ev::AutoCompactionStart, ev::AutoCompactionEnd, ev::McpServerUpdate,
                 ev::ExtensionError, ev::ExtensionUiRequest, ev::QueueUpdate,
                 ev::SessionInfoChanged, ev::ToolOutcomeUnknown>;

/// Each event's wire name (its `type`, the JSON-RPC method of its notification), by its
/// EventBody alternative: declared beside each type as kName.
template <typename Variant>
struct EventNames;
template <typename... T>
struct EventNames<std::variant<T...>> {
  static constexpr std::string_view names[] = {T::kName...};
};
inline constexpr std::size_t kEventTypeCount = std::variant_size_v<EventBody>;
inline constexpr std::string_view event_name(std::size_t index) {
  return index < kEventTypeCount ? EventNames<EventBody>::names[index] : std::string_view();
}

struct Event {
  SessionSlot session = 0;  // which session of the host it comes from
  EventBody body;
};

}  // namespace rebound::session
