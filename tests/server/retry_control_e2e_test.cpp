// Retry control end to end (retry.md sections 11 to 18, protocol.md section 10): the real
// binary over pipes with the scripted provider and --retry-seed.

#include <doctest/doctest.h>

#include <chrono>
#include <cmath>

#include "session/retry_control.h"
#include "tests/support/rebound_process.h"

using namespace rebound;
using namespace std::chrono_literals;
using protocol::Json;
using testing::of_type;
using testing::ReboundProcess;

namespace {

ReboundProcess retry_server(const std::string& script, const std::string& settings,
                            std::vector<std::string> extra = {}) {
  std::vector<std::string> args{"--no-session", "--provider", "scripted", "--script",
                                "@DIR@/script.json"};
  args.insert(args.end(), extra.begin(), extra.end());
  return ReboundProcess(args, {}, {{"agent/settings.json", settings}, {"script.json", script}});
}

Json prompt() {
  return Json{{"id", "p"}, {"type", "prompt"}, {"message", "hi"}};
}

// Reads until the chain's auto_retry_end.
std::vector<Json> until_chain_end(ReboundProcess& r) {
  return r.read_until_type("auto_retry_end", 10000ms);
}

const std::string kSettings = R"j({"retry":{"enabled":true,"maxRetries":3,"baseDelayMs":100}})j";

}  // namespace

TEST_CASE("without a retry-control command the retry events keep their keys") {
  ReboundProcess r = retry_server(R"j([{"error":"503 overloaded"},{"text":"ok"}])j", kSettings);
  r.send(prompt());
  const auto events = until_chain_end(r);
  const Json start = of_type(events, "auto_retry_start").at(0);
  CHECK(
      start.dump() ==
      R"j({"type":"auto_retry_start","attempt":1,"maxAttempts":3,"delayMs":100,"errorMessage":"503 overloaded"})j");
  CHECK(events.back().dump() == R"j({"type":"auto_retry_end","success":true,"attempt":1})j");
}

TEST_CASE("get_retry_state in a backoff, retry_now answered before the continued run") {
  ReboundProcess r =
      retry_server(R"j([{"error":"503 overloaded"},{"text":"ok"}])j",
                   R"j({"retry":{"enabled":true,"maxRetries":3,"baseDelayMs":60000}})j");
  const Json idle = r.command(Json{{"id", "g"}, {"type", "get_retry_state"}});
  CHECK(
      idle["data"].dump() ==
      R"j({"enabled":true,"phase":"idle","attempt":0,"policy":{"maxRetries":3,"baseDelayMs":60000,"jitter":0,"honorRetryAfter":false,"source":"settings"}})j");
  r.send(prompt());
  const auto events = r.read_until_type("auto_retry_start");
  const Json start = events.back();
  CHECK(start["errorClass"] == "overloaded");
  CHECK(start["httpStatus"] == 503);
  CHECK(start["delaySource"] == "backoff");
  const Json state = r.command(Json{{"id", "s"}, {"type", "get_retry_state"}})["data"];
  CHECK(state["phase"] == "backoff");
  CHECK(state["attempt"] == 1);
  CHECK(state["delayMs"] == 60000);
  CHECK(state["nextAttemptAt"].get<std::int64_t>() - state["chainStartedAt"].get<std::int64_t>() ==
        60000);
  CHECK(state["nextAttemptAt"] == start["nextAttemptAt"]);
  CHECK(state["lastError"].dump() ==
        R"j({"message":"503 overloaded","errorClass":"overloaded","httpStatus":503})j");
  r.send(Json{{"id", "n"}, {"type", "retry_now"}});
  const Json answer = r.read_json();
  CHECK(
      answer.dump() ==
      R"j({"id":"n","type":"response","command":"retry_now","success":true,"data":{"skipped":true,"attempt":1}})j");
  CHECK(r.read_json()["type"] == "agent_start");
  const auto rest = until_chain_end(r);
  CHECK(rest.back().dump() ==
        R"j({"type":"auto_retry_end","success":true,"attempt":1,"reason":"success"})j");
  CHECK(r.command(Json{{"id", "n2"}, {"type", "retry_now"}})["data"].dump() ==
        R"j({"skipped":false,"phase":"idle"})j");
}

TEST_CASE("--retry-seed: the jittered delays are exactly the generator's") {
  ReboundProcess r = retry_server(
      R"j([{"error":"503 overloaded"},{"error":"503 overloaded"},{"error":"503 overloaded"},{"text":"ok"}])j",
      kSettings, {"--retry-seed", "12345"});
  CHECK(r.command(Json{{"id", "p1"},
                       {"type", "set_retry_policy"},
                       {"jitter", 0.5},
                       {"baseDelayMs", 40}})["success"] == true);
  r.send(prompt());
  const auto starts = of_type(until_chain_end(r), "auto_retry_start");
  REQUIRE(starts.size() == 3);
  session::SplitMix64 g(12345);
  for (int i = 0; i < 3; ++i) {
    const std::int64_t capped = 40LL << i;
    const double u = g.unit();
    CHECK(starts[static_cast<std::size_t>(i)]["delayMs"] ==
          capped - static_cast<std::int64_t>(std::floor(static_cast<double>(capped) * 0.5 * u)));
  }
}

TEST_CASE("a deadline ends the chain before agent_end says it retries") {
  ReboundProcess r = retry_server(R"j([{"error":"503 overloaded"}])j", kSettings);
  CHECK(r.command(Json{{"id", "p1"},
                       {"type", "set_retry_policy"},
                       {"baseDelayMs", 200},
                       {"maxRetries", 10},
                       {"deadlineMs", 1000}})["success"] == true);
  r.send(prompt());
  const auto events = until_chain_end(r);
  const auto starts = of_type(events, "auto_retry_start");
  REQUIRE(starts.size() == 2);
  CHECK(starts[0]["delayMs"] == 200);
  CHECK(starts[1]["delayMs"] == 400);
  CHECK(of_type(events, "agent_end").back()["willRetry"] == false);
  CHECK(
      events.back().dump() ==
      R"j({"type":"auto_retry_end","success":false,"attempt":2,"finalError":"503 overloaded","reason":"deadline"})j");
}

TEST_CASE("a retry-after hint is honoured, one above the ceiling ends the chain at once") {
  {
    ReboundProcess r = retry_server(
        R"j([{"error":"429 Too Many Requests retry-after-ms=300"},{"text":"ok"}])j", kSettings);
    r.command(Json{{"id", "p1"},
                   {"type", "set_retry_policy"},
                   {"baseDelayMs", 10},
                   {"honorRetryAfter", true},
                   {"maxServerDelayMs", 60000}});
    r.send(prompt());
    const auto start = of_type(until_chain_end(r), "auto_retry_start").at(0);
    CHECK(start["delayMs"] == 300);
    CHECK(start["delaySource"] == "retry-after");
    CHECK(start["errorClass"] == "rate_limit");
  }
  {
    ReboundProcess r =
        retry_server(R"j([{"error":"429 Too Many Requests retry-after-ms=900000"}])j", kSettings);
    r.command(Json{{"id", "p1"},
                   {"type", "set_retry_policy"},
                   {"baseDelayMs", 10},
                   {"honorRetryAfter", true},
                   {"maxServerDelayMs", 60000}});
    r.send(prompt());
    const auto events = until_chain_end(r);
    CHECK(of_type(events, "auto_retry_start").empty());
    CHECK(of_type(events, "agent_end").back()["willRetry"] == false);
    CHECK(
        events.back().dump() ==
        R"j({"type":"auto_retry_end","success":false,"attempt":0,"finalError":"429 Too Many Requests retry-after-ms=900000","reason":"server_delay_too_long"})j");
  }
}

TEST_CASE("set_retry_policy never writes settings.json, validation is all or nothing") {
  ReboundProcess r = retry_server(R"j([{"text":"ok"}])j", kSettings);
  const std::string before = r.dir().read("agent/settings.json");
  const Json bad =
      r.command(Json{{"id", "b"}, {"type", "set_retry_policy"}, {"maxRetries", 7}, {"jitter", 2}});
  CHECK(
      bad.dump() ==
      R"j({"id":"b","type":"response","command":"set_retry_policy","success":false,"error":"Invalid field 'jitter': expected number 0..1 or null"})j");
  const Json good = r.command(
      Json{{"id", "g"}, {"type", "set_retry_policy"}, {"maxRetries", 7}, {"maxDelayMs", 8000}});
  CHECK(
      good["data"].dump() ==
      R"j({"maxRetries":7,"baseDelayMs":100,"maxDelayMs":8000,"jitter":0,"honorRetryAfter":false,"source":"session"})j");
  // Kept across new_session; reset drops it.
  r.command(Json{{"id", "n"}, {"type", "new_session"}});
  CHECK(r.command(Json{{"id", "s"}, {"type", "get_retry_state"}})["data"]["policy"]["source"] ==
        "session");
  CHECK(
      r.command(Json{{"id", "r"}, {"type", "set_retry_policy"}, {"reset", true}})["data"].dump() ==
      R"j({"maxRetries":3,"baseDelayMs":100,"jitter":0,"honorRetryAfter":false,"source":"settings"})j");
  CHECK(r.dir().read("agent/settings.json") == before);
}

TEST_CASE("--retry-seed takes a decimal 64-bit integer only") {
  for (const char* bad : {"-1", "18446744073709551616", "0x10", "", "1.5"}) {
    CAPTURE(bad);
    ReboundProcess r({"--no-session", "--retry-seed", bad});
    CHECK(r.proc().wait() == 2);
  }
  ReboundProcess ok({"--no-session", "--retry-seed", "18446744073709551615"});
  ok.send(Json{{"id", "s"}, {"type", "get_state"}});
  CHECK(ok.read_until_response("s").back()["success"] == true);
}
