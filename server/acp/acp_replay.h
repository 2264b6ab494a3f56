#pragma once
// session/load's replay (acp.md section 4): a loaded session's conversation as the
// `session/update` bodies an editor shows, in order: user and agent chunks, thoughts, each tool
// call with its final status and content, the error of an attempt that was not retried. Pure.

#include <cstddef>
#include <string>
#include <vector>

#include "protocol/json.h"
#include "protocol/messages.h"

namespace rebound::server::acp {

/// The largest text one replayed chunk carries: a longer text block becomes several chunks of
/// the same messageId, which an editor appends as it does live chunks.
inline constexpr std::size_t kReplayChunkBytes = 64 * 1024;

std::vector<protocol::Json> replay_updates(const std::vector<protocol::AgentMessage>& history,
                                           const std::string& cwd);

/// The results the load itself appended (runtime.md section 8's unknown outcomes, amendments
/// A7) given to the replayed calls that had none: their status, content and rawOutput.
void complete_replayed_calls(std::vector<protocol::Json>& updates,
                             const std::vector<protocol::AgentMessage>& results);

}  // namespace rebound::server::acp
