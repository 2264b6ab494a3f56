#pragma once
// Where the session's events go (the server writes them to stdout verbatim). Called on the
// event loop, in emission order.

#include <string>

#include "protocol/json.h"
#include "protocol/json_line.h"

namespace rebound::session {

class EventSink {
 public:
  virtual ~EventSink() = default;
  virtual void emit(const protocol::Json& event) = 0;
  /// An event already serialized as one protocol line (with its LF), for the hot path of
  /// message_update. By default it is parsed and passed to emit().
  virtual void emit_line(std::string line) {
    if (auto parsed = protocol::parse_json_line(line); parsed.value) emit(*parsed.value);
  }
};

}  // namespace rebound::session
