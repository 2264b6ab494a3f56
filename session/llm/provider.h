#pragma once
// The provider interface (runtime.md section 2): a context in, a stream of assistant-message
// events out. Events are delivered on the session's event loop, never from inside stream();
// every stream ends with exactly one `done` or `error` event unless it is cancelled first.
// Providers never retry: the session's policy is the only retry layer.

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "protocol/json.h"
#include "protocol/messages.h"
#include "protocol/wire_types.h"
#include "session/stream_kind.h"
#include "session/tool.h"

namespace rebound::session::llm {

struct LlmRequest {
  protocol::Model model;
  std::string system_prompt;
  std::vector<protocol::AgentMessage> messages;  // the runtime context to send
  protocol::ThinkingLevel thinking_level = protocol::ThinkingLevel::off;
  std::string session_id;
  std::vector<ToolDefinition> tools;  // offered to the model, in order; none when empty
  /// How many tool calls the session holds (at least the highest `<name>_<n>` id's n): the
  /// Gemini decoder numbers its calls from one past it (providers.md section 3.2).
  std::int64_t tool_calls_before = 0;
  /// Anthropic's prompt-cache breakpoints (providers.md section 7.3).
  protocol::CacheRetention cache_retention = protocol::CacheRetention::short_term;
};

struct StreamEvent {
  using Kind = StreamKind;  // session/stream_kind.h: the block kinds, usage, done, error
  Kind kind;
  std::string text;                                               // delta, or the error message
  std::string tool_id, tool_name;                                 // toolcall_start
  protocol::Json arguments;                                       // toolcall_end
  protocol::Usage usage;                                          // usage
  protocol::StopReason stop_reason = protocol::StopReason::stop;  // done
  std::string signature;    // text_end, thinking_end, toolcall_end: the block's, when it has one
  bool redacted = false;    // thinking_end: the block came redacted (its signature is the data)
  std::string response_id;  // done, error: the provider's id of the response, when it gave one
};

// Events are handed on by reference down the chain (decoder, HTTP exchange, session): one move
// less per layer on the per-token path.
using StreamHandler = std::function<void(StreamEvent&&)>;

/// A running request. cancel() stops it: no event is delivered afterwards.
class StreamHandle {
 public:
  virtual ~StreamHandle() = default;
  virtual void cancel() = 0;
};

class Provider {
 public:
  virtual ~Provider() = default;
  virtual std::unique_ptr<StreamHandle> stream(const LlmRequest& request,
                                               StreamHandler handler) = 0;
};

}  // namespace rebound::session::llm
