#pragma once
// An EventSink that keeps every event, with helpers to read the sequence of types.

#include <string>
#include <vector>

#include "session/event_sink.h"

namespace rebound::testing {

class CapturingSink : public session::EventSink {
 public:
  void emit(const protocol::Json& event) override { events.push_back(event); }

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
  void clear() { events.clear(); }

  std::vector<protocol::Json> events;
};

}  // namespace rebound::testing
