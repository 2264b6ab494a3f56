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
#include "session/tool.h"

namespace rebound::session {

/// The host's handle of a session (SessionHost); 0 for a session outside any host.
using SessionSlot = std::uint32_t;

enum class AssistantUpdateKind {
  text_start,
  text_delta,
  text_end,
  thinking_start,
  thinking_delta,
  thinking_end,
  toolcall_start,
  toolcall_delta,
  toolcall_end,
};

enum class CompactionReason { overflow, threshold, manual };

/// "overflow", "threshold" or "manual" (the session file's and the events' word).
inline std::string_view compaction_reason_name(CompactionReason reason) {
  switch (reason) {
    case CompactionReason::overflow:
      return "overflow";
    case CompactionReason::threshold:
      return "threshold";
    case CompactionReason::manual:
      break;
  }
  return "manual";
}

/// What a finished compaction produced (the `compact` result, auto_compaction_end's result).
struct CompactionResult {
  std::string summary;
  std::string first_kept_entry_id;
  std::int64_t tokens_before = 0;
};

namespace ev {

struct AgentStart {};
struct AgentEnd {
  const std::vector<protocol::AgentMessage>& messages;
  bool will_retry;
};
struct TurnStart {};
struct TurnEnd {
  const protocol::AgentMessage& message;
  const std::vector<protocol::AgentMessage>& tool_results;
};
struct MessageStart {
  const protocol::AgentMessage& message;
};
/// The partial assistant message changed. `delta` is the appended text for the *_delta kinds.
/// `partial_version` changes whenever the partial message changed other than by appending
/// `delta` to its last block since the previous update, so an encoder may serialise
/// incrementally.
struct MessageUpdate {
  const protocol::AgentMessage& partial;
  AssistantUpdateKind kind;
  std::size_t content_index;
  std::string_view delta;
  std::uint64_t partial_version;
};
struct MessageEnd {
  const protocol::AgentMessage& message;
};
struct ToolExecutionStart {
  const std::string& tool_call_id;
  const std::string& tool_name;
  const protocol::Json& args;
};
struct ToolExecutionUpdate {
  const std::string& tool_call_id;
  const std::string& tool_name;
  const protocol::Json& args;
  const ToolResult& partial_result;
};
struct ToolExecutionEnd {
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
  std::int64_t attempt;
  std::int64_t max_attempts;
  std::int64_t delay_ms;
  const std::string& error_message;
  std::optional<RetryStartDetails> details = std::nullopt;  // retry-control mode only
};
struct AutoRetryEnd {
  bool success;
  std::int64_t attempt;
  std::optional<std::string_view> final_error;            // when !success
  std::optional<std::string_view> reason = std::nullopt;  // retry-control mode only
};
struct AutoCompactionStart {
  CompactionReason reason;  // overflow or threshold
};
struct AutoCompactionEnd {
  const CompactionResult* result;  // when it succeeded
  bool aborted;
  bool will_retry;
  std::optional<std::string_view> error_message;
};
/// An MCP server's status, error or tools changed (mcp.md section 8); not a session's own event:
/// the server's MCP set emits it, in rpc mode only.
struct McpServerUpdate {
  const protocol::Json* fields;  // name, status, tools, error?
};

}  // namespace ev

/// One alternative per event of protocol.md section 5 (and tool updates of tools.md section 6).
using EventBody =
    std::variant<ev::AgentStart, ev::AgentEnd, ev::TurnStart, ev::TurnEnd, ev::MessageStart,
                 ev::MessageUpdate, ev::MessageEnd, ev::ToolExecutionStart, ev::ToolExecutionUpdate,
                 ev::ToolExecutionEnd, ev::AutoRetryStart, ev::AutoRetryEnd,
                 ev::AutoCompactionStart, ev::AutoCompactionEnd, ev::McpServerUpdate>;

struct Event {
  SessionSlot session = 0;  // which session of the host it comes from
  EventBody body;
};

}  // namespace rebound::session
