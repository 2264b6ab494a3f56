#pragma once
// The pi dialect's event objects (protocol.md section 5), keys in the spec's order. Pure
// builders over protocol types; PiEventEncoder turns typed session events into them.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/json.h"
#include "protocol/messages.h"

namespace rebound::server::pi {

using protocol::AgentMessage;
using protocol::ContentBlock;
using protocol::Json;

Json agent_start();
Json agent_end(const std::vector<AgentMessage>& messages, bool will_retry);
Json turn_start();
Json turn_end(const AgentMessage& message, const std::vector<AgentMessage>& tool_results);
Json message_start(const AgentMessage& message);
Json message_end(const AgentMessage& message);

/// One assistantMessageEvent: `type` is text_start … toolcall_end. `delta` is written for the
/// *_delta types, `content` for text_end/thinking_end, `tool_call` for toolcall_end.
struct AssistantUpdate {
  std::string_view type;
  std::size_t content_index = 0;
  std::optional<std::string> delta;
  std::optional<std::string> content;
  const ContentBlock* tool_call = nullptr;
};
Json message_update(const AssistantUpdate& update, const AgentMessage& partial);
/// The delta form of protocol.md section 8: no `partial`, `message` is {"role":"assistant"}.
Json message_update_delta(const AssistantUpdate& update);

Json tool_execution_start(const std::string& id, const std::string& name, const Json& args);
Json tool_execution_update(const std::string& id, const std::string& name, const Json& args,
                           const Json& partial_result);
Json tool_execution_end(const std::string& id, const std::string& name, const Json& result,
                        bool is_error);

Json auto_retry_start(std::int64_t attempt, std::int64_t max_attempts, std::int64_t delay_ms,
                      const std::string& error_message);
/// `finalError` only when it failed.
Json auto_retry_end(bool success, std::int64_t attempt, std::string_view final_error);

/// `reason` is "overflow" or "threshold".
Json auto_compaction_start(std::string_view reason);
/// `result` is the compaction result object; `error_message` when it failed.
Json auto_compaction_end(const std::optional<Json>& result, bool aborted, bool will_retry,
                         const std::optional<std::string>& error_message);

}  // namespace rebound::server::pi
