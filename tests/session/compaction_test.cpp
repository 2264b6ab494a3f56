// Compaction (runtime.md section 5): the pure estimates and cut, and AgentSession's overflow,
// threshold and on-demand compaction with manual time.

#include "session/compaction.h"

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "tests/support/event_summary.h"
#include "tests/support/session_harness.h"

using namespace rebound;
using protocol::AgentMessage;
using protocol::Json;
using testing::SessionHarness;
using testing::summarize;
using V = std::vector<std::string>;

namespace {

AgentMessage text_message(protocol::Role role, std::size_t chars) {
  AgentMessage m;
  m.role = role;
  m.content.push_back(protocol::ContentBlock::make_text(std::string(chars, 'x')));
  return m;
}

AgentMessage tool_call(std::size_t chars) {
  AgentMessage m;
  m.role = protocol::Role::assistant;
  m.content.push_back(protocol::ContentBlock::make_tool_call(
      "c1", "bash", Json{{"command", std::string(chars, 'y')}}));
  return m;
}

Json settings(bool enabled, long keep_recent = 20000, long reserve = 16384) {
  return Json{
      {"retry", Json{{"enabled", true}, {"maxRetries", 3}, {"baseDelayMs", 100}}},
      {"compaction",
       Json{{"enabled", enabled}, {"keepRecentTokens", keep_recent}, {"reserveTokens", reserve}}}};
}

const V kOverflowRun =
    testing::concat({testing::failed_first_run(), {"agent_end:willRetry=false"}});

}  // namespace

TEST_CASE("token estimates: ceil(chars / 4), usage of the last good answer plus what follows") {
  CHECK(session::estimate_tokens(text_message(protocol::Role::user, 9)) == 3);
  CHECK(session::estimate_tokens(text_message(protocol::Role::user, 8)) == 2);
  AgentMessage multi = text_message(protocol::Role::user, 0);
  multi.content[0].text = "ééé";  // characters, not bytes
  CHECK(session::estimate_tokens(multi) == 1);
  std::vector<AgentMessage> context{text_message(protocol::Role::user, 400),
                                    text_message(protocol::Role::assistant, 40),
                                    text_message(protocol::Role::user, 40)};
  CHECK(session::estimate_context_tokens(context) == 100 + 10 + 10);
  context[1].usage.input = 500;
  context[1].usage.output = 20;
  CHECK(session::estimate_context_tokens(context) == 520 + 10);
  context[1].usage.total_tokens = 600;
  CHECK(session::estimate_context_tokens(context) == 610);
  context[1].stop_reason = protocol::StopReason::error;  // an error's usage does not count
  CHECK(session::estimate_context_tokens(context) == 120);
}

TEST_CASE("the cut keeps the newest messages up to keepRecentTokens, never a result alone") {
  // Estimates: 100, 10, 25 (call), 50 (result), 10.
  AgentMessage result = text_message(protocol::Role::tool_result, 200);
  std::vector<AgentMessage> context{text_message(protocol::Role::user, 400),
                                    text_message(protocol::Role::assistant, 40), tool_call(80),
                                    result, text_message(protocol::Role::user, 40)};
  CHECK(session::find_cut(context, 10) == 4);
  CHECK(session::find_cut(context, 11) == 2);  // reached at the result: its call comes too
  CHECK(session::find_cut(context, 61) == 2);
  CHECK(session::find_cut(context, 90) == 1);
  CHECK(session::find_cut(context, 1000) == 0);  // everything fits
  AgentMessage summary;
  summary.role = protocol::Role::compaction_summary;
  summary.summary = "s";
  context.insert(context.begin(), summary);
  CHECK(session::find_cut(context, 1000) == 1);  // an earlier summary is summarised again
}

TEST_CASE("overflow: compaction, then the continued run succeeds, with no auto_retry event") {
  SessionHarness h(R"([{"error":"prompt is too long: 200000 tokens > 128000 maximum"},
                       {"text":"SUMMARY"},{"text":"answer after compaction"}])",
                   settings(true, 1));
  h.prompt("big question");
  h.scheduler.run_all();
  CHECK(summarize(h.sink.events) ==
        testing::concat(
            {kOverflowRun,
             {"auto_compaction_start:overflow", "auto_compaction_end:aborted=false:willRetry=true",
              "agent_start", "turn_start", "message_start:assistant:stop", "update:text_start",
              "update:text_delta", "update:text_end", "message_end:assistant:stop",
              "turn_end:assistant:stop", "agent_end:willRetry=false"}}));
  const Json end = h.sink.of_type("auto_compaction_end")[0];
  CHECK(end["result"]["summary"] == "SUMMARY");
  // The summary request is an LLM request like any other; it saw the user message.
  REQUIRE(h.requests.size() == 3);
  CHECK(h.requests[1]["messages"][0]["content"][0]["text"].get<std::string>().find(
            "[User]: big question") == std::string::npos);  // kept, so not in the older part
  // The continued request: summary + kept user message, no error.
  const Json& sent = h.requests[2]["messages"];
  REQUIRE(sent.size() == 2);
  CHECK(sent[0]["role"] == "compactionSummary");
  CHECK(sent[1]["content"][0]["text"] == "big question");
  CHECK(h.session.messages().size() == 3);
  CHECK_FALSE(h.session.is_compacting());
  // The file has the compaction entry pointing at the kept user message.
  const auto& entries = h.session.recorder().entries();
  const Json* compaction = nullptr;
  for (const auto& e : entries) {
    if (e["type"] == "compaction") compaction = &e;
  }
  REQUIRE(compaction);
  CHECK((*compaction)["firstKeptEntryId"] == end["result"]["firstKeptEntryId"]);
  CHECK((*compaction)["reason"] == "overflow");
  // It is the entry the kept message was recorded as (found by its id, not by its JSON).
  const Json* kept = nullptr;
  for (const auto& e : entries) {
    if (e["id"] == (*compaction)["firstKeptEntryId"]) kept = &e;
  }
  REQUIRE(kept);
  CHECK((*kept)["type"] == "message");
  CHECK((*kept)["message"]["content"][0]["text"] == "big question");
  CHECK(h.session.messages()[1].entry_id == (*compaction)["firstKeptEntryId"]);
  // Resuming the file rebuilds the same context.
  const auto restored = session::restore_session(entries);
  CHECK(protocol::to_json(restored.context()) == protocol::to_json(h.session.messages()));
}

TEST_CASE("request_spend: every request's time, main and summary, and the summary's usage") {
  SessionHarness h(R"([{"error":"prompt is too long: 200000 tokens > 128000 maximum","delayMs":100},
                       {"text":"SUMMARY","delayMs":250,"usage":{"input":50,"output":5}},
                       {"text":"answer","delayMs":40,"usage":{"input":7,"output":1}}])",
                   settings(true, 1));
  h.prompt("big question");
  h.scheduler.run_all();
  REQUIRE(h.requests.size() == 3);
  CHECK(h.session.request_spend().api_ms == 390);
  CHECK(h.session.request_spend().summaries.input == 50);
  CHECK(h.session.request_spend().summaries.output == 5);
  // An aborted request counts up to its abort.
  SessionHarness hung(R"([{"hang":true}])");
  hung.prompt("q");
  hung.scheduler.advance(30);
  hung.session.abort({});
  hung.scheduler.run_all();
  CHECK(hung.session.request_spend().api_ms == 30);
  CHECK(hung.session.request_spend().summaries.input == 0);
}

TEST_CASE("a second overflow in the same prompt ends after one compact-and-retry attempt") {
  SessionHarness h(R"([{"error":"prompt is too long"},{"text":"S"},{"error":"prompt is too long"},
                       {"error":"prompt is too long"},{"text":"S2"},{"text":"ok"}])",
                   settings(true));
  h.prompt("q");
  h.scheduler.run_all();
  const auto types = summarize(h.sink.events);
  CHECK(V(types.end() - 3, types.end()) ==
        V{"agent_end:willRetry=false", "auto_compaction_start:overflow",
          "auto_compaction_end:aborted=false:willRetry=false:Context overflow recovery failed "
          "after one compact-and-retry attempt. Try reducing context or switching to a "
          "larger-context model."});
  CHECK(h.requests.size() == 3);
  // A new prompt may compact again.
  h.sink.clear();
  h.prompt("again");
  h.scheduler.run_all();
  CHECK(summarize(h.sink.of_type("auto_compaction_end")[0]) ==
        "auto_compaction_end:aborted=false:willRetry=true");
  CHECK(h.session.last_assistant_text() == "ok");
}

TEST_CASE("a failing summary and disabled compaction") {
  SUBCASE("the summary request fails") {
    SessionHarness h(R"([{"error":"prompt is too long"},{"error":"503 overloaded"}])",
                     settings(true));
    h.prompt("q");
    h.scheduler.run_all();
    CHECK(summarize(h.sink.events.back()) ==
          "auto_compaction_end:aborted=false:willRetry=false:Context overflow recovery failed: "
          "503 overloaded");
    CHECK(h.requests.size() == 2);  // never retried
    CHECK(h.session.is_idle());
  }
  SUBCASE("disabled: nothing after agent_end") {
    SessionHarness h(R"([{"error":"prompt is too long"}])", settings(false));
    h.prompt("q");
    h.scheduler.run_all();
    CHECK(summarize(h.sink.events) == kOverflowRun);
    CHECK(h.requests.size() == 1);
  }
}

TEST_CASE("silent overflow: a successful answer above the context window is compacted away") {
  SessionHarness h(R"([{"text":"huge","usage":{"input":130000,"output":5}},{"text":"S"},
                       {"text":"fine"}])",
                   settings(true));
  h.prompt("q");
  h.scheduler.run_all();
  CHECK(h.sink.of_type("auto_compaction_start")[0]["reason"] == "overflow");
  CHECK(h.sink.of_type("auto_retry_start").empty());
  REQUIRE(h.requests.size() == 3);
  CHECK(h.requests[2]["messages"].back()["role"] == "user");  // "huge" was removed
  CHECK(h.session.last_assistant_text() == "fine");
}

TEST_CASE("threshold compaction after a run above contextWindow - reserveTokens") {
  SessionHarness h(R"([{"text":"big","usage":{"input":120000,"output":10}},{"text":"S"}])",
                   settings(true, 1, 16384));
  h.prompt("q");
  h.scheduler.run_all();
  const auto types = summarize(h.sink.events);
  CHECK(V(types.end() - 3, types.end()) == V{"agent_end:willRetry=false",
                                             "auto_compaction_start:threshold",
                                             "auto_compaction_end:aborted=false:willRetry=false"});
  CHECK(h.session.messages()[0].role == protocol::Role::compaction_summary);
  CHECK(h.sink.of_type("auto_compaction_end")[0]["result"]["tokensBefore"] == 120010);
}

TEST_CASE("abort during an automatic compaction, prompts during it wait as follow-ups") {
  SessionHarness h(R"([{"error":"prompt is too long"},{"text":"S","hang":true}])", settings(true));
  bool done = false;
  h.prompt("q", std::nullopt, [&] { done = true; });
  h.scheduler.run_ready();
  REQUIRE(h.session.is_compacting());
  CHECK(h.session.state().is_compacting);
  CHECK(h.prompt("while compacting").empty());
  CHECK(h.session.state().queued_message_count == 1);
  CHECK_FALSE(h.session.state().is_streaming);
  h.sink.clear();
  h.session.abort();
  // The dropped follow-up: one queue_update with empty lists (sessions.md section 8).
  CHECK(summarize(h.sink.events) ==
        V{"auto_compaction_end:aborted=true:willRetry=false", "queue_update"});
  CHECK(done);
  CHECK(h.session.is_idle());
}

TEST_CASE("compact on demand: the result, the errors, and abort") {
  SessionHarness h(R"([{"text":"a1"},{"text":"SUM"},{"text":"x","hang":true}])", settings(true, 1));
  std::vector<std::variant<Json, std::string>> answers;
  auto keep = [&](session::Result<session::CompactionResult> r) {
    if (!r) {
      answers.emplace_back(r.error().message);
    } else {
      answers.emplace_back(Json{{"summary", r->summary},
                                {"firstKeptEntryId", r->first_kept_entry_id},
                                {"tokensBefore", r->tokens_before}});
    }
  };
  h.session.compact(std::nullopt, keep);
  REQUIRE(answers.size() == 1);
  CHECK(std::get<std::string>(answers[0]) == "Nothing to compact (session too small)");
  h.prompt("q1");
  h.scheduler.run_all();
  h.sink.clear();
  h.session.compact(std::string("focus on names"), keep);
  h.session.compact(std::nullopt, keep);
  REQUIRE(answers.size() == 2);
  CHECK(std::get<std::string>(answers[1]) == "Compaction already in progress");
  h.scheduler.run_all();
  REQUIRE(answers.size() == 3);
  const Json result = std::get<Json>(answers[2]);
  CHECK(result["summary"] == "SUM");
  CHECK(result["tokensBefore"].get<long>() > 0);
  CHECK(h.sink.events.empty());  // no auto_compaction events for compact
  CHECK(h.requests[1]["messages"][0]["content"][0]["text"].get<std::string>().find(
            "Additional instructions: focus on names") != std::string::npos);
  // A hanging summary, aborted.
  h.session.compact(std::nullopt, keep);
  h.scheduler.run_ready();
  h.session.abort();
  REQUIRE(answers.size() == 4);
  CHECK(std::get<std::string>(answers[3]) == "Compaction aborted");
}
