#pragma once
// The API keys a process may send, kept out of what tools bring back: a key that shows up in a
// tool's result (a model-run `cat ~/.config/key`, a file that holds it) becomes `[redacted]`
// before the result reaches the context, an event or a session file. Pure.

#include <string>
#include <vector>

#include "protocol/json.h"
#include "session/tool.h"

namespace rebound::session {

class Secrets {
 public:
  /// Keys shorter than this are not searched for (they would match ordinary text).
  static constexpr std::size_t kMinLength = 8;

  Secrets() = default;
  explicit Secrets(std::vector<std::string> values);

  /// `text` with every key replaced by "[redacted]".
  void redact(std::string& text) const;
  /// Every text of the result (its content blocks and the strings of its details).
  void redact(ToolResult& result) const;
  void redact(protocol::Json& value) const;

 private:
  std::vector<std::string> values_;  // longest first: a key inside a longer one goes with it
};

}  // namespace rebound::session
