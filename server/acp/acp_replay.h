#pragma once
// session/load's replay (acp.md section 4): a loaded session's conversation as the
// `session/update` bodies an editor shows, in order: user and agent chunks, thoughts, each tool
// call with its final status and content, the error of an attempt that was not retried. Pure.

#include <string>
#include <vector>

#include "protocol/json.h"
#include "protocol/messages.h"

namespace rebound::server::acp {

std::vector<protocol::Json> replay_updates(const std::vector<protocol::AgentMessage>& history,
                                           const std::string& cwd);

}  // namespace rebound::server::acp
