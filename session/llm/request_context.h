#pragma once
// What every wire API's request is built from (runtime.md section 2, providers.md section 7):
// the context made sendable (failed turns left out, every tool call answered, every result
// answering a call) and tool-call ids mapped to what the target API accepts (amendments A20).
// Pure functions of the context; the session and its file keep the original ids.

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/messages.h"
#include "protocol/wire_types.h"

namespace rebound::session::llm {

/// The text of the result a request adds for a tool call the context does not answer.
inline constexpr const char* kNoResultProvided = "No result provided";

/// The context as a request sends it: assistant messages that ended in error or abort left out
/// (they would be empty turns), a tool call without a result followed by an error result
/// `No result provided` before the next user or assistant message, and a result whose call is
/// not in the context left out (runtime.md section 2, providers.md section 7.2).
std::vector<protocol::AgentMessage> sendable_context(
    const std::vector<protocol::AgentMessage>& context);

/// Whether `message` was made by `model` (same provider, API and id): only then do its thinking,
/// signatures and item ids go back (providers.md section 7.1).
bool made_by(const protocol::AgentMessage& message, const protocol::Model& model);

/// Whether a message holds an image block.
bool has_images(const protocol::AgentMessage& message);

/// What a wire API accepts as a tool-call id: at most `max_length` characters and, when
/// `word_characters_only`, only [A-Za-z0-9_-] (Anthropic's pattern).
struct IdRule {
  std::size_t max_length;
  bool word_characters_only;
};
inline constexpr IdRule kAnthropicIds{64, true};
inline constexpr IdRule kChatCompletionsIds{40, false};
inline constexpr IdRule kResponsesCallIds{64, false};

/// Amendments A20: an id the rule accepts as it is; any other `<prefix>_<8 lowercase hex of
/// FNV-1a-32 of the id>`, the prefix being the id with characters outside the pattern replaced
/// by `_`, cut so the whole fits. Depends on the id alone.
std::string mapped_tool_id(std::string_view id, IdRule rule);

/// The ids of one request: every call's id mapped in context order; two ids that still meet
/// get `_2`, `_3`, … on the later. A result takes its call's mapped id.
class ToolIdMap {
 public:
  /// `key` turns a block's id into the id the API is sent (Responses: the part before `|`).
  ToolIdMap(const std::vector<protocol::AgentMessage>& messages, IdRule rule,
            std::string (*key)(const std::string& id) = nullptr);
  /// The id sent for a call or result whose session id is `id`.
  std::string operator()(const std::string& id) const;

 private:
  IdRule rule_;
  std::string (*key_)(const std::string& id);
  std::map<std::string, std::string> mapped_;
};

}  // namespace rebound::session::llm
