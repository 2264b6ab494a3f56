#pragma once
// Turns a provider's SSE events into the session's StreamEvents (runtime.md section 2). Pure:
// the HTTP layer feeds it parsed SSE events and tells it when the stream ended. After the one
// terminal event (done or error) it emits nothing more. One decoder per request.

#include <functional>
#include <optional>
#include <string>

#include "protocol/json.h"
#include "protocol/json_template.h"
#include "protocol/wire_types.h"
#include "session/llm/provider.h"
#include "session/llm/sse_parser.h"

namespace rebound::session::llm {

class StreamDecoder {
 public:
  using Emit = std::function<void(StreamEvent&&)>;

  explicit StreamDecoder(protocol::Model model) : model_(std::move(model)) {}
  virtual ~StreamDecoder() = default;

  virtual void on_event(const SseEvent& event, const Emit& emit) = 0;
  /// Whether the SSE parser should hand on lines that are no SSE field (SseEvent::stray).
  virtual bool wants_stray_lines() const { return false; }
  /// The connection closed: complete when the provider said how it finished, else an error.
  void on_end(const Emit& emit);
  bool finished() const { return finished_; }
  /// Cache writes priced as the 1-hour cache is: twice the input price (amendments A30).
  void price_long_cache_writes() { model_.cost.cache_write = 2 * model_.cost.input; }
  /// Text that no error may quote, not even in part (the API key): see secret_text.h.
  void set_secret(std::optional<std::string> secret) { secret_ = std::move(secret); }

  static constexpr const char* kIncomplete =
      "connection error: stream ended before the response was complete";
  /// How much of a malformed event its error quotes.
  static constexpr std::size_t kMalformedEventExcerpt = 200;

 protected:
  enum class Block { none, text, thinking, tool };

  /// Opens a block of `kind` (closing any other first); for tools, `id` and `name`.
  void open(Block kind, const Emit& emit, const std::string& id = {}, const std::string& name = {});
  /// Closes the open block (a tool call's arguments are parsed from their deltas), its end event
  /// carrying `signature` (providers.md section 2.3) when given.
  void close(const Emit& emit, std::string signature = {});
  void delta(const std::string& text, const Emit& emit);
  void usage_changed(const Emit& emit);
  /// Closes the open block and ends with `reason`.
  void complete(protocol::StopReason reason, const Emit& emit);
  /// Ends with an error; half-streamed tool-call arguments are dropped by the session.
  void fail(const std::string& message, const Emit& emit);
  /// A token count from the provider's JSON: negative or absent reads 0.
  static std::int64_t count(const protocol::Json& j, const char* key);
  /// The JSON of an SSE data field, or an error already emitted.
  std::optional<protocol::Json> parse_data(const std::string& data, const Emit& emit);

  protocol::Model model_;
  protocol::Usage usage_;
  std::optional<protocol::StopReason> stop_reason_;
  /// How the stream ends once the body does, when the provider said it stopped for a reason
  /// that is an error (Gemini's finish reason SAFETY): wins over stop_reason_.
  std::optional<std::string> end_error_;
  std::string response_id_;  // the provider's id of the response, given on the terminal event
  bool finished_ = false;
  Block block_ = Block::none;
  std::string tool_arguments_;
  std::optional<std::string> secret_;
  bool redacted_ = false;  // the open thinking block came redacted
};

/// OpenAI Chat Completions chunks (`data: {...}` … `data: [DONE]`).
class OpenAiStreamDecoder : public StreamDecoder {
 public:
  using StreamDecoder::StreamDecoder;
  void on_event(const SseEvent& event, const Emit& emit) override;
  /// Off: every chunk takes the general JSON parser (the fast path's reference, for tests).
  void set_fast_path(bool on) { fast_path_ = on; }

 private:
  /// The common chunk (text, reasoning, finish_reason; no usage, error or tool calls) read with
  /// the scanner of protocol/json_scan.h; false when the chunk needs the general path.
  bool fast_event(const std::string& data, const Emit& emit);
  void reasoning_delta(const std::string& text, const Emit& emit);
  void content_delta(const std::string& text, const Emit& emit);
  void finish(const std::string& reason, const Emit& emit);

  bool fast_path_ = true;
  // The last plain content chunk with its content string as the hole: a stream's chunks differ
  // only there, so the next one needs no scan.
  protocol::json_scan::Template template_;
  std::optional<long> tool_index_;  // OpenAI's index of the tool call being streamed
};

/// OpenAI Responses events (providers.md section 2.2): typed `response.*` events, ending with
/// response.completed, response.incomplete, response.failed or error (no [DONE]).
class ResponsesStreamDecoder : public StreamDecoder {
 public:
  using StreamDecoder::StreamDecoder;
  void on_event(const SseEvent& event, const Emit& emit) override;
  /// Off: every event takes the general JSON parser (the fast path's reference, for tests).
  void set_fast_path(bool on) { fast_path_ = on; }

 private:
  /// A text, reasoning or argument delta event read with the scanner of protocol/json_scan.h,
  /// as Chat Completions' content chunks are; false when the event needs the general path.
  bool fast_event(const std::string& data, const Emit& emit);
  void item_added(const protocol::Json& item, const Emit& emit);
  void item_done(const protocol::Json& item, const Emit& emit);
  void read_usage(const protocol::Json& response, const Emit& emit);
  void streamed(const std::string& text, const Emit& emit);

  bool fast_path_ = true;
  // The last delta event with its delta, sequence_number and obfuscation (each given) as holes,
  // and the block its type streams into.
  protocol::json_scan::Template template_;
  Block template_block_ = Block::none;
  bool streamed_ = false;          // the open block had a non-empty delta
  std::size_t summary_parts_ = 0;  // of the open reasoning item
  bool tool_call_ = false;         // the message holds a tool call
};

/// Gemini's stream (providers.md section 3.2): each `data:` event one GenerateContentResponse,
/// no end marker; a finish reason makes the response complete. Tool calls are numbered
/// `<name>_<n>` from one past `calls_before`.
class GeminiStreamDecoder : public StreamDecoder {
 public:
  GeminiStreamDecoder(protocol::Model model, std::int64_t calls_before)
      : StreamDecoder(std::move(model)), calls_(calls_before) {}
  void on_event(const SseEvent& event, const Emit& emit) override;
  bool wants_stray_lines() const override { return true; }
  /// Off: every event takes the general JSON parser (the fast path's reference, for tests).
  void set_fast_path(bool on) { fast_path_ = on; }

 private:
  /// The common event (one text or thought part, usage counts) read with the scanner of
  /// protocol/json_scan.h; false when the event needs the general path.
  bool fast_event(const std::string& data, const Emit& emit);
  void part(const protocol::Json& p, const Emit& emit);
  void text_part(Block kind, const std::string& text, std::string signature, const Emit& emit);
  void finish(const std::string& reason, const Emit& emit);
  void read_usage(const protocol::Json& metadata, const Emit& emit);
  /// Closes the open block with the signature kept for it.
  void end_block(const Emit& emit);

  /// The fast path's steps once decided, in the general path's order: the text or thought
  /// part, then the usage counts when given.
  void fast_apply(Block kind, const std::string& text, const std::int64_t* counts,
                  const Emit& emit);

  std::int64_t calls_;
  bool fast_path_ = true;
  // The last common event with its part's text and its usage counts (those given) as holes,
  // whether the part was a thought and whether it gave usage.
  protocol::json_scan::Template template_;
  bool template_thought_ = false;
  bool template_usage_ = false;
  std::string signature_;  // of the open text or thinking block
  bool tool_call_ = false;
};

/// Anthropic Messages events (message_start … message_stop, error, ping).
class AnthropicStreamDecoder : public StreamDecoder {
 public:
  using StreamDecoder::StreamDecoder;
  void on_event(const SseEvent& event, const Emit& emit) override;

 private:
  std::string signature_;  // of the open thinking block: signature_delta events, appended
};

}  // namespace rebound::session::llm
