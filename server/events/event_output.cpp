#include "server/events/event_output.h"

#include <algorithm>
#include <utility>

#include "protocol/jsonrpc.h"

namespace rebound::server {

EventOutput::EventOutput(LineWriter& out, EnvelopeMode mode)
    : out_(out), mode_(mode), jsonrpc_(mode == EnvelopeMode::jsonrpc) {
  allowed_.fill(true);
  for (std::size_t i = 0; i < kEventTypeCount; ++i)
    notification_heads_[i] = protocol::jsonrpc_notification_head(session::event_name(i));
}

void EventOutput::set_filter(EventFilter filter) {
  filter_ = std::move(filter);
  for (std::size_t i = 0; i < kEventTypeCount; ++i) {
    allowed_[i] = !filter_.events || std::find(filter_.events->begin(), filter_.events->end(),
                                               session::event_name(i)) != filter_.events->end();
  }
  // A hidden dialog could only time out (extensions.md section 6.1).
  allowed_[session::EventBody(session::ev::ExtensionUiRequest{nullptr}).index()] = true;
}

void EventOutput::on_jsonrpc_request() {
  if (mode_ == EnvelopeMode::automatic) jsonrpc_ = true;
}

void EventOutput::on_event(const session::Event& event) {
  const std::size_t index = event.body.index();
  if (!allowed_[index]) {
    if (std::holds_alternative<session::ev::MessageUpdate>(event.body)) encoder_.skipped_update();
    return;
  }
  // {"jsonrpc":"2.0","method":"<type>","params":<the pi line>}
  if (filter_.delta_updates) {
    scratch_.clear();
    if (jsonrpc_) scratch_ += notification_heads_[index];
    encoder_.append_delta_line(scratch_, event);
    if (jsonrpc_) scratch_.insert(scratch_.size() - 1, "}");
    out_.write_text(scratch_);
    return;
  }
  OutLine line = encoder_.out_line(event);
  if (jsonrpc_) line.wrap(notification_heads_[index], "}");
  out_.write_line(std::move(line));
}

}  // namespace rebound::server
