#pragma once
// get_session_stats' counts: summed message by message as the session records them, so a
// session keeps the totals of its whole history without keeping that history.

#include <cstdint>

#include "protocol/messages.h"

namespace rebound::session {

struct MessageStats {
  std::int64_t user_messages = 0, assistant_messages = 0, tool_calls = 0, tool_results = 0,
               total_messages = 0;
  protocol::Usage tokens;  // summed; cost_total summed too

  void add(const protocol::AgentMessage& m);
  /// Takes `other`'s counts off (a fork's part left out); the cost total stays at 0 or more.
  void subtract(const MessageStats& other);
};

}  // namespace rebound::session
