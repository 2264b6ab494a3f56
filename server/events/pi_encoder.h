#pragma once
// The rpc mode's pi dialect for session events (protocol.md section 5): a typed session::Event
// becomes one JSON line, keys in the spec's order. message_update lines are built
// incrementally (UpdateLineBuilder) while the session's partial_version says only a delta was
// appended. One encoder per output stream; event loop only.

#include <cstdint>
#include <string>
#include <variant>

#include "protocol/json.h"
#include "server/events/update_line.h"
#include "session/event.h"

namespace rebound::server {

class PiEventEncoder {
 public:
  /// The event as one protocol line, LF included (a message_update points into the encoder's
  /// shared buffers instead of copying the partial message).
  OutLine out_line(const session::Event& event);
  std::string line(const session::Event& event) { return out_line(event).flatten(); }
  /// The same, with a message_update in the delta form of protocol.md section 8.
  std::string delta_line(const session::Event& event) {
    std::string out;
    append_delta_line(out, event);
    return out;
  }
  /// delta_line() appended to `out` (the hot path: no allocation once `out` has room).
  void append_delta_line(std::string& out, const session::Event& event);
  /// A message_update went by without being encoded (filtered out): the next one is serialised
  /// afresh.
  void skipped_update() { have_partial_ = false; }

 private:
  UpdateLineBuilder lines_;
  bool have_partial_ = false;
  std::uint64_t version_ = 0;
  std::uint64_t usage_version_ = 0;
  session::SessionSlot slot_ = 0;
};

/// The event as the pi dialect's JSON object (the slow path of PiEventEncoder; tests).
protocol::Json pi_event_json(const session::Event& event);

/// A tool result as the pi dialect writes `result`/`partialResult`: {"content", "details"?}.
protocol::Json pi_tool_result_json(const session::ToolResult& result);

/// A compaction's result as `compact` answers it and auto_compaction_end carries it.
protocol::Json pi_compaction_result_json(const session::CompactionResult& result);

using session::kEventTypeCount;

/// The assistantMessageEvent type's wire name ("text_delta", ...).
std::string_view pi_update_name(session::AssistantUpdateKind kind);

}  // namespace rebound::server
