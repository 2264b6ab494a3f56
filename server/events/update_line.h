#pragma once
// message_update lines without re-serializing the partial message for every delta.
//
// A message_update carries the whole partial assistant message twice, so the bytes written grow
// with the square of the deltas (protocol.md section 5 wants it so); the work per event need
// not. UpdateLineBuilder keeps the partial message serialized in two pieces around the end of
// the last block's text: a text or thinking delta appends its escaped bytes to the first piece,
// and a line is the two pieces spliced into the event's frame. The first piece lives in shared
// append-only buffers (out_line.h) that the lines point into instead of copying. Any other
// change to the partial message (a new block, a finished tool call, usage) calls reset(). The
// lines are byte for byte what to_line(pi::message_update(...)) writes. One owner, on the event
// loop.

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/messages.h"
#include "server/events/pi_events.h"
#include "server/io/out_line.h"

namespace rebound::server {

using protocol::AgentMessage;

class UpdateLineBuilder {
 public:
  /// The size of a head buffer (one that must hold more is as large as that).
  static constexpr std::size_t kBufferBytes = 64 * 1024;

  /// Serializes `partial` afresh.
  void reset(const AgentMessage& partial);
  /// The partial message's last block (text or thinking) grew by `delta`. Only valid after a
  /// reset() whose last block was text or thinking.
  void append_to_last_block(std::string_view delta);
  /// Whether append_to_last_block() may be used (the last block is text or thinking).
  bool appendable() const { return split_; }
  /// The partial message's usage changed, and nothing else but appended text since the reset():
  /// only its usage object is serialised again (a stream that reports its usage so
  /// far in every event, as Gemini's does, stays linear). Only valid when appendable().
  void replace_usage(const AgentMessage& partial);
  /// The message_update line (with its LF) for `update` over the current partial message.
  OutLine out_line(const pi::AssistantUpdate& update) const;
  std::string line(const pi::AssistantUpdate& update) const { return out_line(update).flatten(); }

 private:
  void append_head(std::string_view bytes);

  // The partial message up to the end of its last block's text, in buffers that only grow.
  std::vector<std::shared_ptr<SharedBytes>> head_;
  std::string tail_;  // the rest (the closing quote onwards); empty when not split
  std::size_t usage_at_ = 0, usage_size_ = 0;  // the usage object's span in tail_ (when split)
  std::string scratch_;
  bool split_ = false;
};

/// A JSON string's escaped content as to_line() writes it (no quotes).
std::string escaped_json_string(std::string_view text);
/// Appends escaped_json_string(text) to `out` (printable ASCII without a copy).
void append_escaped_json_string(std::string& out, std::string_view text);

}  // namespace rebound::server
