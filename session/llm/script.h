#pragma once
// The scripted provider's step format (runtime.md section 7) and its validation. Pure; the
// server reads the file and reports an error at start-up.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "protocol/json.h"
#include "protocol/messages.h"

namespace rebound::session::llm {

struct ScriptToolCall {
  std::string name;
  protocol::Json arguments;  // an object
};

struct ScriptStep {
  std::optional<std::string> text;
  std::int64_t chunks = 1;
  std::int64_t delay_ms = 0;
  std::int64_t chunk_delay_ms = 0;
  std::optional<std::string> thinking;
  std::vector<ScriptToolCall> tool_calls;
  std::optional<protocol::Usage> usage;
  std::optional<std::string> error;
  std::optional<protocol::StopReason> stop_reason;
  bool hang = false;
};

struct ScriptParse {
  std::vector<ScriptStep> steps;
  std::string error;  // non-empty when the script is unusable
};

/// Validates a whole script: a non-empty JSON array of step objects.
ScriptParse parse_script(const protocol::Json& script);

/// Splits `text` into `chunks` pieces of (nearly) equal length in characters; never splits a
/// UTF-8 sequence and never yields an empty piece (fewer pieces when the text is shorter).
std::vector<std::string> split_into_chunks(const std::string& text, std::int64_t chunks);

/// "echo: hello world" → {"echo: ", "hello ", "world"}: words with their trailing spaces.
std::vector<std::string> split_words(const std::string& text);

}  // namespace rebound::session::llm
