#pragma once
// Request bodies for the two wire APIs (runtime.md section 2) and the wording of HTTP failures
// (retry.md section 2). Pure functions of the request; no I/O.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "protocol/json.h"
#include "session/llm/provider.h"

namespace rebound::session::llm {

/// OpenAI's reasoning effort for a thinking level (minimal, low, medium; high for high and
/// xhigh), in Chat Completions' reasoning_effort and the Responses API's reasoning.effort.
std::string reasoning_effort(protocol::ThinkingLevel level);

/// What OpenAI's reasoning effort is for a model id and level (amendments A19): `send` false
/// when the request carries no effort at all.
struct OpenAiEffort {
  std::string value;
  bool send = false;
  bool on_table = false;  // the id matched a row of A19's table
};
OpenAiEffort openai_effort(std::string_view model_id, protocol::ThinkingLevel level);

/// A message's text blocks joined with "\n" (a tool result's output, an assistant's content).
std::string joined_text(const protocol::AgentMessage& m);

/// POST {baseUrl}/chat/completions body: system prompt, the context mapped to OpenAI roles
/// (thinking blocks dropped, tool calls and results kept), stream with usage, max tokens, and
/// reasoning_effort for reasoning models.
protocol::Json openai_request_body(const LlmRequest& request);

/// POST {baseUrl}/v1/messages body: system, alternating user/assistant messages (tool results
/// as user tool_result blocks), stream, max_tokens and a thinking budget for reasoning models.
/// Prompt-cache breakpoints with `retention` (providers.md section 7.3); signed thinking blocks
/// back to the model that made them, thinking off for a tool loop without them (section 7.1).
protocol::Json anthropic_request_body(const LlmRequest& request,
                                      protocol::CacheRetention retention);
/// The same with the request's own retention.
inline protocol::Json anthropic_request_body(const LlmRequest& request) {
  return anthropic_request_body(request, request.cache_retention);
}

/// POST {baseUrl}/responses body (providers.md section 2.1): the context as input items,
/// reasoning items and message ids sent back to the model that made them, store:false.
protocol::Json openai_responses_request_body(const LlmRequest& request);

/// POST {baseUrl}/models/{id}:streamGenerateContent body (providers.md section 3.1): contents,
/// systemInstruction, tools, generationConfig with the thinking config the model id calls for;
/// thought parts and signatures sent back only to the model that made them.
protocol::Json gemini_request_body(const LlmRequest& request);

/// The Anthropic thinking budget for a level (minimal 1024 … xhigh 32768); 0 for off.
std::int64_t anthropic_thinking_budget(protocol::ThinkingLevel level);

/// "<status> <provider's message>" from an error response, with " retry-after-ms=<n>" (the
/// largest hint) when the headers carry retry-after, retry-after-ms, x-ratelimit-reset-ms or
/// x-ratelimit-reset. `headers` keys are lower-case. A body quoted as the message is cut to
/// 2000 bytes after `secret` (the API key) was scrubbed from it.
std::string http_error_message(int status, std::string_view body,
                               const std::map<std::string, std::string>& headers,
                               std::int64_t now_epoch_ms,
                               const std::optional<std::string>& secret = std::nullopt);

}  // namespace rebound::session::llm
