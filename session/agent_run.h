#pragma once
// One run of the agent loop (agent_start … agent_end), private to AgentSession's files.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "protocol/messages.h"
#include "session/agent_session.h"
#include "session/llm/provider.h"
#include "session/tool.h"

namespace rebound::session {

struct AgentSession::Run {
  std::uint64_t generation = 0;                  // of the request in flight
  std::vector<protocol::AgentMessage> produced;  // for agent_end.messages
  protocol::AgentMessage partial;                // the assistant message being streamed
  bool message_started = false;
  std::string tool_arguments;                        // raw deltas of the tool call being streamed
  std::vector<protocol::AgentMessage> tool_results;  // of the current turn
  std::unique_ptr<llm::StreamHandle> stream;
  std::unique_ptr<Waiting> waiting;     // for MCP servers to settle before the request (mcp.md 3.2)
  bool held_for_session_start = false;  // the request waits for SessionStart hooks' texts
  /// The dynamic tools offered to the request in flight, by name (mcp.md section 7).
  std::vector<std::shared_ptr<Tool>> offered;

  /// One tool call of the current turn's batch (tools.md section 6).
  struct Call {
    protocol::ContentBlock block;  // the assistant message's toolCall block
    std::unique_ptr<ToolCall> handle;
    std::optional<ToolResult> result;  // once ended
    Tool* tool = nullptr;              // once it passed validation
    protocol::Json input;              // what it runs with (after the preflight)
    std::int64_t started_ms = 0;       // when it was started (it ran: `handle` was set)
    bool ran = false;
    std::unique_ptr<Waiting> after;    // its after-call hooks, while they run
    std::optional<ToolResult> held;    // its result meanwhile
    std::vector<ContextNote> context;  // hook texts, after the batch's results
  };
  std::vector<Call> batch;
  std::size_t batch_open = 0;          // calls that have not ended
  bool batch_starting = false;         // still preflighting or starting the batch's calls
  std::size_t next_preflight = 0;      // the next call the preflight takes
  std::unique_ptr<Waiting> preflight;  // the preflight of one call, while it runs
  bool aborting = false;               // abort arrived during the batch
  // A hook's continue:false (its text): the run ends after the batch.
  std::optional<std::string> stop_requested;
  std::unique_ptr<Waiting> stop_wait;     // the Stop hooks of a run about to end, while they run
  std::int64_t stop_continuations = 0;    // how often Stop hooks continued this run
  std::vector<Completion> abort_waiters;  // abort calls answered at the run's end
};

/// A compaction in progress: its summary request and what it will cut.
struct AgentSession::Compaction {
  std::uint64_t generation = 0;
  CompactionReason reason = CompactionReason::manual;
  std::size_t cut = 0;  // the first kept message of the context
  std::int64_t tokens_before = 0;
  std::string summary;             // streamed so far
  protocol::Usage usage;           // the summary request's, as last reported
  CompactDone done;                // manual only
  std::unique_ptr<Waiting> hooks;  // its PreCompact hooks, while they run
  std::unique_ptr<llm::StreamHandle> stream;
};

}  // namespace rebound::session
