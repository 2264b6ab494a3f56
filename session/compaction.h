#pragma once
// The pure parts of compaction (runtime.md section 5): token estimates, where to cut the
// context, and the summary request. AgentSession runs the request and applies the result.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "protocol/messages.h"
#include "session/llm/provider.h"

namespace rebound::session {

/// ceil(characters / 4) over what the model reads of a message: text, thinking, tool-call
/// arguments as JSON, tool results, a bash execution or a summary as the text it is sent as.
std::int64_t estimate_tokens(const protocol::AgentMessage& message);

/// The context's size in tokens: the usage total of the last assistant message that is neither
/// error nor aborted, plus the estimates of the messages after it; with no usage anywhere, the
/// sum of the estimates.
std::int64_t estimate_context_tokens(const std::vector<protocol::AgentMessage>& context);

/// The index of the first message to keep: walking back from the newest message, the estimates
/// add up to `keep_recent_tokens` at some message; the cut is at that message's start, moved
/// earlier so that no tool result is kept without its call. 0 (keep all) when everything fits.
/// A leading compactionSummary is never kept: it is summarised again.
std::size_t find_cut(const std::vector<protocol::AgentMessage>& context,
                     std::int64_t keep_recent_tokens);

/// The request that asks the current model for a summary of `older` (which may be empty),
/// folding in an earlier summary and the user's instructions.
llm::LlmRequest summary_request(const protocol::Model& model,
                                const std::vector<protocol::AgentMessage>& older,
                                const std::optional<std::string>& custom_instructions,
                                const std::string& session_id);

}  // namespace rebound::session
