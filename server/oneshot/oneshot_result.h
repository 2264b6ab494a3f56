#pragma once
// One-shot mode's result (oneshot.md sections 6 and 7): what a run tallied from its session's
// events, how it ended, and the result object with its exit code. Pure: no I/O, no clock.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "protocol/json.h"
#include "protocol/messages.h"

namespace rebound::server::oneshot {

/// Why a run stopped before its own end (the first of them decides, section 7).
enum class Stop { none, max_turns, max_budget, timeout, sighup, sigint, sigterm, stdout_gone };

/// What the run's events showed (section 6).
struct Tally {
  std::int64_t num_turns = 0;
  std::int64_t api_ms = 0;
  double cost = 0;
  std::int64_t input = 0, cache_write = 0, cache_read = 0, output = 0;
  protocol::Json retries = protocol::Json::array();
  protocol::Json denials = protocol::Json::array();
  /// The calls the session's load gave an unknown outcome (runtime.md section 8).
  protocol::Json unknown_outcomes = protocol::Json::array();
  std::int64_t compactions = 0;
  std::optional<protocol::AgentMessage> last;  // the run's last assistant message
  /// The last retry chain's end: its reason when it gave up (retry.md section 12).
  std::optional<std::string> chain_end_reason;
  std::optional<std::string> chain_error_class;  // the class the chain was retrying
  std::optional<std::string> overflow_error;     // an overflow compaction that failed
  bool retry_active = false;
  std::string model;                         // provider/modelId of the last request
  std::optional<protocol::Json> structured;  // the accepted structured output (section 11)
};

/// How the run ended, as the caller saw it besides the events.
struct Ending {
  Stop stop = Stop::none;
  std::optional<std::string> invalid_input;     // exit 2 with a result (no prompt, stdin too big)
  std::optional<std::string> hook_stop;         // a hook refused the prompt or stopped the run
  std::optional<std::string> internal;          // exit 1
  std::optional<std::string> structured_error;  // exit 8: no valid structured output (11.2)
  std::int64_t max_turns = 0;
  std::string max_budget_text;
  std::string timeout_text;
  std::int64_t context_window = 0;
};

struct Outcome {
  int exit_code = 0;
  std::string subtype = "success";
  std::string terminal_reason = "completed";
  std::optional<std::string> error;  // errors[0]
  std::optional<std::string> error_class;
  std::optional<int> api_status;
};

/// Section 7's table for `tally` and `ending`.
Outcome decide(const Tally& tally, const Ending& ending);

/// The session's identity and files as the result names them.
struct ResultContext {
  std::int64_t duration_ms = 0;
  std::string session_id;
  std::optional<std::string> session_file;  // only when it exists on disk
};

/// The result object of section 6, keys in its order.
protocol::Json result_json(const Tally& tally, const Outcome& outcome,
                           const ResultContext& context);

}  // namespace rebound::server::oneshot
