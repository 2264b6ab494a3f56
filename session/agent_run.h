#pragma once
// One run of the agent loop (agent_start … agent_end), private to AgentSession's files.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "protocol/messages.h"
#include "protocol/update_line.h"
#include "session/agent_session.h"
#include "session/llm/provider.h"

namespace rebound::session {

struct AgentSession::Run {
  std::uint64_t generation = 0;                  // of the request in flight
  std::vector<protocol::AgentMessage> produced;  // for agent_end.messages
  protocol::AgentMessage partial;                // the assistant message being streamed
  protocol::UpdateLineBuilder lines;             // its message_update lines
  bool message_started = false;
  std::string tool_arguments;                        // raw deltas of the tool call being streamed
  std::vector<protocol::AgentMessage> tool_results;  // of the current turn
  std::unique_ptr<llm::StreamHandle> stream;
};

/// A compaction in progress: its summary request and what it will cut.
struct AgentSession::Compaction {
  std::uint64_t generation = 0;
  std::string reason;   // overflow, threshold or manual
  std::size_t cut = 0;  // the first kept message of the context
  std::int64_t tokens_before = 0;
  std::string summary;  // streamed so far
  CompactDone done;     // manual only
  std::unique_ptr<llm::StreamHandle> stream;
};

}  // namespace rebound::session
