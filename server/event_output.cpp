#include "server/event_output.h"

#include <algorithm>
#include <utility>

#include "protocol/jsonrpc.h"

namespace rebound::server {

EventOutput::EventOutput(LineSink sink, EnvelopeMode mode)
    : sink_(std::move(sink)), mode_(mode), jsonrpc_(mode == EnvelopeMode::jsonrpc) {
  allowed_.fill(true);
  for (std::size_t i = 0; i < kEventTypeCount; ++i)
    notification_heads_[i] = protocol::jsonrpc_notification_head(pi_event_type(i));
}

void EventOutput::set_filter(EventFilter filter) {
  filter_ = std::move(filter);
  for (std::size_t i = 0; i < kEventTypeCount; ++i) {
    allowed_[i] = !filter_.events || std::find(filter_.events->begin(), filter_.events->end(),
                                               pi_event_type(i)) != filter_.events->end();
  }
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
  OutLine line =
      filter_.delta_updates ? OutLine(encoder_.delta_line(event)) : encoder_.out_line(event);
  // {"jsonrpc":"2.0","method":"<type>","params":<the pi line>}
  if (jsonrpc_) line.wrap(notification_heads_[index], "}");
  sink_(std::move(line));
}

}  // namespace rebound::server
