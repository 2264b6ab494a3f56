#include "server/oneshot/oneshot_result.h"

#include <regex>

#include "protocol/json_line.h"
#include "session/retry_control.h"
#include "session/retry_policy.h"

namespace rebound::server::oneshot {

using protocol::Json;
using protocol::StopReason;

namespace {

Outcome failure(int code, std::string subtype, std::string reason, std::string error) {
  Outcome o;
  o.exit_code = code;
  o.subtype = std::move(subtype);
  o.terminal_reason = std::move(reason);
  o.error = std::move(error);
  return o;
}

// Section 7.1 for a failure the retry policy does not retry: auth or invalid_request.
std::string non_retryable_class(const std::string& text, std::optional<int> status) {
  static const std::regex auth(
      "unauthori[sz]ed|authentication|invalid.?api.?key|api.?key not valid|forbidden",
      std::regex::icase);
  if (status == 401 || status == 403 || std::regex_search(text, auth)) return "auth";
  return "invalid_request";
}

// The failed message's class and status, whichever ended the run.
void describe_failure(Outcome& o, const protocol::AgentMessage& m, const Tally& t,
                      std::int64_t window) {
  const std::string text = m.error_message.value_or("");
  if (session::is_retryable(m, window) || t.chain_error_class) {
    const session::ErrorInfo info = session::classify_retryable_error(text);
    o.error_class = t.chain_error_class.value_or(std::string(session::to_string(info.error_class)));
    o.api_status = info.http_status;
  } else {
    o.api_status = session::leading_http_status(text);
    o.error_class = non_retryable_class(text, o.api_status);
  }
}

}  // namespace

Outcome decide(const Tally& t, const Ending& e) {
  if (e.internal) return failure(1, "error_during_execution", "internal_error", *e.internal);
  if (e.invalid_input)
    return failure(2, "error_during_execution", "invalid_input", *e.invalid_input);
  const char* signal_name = e.stop == Stop::sighup    ? "SIGHUP"
                            : e.stop == Stop::sigint  ? "SIGINT"
                            : e.stop == Stop::sigterm ? "SIGTERM"
                                                      : nullptr;
  Outcome o;
  if (signal_name) {
    o = failure(e.stop == Stop::sighup   ? 129
                : e.stop == Stop::sigint ? 130
                                         : 143,
                "error_interrupted", "interrupted", std::string("Interrupted by ") + signal_name);
  } else if (e.stop == Stop::timeout) {
    o = failure(7, "error_timeout", "timeout", "Reached the time limit (" + e.timeout_text + " s)");
  } else if (e.stop == Stop::max_turns) {
    o = failure(7, "error_max_turns", "max_turns",
                "Reached maximum number of turns (" + std::to_string(e.max_turns) + ")");
  } else if (e.stop == Stop::max_budget) {
    o = failure(7, "error_max_budget_usd", "budget_exhausted",
                "Reached maximum budget ($" + e.max_budget_text + ")");
  } else if (e.stop == Stop::stdout_gone) {
    o = failure(141, "error_interrupted", "interrupted", "stdout closed");
  }
  if (o.exit_code != 0) {
    // A limit, the deadline or a signal that cut a retry chain keeps the failure's class.
    const bool cut =
        t.retry_active || t.chain_end_reason == "cancelled" || t.chain_end_reason == "deadline";
    if (cut && t.last && t.last->failed()) describe_failure(o, *t.last, t, e.context_window);
    return o;
  }
  if (e.structured_error)
    return failure(8, "error_max_structured_output_retries", "structured_output_invalid",
                   *e.structured_error);
  if (e.hook_stop) {
    o.terminal_reason = "hook_stopped";
    o.exit_code = 9;
    return o;
  }
  const protocol::AgentMessage* m = t.last ? &*t.last : nullptr;
  if (m && m->stop_reason == StopReason::error) {
    const std::string text = m->error_message.value_or("");
    if (t.overflow_error || session::is_context_overflow(*m, e.context_window)) {
      o = failure(6, "error_during_execution", "context_overflow", t.overflow_error.value_or(text));
      o.error_class = "context_overflow";
      o.api_status = session::leading_http_status(text);
      return o;
    }
    const bool gave_up = t.chain_end_reason && *t.chain_end_reason != "non_retryable" &&
                         *t.chain_end_reason != "success" && *t.chain_end_reason != "cancelled";
    if (gave_up || (!t.chain_end_reason && session::is_retryable(*m, e.context_window))) {
      o = failure(4, "error_during_execution", "retries_exhausted", text);
      describe_failure(o, *m, t, e.context_window);
      if (o.error_class == "usage_limit") {
        o.exit_code = 5;
        o.terminal_reason = "usage_limit";
      }
      return o;
    }
    o = failure(3, "error_during_execution", "api_error", text);
    o.api_status = session::leading_http_status(text);
    o.error_class = non_retryable_class(text, o.api_status);
    return o;
  }
  if (t.denials.size() > 0) o.exit_code = 9;
  return o;
}

Json result_json(const Tally& t, const Outcome& o, const ResultContext& c) {
  Json r = Json::object();
  r["type"] = "result";
  r["subtype"] = o.subtype;
  r["is_error"] = o.subtype != "success";
  r["duration_ms"] = c.duration_ms;
  r["duration_api_ms"] = t.api_ms;
  r["num_turns"] = t.num_turns;
  const bool answered = t.last && !t.last->failed();
  if (t.structured) {
    r["result"] = protocol::to_line(*t.structured);
    r["result"].get_ref<std::string&>().pop_back();  // its compact JSON, without the LF
    r["structured_output"] = *t.structured;
  } else {
    r["result"] = answered ? t.last->text() : std::string();
  }
  if (o.subtype != "success") r["errors"] = Json::array({o.error.value_or("")});
  r["session_id"] = c.session_id;
  r["total_cost_usd"] = t.cost == 0 ? Json(0) : Json(t.cost);
  Json usage = Json::object();
  usage["input_tokens"] = t.input;
  usage["cache_creation_input_tokens"] = t.cache_write;
  usage["cache_read_input_tokens"] = t.cache_read;
  usage["output_tokens"] = t.output;
  r["usage"] = std::move(usage);
  r["permission_denials"] = t.denials;
  if (!t.unknown_outcomes.empty()) r["unknown_outcomes"] = t.unknown_outcomes;  // amendments A7
  r["terminal_reason"] = o.terminal_reason;
  if (o.api_status) r["api_error_status"] = *o.api_status;
  if (o.error_class) r["errorClass"] = *o.error_class;
  r["retries"] = t.retries;
  r["compactions"] = t.compactions;
  r["model"] = t.model;
  if (c.session_file) r["sessionFile"] = *c.session_file;
  return r;
}

}  // namespace rebound::server::oneshot
