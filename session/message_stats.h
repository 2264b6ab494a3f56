#pragma once
// get_session_stats' counts: summed message by message as the session records them, so a
// session keeps the totals of its whole history without keeping that history.

#include <cstdint>
#include <string_view>

#include "protocol/messages.h"

namespace rebound::session {

struct MessageStats {
  std::int64_t user_messages = 0, assistant_messages = 0, tool_calls = 0, tool_results = 0,
               total_messages = 0;
  protocol::Usage tokens;  // summed; cost_total summed too
  /// The highest n of the tool call ids of the form `<name>_<n>` (providers.md section 3.2);
  /// subtract() leaves it, so it never goes down.
  std::int64_t highest_call_number = 0;

  void add(const protocol::AgentMessage& m);
  /// Takes `other`'s counts off (a fork's part left out); the cost total stays at 0 or more.
  void subtract(const MessageStats& other);
};

/// n of a tool call id `<name>_<n>` (n decimal, at most 15 digits), else 0.
std::int64_t call_number(std::string_view id);

}  // namespace rebound::session
