#pragma once
// Where the session's events go (the server writes them to stdout verbatim). Called on the
// event loop, in emission order.

#include "protocol/json.h"

namespace rebound::session {

class EventSink {
 public:
  virtual ~EventSink() = default;
  virtual void emit(const protocol::Json& event) = 0;
};

}  // namespace rebound::session
