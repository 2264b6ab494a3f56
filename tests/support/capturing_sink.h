#pragma once
// An EventSink that keeps every event as the pi dialect writes it (encoded at once: the typed
// event's references live only during the call), with helpers to read the sequence of types.

#include <string>
#include <vector>

#include "server/events/pi_encoder.h"
#include "session/event_sink.h"

namespace rebound::testing {

class CapturingSink : public session::EventSink {
 public:
  void on_event(const session::Event& event) override {
    events.push_back(server::pi_event_json(event));
    slots.push_back(event.session);
  }

  /// The event types in order; message events carry their role, e.g. "message_end:assistant".
  std::vector<std::string> types() const {
    std::vector<std::string> out;
    for (const auto& e : events)
      out.push_back(e["type"].get<std::string>());
    return out;
  }
  std::vector<protocol::Json> of_type(const std::string& type) const {
    std::vector<protocol::Json> out;
    for (const auto& e : events) {
      if (e["type"] == type) out.push_back(e);
    }
    return out;
  }
  void clear() {
    events.clear();
    slots.clear();
  }

  std::vector<protocol::Json> events;
  std::vector<session::SessionSlot> slots;  // of each event
};

}  // namespace rebound::testing
