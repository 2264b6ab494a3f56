// A seeded randomized run of 1000 prompt sequences through one server process, with scripted
// failures, successes, overflows and hangs, and abort / abort_retry sent at random moments.
// Invariants: every auto_retry_start chain ends with exactly one auto_retry_end whose attempt
// matches, willRetry is true exactly when a start follows, and after each sequence the session
// is idle and answers get_state.

#include <doctest/doctest.h>

#include <random>

#include "tests/support/rebound_process.h"

using namespace rebound;
using protocol::Json;

namespace {

constexpr int kSequences = 1000;
constexpr std::uint32_t kSeed = 20261130;

// Step kinds and how often the script holds each, in percent.
enum class Step { overloaded, rate_limited, unauthorized, overflow, ok, slow_ok, hang };

Json step_json(Step s) {
  switch (s) {
    case Step::overloaded:
      return Json{{"error", "503 overloaded"}};
    case Step::rate_limited:
      return Json{{"error", "429 Too Many Requests"}};
    case Step::unauthorized:
      return Json{{"error", "401 invalid x-api-key"}};
    case Step::overflow:
      return Json{{"error", "400 prompt is too long: 300000 tokens > 200000 maximum"}};
    case Step::ok:
      return Json{{"text", "fine"}};
    case Step::slow_ok:
      return Json{{"text", "slow answer"}, {"chunks", 3}, {"chunkDelayMs", 1}};
    case Step::hang:
      return Json{{"hang", true}};
  }
  return Json();
}

}  // namespace

TEST_CASE("1000 seeded failure/success/abort sequences: every chain ends exactly once") {
  std::mt19937 rng(kSeed);
  auto percent = [&] { return std::uniform_int_distribution<int>(0, 99)(rng); };

  std::vector<Step> steps;
  for (int i = 0; i < 8 * kSequences; ++i) {
    const int p = percent();
    steps.push_back(p < 35   ? Step::overloaded
                    : p < 42 ? Step::rate_limited
                    : p < 50 ? Step::unauthorized
                    : p < 54 ? Step::overflow
                    : p < 84 ? Step::ok
                    : p < 94 ? Step::slow_ok
                             : Step::hang);
  }
  steps.push_back(Step::ok);  // the last step repeats
  Json script = Json::array();
  for (auto s : steps)
    script.push_back(step_json(s));

  auto r = testing::scripted(
      script.dump(),
      R"({"retry":{"enabled":true,"maxRetries":3,"baseDelayMs":2},"compaction":{"enabled":false}})");

  std::size_t requests = 0;  // agent_start count = steps consumed
  int chains_opened = 0, chains_closed = 0, aborts = 0, abort_retries = 0, hangs = 0;
  int retry_nows = 0, policy_changes = 0, typed_ends = 0;
  std::int64_t max_attempts = 3;
  for (int seq = 0; seq < kSequences; ++seq) {
    CAPTURE(seq);
    if (seq > 0 && seq % 50 == 0) {
      // A new session policy between sequences (retry.md section 13); from the first one on the
      // retry events carry their typed fields.
      max_attempts = 1 + (seq / 50) % 3;
      const std::string id = "policy" + std::to_string(seq);
      r.send(Json{{"id", id},
                  {"type", "set_retry_policy"},
                  {"maxRetries", max_attempts},
                  {"baseDelayMs", 2}});
      const auto answer = r.read_until_response(id).back();
      REQUIRE(answer["success"] == true);
      REQUIRE(answer["data"]["maxRetries"] == max_attempts);
      ++policy_changes;
    }
    r.send(Json{{"id", "p" + std::to_string(seq)}, {"type", "prompt"}, {"message", "go"}});
    bool run_active = false, chain_open = false, expect_start = false, done = false;
    std::int64_t attempt = 0;
    while (!done) {
      const Json e = r.read_json();
      const std::string type = e["type"];
      REQUIRE_MESSAGE(!(expect_start && type != "auto_retry_start"),
                      "willRetry was true but " << type << " followed");
      expect_start = false;
      if (type == "response") {
        REQUIRE(e["success"] == true);
        continue;
      }
      if (type == "agent_start") {
        REQUIRE_FALSE(run_active);
        run_active = true;
        const Step step = steps[std::min(requests, steps.size() - 1)];
        ++requests;
        if (step == Step::hang) ++hangs;
        // A hung request only ends when aborted: abort it now (the abort is read after the
        // run's synchronous start events).
        if (step == Step::hang) {
          if (percent() < 50) {
            r.send(Json{{"type", "abort_retry"}});  // alone it would not end the request
            ++abort_retries;
          }
          r.send(Json{{"type", "abort"}});
          ++aborts;
        }
      } else if (type == "agent_end") {
        REQUIRE(run_active);
        run_active = false;
        expect_start = e["willRetry"].get<bool>();
      } else if (type == "auto_retry_start") {
        if (!chain_open) {
          REQUIRE(e["attempt"] == 1);
          chain_open = true;
          ++chains_opened;
        } else {
          REQUIRE(e["attempt"] == attempt + 1);
        }
        attempt = e["attempt"];
        REQUIRE(e["maxAttempts"] == max_attempts);
      } else if (type == "auto_retry_end") {
        REQUIRE_MESSAGE(chain_open, "auto_retry_end without a chain: " << e.dump());
        REQUIRE(e["attempt"] == attempt);
        if (e.contains("reason")) {
          REQUIRE((e["reason"] == "success") == e["success"].get<bool>());
          ++typed_ends;
        }
        chain_open = false;
        attempt = 0;
        ++chains_closed;
      }
      // Random interference at any moment of the sequence.
      const int p = percent();
      if (p < 3) {
        r.send(Json{{"type", "abort_retry"}});
        ++abort_retries;
      } else if (p < 5) {
        r.send(Json{{"type", "abort"}});
        ++aborts;
      } else if (p < 8) {
        r.send(Json{{"type", "retry_now"}});  // ends a running backoff at once, else nothing
        ++retry_nows;
      } else if (p < 9) {
        r.send(Json{{"type", "get_retry_state"}});
      }
      if (!run_active && !chain_open && !expect_start &&
          (type == "agent_end" || type == "auto_retry_end")) {
        // Quiet now? Ask; anything the end caused comes before the answer.
        const std::string id = "s" + std::to_string(seq);
        r.send(Json{{"id", id}, {"type", "get_state"}});
        while (true) {
          const Json x = r.read_json();
          if (x["type"] == "response" && x.value("id", Json()) == id) {
            REQUIRE(x["success"] == true);
            if (!chain_open && !run_active) {
              REQUIRE(x["data"]["isStreaming"] == false);
              REQUIRE(x["data"]["queuedMessageCount"] == 0);
              done = true;
            }
            break;
          }
          REQUIRE_MESSAGE(x["type"] == "response", "event after the end: " << x.dump());
        }
      }
    }
  }
  CHECK(chains_opened == chains_closed);
  CHECK(chains_opened > 100);
  CHECK(aborts + abort_retries > 50);
  CHECK(hangs > 10);
  CHECK(retry_nows > 100);
  CHECK(policy_changes > 10);
  CHECK(typed_ends > 50);
  MESSAGE("sequences=" << kSequences << " requests=" << requests << " chains=" << chains_opened
                       << " aborts=" << aborts << " abort_retries=" << abort_retries
                       << " retry_nows=" << retry_nows << " policy_changes=" << policy_changes
                       << " typed_ends=" << typed_ends);
  r.proc().close_stdin();
  CHECK(r.proc().wait() == 0);
}
