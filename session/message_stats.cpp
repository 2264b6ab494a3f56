#include "session/message_stats.h"

#include <algorithm>

namespace rebound::session {

std::int64_t call_number(std::string_view id) {
  const std::size_t underscore = id.rfind('_');
  if (underscore == std::string_view::npos || underscore == 0) return 0;
  const std::string_view digits = id.substr(underscore + 1);
  if (digits.empty() || digits.size() > 15) return 0;
  std::int64_t n = 0;
  for (const char c : digits) {
    if (c < '0' || c > '9') return 0;
    n = n * 10 + (c - '0');
  }
  return n;
}

void MessageStats::add(const protocol::AgentMessage& m) {
  ++total_messages;
  switch (m.role) {
    case protocol::Role::user:
      ++user_messages;
      break;
    case protocol::Role::tool_result:
      ++tool_results;
      break;
    case protocol::Role::assistant:
      ++assistant_messages;
      for (const auto& b : m.content) {
        if (b.kind != protocol::ContentBlock::Kind::tool_call) continue;
        ++tool_calls;
        highest_call_number = std::max(highest_call_number, call_number(b.id));
      }
      tokens.input += m.usage.input;
      tokens.output += m.usage.output;
      tokens.cache_read += m.usage.cache_read;
      tokens.cache_write += m.usage.cache_write;
      tokens.total_tokens += m.usage.total_tokens;
      tokens.cost_total += m.usage.cost_total;
      break;
    case protocol::Role::bash_execution:
    case protocol::Role::compaction_summary:
    case protocol::Role::custom:
      break;
  }
}

void MessageStats::subtract(const MessageStats& o) {
  user_messages -= o.user_messages;
  assistant_messages -= o.assistant_messages;
  tool_calls -= o.tool_calls;
  tool_results -= o.tool_results;
  total_messages -= o.total_messages;
  tokens.input -= o.tokens.input;
  tokens.output -= o.tokens.output;
  tokens.cache_read -= o.tokens.cache_read;
  tokens.cache_write -= o.tokens.cache_write;
  tokens.total_tokens -= o.tokens.total_tokens;
  tokens.cost_total = std::max(0.0, tokens.cost_total - o.tokens.cost_total);
}

}  // namespace rebound::session
