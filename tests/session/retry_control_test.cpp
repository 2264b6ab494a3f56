// Retry control's pure parts (retry.md sections 12 to 15): classification, the session policy
// and its validation, SplitMix64, and the delay decision with a policy.

#include "session/retry_control.h"

#include <doctest/doctest.h>

#include "session/retry_policy.h"
#include "session/settings.h"

#include <cmath>

using namespace rebound::session;
using rebound::protocol::Json;

TEST_CASE("errorClass and httpStatus of the error texts of retry.md and runtime.md") {
  struct Row {
    const char* text;
    const char* cls;
    int status;  // 0: none
  };
  const Row rows[] = {
      {"503 overloaded", "overloaded", 503},
      {"529 Overloaded", "overloaded", 529},
      {"overloaded_error: Overloaded", "overloaded", 0},
      {"504 Gateway Timeout", "timeout", 504},
      {"connection error: no response within 60000 ms", "timeout", 0},
      {"connection error: no data for 60000 ms", "timeout", 0},
      {"connection error: connection reset by peer", "network", 0},
      {"502 Bad Gateway", "server_error", 502},
      {"500 Internal Server Error", "server_error", 500},
      {"429 Too Many Requests retry-after-ms=300", "rate_limit", 429},
      {"rate_limit_error: slow down", "rate_limit", 0},
      {"429 usage_limit_reached: try again", "usage_limit", 429},
      {"You have hit your usage limit", "usage_limit", 0},
      {"fetch failed", "network", 0},
      {"Service Unavailable", "server_error", 0},
      {"upstream said 503 later", "unknown", 0},
      {"please retry delay", "unknown", 0},
      {"5031 odd", "unknown", 0},
      {"429 Rate limit reached for requests", "rate_limit", 429},
      {"connection error: connect timed out after 10000 ms", "timeout", 0},
      {"connection error: connection refused", "network", 0},
      {"connection error: stream ended before the response was complete", "network", 0},
  };
  for (const auto& row : rows) {
    CAPTURE(row.text);
    const ErrorInfo info = classify_retryable_error(row.text);
    CHECK(to_string(info.error_class) == row.cls);
    CHECK(info.http_status.value_or(0) == row.status);
  }
  CHECK(!leading_http_status("099 x"));
  CHECK(*leading_http_status("599") == 599);
  CHECK(!leading_http_status("600 x"));
  CHECK(!leading_http_status("503x"));
}

TEST_CASE("the error texts of the Responses and Gemini APIs: retried, compacted or final") {
  // providers.md sections 2.4, 2.5, 3.2, 3.3: every text those decoders write, as retry.md
  // sections 2, 7 and 12 take it. cls "overflow": compaction; "final": neither.
  struct Row {
    const char* text;
    const char* cls;
    int status;
  };
  const Row rows[] = {
      // OpenAI Responses
      {"429 Rate limit reached for gpt-5. Please try again in 1s. retry-after-ms=2000",
       "rate_limit", 429},
      {"500 The server had an error while processing your request. Sorry about that!",
       "server_error", 500},
      {"503 The engine is currently overloaded, please try again later.", "overloaded", 503},
      {"server_error: The server had an error processing your request.", "server_error", 0},
      {"rate_limit_exceeded: Rate limit reached for gpt-5.", "rate_limit", 0},
      {"Error Code rate_limit_exceeded: Rate limit reached", "rate_limit", 0},
      {"Error Code server_error: Something went wrong", "server_error", 0},
      {"401 Incorrect API key provided: sk-***.", "final", 401},
      {"400 Invalid value for 'input'.", "final", 400},
      {"incomplete: content_filter", "final", 0},
      {"Unknown error (no error details in response)", "final", 0},
      {"400 Your input exceeds the context window of this model. Please adjust your input and "
       "try again.",
       "overflow", 400},
      {"context_length_exceeded: Your input exceeds the context window of this model.", "overflow",
       0},
      {"Azure OpenAI base URL is required: set the provider's baseUrl in models.json, "
       "AZURE_OPENAI_BASE_URL or AZURE_OPENAI_RESOURCE_NAME",
       "final", 0},
      // Gemini
      {"429 You exceeded your current quota, please check your plan and billing details.",
       "rate_limit", 429},
      {"429 Resource has been exhausted (e.g. check quota). retry-after-ms=22000", "rate_limit",
       429},
      {"500 An internal error has occurred. Please retry or report in "
       "https://developers.generativeai.google/guide/troubleshooting",
       "server_error", 500},
      {"503 The model is overloaded. Please try again later.", "overloaded", 503},
      {"504 Deadline expired before operation could complete.", "timeout", 504},
      {"400 API key not valid. Please pass a valid API key.", "final", 400},
      {"403 Permission denied on resource project x.", "final", 403},
      {"404 models/x is not found for API version v1beta.", "final", 404},
      {"finish reason SAFETY", "final", 0},
      {"finish reason MALFORMED_FUNCTION_CALL", "final", 0},
      {"prompt blocked: PROHIBITED_CONTENT", "final", 0},
      {"400 The input token count (1200000) exceeds the maximum number of tokens allowed "
       "(1048576).",
       "overflow", 400},
  };
  for (const auto& row : rows) {
    const std::string text = row.text;
    CAPTURE(text);
    rebound::protocol::AgentMessage m;
    m.role = rebound::protocol::Role::assistant;
    m.stop_reason = rebound::protocol::StopReason::error;
    m.error_message = row.text;
    const std::string cls = row.cls;
    CHECK(is_context_overflow(m, 1048576) == (cls == "overflow"));
    CHECK(is_retryable(m, 1048576) == (cls != "overflow" && cls != "final"));
    if (cls == "overflow" || cls == "final") continue;
    const ErrorInfo info = classify_retryable_error(row.text);
    CHECK(to_string(info.error_class) == cls);
    CHECK(info.http_status.value_or(0) == row.status);
  }
}

TEST_CASE("set_retry_policy: partial updates, null, reset, all-or-nothing validation") {
  RetrySettings settings;
  RetryPolicyValues v;
  CHECK(
      effective_policy(settings, v).to_json().dump() ==
      R"({"maxRetries":3,"baseDelayMs":2000,"jitter":0,"honorRetryAfter":false,"source":"settings"})");
  CHECK(!apply_retry_policy_command(
      Json::parse(
          R"({"maxRetries":5,"baseDelayMs":500.0,"maxDelayMs":8000,"jitter":0.25,"honorRetryAfter":true,"maxServerDelayMs":60000})"),
      v));
  CHECK(
      effective_policy(settings, v).to_json().dump() ==
      R"({"maxRetries":5,"baseDelayMs":500,"maxDelayMs":8000,"jitter":0.25,"honorRetryAfter":true,"maxServerDelayMs":60000,"source":"session"})");
  // A bad field changes nothing, also not the fields before it.
  CHECK(
      apply_retry_policy_command(Json::parse(R"({"maxRetries":7,"deadlineMs":-1})"), v)->message ==
      "Invalid field 'deadlineMs': expected integer 0..86400000 or null");
  CHECK(*v.max_retries == 5);
  const std::pair<const char*, const char*> bad[] = {
      {R"({"reset":null})", "Invalid field 'reset': expected boolean"},
      {R"({"maxRetries":101})", "Invalid field 'maxRetries': expected integer 0..100 or null"},
      {R"({"maxRetries":1.5})", "Invalid field 'maxRetries': expected integer 0..100 or null"},
      {R"({"baseDelayMs":"5"})",
       "Invalid field 'baseDelayMs': expected integer 0..3600000 or null"},
      {R"({"maxDelayMs":true})", "Invalid field 'maxDelayMs': expected integer 0..3600000 or null"},
      {R"({"jitter":1.01})", "Invalid field 'jitter': expected number 0..1 or null"},
      {R"({"honorRetryAfter":1})", "Invalid field 'honorRetryAfter': expected boolean or null"},
      {R"({"maxServerDelayMs":86400001})",
       "Invalid field 'maxServerDelayMs': expected integer 0..86400000 or null"},
      {R"({"reset":1,"maxRetries":500})", "Invalid field 'reset': expected boolean"},
  };
  for (const auto& [command, error] : bad) {
    CAPTURE(command);
    CHECK(apply_retry_policy_command(Json::parse(command), v)->message == error);
  }
  CHECK(!apply_retry_policy_command(Json::parse(R"({"maxDelayMs":null,"jitter":null})"), v));
  CHECK(!v.max_delay_ms);
  CHECK(!apply_retry_policy_command(Json::parse(R"({"reset":true,"deadlineMs":1000})"), v));
  CHECK(
      effective_policy(settings, v).to_json().dump() ==
      R"({"maxRetries":3,"baseDelayMs":2000,"jitter":0,"honorRetryAfter":false,"deadlineMs":1000,"source":"session"})");
  CHECK(!apply_retry_policy_command(Json::parse(R"({"reset":true})"), v));
  CHECK(!effective_policy(settings, v).from_session);
}

TEST_CASE("SplitMix64 gives the reference sequence") {
  SplitMix64 g(0);
  CHECK(g.next() == 0xE220A8397B1DCDAFULL);
  CHECK(g.next() == 0x6E789E6AA1B965F4ULL);
  SplitMix64 u(1);
  const double x = u.unit();
  CHECK(x >= 0.0);
  CHECK(x < 1.0);
}

TEST_CASE("the delay with a policy: cap, jitter bounds, hints, credential switch, deadline") {
  SplitMix64 rng(42);
  EffectivePolicy p;
  p.base_delay_ms = 1000;
  auto d = decide_delay(p, 3, 0, 0, false, std::nullopt, rng);
  CHECK(d.delay_ms == 4000);
  CHECK(d.source == DelaySource::backoff);
  CHECK(d.next_attempt_at == 4000);
  p.max_delay_ms = 3000;
  CHECK(decide_delay(p, 3, 0, 0, false, std::nullopt, rng).delay_ms == 3000);
  p.jitter = 0.5;
  for (int i = 0; i < 1000; ++i) {
    const auto j = decide_delay(p, 3, 0, 0, false, std::nullopt, rng).delay_ms;
    CHECK(j <= 3000);
    CHECK(j >= 1500);
  }
  // The same seed gives the same delays: 3000 - floor(3000 * 0.5 * U).
  SplitMix64 a(7), b(7);
  const double u = b.unit();
  CHECK(decide_delay(p, 3, 0, 0, false, std::nullopt, a).delay_ms ==
        3000 - static_cast<std::int64_t>(std::floor(3000 * 0.5 * u)));
  // Hints: only with honorRetryAfter, only when longer, never capped by maxDelayMs.
  p.jitter = 0;
  p.base_delay_ms = 10;
  p.max_delay_ms.reset();
  CHECK(decide_delay(p, 1, 0, 0, false, 300, rng).delay_ms == 10);
  p.honor_retry_after = true;
  p.max_server_delay_ms = 60000;
  d = decide_delay(p, 1, 100, 100, false, 300, rng);
  CHECK(d.delay_ms == 300);
  CHECK(d.source == DelaySource::retry_after);
  CHECK(d.next_attempt_at == 400);
  CHECK(decide_delay(p, 1, 0, 0, false, 900000, rng).end ==
        DelayDecision::End::server_delay_too_long);
  // A credential switch wins over hints and the ceiling.
  d = decide_delay(p, 1, 0, 0, true, 900000, rng);
  CHECK(d.end == DelayDecision::End::none);
  CHECK(d.delay_ms == 0);
  CHECK(d.source == DelaySource::credential_switch);
  // Deadline 1000 with base 200: 200 and 400 fit, 800 does not (section 18).
  EffectivePolicy q;
  q.base_delay_ms = 200;
  q.max_retries = 10;
  q.deadline_ms = 1000;
  CHECK(decide_delay(q, 1, 0, 0, false, std::nullopt, rng).end == DelayDecision::End::none);
  CHECK(decide_delay(q, 2, 200, 0, false, std::nullopt, rng).end == DelayDecision::End::none);
  CHECK(decide_delay(q, 3, 600, 0, false, std::nullopt, rng).end == DelayDecision::End::deadline);
  // Past the deadline even a delay of 0 is refused.
  CHECK(decide_delay(q, 2, 1500, 0, true, std::nullopt, rng).end == DelayDecision::End::deadline);
  // maxRetries 100: the power saturates at 2^53 - 1, and so does nextAttemptAt.
  EffectivePolicy big;
  big.max_retries = 100;
  d = decide_delay(big, 100, 1000, 1000, false, std::nullopt, rng);
  CHECK(d.delay_ms == (std::int64_t{1} << 53) - 1);
  CHECK(d.next_attempt_at == (std::int64_t{1} << 53) - 1);
}
