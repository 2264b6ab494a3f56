// Retry control through AgentSession with manual time (retry.md sections 13 to 18): the
// decision order with a policy, the races of retry_now, a policy change mid-chain and
// saturation. No test sleeps.

#include <doctest/doctest.h>

#include "tests/support/session_harness.h"

using namespace rebound;
using protocol::Json;
using testing::SessionHarness;

namespace {

Json settings(long max_retries, long base_delay_ms, bool enabled = true) {
  return Json{
      {"retry",
       Json{{"enabled", enabled}, {"maxRetries", max_retries}, {"baseDelayMs", base_delay_ms}}}};
}

Json retry_now(SessionHarness& h) {
  Json answer;
  h.session.retry_now([&](const Json& data) { answer = data; });
  return answer;
}

std::vector<std::string> reasons(SessionHarness& h) {
  std::vector<std::string> out;
  for (const auto& e : h.sink.of_type("auto_retry_end"))
    out.push_back(e.value("reason", std::string("-")));
  return out;
}

}  // namespace

TEST_CASE("every end of a chain has its reason in retry-control mode") {
  SUBCASE("success") {
    SessionHarness h(R"([{"error":"503 overloaded"},{"text":"ok"}])", settings(3, 100));
    h.session.retry_state_json();
    h.prompt("x");
    h.scheduler.run_all();
    CHECK(reasons(h) == std::vector<std::string>{"success"});
    CHECK(h.sink.of_type("auto_retry_end")[0]["success"] == true);
  }
  SUBCASE("exhausted, and attempt 0 with maxRetries 0") {
    SessionHarness h(R"([{"error":"503 overloaded"}])", settings(1, 100));
    h.session.retry_state_json();
    h.prompt("x");
    h.scheduler.run_all();
    h.session.set_retry_policy(Json{{"maxRetries", 0}});
    h.prompt("y");
    h.scheduler.run_all();
    const auto ends = h.sink.of_type("auto_retry_end");
    REQUIRE(ends.size() == 2);
    CHECK(ends[0]["attempt"] == 1);
    CHECK(ends[1]["attempt"] == 0);
    CHECK(reasons(h) == std::vector<std::string>{"exhausted", "exhausted"});
  }
  SUBCASE("cancelled by abort_retry in the backoff") {
    SessionHarness h(R"([{"error":"503 overloaded"}])", settings(3, 100));
    h.session.retry_state_json();
    h.prompt("x");
    h.scheduler.run_ready();
    h.session.abort_retry();
    CHECK(reasons(h) == std::vector<std::string>{"cancelled"});
  }
  SUBCASE("non_retryable after a retried request") {
    SessionHarness h(R"([{"error":"503 overloaded"},{"error":"401 bad key"}])", settings(3, 100));
    h.session.retry_state_json();
    h.prompt("x");
    h.scheduler.run_all();
    CHECK(reasons(h) == std::vector<std::string>{"non_retryable"});
  }
  SUBCASE("disabled during a chain") {
    SessionHarness h(R"([{"error":"503 overloaded"}])", settings(3, 100));
    h.session.retry_state_json();
    h.prompt("x");
    h.scheduler.run_ready();
    h.session.set_auto_retry(false);
    h.scheduler.run_all();
    CHECK(reasons(h) == std::vector<std::string>{"disabled"});
  }
}

TEST_CASE("retry_now and the timer: whichever runs first ends the backoff, once") {
  SUBCASE("retry_now first: the timer that was due does nothing") {
    SessionHarness h(R"([{"error":"503 overloaded"},{"text":"ok"}])", settings(3, 1000));
    h.prompt("x");
    h.scheduler.run_ready();
    CHECK(h.requests.size() == 1);
    CHECK(retry_now(h).dump() == R"({"skipped":true,"attempt":1})");
    h.scheduler.advance(1000);  // the expiry's moment: nothing more happens
    h.scheduler.run_all();
    CHECK(h.requests.size() == 2);
    CHECK(h.sink.of_type("agent_start").size() == 2);
    CHECK(h.sink.of_type("auto_retry_end").size() == 1);
  }
  SUBCASE("the timer first: retry_now finds the request phase") {
    SessionHarness h(R"([{"error":"503 overloaded"},{"text":"ok","delayMs":500}])",
                     settings(3, 1000));
    h.prompt("x");
    h.scheduler.run_ready();
    h.scheduler.advance(1000);
    CHECK(retry_now(h).dump() == R"({"skipped":false,"phase":"request"})");
    h.scheduler.run_all();
    CHECK(h.requests.size() == 2);
    CHECK(h.sink.of_type("auto_retry_end").size() == 1);
  }
  SUBCASE("retry_now, then abort_retry during the retried request") {
    SessionHarness h(R"([{"error":"503 overloaded"},{"error":"503 overloaded","delayMs":500}])",
                     settings(3, 1000));
    h.session.retry_state_json();
    h.prompt("x");
    h.scheduler.run_ready();
    retry_now(h);
    CHECK(h.session.retry_state_json()["phase"] == "request");
    h.session.abort_retry();  // the in-flight row: the request goes on, no further retry
    h.scheduler.run_all();
    CHECK(h.requests.size() == 2);
    const auto ends = h.sink.of_type("auto_retry_end");
    REQUIRE(ends.size() == 1);
    CHECK(ends[0]["finalError"] == "Retry cancelled");
    CHECK(ends[0]["reason"] == "cancelled");
  }
}

TEST_CASE("a policy change mid-chain applies from the next decision") {
  SessionHarness h(R"([{"error":"503 overloaded"}])", settings(3, 1000));
  h.session.retry_state_json();
  h.prompt("x");
  h.scheduler.run_ready();
  // The running backoff keeps its timer; the next failure sees maxRetries 1.
  h.session.set_retry_policy(Json{{"maxRetries", 1}, {"baseDelayMs", 10}});
  h.scheduler.run_all();
  CHECK(h.scheduler.requested_delays() == std::vector<std::int64_t>{1000});
  const auto ends = h.sink.of_type("auto_retry_end");
  REQUIRE(ends.size() == 1);
  CHECK(ends[0]["attempt"] == 1);
  CHECK(ends[0]["reason"] == "exhausted");
}

TEST_CASE("maxRetries 100: the backoff saturates at 2^53 - 1 and the chain still ends once") {
  SessionHarness h(R"([{"error":"503 overloaded"}])", settings(3, 3600000));
  h.session.set_retry_policy(Json{{"maxRetries", 100}, {"baseDelayMs", 3600000}});
  h.prompt("x");
  h.scheduler.run_all();
  const auto starts = h.sink.of_type("auto_retry_start");
  REQUIRE(starts.size() == 100);
  CHECK(starts[99]["delayMs"] == (std::int64_t{1} << 53) - 1);
  CHECK(starts[99]["nextAttemptAt"] == (std::int64_t{1} << 53) - 1);
  CHECK(starts[99]["maxAttempts"] == 100);
  CHECK(h.sink.of_type("auto_retry_end").size() == 1);
  CHECK(h.sink.of_type("auto_retry_end")[0]["attempt"] == 100);
}

TEST_CASE("section 18 with manual time: retry_now in a 60 s backoff") {
  SessionHarness h(R"([{"error":"503 overloaded"},{"text":"ok"}])", settings(3, 60000));
  h.session.retry_state_json();
  h.prompt("x");
  h.scheduler.run_ready();
  const auto start = h.sink.of_type("auto_retry_start").at(0);
  CHECK(h.sink.of_type("agent_end").at(0)["willRetry"] == true);
  CHECK(start["delayMs"] == 60000);
  CHECK(start["delaySource"] == "backoff");
  CHECK(start["nextAttemptAt"].get<std::int64_t>() == h.scheduler.now_epoch_ms() + 60000);
  const std::size_t before = h.sink.events.size();
  std::size_t events_at_answer = 0;
  h.session.retry_now([&](const Json& data) {
    CHECK(data.dump() == R"({"skipped":true,"attempt":1})");
    events_at_answer = h.sink.events.size();
  });
  CHECK(events_at_answer == before);  // the answer comes before the continued run's events
  h.scheduler.run_all();
  CHECK(h.sink.events[before]["type"] == "agent_start");
  CHECK(h.scheduler.requested_delays() == std::vector<std::int64_t>{60000});
  CHECK(h.sink.of_type("agent_end").back()["willRetry"] == false);
  CHECK(h.sink.events.back().dump() ==
        R"({"type":"auto_retry_end","success":true,"attempt":1,"reason":"success"})");
}

TEST_CASE("section 18 with manual time: the deadline and the server delay ceiling") {
  SUBCASE("deadline: 200 and 400 fit, the third failure ends the chain") {
    SessionHarness h(R"([{"error":"503 overloaded"}])", settings(3, 100));
    h.session.set_retry_policy(
        Json{{"baseDelayMs", 200}, {"maxRetries", 10}, {"deadlineMs", 1000}});
    h.prompt("x");
    h.scheduler.run_all();
    CHECK(h.scheduler.requested_delays() == std::vector<std::int64_t>{200, 400});
    CHECK(h.sink.of_type("agent_end").back()["willRetry"] == false);
    CHECK(
        h.sink.events.back().dump() ==
        R"({"type":"auto_retry_end","success":false,"attempt":2,"finalError":"503 overloaded","reason":"deadline"})");
  }
  SUBCASE("a hint of 300 ms is honoured, one of 900 s ends the chain at attempt 0") {
    SessionHarness h(
        R"([{"error":"429 Too Many Requests retry-after-ms=300"},{"text":"ok"},{"error":"429 Too Many Requests retry-after-ms=900000"}])",
        settings(3, 100));
    h.session.set_retry_policy(
        Json{{"baseDelayMs", 10}, {"honorRetryAfter", true}, {"maxServerDelayMs", 60000}});
    h.prompt("x");
    h.scheduler.run_all();
    CHECK(h.scheduler.requested_delays() == std::vector<std::int64_t>{300});
    CHECK(h.sink.of_type("auto_retry_start").at(0)["delaySource"] == "retry-after");
    h.sink.clear();
    h.prompt("y");
    h.scheduler.run_all();
    CHECK(h.sink.of_type("auto_retry_start").empty());
    CHECK(h.sink.of_type("agent_end").back()["willRetry"] == false);
    CHECK(h.sink.events.back()["reason"] == "server_delay_too_long");
    CHECK(h.sink.events.back()["attempt"] == 0);
  }
}

TEST_CASE("a credential switch wins over an honoured hint and the ceiling (section 14 step 4)") {
  SessionHarness h(R"([{"error":"429 usage limit reached retry-after-ms=900000"},{"text":"ok"}])",
                   settings(3, 2000));
  h.credentials.another_available = true;
  h.session.set_retry_policy(Json{{"honorRetryAfter", true}, {"maxServerDelayMs", 60000}});
  h.prompt("x");
  h.scheduler.run_ready();
  const auto start = h.sink.of_type("auto_retry_start").at(0);
  CHECK(start["delayMs"] == 0);
  CHECK(start["delaySource"] == "credential-switch");
  CHECK(start["errorClass"] == "usage_limit");
  CHECK(start["httpStatus"] == 429);
  h.scheduler.run_all();
  CHECK(h.sink.events.back()["reason"] == "success");
  // Without another credential the ceiling ends the chain.
  SessionHarness g(R"([{"error":"429 usage limit reached retry-after-ms=900000"}])",
                   settings(3, 2000));
  g.session.set_retry_policy(Json{{"honorRetryAfter", true}, {"maxServerDelayMs", 60000}});
  g.prompt("x");
  g.scheduler.run_all();
  CHECK(g.sink.events.back()["reason"] == "server_delay_too_long");
}
