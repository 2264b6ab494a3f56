#include "session/message_stats.h"

#include <algorithm>

namespace rebound::session {

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
        if (b.kind == protocol::ContentBlock::Kind::tool_call) ++tool_calls;
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
