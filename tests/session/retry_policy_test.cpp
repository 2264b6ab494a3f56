#include "session/retry_policy.h"

#include <doctest/doctest.h>

using namespace rebound::session;
using rebound::protocol::AgentMessage;
using rebound::protocol::Role;
using rebound::protocol::StopReason;

namespace {

AgentMessage error_message(const std::string& text) {
  AgentMessage m;
  m.role = Role::assistant;
  m.stop_reason = StopReason::error;
  m.error_message = text;
  return m;
}

}  // namespace

TEST_CASE("retryable errors match the pattern of section 2, case-insensitively") {
  for (const char* text : {"503 overloaded", "529 Overloaded", "overloaded_error: Overloaded",
                           "429 Rate limit reached for requests", "rate_limit_error",
                           "usage limit reached", "Too Many Requests", "500 Internal Server Error",
                           "502 Bad Gateway", "504 timeout", "Service Unavailable", "server error",
                           "internal error", "connection error: connection refused",
                           "connection error: stream ended before the response was complete",
                           "fetch failed", "retry delay exceeded"}) {
    CAPTURE(text);
    CHECK(is_retryable(error_message(text), 128000));
  }
}

TEST_CASE("other errors, empty messages and non-error stops are not retryable") {
  CHECK_FALSE(is_retryable(error_message("401 invalid x-api-key"), 128000));
  CHECK_FALSE(is_retryable(error_message("400 bad request"), 128000));
  CHECK_FALSE(is_retryable(error_message(""), 128000));
  AgentMessage no_text = error_message("x");
  no_text.error_message.reset();
  CHECK_FALSE(is_retryable(no_text, 128000));
  AgentMessage aborted = error_message("503 overloaded");
  aborted.stop_reason = StopReason::aborted;
  CHECK_FALSE(is_retryable(aborted, 128000));
  AgentMessage ok = error_message("503 overloaded");
  ok.stop_reason = StopReason::stop;
  CHECK_FALSE(is_retryable(ok, 128000));
}

TEST_CASE("context overflow is recognised by every pattern of section 7 and never retried") {
  for (const char* text : {"400 prompt is too long: 210000 tokens > 200000 maximum",
                           "input exceeds the context window of this model",
                           "input token count 300000 exceeds the maximum of 200000",
                           "maximum prompt length is 131072",
                           "Please reduce the length of the messages",
                           "This model's maximum context length is 128000 tokens",
                           "request exceeds the limit of 200000",
                           "exceeds the available context size",
                           "greater than the context length",
                           "context_length_exceeded",
                           "context length exceeded",
                           "too many tokens",
                           "token limit exceeded",
                           "input is too long for requested model",
                           "context window exceeds limit",
                           "exceeded model token limit",
                           "too large for model with 8192 maximum context length",
                           "model_context_window_exceeded",
                           "request_too_large",
                           "400 (no body)",
                           "413 status code (no body)",
                           "500 prompt is too long"}) {
    CAPTURE(text);
    CHECK(is_context_overflow(error_message(text), 128000));
    CHECK_FALSE(is_retryable(error_message(text), 128000));
  }
}

TEST_CASE("a rate limit that mentions tokens is not an overflow") {
  const auto m = error_message("429 rate limit: too many tokens per minute");
  CHECK_FALSE(is_context_overflow(m, 128000));
  CHECK(is_retryable(m, 128000));
  CHECK_FALSE(is_context_overflow(error_message("x 400 (no body)"), 128000));  // anchored
}

TEST_CASE("a successful answer above the context window is a silent overflow") {
  AgentMessage m;
  m.role = Role::assistant;
  m.stop_reason = StopReason::stop;
  m.usage.input = 100000;
  m.usage.cache_read = 28001;
  CHECK(is_context_overflow(m, 128000));
  m.usage.cache_read = 28000;
  CHECK_FALSE(is_context_overflow(m, 128000));
}

TEST_CASE("backoff doubles from the base and saturates at 2^53 - 1") {
  CHECK(backoff_delay_ms(2000, 1) == 2000);
  CHECK(backoff_delay_ms(2000, 2) == 4000);
  CHECK(backoff_delay_ms(2000, 3) == 8000);
  CHECK(backoff_delay_ms(0, 5) == 0);
  CHECK(backoff_delay_ms(2000, 100) == kMaxSafeInteger);
  CHECK(backoff_delay_ms(INT64_MAX, 1) == kMaxSafeInteger);
  CHECK(backoff_delay_ms(kMaxSafeInteger / 2 + 1, 2) == kMaxSafeInteger);
}

TEST_CASE("usage limits are recognised") {
  CHECK(is_usage_limit("You have hit your usage limit"));
  CHECK(is_usage_limit("usage_limit_reached"));
  CHECK(is_usage_limit("error: limit_reached"));
  CHECK_FALSE(is_usage_limit("503 overloaded"));
}

TEST_CASE("server hints of section 8, first rule that matches") {
  const std::int64_t now = 1445412480000;  // Wed, 21 Oct 2015 07:28:00 GMT
  CHECK(parse_retry_hint_ms("429 x retry-after-ms=1500", now) == 1500);
  CHECK(parse_retry_hint_ms("Retry-After : 7", now) == 7000);
  CHECK(parse_retry_hint_ms("retry-after: Wed, 21 Oct 2015 07:28:30 GMT", now) == 30000);
  CHECK(parse_retry_hint_ms("retry-after: Wed, 21 Oct 2015 07:27:00 GMT", now) == 0);
  CHECK(parse_retry_hint_ms("x-ratelimit-reset-ms=250", now) == 250);
  CHECK(parse_retry_hint_ms("x-ratelimit-reset-ms=1445412485000", now) == 5000);
  CHECK(parse_retry_hint_ms("x-ratelimit-reset=3", now) == 3000);
  CHECK(parse_retry_hint_ms("x-ratelimit-reset=1445412490", now) == 10000);
  CHECK(parse_retry_hint_ms("x-ratelimit-reset=1445412470", now) == 0);
  CHECK(parse_retry_hint_ms("retry-after-ms=10 retry-after=99", now) == 10);
  CHECK_FALSE(parse_retry_hint_ms("usage limit reached", now));
}

TEST_CASE("a huge error message is classified without exhausting the stack") {
  const std::string filler(1 << 20, 'x');
  CHECK(is_retryable(error_message("503 overloaded " + filler), 128000));
  CHECK(is_context_overflow(error_message("prompt is too long " + filler), 128000));
  CHECK_FALSE(is_retryable(error_message("input token count " + filler + " exceeds"), 128000));
  CHECK(parse_retry_hint_ms("429 " + filler + " retry-after-ms=1500", 0) == 1500);
}

TEST_CASE("absurd hint numbers saturate instead of throwing (found by fuzz_retry_text)") {
  const std::string huge(400, '9');
  CHECK(parse_retry_hint_ms("retry-after-ms=" + huge, 0) == kMaxSafeInteger);
  CHECK(parse_retry_hint_ms("retry-after=" + huge, 0) == kMaxSafeInteger);
  CHECK(parse_retry_hint_ms("x-ratelimit-reset-ms=" + huge, 0) == kMaxSafeInteger - 0);
  CHECK(parse_retry_hint_ms("x-ratelimit-reset=" + huge, 5) == kMaxSafeInteger - 5);
  CHECK(parse_retry_hint_ms("x-ratelimit-reset=1e400", 0) == 1000);  // "1" then junk
}
