// The retry policy of retry.md through AgentSession, with manual time: every delay is checked
// as requested by the timer, and no test sleeps.

#include <doctest/doctest.h>

#include "tests/support/event_summary.h"
#include "tests/support/session_harness.h"

using namespace rebound;
using protocol::Json;
using testing::SessionHarness;
using testing::summarize;
using V = std::vector<std::string>;

namespace {

Json retry_settings(long max_retries, long base_delay_ms, bool enabled = true) {
  return Json{
      {"retry",
       Json{{"enabled", enabled}, {"maxRetries", max_retries}, {"baseDelayMs", base_delay_ms}}}};
}

const V& kFailedFirstRun = testing::failed_first_run();
const V& kFailedContinuation = testing::failed_continuation();
using testing::concat;

}  // namespace

TEST_CASE("one retryable error, then success (retry.md section 10)") {
  SessionHarness h(R"([{"error":"503 overloaded"},{"text":"hello world","chunks":2}])");
  bool completed = false;
  CHECK(h.prompt("say hello", std::nullopt, [&] { completed = true; }).empty());
  h.scheduler.run_ready();
  CHECK(summarize(h.sink.events) ==
        concat({kFailedFirstRun,
                {"agent_end:willRetry=true", "auto_retry_start:1/3:2000:503 overloaded"}}));
  CHECK(h.scheduler.requested_delays() == std::vector<std::int64_t>{2000});
  CHECK(h.session.is_retrying());
  CHECK_FALSE(h.session.is_streaming());
  CHECK_FALSE(completed);  // the first agent_end is not the end of the work

  h.sink.clear();
  h.scheduler.advance(1999);
  CHECK(h.sink.events.empty());
  h.scheduler.advance(1);
  CHECK(summarize(h.sink.events) ==
        V{"agent_start", "turn_start", "message_start:assistant:stop", "update:text_start",
          "update:text_delta", "update:text_delta", "update:text_end", "message_end:assistant:stop",
          "turn_end:assistant:stop", "agent_end:willRetry=false", "auto_retry_end:true:1"});
  CHECK(completed);
  CHECK_FALSE(h.session.is_retrying());
  // The retried request no longer carried the error; the runtime context holds user + answer.
  REQUIRE(h.requests.size() == 2);
  CHECK(h.requests[1]["messages"].size() == 1);
  CHECK(h.requests[1]["messages"][0]["role"] == "user");
  CHECK(h.session.state().message_count == 2);
  // agent_end of the continued run holds only the new message.
  CHECK(h.sink.of_type("agent_end")[0]["messages"].size() == 1);
}

TEST_CASE("default backoff is 2 s, 4 s, 8 s, maxRetries 3 gives 4 requests and attempt 3") {
  SessionHarness h(R"([{"error":"503 overloaded"}])");
  h.prompt("x");
  h.scheduler.run_all();
  CHECK(h.scheduler.requested_delays() == std::vector<std::int64_t>{2000, 4000, 8000});
  CHECK(h.scheduler.now_ms() == 14000);
  CHECK(h.requests.size() == 4);
  const auto starts = h.sink.of_type("auto_retry_start");
  REQUIRE(starts.size() == 3);
  for (int i = 0; i < 3; ++i) {
    CHECK(starts[i]["attempt"] == i + 1);
    CHECK(starts[i]["maxAttempts"] == 3);
  }
  const auto ends = h.sink.of_type("auto_retry_end");
  REQUIRE(ends.size() == 1);
  CHECK(summarize(ends[0]) == "auto_retry_end:false:3:503 overloaded");
  const auto agent_ends = h.sink.of_type("agent_end");
  REQUIRE(agent_ends.size() == 4);
  CHECK(agent_ends[3]["willRetry"] == false);
  CHECK(summarize(h.sink.events.back()) == "auto_retry_end:false:3:503 overloaded");
  // The last error stays in the context: no retry removed it.
  CHECK(h.session.messages().back().failed());
}

TEST_CASE("maxRetries 0: an end event with attempt 0 and no start") {
  SessionHarness h(R"([{"error":"429 Too Many Requests"}])", retry_settings(0, 20));
  h.prompt("x");
  h.scheduler.run_all();
  CHECK(h.sink.of_type("auto_retry_start").empty());
  CHECK(summarize(h.sink.events.back()) == "auto_retry_end:false:0:429 Too Many Requests");
  CHECK(h.requests.size() == 1);
}

TEST_CASE("abort_retry during the backoff ends the chain at once and nothing runs afterwards") {
  SessionHarness h(R"([{"error":"503 overloaded"},{"text":"never"}])", retry_settings(3, 5000));
  bool completed = false;
  h.prompt("x", std::nullopt, [&] { completed = true; });
  h.scheduler.run_ready();
  h.sink.clear();
  h.session.abort_retry();
  CHECK(summarize(h.sink.events) == V{"auto_retry_end:false:1:Retry cancelled"});
  CHECK(completed);
  CHECK(h.scheduler.pending_timers() == 0);
  h.scheduler.run_all();
  CHECK(h.requests.size() == 1);
  CHECK(h.session.is_idle());
}

TEST_CASE("abort_retry while the retried request runs: success ends with success true") {
  SessionHarness h(R"([{"error":"503 overloaded"},{"text":"ok","delayMs":100}])",
                   retry_settings(3, 10));
  h.prompt("x");
  h.scheduler.advance(10);  // the retried request is running now
  CHECK(h.session.is_streaming());
  h.session.abort_retry();
  h.sink.clear();
  h.scheduler.run_all();
  CHECK(summarize(h.sink.events.back()) == "auto_retry_end:true:1");
}

TEST_CASE("abort_retry while the retried request runs: a retryable failure ends the chain") {
  SessionHarness h(R"([{"error":"503 overloaded"},{"error":"503 overloaded","delayMs":100}])",
                   retry_settings(3, 10));
  h.prompt("x");
  h.scheduler.advance(10);
  h.session.abort_retry();
  h.sink.clear();
  h.scheduler.run_all();
  CHECK(summarize(h.sink.events) == V{"message_start:assistant:error",
                                      "message_end:assistant:error", "turn_end:assistant:error",
                                      "agent_end:willRetry=false",
                                      "auto_retry_end:false:1:Retry cancelled"});
  CHECK(h.requests.size() == 2);  // no new retry was scheduled in this chain
}

TEST_CASE("abort of the retried request: agent_end, then the chain ends Retry cancelled") {
  SessionHarness h(R"([{"error":"503 overloaded"},{"hang":true}])", retry_settings(3, 10));
  h.prompt("x");
  h.scheduler.advance(10);
  h.sink.clear();
  h.session.abort();
  CHECK(summarize(h.sink.events) == V{"message_start:assistant:aborted",
                                      "message_end:assistant:aborted", "turn_end:assistant:aborted",
                                      "agent_end:willRetry=false",
                                      "auto_retry_end:false:1:Retry cancelled"});
  CHECK(h.sink.events[1]["message"]["errorMessage"] == "Request was aborted");
  CHECK(h.session.is_idle());
}

TEST_CASE("abort during the backoff cancels it with Retry cancelled") {
  SessionHarness h(R"([{"error":"503 overloaded"}])", retry_settings(3, 1000));
  h.prompt("x");
  h.scheduler.run_ready();
  h.sink.clear();
  h.session.abort();
  CHECK(summarize(h.sink.events) == V{"auto_retry_end:false:1:Retry cancelled"});
  h.scheduler.run_all();
  CHECK(h.requests.size() == 1);
}

TEST_CASE("a non-retryable error answering the retry ends the chain with that error") {
  SessionHarness h(R"([{"error":"Overloaded"},{"error":"401 invalid x-api-key"}])",
                   retry_settings(3, 20));
  h.prompt("x");
  h.scheduler.run_all();
  CHECK(summarize(h.sink.events.back()) == "auto_retry_end:false:1:401 invalid x-api-key");
  // A later success does not report a phantom chain end (Differs row of section 5).
  h.sink.clear();
  SessionHarness ok(R"([{"error":"Overloaded"},{"error":"401 no"},{"text":"fine"}])",
                    retry_settings(3, 20));
  ok.prompt("x");
  ok.scheduler.run_all();
  ok.sink.clear();
  ok.prompt("again");
  ok.scheduler.run_all();
  CHECK(ok.sink.of_type("auto_retry_end").empty());
}

TEST_CASE("retry disabled in the middle of a chain ends it at the next failure") {
  SessionHarness h(R"([{"error":"503 overloaded"}])", retry_settings(3, 100));
  h.prompt("x");
  h.scheduler.run_ready();
  h.session.set_auto_retry(false);  // the running backoff is not touched
  h.sink.clear();
  h.scheduler.run_all();
  CHECK(summarize(h.sink.events) ==
        concat({kFailedContinuation,
                {"agent_end:willRetry=false", "auto_retry_end:false:1:503 overloaded"}}));
  CHECK(h.requests.size() == 2);
}

TEST_CASE("retry disabled before the first error: no retry event, the error stays") {
  SessionHarness h(R"([{"error":"503 overloaded"}])", retry_settings(3, 100, false));
  h.prompt("x");
  h.scheduler.run_all();
  CHECK(summarize(h.sink.events.back()) == "agent_end:willRetry=false");
  CHECK(h.sink.of_type("auto_retry_start").empty());
  CHECK(h.session.messages().back().failed());
}

TEST_CASE("usage limit: another credential means delayMs 0") {
  SessionHarness h(R"([{"error":"429 usage limit reached retry-after-ms=30000"},{"text":"ok"}])",
                   retry_settings(3, 2000));
  h.credentials.another_available = true;
  h.prompt("x");
  h.scheduler.run_ready();
  REQUIRE(h.credentials.calls.size() == 1);
  CHECK(h.credentials.calls[0].provider == "scripted");
  CHECK(h.credentials.calls[0].session_id == "sid-test");
  CHECK(h.credentials.calls[0].retry_after_ms == 30000);
  CHECK(h.sink.of_type("auto_retry_start")[0]["delayMs"] == 0);
  h.scheduler.run_all();
  CHECK(h.scheduler.now_ms() == 0);
  CHECK(summarize(h.sink.events.back()) == "auto_retry_end:true:1");
}

TEST_CASE("usage limit without another credential keeps the backoff") {
  SessionHarness h(R"([{"error":"usage_limit_reached"},{"text":"ok"}])", retry_settings(3, 2000));
  h.prompt("x");
  h.scheduler.run_ready();
  REQUIRE(h.credentials.calls.size() == 1);
  CHECK_FALSE(h.credentials.calls[0].retry_after_ms);
  CHECK(h.sink.of_type("auto_retry_start")[0]["delayMs"] == 2000);
}

TEST_CASE("a context overflow produces no auto_retry event") {
  SessionHarness h(R"([{"error":"400 prompt is too long: 210000 tokens > 200000 maximum"}])",
                   Json::parse(R"({"compaction":{"enabled":false}})"));
  h.prompt("x");
  h.scheduler.run_all();
  CHECK(h.sink.of_type("auto_retry_start").empty());
  CHECK(h.sink.of_type("auto_retry_end").empty());
  CHECK(summarize(h.sink.events.back()) == "agent_end:willRetry=false");
  CHECK(h.requests.size() == 1);
}

TEST_CASE("an active chain that meets an overflow ends before anything else") {
  SessionHarness h(R"([{"error":"503 overloaded"},{"error":"prompt is too long"}])",
                   retry_settings(3, 10));
  h.prompt("x");
  h.scheduler.run_all();
  const auto types = summarize(h.sink.events);
  REQUIRE(types.size() >= 4);
  // The chain ends first; only then does the overflow go to compaction (runtime.md section 5).
  CHECK(V(types.end() - 4, types.end()) ==
        V{"agent_end:willRetry=false", "auto_retry_end:false:1:prompt is too long",
          "auto_compaction_start:overflow",
          "auto_compaction_end:aborted=false:willRetry=false:Context overflow recovery failed: "
          "prompt is too long"});
}

TEST_CASE("prompts during the backoff wait as follow-ups and run after the chain ends") {
  SessionHarness h(R"([{"error":"503 overloaded"},{"text":"first"},{"text":"second"}])",
                   retry_settings(3, 100));
  h.prompt("x");
  h.scheduler.run_ready();
  CHECK(h.prompt("while waiting").empty());
  CHECK(h.session.state().queued_message_count == 1);
  h.scheduler.run_all();
  const auto types = summarize(h.sink.events);
  const auto chain_end = std::find(types.begin(), types.end(), "auto_retry_end:true:1");
  REQUIRE(chain_end != types.end());
  CHECK(std::count(chain_end, types.end(), "agent_start") == 1);  // the follow-up's run
  CHECK(h.requests.size() == 3);
  CHECK(h.requests[2]["messages"].back()["content"][0]["text"] == "while waiting");
  CHECK(h.session.is_idle());
}

TEST_CASE("a prompt while streaming needs streamingBehavior") {
  SessionHarness h(R"([{"text":"slow","delayMs":50},{"text":"next"}])");
  h.prompt("x");
  CHECK(h.prompt("again") ==
        "Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to "
        "queue the message.");
  CHECK(h.prompt("later", protocol::StreamingBehavior::follow_up).empty());
  CHECK(h.session.state().queued_message_count == 1);
  h.scheduler.run_all();
  CHECK(h.sink.of_type("agent_start").size() == 2);
  CHECK(h.session.is_idle());
}

TEST_CASE("steering is delivered at the next turn boundary of the same run") {
  SessionHarness h(R"([{"toolCalls":[{"name":"bash","arguments":{"command":"ls"}}],"delayMs":10},
                       {"text":"done"}])");
  h.prompt("x");
  h.session.steer({"look here", {}}, [] {});
  h.scheduler.run_all();
  CHECK(h.sink.of_type("agent_start").size() == 1);
  REQUIRE(h.requests.size() == 2);
  const auto& sent = h.requests[1]["messages"];
  CHECK(sent.back()["role"] == "user");
  CHECK(sent.back()["content"][0]["text"] == "look here");
}

TEST_CASE("a call to a tool the session does not offer gets an error result and the loop goes on") {
  SessionHarness h(
      R"([{"text":"let me look","toolCalls":[{"name":"bash","arguments":{"command":"ls"}}]},
                       {"text":"sorry"}])");
  h.prompt("x");
  h.scheduler.run_all();
  CHECK(summarize(h.sink.events) == V{"agent_start",
                                      "turn_start",
                                      "message_start:user",
                                      "message_end:user",
                                      "message_start:assistant:stop",
                                      "update:text_start",
                                      "update:text_delta",
                                      "update:text_end",
                                      "update:toolcall_start",
                                      "update:toolcall_delta",
                                      "update:toolcall_end",
                                      "message_end:assistant:toolUse",
                                      "tool_execution_start",
                                      "tool_execution_end",
                                      "message_start:toolResult",
                                      "message_end:toolResult",
                                      "turn_end:assistant:toolUse",
                                      "turn_start",
                                      "message_start:assistant:stop",
                                      "update:text_start",
                                      "update:text_delta",
                                      "update:text_end",
                                      "message_end:assistant:stop",
                                      "turn_end:assistant:stop",
                                      "agent_end:willRetry=false"});
  const auto end = h.sink.of_type("tool_execution_end")[0];
  CHECK(end["isError"] == true);
  CHECK(end["result"]["content"][0]["text"] == "Tool bash not found");
  CHECK(h.sink.of_type("turn_end")[0]["toolResults"].size() == 1);
  const auto tool_call = h.sink.of_type("message_end")[1]["message"]["content"][1];
  CHECK(tool_call["type"] == "toolCall");
  CHECK(tool_call["id"] == "call_1");
  CHECK(tool_call["arguments"]["command"] == "ls");
  CHECK(h.requests[1]["messages"].size() == 3);  // user, assistant with the call, tool result
}

TEST_CASE("abort mid-stream: the aborted message keeps its text and nothing stale arrives") {
  SessionHarness h(R"([{"text":"abcdef","chunks":3,"chunkDelayMs":10}])");
  h.prompt("x");
  h.scheduler.advance(5);  // one delta streamed
  h.session.abort();
  const auto end = h.sink.of_type("message_end").back()["message"];
  CHECK(end["stopReason"] == "aborted");
  CHECK(end["errorMessage"] == "Request was aborted");
  CHECK(end["content"][0]["text"] == "ab");
  const auto count = h.sink.events.size();
  h.scheduler.run_all();
  CHECK(h.sink.events.size() == count);
}

TEST_CASE("an error after streamed text keeps the text in the error message") {
  SessionHarness h(R"([{"text":"partial","error":"connection error: connection reset by peer"}])",
                   retry_settings(0, 1));
  h.prompt("x");
  h.scheduler.run_all();
  const auto end = h.sink.of_type("message_end").back()["message"];
  CHECK(end["content"][0]["text"] == "partial");
  CHECK(end["errorMessage"] == "connection error: connection reset by peer");
}

TEST_CASE("usage and cost reach the assistant message") {
  SessionHarness h(R"([{"text":"hi","usage":{"input":10,"output":4}}])");
  h.prompt("x");
  h.scheduler.run_all();
  const auto usage = h.sink.of_type("message_end").back()["message"]["usage"];
  CHECK(usage["input"] == 10);
  CHECK(usage["output"] == 4);
  CHECK(usage["totalTokens"] == 14);
}
