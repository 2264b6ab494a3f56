#pragma once
// The offline provider of runtime.md section 7: replays script steps (the last one repeats) or,
// without a script, echoes the last user text word by word. Timing (delayMs, chunkDelayMs) goes
// through the injected Scheduler, so tests need no sleeps. Each request can be recorded through
// the request log (--script-log). Lives on the session's event loop.

#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "session/llm/provider.h"
#include "session/llm/script.h"
#include "session/scheduler.h"

namespace rebound::session::llm {

class ScriptedProvider : public Provider {
 public:
  /// Receives {"t","model","messages"} for each request, before it is answered.
  using RequestLog = std::function<void(const protocol::Json&)>;

  /// `script` empty: the echo behaviour for every request.
  ScriptedProvider(Scheduler& scheduler, std::optional<std::vector<ScriptStep>> script,
                   RequestLog log = {});

  std::unique_ptr<StreamHandle> stream(const LlmRequest& request, StreamHandler handler) override;

  /// How many requests were received so far.
  std::size_t requests() const { return requests_; }

 private:
  ScriptStep next_step(const LlmRequest& request);

  Scheduler& scheduler_;
  std::optional<std::vector<ScriptStep>> script_;
  RequestLog log_;
  std::size_t requests_ = 0;
  std::size_t tool_call_counter_ = 0;  // ids call_1, call_2, … over the process
};

}  // namespace rebound::session::llm
