// Compaction end to end (runtime.md section 5) with the real binary and the scripted provider:
// the event orders of the spec, its failure texts, threshold compaction, `compact` on the wire,
// abort, and resuming a compacted session file.

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "tests/support/event_summary.h"
#include "tests/support/rebound_process.h"

using namespace rebound;
using protocol::Json;
using testing::ReboundProcess;
using testing::summarize;
using V = std::vector<std::string>;

namespace {

std::string settings(bool enabled = true, int keep_recent = 1) {
  return Json{{"retry", Json{{"enabled", true}, {"maxRetries", 3}, {"baseDelayMs", 20}}},
              {"compaction", Json{{"enabled", enabled}, {"keepRecentTokens", keep_recent}}}}
      .dump();
}

ReboundProcess server(const std::string& script, const std::string& settings_json = settings(),
                      std::vector<std::string> session = {"--session", "@DIR@/s.jsonl"}) {
  std::vector<std::string> args{"--provider",        "scripted",     "--script",
                                "@DIR@/script.json", "--script-log", "@DIR@/script-log.jsonl"};
  args.insert(args.end(), session.begin(), session.end());
  return ReboundProcess(args, {},
                        {{"agent/settings.json", settings_json}, {"script.json", script}});
}

Json prompt(const std::string& text) {
  return Json{{"id", "p"}, {"type", "prompt"}, {"message", text}};
}

/// Everything after the prompt's response until `last` (a summarized line) is read.
V run_until(ReboundProcess& r, const std::string& last) {
  V out;
  while (out.empty() || out.back() != last) {
    const Json j = r.read_json();
    if (j["type"] == "message_update") continue;  // deltas are checked elsewhere
    out.push_back(summarize(j));
  }
  return out;
}

const V kOverflowRun = testing::concat(
    {{"response:prompt"}, testing::failed_first_run(), {"agent_end:willRetry=false"}});

}  // namespace

TEST_CASE("overflow, compaction, a continued run that succeeds, the file resumes to the same") {
  auto r = server(R"([{"text":"first answer"},{"error":"prompt is too long"},
                      {"text":"THE SUMMARY"},{"text":"second answer","chunks":2}])");
  r.send(prompt("one"));
  run_until(r, "agent_end:willRetry=false");
  r.send(prompt("two"));
  V events = run_until(r, "agent_end:willRetry=false");  // the overflowing run
  const V continued = run_until(r, "agent_end:willRetry=false");
  events.insert(events.end(), continued.begin(), continued.end());
  CHECK(events == testing::concat(
                      {kOverflowRun,
                       {"auto_compaction_start:overflow",
                        "auto_compaction_end:aborted=false:willRetry=true", "agent_start",
                        "turn_start", "message_start:assistant:stop", "message_end:assistant:stop",
                        "turn_end:assistant:stop", "agent_end:willRetry=false"}}));
  const Json messages = r.command(Json{{"id", "m"}, {"type", "get_messages"}})["data"]["messages"];
  REQUIRE(messages.size() == 3);
  CHECK(messages[0]["role"] == "compactionSummary");
  CHECK(messages[0]["summary"] == "THE SUMMARY");
  CHECK(messages[1]["content"][0]["text"] == "two");
  CHECK(messages[2]["content"][0]["text"] == "second answer");
  // The summary request saw the older part; the continued request the summary and "two".
  const auto log = r.jsonl("script-log.jsonl");
  REQUIRE(log.size() == 4);
  const std::string summary_prompt = log[2]["messages"][0]["content"][0]["text"];
  CHECK(summary_prompt.find("[User]: one\n[Assistant]: first answer") != std::string::npos);
  CHECK(log[3]["messages"].size() == 2);
  r.proc().close_stdin();
  REQUIRE(r.proc().wait() == 0);

  ReboundProcess resumed({"--session", (r.dir().path() / "s.jsonl").string()}, {}, {});
  CHECK(resumed.command(Json{{"id", "m"}, {"type", "get_messages"}})["data"]["messages"] ==
        messages);
}

TEST_CASE("a second overflow in one prompt, a failing summary, compaction disabled") {
  SUBCASE("second overflow") {
    auto r =
        server(R"([{"error":"prompt is too long"},{"text":"S"},{"error":"prompt is too long"}])");
    r.send(prompt("q"));
    const V events = run_until(
        r,
        "auto_compaction_end:aborted=false:willRetry=false:Context overflow recovery failed after "
        "one compact-and-retry attempt. Try reducing context or switching to a larger-context "
        "model.");
    CHECK(std::count(events.begin(), events.end(), "auto_compaction_start:overflow") == 2);
    CHECK(std::none_of(events.begin(), events.end(),
                       [](const std::string& e) { return e.starts_with("auto_retry"); }));
  }
  SUBCASE("failing summary") {
    auto r = server(R"([{"error":"prompt is too long"},{"error":"summary model exploded"}])");
    r.send(prompt("q"));
    const V events = run_until(r,
                               "auto_compaction_end:aborted=false:willRetry=false:Context overflow "
                               "recovery failed: summary model exploded");
    CHECK(events == testing::concat({kOverflowRun,
                                     {"auto_compaction_start:overflow",
                                      "auto_compaction_end:aborted=false:willRetry=false:Context "
                                      "overflow recovery failed: summary model exploded"}}));
  }
  SUBCASE("disabled: nothing after agent_end") {
    auto r = server(R"([{"error":"prompt is too long"}])", settings(false));
    r.send(prompt("q"));
    CHECK(run_until(r, "agent_end:willRetry=false") == kOverflowRun);
    CHECK(r.command(Json{{"id", "s"}, {"type", "get_state"}})["data"]["isCompacting"] == false);
    CHECK(r.jsonl("script-log.jsonl").size() == 1);
  }
}

TEST_CASE("a retry chain that meets an overflow ends before the compaction starts") {
  auto r = server(R"([{"error":"503 overloaded"},{"error":"context_length_exceeded"},
                      {"text":"S"},{"text":"ok"}])");
  r.send(prompt("q"));
  const V events = run_until(r, "agent_end:willRetry=false");
  const V tail = run_until(r, "agent_end:willRetry=false");
  CHECK(events.back() == "agent_end:willRetry=false");
  CHECK(V(tail.begin(), tail.begin() + 4) ==
        V{"auto_retry_end:false:1:context_length_exceeded", "auto_compaction_start:overflow",
          "auto_compaction_end:aborted=false:willRetry=true", "agent_start"});
}

TEST_CASE("threshold compaction after a run above contextWindow - reserveTokens") {
  auto r = server(R"([{"text":"big","usage":{"input":115000,"output":10}},{"text":"S"}])");
  r.send(prompt("q"));
  const V events = run_until(r, "auto_compaction_end:aborted=false:willRetry=false");
  CHECK(V(events.end() - 3, events.end()) ==
        V{"agent_end:willRetry=false", "auto_compaction_start:threshold",
          "auto_compaction_end:aborted=false:willRetry=false"});
  CHECK(r.command(Json{{"id", "s"}, {"type", "get_state"}})["data"]["messageCount"] == 2);
}

TEST_CASE("compact on the wire: the result, nothing to compact, abort, set_auto_compaction") {
  auto r = server(R"([{"text":"a"},{"text":"SUM"},{"text":"x","hang":true}])");
  CHECK(r.command(Json{{"id", 1}, {"type", "compact"}})["error"] ==
        "Nothing to compact (session too small)");
  r.send(prompt("q"));
  run_until(r, "agent_end:willRetry=false");
  const Json done =
      r.command(Json{{"id", 2}, {"type", "compact"}, {"customInstructions", "short"}});
  CHECK(done["success"] == true);
  CHECK(done["data"]["summary"] == "SUM");
  CHECK(done["data"]["firstKeptEntryId"].get<std::string>().size() == 8);
  CHECK(done["data"]["tokensBefore"].get<long>() > 0);
  // A hanging summary: get_state answers meanwhile, abort ends it.
  r.send(Json{{"id", 3}, {"type", "compact"}});
  const Json st = r.command(Json{{"id", 4}, {"type", "get_state"}});
  CHECK(st["data"]["isCompacting"] == true);
  r.send(Json{{"id", 5}, {"type", "abort"}});
  const auto lines = r.read_until_response(5);
  REQUIRE(lines.size() == 2);
  CHECK(lines[0] == Json::parse(R"({"id":3,"type":"response","command":"compact","success":false,
                                   "error":"Compaction aborted"})"));
  CHECK(r.command(Json{
            {"id", 6}, {"type", "set_auto_compaction"}, {"enabled", false}})["success"] == true);
  CHECK(r.command(Json{{"id", 7}, {"type", "get_state"}})["data"]["autoCompactionEnabled"] ==
        false);
  CHECK(Json::parse(r.dir().read("agent/settings.json"))["compaction"]["enabled"] == false);
}

TEST_CASE("abort during an automatic compaction") {
  auto r = server(R"([{"error":"prompt is too long"},{"text":"S","hang":true}])");
  r.send(prompt("q"));
  run_until(r, "auto_compaction_start:overflow");
  r.send(Json{{"id", "a"}, {"type", "abort"}});
  const auto lines = r.read_until_response("a");
  REQUIRE(lines.size() == 2);
  CHECK(summarize(lines[0]) == "auto_compaction_end:aborted=true:willRetry=false");
}
