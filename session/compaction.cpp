#include "session/compaction.h"

#include <nlohmann/json.hpp>

namespace rebound::session {

using protocol::AgentMessage;
using protocol::ContentBlock;
using protocol::Role;

namespace {

std::int64_t characters(const std::string& s) {
  std::int64_t n = 0;
  for (unsigned char c : s)
    n += (c & 0xC0) != 0x80;  // code points, not bytes
  return n;
}

std::int64_t message_characters(const AgentMessage& m) {
  if (m.role == Role::bash_execution || m.role == Role::compaction_summary) {
    return characters(protocol::llm_text(m));
  }
  std::int64_t n = 0;
  for (const auto& b : m.content) {
    switch (b.kind) {
      case ContentBlock::Kind::text:
      case ContentBlock::Kind::thinking:
        n += characters(b.text);
        break;
      case ContentBlock::Kind::tool_call:
        n += characters(b.name) + characters(b.arguments.dump());
        break;
      case ContentBlock::Kind::image:
        break;  // not text; the provider counts it in usage
    }
  }
  return n;
}

std::int64_t usage_total(const protocol::Usage& u) {
  return u.total_tokens > 0 ? u.total_tokens : u.input + u.output + u.cache_read + u.cache_write;
}

constexpr const char* kSystemPrompt =
    "You write summaries of conversations between a user and a coding assistant. The summary "
    "replaces the conversation, so the assistant must be able to continue the work from it "
    "alone.";

std::string transcript_line(const AgentMessage& m) {
  switch (m.role) {
    case Role::user:
      return "[User]: " + m.text();
    case Role::assistant: {
      std::string out = "[Assistant]: " + m.text();
      for (const auto& b : m.content) {
        if (b.kind == ContentBlock::Kind::tool_call) {
          out += "\n[Assistant tool call]: " + b.name + " " + b.arguments.dump();
        }
      }
      return out;
    }
    case Role::tool_result:
      return "[Tool result " + m.tool_name + (m.is_error ? " (error)" : "") + "]: " + m.text();
    case Role::bash_execution:
      return "[User ran a command]: " + protocol::llm_text(m);
    case Role::compaction_summary:
      return {};  // given separately as the earlier summary
    case Role::custom:
      return "[User]: " + m.text();  // sent as user content (extensions.md section 3.9)
  }
  return {};
}

}  // namespace

std::int64_t estimate_tokens(const AgentMessage& m) {
  return (message_characters(m) + 3) / 4;
}

std::int64_t estimate_context_tokens(const std::vector<AgentMessage>& context) {
  for (std::size_t i = context.size(); i-- > 0;) {
    const AgentMessage& m = context[i];
    if (!m.is_assistant() || m.failed() || usage_total(m.usage) == 0) continue;
    std::int64_t total = usage_total(m.usage);
    for (std::size_t k = i + 1; k < context.size(); ++k)
      total += estimate_tokens(context[k]);
    return total;
  }
  std::int64_t total = 0;
  for (const auto& m : context)
    total += estimate_tokens(m);
  return total;
}

std::size_t find_cut(const std::vector<AgentMessage>& context, std::int64_t keep_recent_tokens) {
  std::size_t cut = 0;
  std::int64_t sum = 0;
  for (std::size_t i = context.size(); i-- > 0;) {
    sum += estimate_tokens(context[i]);
    if (sum >= keep_recent_tokens) {
      cut = i;
      break;
    }
  }
  // A tool result stays with the assistant message that called it.
  while (cut > 0 && cut < context.size() && context[cut].role == Role::tool_result)
    --cut;
  if (cut == 0 && !context.empty() && context[0].role == Role::compaction_summary) cut = 1;
  return cut;
}

llm::LlmRequest summary_request(const protocol::Model& model,
                                const std::vector<AgentMessage>& older,
                                const std::optional<std::string>& custom_instructions,
                                const std::string& session_id) {
  std::string text =
      "Summarize the conversation below. Keep the user's goals and requests, the decisions "
      "made, facts learned, files, commands and their results, and what remains to be done.\n";
  std::string transcript;
  for (const auto& m : older) {
    if (m.role == Role::compaction_summary) {
      text += "\nThe conversation before it was already summarized as:\n<summary>\n" + m.summary +
              "\n</summary>\nFold that summary into yours.\n";
      continue;
    }
    transcript += transcript_line(m) + "\n";
  }
  text += "\n<conversation>\n" + transcript + "</conversation>\n";
  if (custom_instructions && !custom_instructions->empty()) {
    text += "\nAdditional instructions: " + *custom_instructions + "\n";
  }
  AgentMessage user;
  user.role = Role::user;
  user.content.push_back(ContentBlock::make_text(std::move(text)));
  llm::LlmRequest r;
  r.model = model;
  r.system_prompt = kSystemPrompt;
  r.messages.push_back(std::move(user));
  r.session_id = session_id;
  return r;
}

}  // namespace rebound::session
