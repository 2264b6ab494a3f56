#pragma once
// Agent messages of protocol.md section 5 (user, assistant, toolResult, bashExecution,
// compactionSummary, and pi's custom messages of extensions.md section 7.4) as values, their JSON
// in the spec's key order, and the way back from JSON (session files). One struct serves every
// role; fields that a role does not use stay empty and are not written. Pure.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/json.h"

namespace rebound::protocol {

enum class Role { user, assistant, tool_result, bash_execution, compaction_summary, custom };
enum class StopReason { stop, length, tool_use, error, aborted };

std::string_view to_string(StopReason reason);
std::optional<StopReason> stop_reason_from_string(std::string_view s);

struct ContentBlock {
  enum class Kind { text, thinking, image, tool_call };
  Kind kind = Kind::text;
  std::string text;       // text, thinking, or image data (base64)
  std::string mime_type;  // image
  std::string id;         // tool_call
  std::string name;       // tool_call
  Json arguments;         // tool_call: an object
  /// The provider's opaque state for the block, sent back to the same model (providers.md
  /// section 2.3): `textSignature`, `thinkingSignature`, or a tool call's `thoughtSignature`;
  /// empty when absent. Never on an image.
  std::string signature;
  /// A thinking block the provider sent redacted (Anthropic's `redacted_thinking`): its text is
  /// a placeholder and `signature` holds the data (amendments A21).
  bool redacted = false;

  static ContentBlock make_text(std::string text);
  static ContentBlock make_thinking(std::string thinking);
  static ContentBlock make_image(std::string data, std::string mime_type);
  static ContentBlock make_tool_call(std::string id, std::string name, Json arguments);
};

struct Usage {
  std::int64_t input = 0, output = 0, cache_read = 0, cache_write = 0, total_tokens = 0;
  double cost_input = 0, cost_output = 0, cost_cache_read = 0, cost_cache_write = 0, cost_total = 0;
};
/// Field by field: running totals, and what grew between two reports of the same request.
Usage& operator+=(Usage& a, const Usage& b);
Usage operator-(Usage a, const Usage& b);

struct AgentMessage {
  Role role = Role::user;
  std::vector<ContentBlock> content;
  std::int64_t timestamp = 0;
  // assistant
  std::string api, provider, model;
  Usage usage;
  StopReason stop_reason = StopReason::stop;
  std::optional<std::string> error_message;
  std::string response_id;  // the provider's id of the response (`responseId`), when it gave one
  // toolResult
  std::string tool_call_id, tool_name;
  Json details;
  bool is_error = false;
  // bashExecution
  std::string command, output;
  std::optional<std::int64_t> exit_code;  // none when the process was killed
  bool cancelled = false, truncated = false;
  std::optional<std::string> full_output_path;
  // compactionSummary
  std::string summary;
  std::int64_t tokens_before = 0;
  // custom (pi's sendMessage): `content` is written as one string when `content_is_string`,
  // `details` is shared with toolResult.
  std::string custom_type;
  bool display = true;
  bool content_is_string = false;

  /// The id of the session-file entry that holds this message, once recorded (never on the
  /// wire): the session finds messages by it, not by comparing their JSON.
  std::string entry_id;

  bool is_assistant() const { return role == Role::assistant; }
  /// An assistant message that ended in error or abort.
  bool failed() const {
    return is_assistant() &&
           (stop_reason == StopReason::error || stop_reason == StopReason::aborted);
  }
  /// The concatenated text blocks.
  std::string text() const;
};

/// A custom message whose content is one text (a hook's context, extensions.md section 3.9).
AgentMessage make_custom_message(std::string custom_type, std::string content, Json details,
                                 std::int64_t timestamp);

/// What a model is shown for a bashExecution, compactionSummary or custom message (as user
/// text).
std::string llm_text(const AgentMessage& message);

/// The key a block's signature is written under (textSignature, thinkingSignature,
/// thoughtSignature); empty for an image.
std::string_view signature_key(ContentBlock::Kind kind);
Json to_json(const ContentBlock& block);
Json to_json(const Usage& usage);
/// Appends to_json(usage) as to_line() writes it (without the LF), without building the tree:
/// the pi encoder's per-event usage in a stream that reports it in every event.
void append_usage_json(std::string& out, const Usage& usage);
Json to_json(const AgentMessage& message);
Json to_json(const std::vector<AgentMessage>& messages);

/// Reads an AgentMessage back from its JSON (as to_json writes it). Returns nullopt and sets
/// `error` (when given) for a value that is not a message of a known role. Never throws.
std::optional<AgentMessage> message_from_json(const Json& value, std::string* error = nullptr);

}  // namespace rebound::protocol
