#pragma once
// Where a session's typed events go (session/event.h). The rpc front end encodes them as
// pi-dialect lines; tests capture them. Called on the event loop, in emission order; the
// event's references are valid only during the call.

#include "session/event.h"

namespace rebound::session {

class EventSink {
 public:
  virtual ~EventSink() = default;
  virtual void on_event(const Event& event) = 0;
};

}  // namespace rebound::session
