// The session tree's commands end to end (sessions.md sections 1 to 8): get_fork_messages,
// fork, clone, set_session_name with session_info_changed and get_state.sessionName, --name,
// get_entries, queue_update, and how fork/clone settle a running turn or a backoff.

#include <doctest/doctest.h>
#include <signal.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "session/session_file.h"
#include "tests/support/rebound_process.h"
#include "tests/support/scripted_tools.h"

using namespace rebound;
using namespace std::chrono_literals;
using protocol::Json;
using testing::ReboundProcess;
namespace fs = std::filesystem;

namespace {

const std::string kSettings =
    R"({"retry":{"enabled":true,"maxRetries":3,"baseDelayMs":100},"compaction":{"enabled":false}})";

ReboundProcess::Files files(const std::string& script, const std::string& settings = kSettings) {
  return {{"agent/settings.json", settings}, {"script.json", script}};
}

std::vector<std::string> args(const std::vector<std::string>& more) {
  return testing::scripted_args(more);
}

Json cmd(const std::string& id, const std::string& type, Json fields = Json::object()) {
  Json c = Json::object();
  c["id"] = id;
  c["type"] = type;
  for (auto& [k, v] : fields.items())
    c[k] = v;
  return c;
}

/// A prompt and every line until its run is over.
std::vector<Json> exchange(ReboundProcess& r, const std::string& id, const std::string& text) {
  r.send(cmd(id, "prompt", {{"message", text}}));
  return r.read_until([](const Json& j) { return j["type"] == "agent_end"; });
}

std::vector<Json> file_lines(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<Json> out;
  for (std::string line; std::getline(in, line);)
    out.push_back(Json::parse(line));
  return out;
}

Json state(ReboundProcess& r) {
  return r.command(cmd("st", "get_state"))["data"];
}

}  // namespace

TEST_CASE("get_fork_messages and fork: ids kept, parentSession, the source unchanged") {
  ReboundProcess r(
      args({"--session-dir", "@DIR@/sessions"}), {},
      files(R"([{"text":"answer one"},{"text":"answer two"},{"text":"answer three"}])"));
  exchange(r, "p1", "first question");
  exchange(r, "p2", "second question");
  const Json before = state(r);
  const std::string source = before["sessionFile"];

  const Json listed = r.command(cmd("g1", "get_fork_messages"))["data"]["messages"];
  REQUIRE(listed.size() == 2);
  CHECK(listed[0]["text"] == "first question");
  CHECK(listed[1]["text"] == "second question");
  const std::string second = listed[1]["entryId"];

  // Errors change nothing.
  Json e = r.command(cmd("f0", "fork"));
  CHECK(e["success"] == false);
  CHECK(e["error"] == "Invalid field 'entryId': expected string");
  e = r.command(cmd("f0", "fork", {{"entryId", "nope"}}));
  CHECK(e["error"] == "Invalid entry ID for forking");
  const auto source_entries = file_lines(source);
  const std::string assistant_id = source_entries[4]["id"];  // answer one
  CHECK(r.command(cmd("f0", "fork", {{"entryId", assistant_id}}))["error"] ==
        "Invalid entry ID for forking");
  CHECK(state(r)["sessionId"] == before["sessionId"]);

  const Json forked = r.command(cmd("f1", "fork", {{"entryId", second}}));
  CHECK(forked["success"] == true);
  CHECK(forked["data"] == Json::parse(R"({"text":"second question","cancelled":false})"));
  const Json after = state(r);
  CHECK(after["sessionId"] != before["sessionId"]);
  CHECK(after["messageCount"] == 2);
  const std::string fork_file = after["sessionFile"];
  CHECK(fs::path(fork_file).parent_path() == fs::path(source).parent_path());
  CHECK(fs::path(fork_file).filename().string().ends_with(
      "_" + after["sessionId"].get<std::string>() + ".jsonl"));
  // Written at once (it holds an assistant message): the header, then the copied entries.
  const auto lines = file_lines(fork_file);
  REQUIRE(lines.size() == 5);
  CHECK(lines[0]["id"] == after["sessionId"]);
  CHECK(lines[0]["parentSession"] == source);
  for (std::size_t i = 1; i < 5; ++i)
    CHECK(lines[i] == source_entries[i]);

  // The next prompt continues the fork: the request holds answer one's exchange and the new one.
  exchange(r, "p3", "another second");
  const auto log = r.jsonl("script-log.jsonl");
  REQUIRE(log.size() == 3);
  CHECK(log[2]["messages"].size() == 3);
  CHECK(file_lines(fork_file)[5]["parentId"] == lines[4]["id"]);

  // The source file is as it was.
  CHECK(r.command(cmd("sw", "switch_session", {{"sessionPath", source}}))["success"] == true);
  CHECK(state(r)["messageCount"] == 4);
  CHECK(file_lines(source) == source_entries);
}

TEST_CASE("fork of the first message: empty context, the file only with an answer, link kept") {
  ReboundProcess r(args({"--session-dir", "@DIR@/sessions"}), {},
                   files(R"([{"text":"one"},{"text":"two"}])"));
  exchange(r, "p1", "first question");
  const std::string source = state(r)["sessionFile"];
  const auto src = file_lines(source);
  const std::string first =
      r.command(cmd("g", "get_fork_messages"))["data"]["messages"][0]["entryId"];
  CHECK(r.command(cmd("f", "fork", {{"entryId", first}}))["data"]["text"] == "first question");
  const Json st = state(r);
  CHECK(st["messageCount"] == 0);
  const std::string file = st["sessionFile"];
  CHECK_FALSE(fs::exists(file));  // no assistant message copied
  CHECK(r.command(cmd("g2", "get_fork_messages"))["data"]["messages"] == Json::array());
  exchange(r, "p2", "again");
  const auto lines = file_lines(file);
  REQUIRE(lines.size() >= 5);
  CHECK(lines[0]["parentSession"] == source);
  CHECK(lines[0]["id"] == st["sessionId"]);
  CHECK(lines[1] == src[1]);  // model_change, same id
  CHECK(lines[2] == src[2]);  // thinking_level_change
  CHECK(lines[3]["parentId"] == src[2]["id"]);
}

TEST_CASE("clone: refused when empty, then the whole path with the same ids and stats") {
  ReboundProcess r(args({"--session-dir", "@DIR@/sessions"}), {},
                   files(R"([{"error":"503 overloaded"},{"text":"answer"}])"));
  const Json e = r.command(cmd("c0", "clone"));
  CHECK(e["success"] == false);
  CHECK(e["error"] == "Cannot clone session: no current entry selected");
  r.send(cmd("p", "prompt", {{"message", "hi"}}));
  r.read_until_type("auto_retry_end");
  const Json before = state(r);
  const Json stats = r.command(cmd("s1", "get_session_stats"))["data"];
  const auto src = file_lines(before["sessionFile"]);
  REQUIRE(src.size() == 6);  // header, two start entries, user, the failed attempt, the answer
  const Json c = r.command(cmd("c1", "clone"));
  CHECK(c["data"] == Json::parse(R"({"cancelled":false})"));
  const Json after = state(r);
  CHECK(after["messageCount"] == before["messageCount"]);
  CHECK(after["sessionId"] != before["sessionId"]);
  const Json stats2 = r.command(cmd("s2", "get_session_stats"))["data"];
  CHECK(stats2["assistantMessages"] == stats["assistantMessages"]);  // the failed attempt too
  const auto lines = file_lines(after["sessionFile"]);
  REQUIRE(lines.size() == 6);
  CHECK(lines[0]["parentSession"] == before["sessionFile"]);
  for (std::size_t i = 1; i < 6; ++i)
    CHECK(lines[i] == src[i]);
  // The rebuilt context leaves the retried error out, as a resume does.
  const Json messages = r.command(cmd("m", "get_messages"))["data"]["messages"];
  REQUIRE(messages.size() == 2);
  CHECK(messages[1]["content"][0]["text"] == "answer");
}

TEST_CASE("--no-session: fork and clone in memory, names work") {
  ReboundProcess r(args({"--no-session"}), {}, files(R"([{"text":"a"}])"));
  exchange(r, "p1", "q1");
  exchange(r, "p2", "q2");
  const Json before = state(r);
  CHECK_FALSE(before.contains("sessionFile"));
  CHECK(r.command(cmd("c", "clone"))["success"] == true);
  const Json cloned = state(r);
  CHECK(cloned["sessionId"] != before["sessionId"]);
  CHECK(cloned["messageCount"] == 4);
  const Json msgs = r.command(cmd("g", "get_fork_messages"))["data"]["messages"];
  REQUIRE(msgs.size() == 2);
  CHECK(r.command(cmd("f", "fork", {{"entryId", msgs[1]["entryId"]}}))["success"] == true);
  CHECK(state(r)["messageCount"] == 2);
  CHECK(r.command(cmd("n", "set_session_name", {{"name", "mem"}}))["success"] == true);
  CHECK(state(r)["sessionName"] == "mem");
  CHECK(r.dir().read("script-log.jsonl").size() > 0);
  CHECK_FALSE(fs::exists(r.dir().path() / "agent" / "sessions"));
}

TEST_CASE("fork during a streaming answer ends the run on the wire before the response") {
  ReboundProcess r(args({"--session-dir", "@DIR@/sessions"}), {},
                   files(R"([{"text":"one"},{"text":"never finished","hang":true}])"));
  exchange(r, "p1", "first");
  const std::string first =
      r.command(cmd("g", "get_fork_messages"))["data"]["messages"][0]["entryId"];
  r.send(cmd("p2", "prompt", {{"message", "second"}}));
  r.read_until_type("message_start");  // the user message
  r.send(cmd("f", "fork", {{"entryId", first}}));
  const auto lines = r.read_until_response("f");
  std::vector<std::string> seen;
  for (const auto& j : lines) {
    if (j["type"] == "message_end")
      seen.push_back("message_end:" + j["message"]["role"].get<std::string>());
    else if (j["type"] != "message_start" && j["type"] != "message_update")
      seen.push_back(j["type"]);
  }
  // The aborted answer's end, turn_end, agent_end, then the fork's response.
  REQUIRE(seen.size() >= 4);
  CHECK(seen[seen.size() - 4] == "message_end:assistant");
  CHECK(seen[seen.size() - 3] == "turn_end");
  CHECK(seen[seen.size() - 2] == "agent_end");
  CHECK(lines.back()["success"] == true);
  CHECK(state(r)["isStreaming"] == false);
  CHECK(state(r)["messageCount"] == 0);
}

TEST_CASE("clone during a retry backoff: auto_retry_end before the response, no retry request") {
  ReboundProcess r(args({"--session-dir", "@DIR@/sessions"}), {},
                   files(R"([{"text":"one"},{"error":"503 overloaded"},{"text":"late"}])",
                         R"({"retry":{"enabled":true,"maxRetries":3,"baseDelayMs":500}})"));
  exchange(r, "p1", "first");
  r.send(cmd("p2", "prompt", {{"message", "second"}}));
  r.read_until_type("auto_retry_start");
  r.send(cmd("c", "clone"));
  const auto lines = r.read_until_response("c");
  REQUIRE(lines.size() >= 2);
  const Json& end = lines[lines.size() - 2];
  CHECK(end["type"] == "auto_retry_end");
  CHECK(end["success"] == false);
  CHECK(end["finalError"] == "Retry cancelled");
  CHECK(lines.back()["success"] == true);
  // The clone holds the failed attempt; the retry is never sent.
  CHECK(state(r)["messageCount"] == 3);
  std::this_thread::sleep_for(1000ms);  // past the cancelled delay: nothing was sent
  CHECK(r.jsonl("script-log.jsonl").size() == 2);
}

TEST_CASE("set_session_name: errors, the event before the response, sessionName, the file") {
  ReboundProcess r(args({"--session-dir", "@DIR@/sessions"}), {}, files(R"([{"text":"a"}])"));
  CHECK(r.command(cmd("n0", "set_session_name", {{"name", " \t\u3000 "}}))["error"] ==
        "Session name cannot be empty");
  CHECK(r.command(cmd("n0", "set_session_name"))["error"] ==
        "Invalid field 'name': expected string");
  CHECK(r.command(cmd("n0", "set_session_name", {{"name", 7}}))["error"] ==
        "Invalid field 'name': expected string");
  CHECK_FALSE(state(r).contains("sessionName"));
  r.send(cmd("n1", "set_session_name", {{"name", "  Refactor auth\nmodule "}}));
  const Json ev = r.read_json();
  CHECK(ev == Json::parse(R"({"type":"session_info_changed","name":"Refactor auth\nmodule"})"));
  const Json resp = r.read_json();
  CHECK(
      resp ==
      Json::parse(R"({"id":"n1","type":"response","command":"set_session_name","success":true})"));
  // get_state: right after sessionId.
  const Json st = state(r);
  std::vector<std::string> keys;
  for (const auto& [k, v] : st.items())
    keys.push_back(k);
  const auto at = std::find(keys.begin(), keys.end(), "sessionName");
  REQUIRE(at != keys.end());
  CHECK(*(at - 1) == "sessionId");
  CHECK(*(at + 1) == "autoCompactionEnabled");
  CHECK(st["sessionName"] == "Refactor auth\nmodule");
  exchange(r, "p", "hi");
  const auto lines = file_lines(st["sessionFile"]);
  REQUIRE(lines.size() == 6);
  CHECK(lines[3]["type"] == "session_info");
  CHECK(lines[3]["name"] == "Refactor auth\nmodule");
  CHECK(lines[4]["parentId"] == lines[3]["id"]);  // the name sits in the chain
  // A clone carries the name; new_session drops it.
  CHECK(r.command(cmd("c", "clone"))["success"] == true);
  CHECK(state(r)["sessionName"] == "Refactor auth\nmodule");
  CHECK(r.command(cmd("ns", "new_session"))["success"] == true);
  CHECK_FALSE(state(r).contains("sessionName"));
}

TEST_CASE("--name names the start-up session without an event, blank or acp is exit 2") {
  ReboundProcess r(args({"--no-session", "--name", " nightly job "}), {},
                   files(R"([{"text":"a"}])"));
  r.send(cmd("s", "get_state"));
  const Json line = r.read_json();  // no session_info_changed before it
  CHECK(line["type"] == "response");
  CHECK(line["data"]["sessionName"] == "nightly job");

  ReboundProcess blank(args({"--no-session", "--name", "   "}));
  blank.expect_any_exit();
  CHECK(blank.proc().wait() == 2);
  CHECK(blank.proc().stderr_text().find("session name cannot be empty") != std::string::npos);
  ReboundProcess acp({"--mode", "acp", "--name", "x"});
  acp.expect_any_exit();
  CHECK(acp.proc().wait() == 2);
  CHECK(acp.proc().stderr_text().find("--name cannot be used with --mode acp") !=
        std::string::npos);
}

TEST_CASE("get_entries: every entry as stored, since, errors, before the file and after resume") {
  ReboundProcess r(args({"--session", "@DIR@/s.jsonl"}), {}, files(R"([{"text":"a"}])"));
  Json page = r.command(cmd("e0", "get_entries"))["data"];
  REQUIRE(page["entries"].size() == 2);  // the starting entries, in memory only
  CHECK(page["entries"][0]["type"] == "model_change");
  CHECK(page["leafId"] == page["entries"][1]["id"]);
  exchange(r, "p", "q");
  page = r.command(cmd("e1", "get_entries"))["data"];
  const auto lines = file_lines((r.dir().path() / "s.jsonl").string());
  REQUIRE(page["entries"].size() == lines.size() - 1);
  for (std::size_t i = 1; i < lines.size(); ++i)
    CHECK(page["entries"][i - 1].dump() == lines[i].dump());  // key order too
  const std::string user_id = lines[3]["id"];
  Json since = r.command(cmd("e2", "get_entries", {{"since", user_id}}))["data"];
  REQUIRE(since["entries"].size() == 1);
  CHECK(since["entries"][0]["id"] == lines[4]["id"]);
  CHECK(r.command(cmd("e3", "get_entries", {{"since", lines[4]["id"]}}))["data"]["entries"] ==
        Json::array());
  CHECK(r.command(cmd("e4", "get_entries", {{"since", "zzzz"}}))["error"] ==
        "Entry not found: zzzz");
  CHECK(r.command(cmd("e5", "get_entries", {{"since", 3}}))["error"] ==
        "Invalid field 'since': expected string");
  CHECK(r.command(cmd("t", "get_tree"))["error"] == "Unknown command: get_tree");
  r.proc().close_stdin();
  REQUIRE(r.proc().wait() == 0);

  // A resumed file's entries are read back from it, then the new ones follow.
  ReboundProcess again(args({"--session", (r.dir().path() / "s.jsonl").string()}), {},
                       files(R"([{"text":"b"}])"));
  Json resumed = again.command(cmd("e6", "get_entries"))["data"];
  REQUIRE(resumed["entries"].size() == lines.size() - 1);
  for (std::size_t i = 1; i < lines.size(); ++i)
    CHECK(resumed["entries"][i - 1].dump() == lines[i].dump());
  exchange(again, "p2", "more");
  resumed = again.command(cmd("e7", "get_entries", {{"since", lines.back()["id"]}}))["data"];
  REQUIRE(resumed["entries"].size() == 2);
  CHECK(resumed["entries"][0]["parentId"] == lines.back()["id"]);
  CHECK(resumed["leafId"] == resumed["entries"][1]["id"]);
}

TEST_CASE("a branched file opened with switch_session: the active path, every entry listed") {
  ReboundProcess r(args({"--session-dir", "@DIR@/sessions"}), {}, files(R"([{"text":"next"}])"));
  // root user u1 → a1; a branch u2 under a1 → a2; then the leaf u3 under a1 again → a3.
  const std::string m =
      R"("provider":"scripted","model":"echo","api":"scripted","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":1)";
  auto user = [](const std::string& id, const std::string& parent, const std::string& text) {
    return R"({"type":"message","id":")" + id + R"(","parentId":)" + parent +
           R"(,"timestamp":"2026-12-01T08:00:00.000Z","message":{"role":"user","content":[{"type":"text","text":")" +
           text + R"("}],"timestamp":1}})";
  };
  auto answer = [&m](const std::string& id, const std::string& parent, const std::string& text) {
    return R"({"type":"message","id":")" + id + R"(","parentId":")" + parent +
           R"(","timestamp":"2026-12-01T08:00:00.000Z","message":{"role":"assistant","content":[{"type":"text","text":")" +
           text + R"("}],)" + m + "}}";
  };
  const std::string text =
      R"({"type":"session","version":3,"id":"branchy","timestamp":"2026-12-01T08:00:00.000Z","cwd":"/tmp"})"
      "\n" +
      user("00000001", "null", "u1") + "\n" + answer("00000002", "00000001", "a1") + "\n" +
      user("00000003", "\"00000002\"", "u2") + "\n" + answer("00000004", "00000003", "a2") + "\n" +
      user("00000005", "\"00000002\"", "u3") + "\n" + answer("00000006", "00000005", "a3") + "\n";
  r.dir().write("branchy.jsonl", text);
  const std::string path = (r.dir().path() / "branchy.jsonl").string();
  CHECK(r.command(cmd("sw", "switch_session", {{"sessionPath", path}}))["success"] == true);
  const Json listed = r.command(cmd("g", "get_fork_messages"))["data"]["messages"];
  CHECK(listed ==
        Json::parse(R"([{"entryId":"00000001","text":"u1"},{"entryId":"00000005","text":"u3"}])"));
  const Json all = r.command(cmd("e", "get_entries"))["data"];
  CHECK(all["entries"].size() == 6);
  CHECK(all["leafId"] == "00000006");
  CHECK(state(r)["messageCount"] == 4);
  // A clone copies the active path only; a fork from the branch's u2 copies u1 and a1.
  CHECK(r.command(cmd("c", "clone"))["success"] == true);
  const Json cloned = r.command(cmd("e2", "get_entries"))["data"]["entries"];
  std::vector<std::string> ids;
  for (const auto& e : cloned)
    if (e["type"] == "message") ids.push_back(e["id"]);
  CHECK(ids == std::vector<std::string>{"00000001", "00000002", "00000005", "00000006"});
  CHECK(r.command(cmd("sw2", "switch_session", {{"sessionPath", path}}))["success"] == true);
  CHECK(r.command(cmd("f", "fork", {{"entryId", "00000003"}}))["data"]["text"] == "u2");
  CHECK(state(r)["messageCount"] == 2);
}

TEST_CASE("queue_update: queued before the response, delivered before message_start, dropped") {
  ReboundProcess r(
      args({"--no-session"}), {},
      files(
          R"([{"text":"slow answer","chunks":4,"chunkDelayMs":150},{"text":"held","hang":true},{"text":"z"}])"));
  r.send(cmd("p", "prompt", {{"message", "start"}}));
  r.read_until_type("message_update");
  r.send(cmd("s1", "steer", {{"message", "steer one"}}));
  auto lines = r.read_until_response("s1");
  REQUIRE(lines.size() >= 2);
  CHECK(lines[lines.size() - 2] ==
        Json::parse(R"({"type":"queue_update","steering":["steer one"],"followUp":[]})"));
  r.send(cmd("f1", "follow_up", {{"message", "follow one"}}));
  lines = r.read_until_response("f1");
  CHECK(
      lines[lines.size() - 2] ==
      Json::parse(R"({"type":"queue_update","steering":["steer one"],"followUp":["follow one"]})"));
  CHECK(state(r)["queuedMessageCount"] == 2);
  // Delivery: the remaining state right before the steered message's message_start.
  lines = r.read_until(
      [](const Json& j) { return j["type"] == "message_start" && j["message"]["role"] == "user"; });
  REQUIRE(lines.size() >= 2);
  CHECK(lines[lines.size() - 2] ==
        Json::parse(R"({"type":"queue_update","steering":[],"followUp":["follow one"]})"));
  CHECK(lines.back()["message"]["content"][0]["text"] == "steer one");
  // Abort with a queued follow-up: the run's end, then the empty update, then the response.
  r.send(cmd("a", "abort"));
  lines = r.read_until_response("a");
  REQUIRE(lines.size() >= 3);
  CHECK(lines[lines.size() - 3]["type"] == "agent_end");
  CHECK(lines[lines.size() - 2] ==
        Json::parse(R"({"type":"queue_update","steering":[],"followUp":[]})"));
  CHECK(state(r)["queuedMessageCount"] == 0);
  // An idle steer starts a run and writes no queue_update.
  r.send(cmd("s2", "steer", {{"message", "now"}}));
  const Json first = r.read_json();
  CHECK(first["type"] == "response");
  r.read_until_type("agent_end");
}

TEST_CASE("export_html: errors, the default path, a relative path in new folders, replaced") {
  ReboundProcess r(
      args({"--session-dir", "@DIR@/sessions"}), {},
      files(R"([{"error":"503 overloaded"},{"text":"Done. <script>x()</script> **bold**"}])"));
  CHECK(r.command(cmd("x0", "export_html"))["error"] ==
        "Nothing to export yet - start a conversation first");
  CHECK(r.command(cmd("x0", "export_html", {{"outputPath", 5}}))["error"] ==
        "Invalid field 'outputPath': expected string");
  r.send(cmd("p", "prompt", {{"message", "<b>hi</b>"}}));
  r.read_until_type("auto_retry_end");
  const Json st = state(r);
  const std::string cwd = r.dir().path().string();
  const Json x1 = r.command(cmd("x1", "export_html"));
  const std::string stem = fs::path(st["sessionFile"].get<std::string>()).stem().string();
  CHECK(x1["data"]["path"] == cwd + "/rebound-session-" + stem + ".html");
  const std::string page = r.dir().read("rebound-session-" + stem + ".html");
  CHECK(page.starts_with("<!DOCTYPE html>\n<html lang=\"en\">"));
  CHECK(page.find("<title>Rebound session " + st["sessionId"].get<std::string>() + "</title>") !=
        std::string::npos);
  CHECK(page.find("<script") == std::string::npos);
  CHECK(page.find("<div class=\"text\">&lt;b&gt;hi&lt;/b&gt;</div>") != std::string::npos);
  CHECK(page.find("Done. &lt;script&gt;x()&lt;/script&gt; <strong>bold</strong>") !=
        std::string::npos);
  CHECK(page.find("<section class=\"msg assistant retried\"") != std::string::npos);
  CHECK(page.find("<div class=\"status\">Attempt failed, retried: 503 overloaded</div>") !=
        std::string::npos);
  CHECK(page.find("<dt>Retried attempts</dt><dd>1</dd>") != std::string::npos);
  // A relative path in folders that do not exist yet; a second export replaces the file.
  const Json x2 = r.command(cmd("x2", "export_html", {{"outputPath", "a/b/page.html"}}));
  CHECK(x2["data"]["path"] == cwd + "/a/b/page.html");
  CHECK(r.command(cmd("n", "set_session_name", {{"name", "Named <now>"}}))["success"] == true);
  CHECK(r.command(cmd("x3", "export_html", {{"outputPath", cwd + "/a/b/page.html"}}))["success"] ==
        true);
  CHECK(r.dir().read("a/b/page.html").find("<title>Named &lt;now&gt;</title>") !=
        std::string::npos);
  // A folder that cannot be made: the tools' error style, nothing changed.
  r.dir().write("plain", "x");
  CHECK(r.command(cmd("x4", "export_html", {{"outputPath", "plain/page.html"}}))["error"] ==
        "ENOTDIR: not a directory, open '" + cwd + "/plain/page.html'");
  CHECK(r.command(cmd("x5", "export_html", {{"outputPath", "a/b"}}))["error"] ==
        "EISDIR: illegal operation on a directory, open '" + cwd + "/a/b'");
}

TEST_CASE("export_html with --no-session works from memory and names the session id") {
  ReboundProcess r(args({"--no-session"}), {}, files(R"([{"text":"a"}])"));
  exchange(r, "p", "q");
  const std::string id = state(r)["sessionId"];
  const Json x = r.command(cmd("x", "export_html"));
  CHECK(x["data"]["path"] == r.dir().path().string() + "/rebound-session-" + id + ".html");
  CHECK(r.dir().read("rebound-session-" + id + ".html").find("<dd>(in memory)</dd>") !=
        std::string::npos);
}

TEST_CASE("the follow-up queue holds at most 100 messages: the 101st is refused, the run goes on") {
  ReboundProcess r = testing::tool_server(R"([{"text":"slow","delayMs":30000},{"text":"next"}])");
  r.send(testing::prompt());
  r.read_until_type("agent_start");
  for (int i = 0; i <= 100; ++i)
    r.send(Json{{"id", "f" + std::to_string(i)},
                {"type", "follow_up"},
                {"message", "queued " + std::to_string(i)}});
  const auto lines = r.read_until_response("f100");
  std::size_t updates = 0, largest = 0;
  for (const auto& l : lines) {
    if (l.value("type", "") != "queue_update") continue;
    ++updates;
    largest = std::max(largest, l["followUp"].size());
  }
  CHECK(updates == 100);
  CHECK(largest == 100);
  const Json refused = lines.back();
  CHECK(refused["success"] == false);
  CHECK(refused["error"] == "Queue is full: at most 100 messages and 4 MiB of text may wait");
  const Json state = r.command(Json{{"id", "s"}, {"type", "get_state"}})["data"];
  CHECK(state["queuedMessageCount"] == 100);
  CHECK(state["isStreaming"] == true);
  r.command(Json{{"id", "a"}, {"type", "abort"}});
}

TEST_CASE("a call left running by a crash gets an unknown outcome when switch_session loads it") {
  // runtime.md section 8 (A7, A8): the first server is killed with SIGKILL while its bash call
  // runs; a second one switches to the file. The event comes before the response, the result
  // entry is on the file, and nothing is run again.
  testing::TempDir dir;
  const std::string file = (dir.path() / "crashed.jsonl").string();
  const std::string marker = (dir.path() / "ran").string();
  {
    ReboundProcess first(
        testing::scripted_args({"--session", file}), {},
        {{"agent/settings.json", "{}"},
         {"script.json", testing::script_of(Json::array({testing::call(
                             "bash", {{"command", "echo x >> " + marker + "; sleep 30"}})}))}});
    first.send(testing::prompt());
    first.read_until_type("tool_execution_start", 20000ms);
    for (int i = 0; i < 1000 && !fs::exists(marker); ++i)
      std::this_thread::sleep_for(10ms);  // the command has begun
    first.proc().send_signal(SIGKILL);
    first.expect_any_exit();
    first.proc().wait(10000ms);
  }
  ReboundProcess second(testing::scripted_args({"--no-session"}), {},
                        {{"agent/settings.json", "{}"}, {"script.json", R"([{"text":"x"}])"}});
  second.send(Json{{"id", "w"}, {"type", "switch_session"}, {"sessionPath", file}});
  const auto lines = second.read_until_response("w", 20000ms);
  REQUIRE(lines.size() >= 2);
  const Json& event = lines[lines.size() - 2];
  CHECK(event["type"] == "tool_outcome_unknown");
  CHECK(event["toolCallId"] == "call_1");
  CHECK(event["toolName"] == "bash");
  CHECK(event["startedAt"].get<std::int64_t>() > 0);
  CHECK(lines.back()["success"] == true);
  const Json messages =
      second.command(Json{{"id", "m"}, {"type", "get_messages"}})["data"]["messages"];
  const Json& last = messages.back();
  CHECK(last["role"] == "toolResult");
  CHECK(last["toolCallId"] == "call_1");
  CHECK(last["isError"] == true);
  CHECK(last["details"] == Json{{"outcome", "unknown"}});
  CHECK(last["content"][0]["text"].get<std::string>().starts_with(
      "Outcome unknown: Rebound stopped while this call was running (started 20"));
  std::ifstream ran(marker);
  std::string all((std::istreambuf_iterator<char>(ran)), {});
  CHECK(all == "x\n");  // the command ran once, before the crash, and never again
  // A second switch reports nothing: the entry is on the file.
  second.send(Json{{"id", "w2"}, {"type", "switch_session"}, {"sessionPath", file}});
  const auto again = second.read_until_response("w2", 20000ms);
  CHECK(again.size() == 1);
}
