// One-shot mode on the real binary (oneshot.md): the three formats, the prompt from PROMPT and
// stdin, the result object's keys, the exit codes of a finished run, a provider failure, a retry
// chain that gives up, the turn limit, the deadline and a signal (the result always written),
// the heartbeat, refused calls (exit 9), and the bad command lines (exit 2, nothing on stdout).

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <doctest/doctest.h>
#include <signal.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/fake_llm_server.h"
#include "tests/support/proc_status.h"
#include "tests/support/rebound_process.h"
#include "tests/support/scripted_tools.h"

using namespace rebound;
using namespace rebound::testing;
using namespace std::chrono_literals;
using protocol::Json;

namespace {

// A one-shot run of `script` with `args`, stdin from <dir>/stdin.txt (`input`, empty: /dev/null).
struct Run {
  Run(const std::string& script, std::vector<std::string> args, const std::string& input = "",
      const std::string& settings = "{}", const std::string& cwd = "@DIR@/work")
      : r(with_script(std::move(args)), options(input, cwd),
          {{"agent/settings.json", settings},
           {"script.json", script},
           {"stdin.txt", input},
           {"work/.keep", ""}}) {
    r.expect_any_exit();
  }
  // Sessions are kept when the test names where (--session-dir) or which (--resume).
  static std::vector<std::string> with_script(std::vector<std::string> args) {
    const bool keep = std::find_if(args.begin(), args.end(), [](const std::string& a) {
                        return a == "--session-dir" || a == "--resume";
                      }) != args.end();
    std::vector<std::string> all =
        scripted_args(keep ? std::vector<std::string>{} : std::vector<std::string>{"--no-session"});
    all.insert(all.end(), args.begin(), args.end());
    return all;
  }
  static SubprocessOptions options(const std::string& input, const std::string& cwd) {
    SubprocessOptions o;
    o.cwd = cwd;
    o.stdin_file = input.empty() ? "/dev/null" : "@DIR@/stdin.txt";
    return o;
  }
  std::vector<std::string> lines(std::chrono::milliseconds timeout = 10000ms) {
    return r.proc().read_all_lines(timeout);
  }
  int exit_code() {
    const auto status = r.proc().wait(10000ms);
    REQUIRE(status.has_value());
    return *status;
  }
  Json script_request(std::size_t i) {
    std::ifstream in(r.dir().path() / "script-log.jsonl");
    std::string line;
    for (std::size_t n = 0; std::getline(in, line); ++n)
      if (n == i) return Json::parse(line);
    return Json();
  }
  ReboundProcess r;
};

Json last_json(const std::vector<std::string>& lines) {
  REQUIRE(!lines.empty());
  return Json::parse(lines.back());
}

}  // namespace

TEST_CASE(
    "one-shot: text writes the answer and a LF, json one result line with its keys in order") {
  {
    Run run(R"([{"text":"Hello there"}])", {"-p", "Say hello"});
    CHECK(run.lines() == std::vector<std::string>{"Hello there"});
    CHECK(run.exit_code() == 0);
  }
  Run run(R"([{"text":"Hello there","usage":{"input":12,"output":5}}])",
          {"-p", "Say hello", "--output-format", "json"});
  const auto lines = run.lines();
  REQUIRE(lines.size() == 1);
  const Json result = Json::parse(lines[0]);
  std::vector<std::string> keys;
  for (const auto& [k, v] : result.items())
    keys.push_back(k);
  CHECK(keys == std::vector<std::string>{"type", "subtype", "is_error", "duration_ms",
                                         "duration_api_ms", "num_turns", "result", "session_id",
                                         "total_cost_usd", "usage", "permission_denials",
                                         "terminal_reason", "retries", "compactions", "model"});
  CHECK(result["subtype"] == "success");
  CHECK(result["result"] == "Hello there");
  CHECK(result["num_turns"] == 1);
  CHECK(result["usage"] == Json::parse(R"({"input_tokens":12,"cache_creation_input_tokens":0,)"
                                       R"("cache_read_input_tokens":0,"output_tokens":5})"));
  CHECK(result["terminal_reason"] == "completed");
  CHECK(run.exit_code() == 0);
}

TEST_CASE("one-shot: stream-json is the header, the rpc events, then the result as the last line") {
  Run run(R"([{"text":"Hello there"}])", {"-p", "Say hello", "--output-format", "stream-json"});
  const auto lines = run.lines();
  REQUIRE(lines.size() > 3);
  const Json header = Json::parse(lines.front());
  CHECK(header["type"] == "session");
  CHECK(header["version"] == 3);
  CHECK(header["cwd"] == (run.r.dir().path() / "work").string());
  std::vector<std::string> types;
  for (std::size_t i = 1; i < lines.size(); ++i)
    types.push_back(Json::parse(lines[i])["type"].get<std::string>());
  CHECK(types.front() == "agent_start");
  CHECK(types[types.size() - 2] == "agent_end");
  CHECK(types.back() == "result");
  CHECK(last_json(lines)["session_id"] == header["id"]);
  CHECK(run.exit_code() == 0);
}

TEST_CASE("one-shot: the prompt is PROMPT, a LF and stdin, or stdin alone, and neither is exit 2") {
  {
    Run run(R"([{"text":"ok"}])", {"-p", "summarise"}, "line one\nline two\n");
    CHECK(run.lines() == std::vector<std::string>{"ok"});
    CHECK(run.exit_code() == 0);
    const Json request = run.script_request(0);
    CHECK(request["messages"].back()["content"][0]["text"] == "summarise\nline one\nline two\n");
  }
  {
    Run run(R"([{"text":"ok"}])", {"-p"}, "only stdin");
    CHECK(run.lines() == std::vector<std::string>{"ok"});
    CHECK(run.script_request(0)["messages"].back()["content"][0]["text"] == "only stdin");
  }
  Run run(R"([{"text":"never"}])", {"-p", "--output-format", "json"}, " \n\t");
  const Json result = last_json(run.lines());
  CHECK(result["subtype"] == "error_during_execution");
  CHECK(result["terminal_reason"] == "invalid_input");
  CHECK(result["errors"] == Json::array({"No prompt: give PROMPT or pipe text on stdin"}));
  CHECK(run.exit_code() == 2);
}

TEST_CASE("one-shot: no prompt and a terminal on stdin is a bad command line, nothing on stdout") {
  // oneshot.md section 2 (issue 50: the run also wrote a result line).
  const int master = ::posix_openpt(O_RDWR | O_NOCTTY);
  REQUIRE(master >= 0);
  REQUIRE(::grantpt(master) == 0);
  REQUIRE(::unlockpt(master) == 0);
  const std::string terminal = ::ptsname(master);
  for (const char* format : {"text", "json", "stream-json"}) {
    CAPTURE(format);
    SubprocessOptions o;
    o.cwd = "@DIR@/work";
    o.stdin_file = terminal;
    ReboundProcess r(scripted_args({"--no-session", "-p", "--output-format", format}), o,
                     {{"agent/settings.json", "{}"},
                      {"script.json", R"([{"text":"never"}])"},
                      {"work/.keep", ""}});
    r.expect_any_exit();
    CHECK(r.proc().read_all_lines(10000ms).empty());
    CHECK(r.proc().wait(10000ms) == 2);
    CHECK(r.proc().stderr_text().find("rebound: No prompt: give PROMPT or pipe text on stdin") !=
          std::string::npos);
  }
  ::close(master);
}

TEST_CASE("one-shot: exit 3 for a refused request, 4 when the retries give up, 6 for an overflow") {
  {
    Run run(R"([{"error":"401 Incorrect API key provided"}])", {"-p", "hi"});
    CHECK(run.lines().empty());
    CHECK(run.exit_code() == 3);
    CHECK(run.r.proc().stderr_text().find("rebound: 401 Incorrect API key provided") !=
          std::string::npos);
  }
  {
    Run run(R"([{"error":"401 Incorrect API key provided"}])",
            {"-p", "hi", "--output-format", "json"});
    const Json result = last_json(run.lines());
    CHECK(result["errorClass"] == "auth");
    CHECK(result["api_error_status"] == 401);
    CHECK(result["terminal_reason"] == "api_error");
    CHECK(run.exit_code() == 3);
  }
  {
    Run run(R"([{"error":"503 overloaded"},{"error":"503 overloaded"}])",
            {"-p", "hi", "--output-format", "json"}, "",
            R"({"retry":{"maxRetries":1,"baseDelayMs":10}})");
    const Json result = last_json(run.lines());
    CHECK(result["terminal_reason"] == "retries_exhausted");
    CHECK(result["errors"] == Json::array({"503 overloaded"}));
    CHECK(result["errorClass"] == "overloaded");
    CHECK(result["api_error_status"] == 503);
    REQUIRE(result["retries"].size() == 1);
    CHECK(result["retries"][0] ==
          Json::parse(R"({"attempt":1,"delayMs":10,"errorMessage":"503 overloaded",)"
                      R"("errorClass":"overloaded","httpStatus":503,"delaySource":"backoff"})"));
    // The retried attempt is not a turn; the final failure is.
    CHECK(result["num_turns"] == 1);
    CHECK(run.exit_code() == 4);
  }
  Run run(R"([{"error":"400 This model's maximum context length is 128000 tokens"}])",
          {"-p", "hi", "--output-format", "json"}, "", R"({"compaction":{"enabled":false}})");
  const Json result = last_json(run.lines());
  CHECK(result["terminal_reason"] == "context_overflow");
  CHECK(result["errorClass"] == "context_overflow");
  CHECK(run.exit_code() == 6);
}

TEST_CASE("one-shot: --max-turns stops where going on would need another response") {
  Run run(R"([{"toolCalls":[{"name":"bash","arguments":{"command":"touch ran.txt"}}]},)"
          R"({"text":"never asked"}])",
          {"-p", "go", "--max-turns", "1", "--output-format", "stream-json"});
  const auto lines = run.lines();
  const Json result = last_json(lines);
  CHECK(result["subtype"] == "error_max_turns");
  CHECK(result["errors"] == Json::array({"Reached maximum number of turns (1)"}));
  CHECK(result["num_turns"] == 1);
  bool not_run = false;
  for (const auto& l : lines) {
    const Json j = Json::parse(l);
    if (j["type"] == "tool_execution_end")
      not_run = j["result"]["content"][0]["text"] == "Not run: the run reached --max-turns 1.";
  }
  CHECK(not_run);
  CHECK(!std::filesystem::exists(run.r.dir().path() / "work" / "ran.txt"));
  CHECK(run.script_request(1).is_null());  // no second request
  CHECK(run.exit_code() == 7);
}

TEST_CASE(
    "one-shot: the deadline and SIGTERM end a retry backoff with the result, heartbeats "
    "meanwhile") {
  {
    // A 300 ms backoff, then the retried request hangs until the deadline cuts the chain.
    Run run(
        R"([{"error":"429 rate limited"},{"hang":true}])",
        {"-p", "hi", "--timeout", "0.8", "--heartbeat-ms", "100", "--output-format", "stream-json"},
        "", R"({"retry":{"baseDelayMs":300}})");
    const auto lines = run.lines();
    const Json result = last_json(lines);
    CHECK(result["subtype"] == "error_timeout");
    CHECK(result["errors"] == Json::array({"Reached the time limit (0.8 s)"}));
    CHECK(result["errorClass"] == "rate_limit");
    CHECK(result["duration_ms"].get<std::int64_t>() < 1800);
    bool retry_end_before = false, backoff_beat = false;
    for (std::size_t i = 0; i + 1 < lines.size(); ++i) {
      const Json j = Json::parse(lines[i]);
      if (j["type"] == "auto_retry_end") retry_end_before = j["finalError"] == "Retry cancelled";
      if (j["type"] == "heartbeat" && j["waiting"] == "backoff") {
        backoff_beat = true;
        CHECK(j["errorClass"] == "rate_limit");
        CHECK(j["deadlineInMs"].get<std::int64_t>() <= 800);
      }
    }
    CHECK(retry_end_before);
    CHECK(backoff_beat);
    CHECK(run.exit_code() == 7);
  }
  Run run(R"([{"error":"503 overloaded"},{"text":"never"}])",
          {"-p", "hi", "--output-format", "json"}, "", R"({"retry":{"baseDelayMs":60000}})");
  // Wait until the backoff runs (the script log has the first request), then SIGTERM.
  for (int i = 0; i < 200 && run.script_request(0).is_null(); ++i)
    std::this_thread::sleep_for(10ms);
  std::this_thread::sleep_for(50ms);
  run.r.proc().send_signal(SIGTERM);
  const Json result = last_json(run.lines());
  CHECK(result["subtype"] == "error_interrupted");
  CHECK(result["errors"] == Json::array({"Interrupted by SIGTERM"}));
  CHECK(run.exit_code() == 143);
}

TEST_CASE("one-shot: a refused call is a permission denial, and the finished run exits 9") {
  Run run(R"([{"toolCalls":[{"name":"bash","arguments":{"command":"rm -rf x"}}]},{"text":"done"}])",
          {"-p", "go", "--output-format", "json", "--disallowed-tools", "Bash(rm:*)"});
  const Json result = last_json(run.lines());
  CHECK(result["subtype"] == "success");
  REQUIRE(result["permission_denials"].size() == 1);
  CHECK(result["permission_denials"][0]["tool_name"] == "bash");
  CHECK(result["permission_denials"][0]["tool_input"] == Json{{"command", "rm -rf x"}});
  CHECK(result["permission_denials"][0]["message"] ==
        "Permission to use bash with command rm -rf x has been denied.");
  CHECK(run.exit_code() == 9);
  CHECK(run.r.proc().stderr_text().find("rebound: 1 tool call(s) refused") != std::string::npos);
}

TEST_CASE("one-shot: bad command lines exit 2 with nothing on stdout") {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases{
      {{"-p", "one", "two"},
       "rebound: unexpected argument 'two': the prompt is one argument (quote it)"},
      {{"--max-turns", "3"}, "rebound: --max-turns needs -p"},
      {{"-p", "x", "--mode", "rpc"}, "rebound: -p cannot be used with --mode rpc"},
      {{"--mode", "json", "--output-format", "text"}, "rebound: --mode json writes stream-json"},
      {{"-p", "x", "--timeout", "0"}, "rebound: --timeout: expected seconds"},
      {{"-p", "x", "--envelope", "pi"}, "rebound: -p cannot be used with --envelope"},
  };
  for (const auto& [args, message] : cases) {
    CAPTURE(message);
    Run run(R"([{"text":"never"}])", args);
    CHECK(run.lines().empty());
    CHECK(run.exit_code() == 2);
    CHECK(run.r.proc().stderr_text().find(message) != std::string::npos);
  }
}

TEST_CASE("one-shot: a question nobody can answer is refused with the policy's text (exit 9)") {
  // policy.md section 6.3: prompts are always none in a one-shot run, whatever the flag says.
  Run run(R"([{"toolCalls":[{"name":"bash","arguments":{"command":"touch asked.txt"}}]},)"
          R"({"text":"done"}])",
          {"-p", "go", "--output-format", "json", "--permission-mode", "default",
           "--permission-prompts", "client"});
  const Json result = last_json(run.lines());
  CHECK(result["subtype"] == "success");
  CHECK(result["result"] == "done");
  REQUIRE(result["permission_denials"].size() == 1);
  CHECK(result["permission_denials"][0]["message"] == "This command requires approval");
  CHECK(!std::filesystem::exists(run.r.dir().path() / "work" / "asked.txt"));
  CHECK(run.exit_code() == 9);
}

TEST_CASE("one-shot: --continue appends to the cwd's latest session, --resume to a named file") {
  TempDir shared;
  const std::string dir = shared.path().string();
  std::filesystem::create_directories(shared.path() / "proj");
  const std::string cwd = dir + "/proj";
  const std::vector<std::string> keep{"--session-dir", dir + "/sessions", "--output-format",
                                      "json"};
  auto with = [&keep](std::vector<std::string> args) {
    args.insert(args.end(), keep.begin(), keep.end());
    return args;
  };
  Json first;
  {
    // Nothing to continue yet: a new session, and one stderr line says so.
    Run run(R"([{"text":"noted: blue"}])", with({"-p", "remember blue", "--continue"}), "", "{}",
            cwd);
    first = last_json(run.lines());
    CHECK(run.exit_code() == 0);
    CHECK(run.r.proc().stderr_text().find("rebound: no session to continue in " + dir +
                                          "/sessions; starting a new one") != std::string::npos);
  }
  REQUIRE(first.contains("sessionFile"));
  {
    Run run(R"([{"text":"blue"}])", with({"-p", "which colour?", "--continue"}), "", "{}", cwd);
    const Json second = last_json(run.lines());
    CHECK(second["session_id"] == first["session_id"]);
    CHECK(second["sessionFile"] == first["sessionFile"]);
    CHECK(second["num_turns"] == 1);  // this run's only
    // The request held the earlier conversation, then the new message.
    const Json request = run.script_request(0);
    REQUIRE(request["messages"].size() == 3);
    CHECK(request["messages"][0]["content"][0]["text"] == "remember blue");
    CHECK(run.exit_code() == 0);
  }
  {
    Run run(R"([{"text":"still blue"}])",
            {"-p", "again", "--resume", first["sessionFile"].get<std::string>(), "--output-format",
             "json"});
    const Json third = last_json(run.lines());
    CHECK(third["session_id"] == first["session_id"]);
    CHECK(run.script_request(0)["messages"].size() == 5);
    CHECK(run.exit_code() == 0);
  }
  Run missing(R"([{"text":"never"}])", {"-p", "x", "--resume", dir + "/nope.jsonl"});
  CHECK(missing.lines().empty());
  CHECK(missing.exit_code() == 2);
  CHECK(missing.r.proc().stderr_text().find("rebound: --resume: no such file: " + dir +
                                            "/nope.jsonl") != std::string::npos);
}

TEST_CASE("one-shot: a backoff that could only end after the deadline is not started") {
  // retry.md section 14 step 6 with the run's deadline: no sleep, reason deadline, exit 7.
  Run run(R"([{"error":"429 rate limited"},{"text":"never"}])",
          {"-p", "hi", "--timeout", "3", "--output-format", "stream-json"}, "",
          R"({"retry":{"baseDelayMs":60000}})");
  const auto lines = run.lines();
  const Json result = last_json(lines);
  CHECK(result["subtype"] == "error_timeout");
  CHECK(result["errorClass"] == "rate_limit");
  CHECK(result["duration_ms"].get<std::int64_t>() < 1000);  // at once, not at the deadline
  const Json retry_end = Json::parse(lines[lines.size() - 2]);
  CHECK(retry_end["type"] == "auto_retry_end");
  CHECK(retry_end["reason"] == "deadline");
  CHECK(retry_end["success"] == false);
  CHECK(run.exit_code() == 7);
}

TEST_CASE("one-shot: an extension's dialog resolves to its default, and its block is a denial") {
  // extensions.md section 6.4: nobody answers ui/confirm in a one-shot run (ui "none"); the
  // fixture then blocks the call, which counts as a refused call (oneshot.md section 15).
  const std::string fixture =
      std::string(REBOUND_SOURCE_DIR) + "/tests/extensions/fixtures/ext_fixture.py";
  Run run(R"([{"toolCalls":[{"name":"bash","arguments":{"command":"touch ran.txt"}}]},)"
          R"({"text":"done"}])",
          {"-p", "go", "--output-format", "json"}, "",
          R"({"extensions":{"guard":{"command":"python3","args":[")" + fixture +
              R"("],"env":{"EXT_MODE":"confirm"}}}})");
  const Json result = last_json(run.lines());
  CHECK(result["subtype"] == "success");
  REQUIRE(result["permission_denials"].size() == 1);
  CHECK(result["permission_denials"][0]["message"] == "the user said no");
  CHECK(!std::filesystem::exists(run.r.dir().path() / "work" / "ran.txt"));
  CHECK(run.exit_code() == 9);
}

TEST_CASE("one-shot: a stdout its reader closed stops the run with exit 141 and no result") {
  Run run(R"([{"text":"partial","hang":true}])",
          {"-p", "hi", "--output-format", "stream-json", "--heartbeat-ms", "100"});
  const auto header = run.r.proc().read_line(5000ms);
  REQUIRE(header.has_value());
  CHECK(Json::parse(*header)["type"] == "session");
  // The next write (a heartbeat at the latest) fails with EPIPE: the run stops (oneshot.md
  // section 8).
  run.r.proc().close_stdout();
  CHECK(run.exit_code() == 141);
}

namespace {

// The heartbeats among a stream-json run's lines whose `waiting` is `kind`.
std::vector<Json> beats_of(const std::vector<std::string>& lines, const std::string& kind) {
  std::vector<Json> out;
  for (const auto& l : lines) {
    const Json j = Json::parse(l);
    if (j["type"] == "heartbeat" && j["waiting"] == kind) out.push_back(j);
  }
  return out;
}

const char* kOneBash = R"([{"toolCalls":[{"name":"bash","arguments":{"command":"true"}}]},)"
                       R"({"text":"done"}])";

}  // namespace

TEST_CASE(
    "one-shot: heartbeats name a running hook, a pending interceptor, MCP servers, a "
    "compaction") {
  const std::vector<std::string> beat{
      "-p", "go", "--output-format", "stream-json", "--heartbeat-ms", "100"};
  {
    // A PreToolUse hook that takes 700 ms: the run waits for it.
    Run run(kOneBash, beat, "",
            R"({"hooks":{"PreToolUse":[{"hooks":[{"type":"command","command":"sleep 0.7"}]}]}})");
    const auto beats = beats_of(run.lines(), "hook");
    REQUIRE(beats.size() >= 3);
    std::vector<std::string> keys;
    for (const auto& [k, v] : beats.back().items())
      keys.push_back(k);
    CHECK(keys ==
          std::vector<std::string>{"type", "seq", "elapsedMs", "waiting", "sinceMs", "hook"});
    CHECK(beats.back()["hook"] == "PreToolUse");
    CHECK(beats.back()["sinceMs"].get<std::int64_t>() >=
          beats.front()["sinceMs"].get<std::int64_t>());
    CHECK(run.exit_code() == 0);
  }
  {
    // An interceptor that never answers (its timeout, also its start-up bound, is long enough
    // for a loaded machine): the 2 s deadline ends the run while it is pending.
    const std::string fixture =
        std::string(REBOUND_SOURCE_DIR) + "/tests/extensions/fixtures/ext_fixture.py";
    std::vector<std::string> args = beat;
    args.insert(args.end(), {"--timeout", "2"});
    Run run(kOneBash, args, "",
            R"({"extensions":{"guard":{"command":"python3","timeoutMs":20000,"args":[")" + fixture +
                R"("],"env":{"EXT_MODE":"hang"}}}})");
    const auto lines = run.lines();
    const auto beats = beats_of(lines, "extension");
    REQUIRE(beats.size() >= 3);
    CHECK(beats.back()["extension"] == "guard");
    CHECK(beats.back()["toolCallId"] == "call_1");
    CHECK(beats.back()["toolName"] == "bash");
    CHECK(run.exit_code() == 7);
  }
  {
    // A server that never answers initialize: the first request waits for it (700 ms).
    Run run(R"([{"text":"done"}])", beat, "",
            R"({"mcpServers":{"slow":{"command":"sleep","args":["30"],"startupTimeoutMs":700}}})");
    const auto beats = beats_of(run.lines(), "mcp");
    REQUIRE(beats.size() >= 3);
    CHECK(beats.back()["servers"] == Json::array({"slow"}));
    CHECK(run.exit_code() == 0);
  }
  // An overflow: the compaction's summary request takes 700 ms.
  Run run(R"([{"toolCalls":[{"name":"bash","arguments":{"command":"true"}}]},)"
          R"({"error":"400 This model's maximum context length is 128000 tokens"},)"
          R"({"text":"the summary","delayMs":700},{"text":"done"}])",
          beat);
  const auto lines = run.lines();
  const auto beats = beats_of(lines, "compaction");
  REQUIRE(beats.size() >= 3);
  CHECK(beats.back()["reason"] == "overflow");
  CHECK(last_json(lines)["compactions"] == 1);
}

TEST_CASE("one-shot: SessionEnd hooks run before the result, a deadline cuts them short") {
  {
    Run run(R"([{"text":"hi"}])", {"-p", "go", "--output-format", "json"}, "",
            R"({"hooks":{"SessionEnd":[{"hooks":[{"type":"command","command":)"
            R"("cat > ../end.json"}]}]}})");
    const auto lines = run.lines();
    CHECK(last_json(lines)["subtype"] == "success");
    // Written before the result line was (section 4 step 5).
    const Json end = Json::parse(run.r.dir().read("end.json"));
    CHECK(end["hook_event_name"] == "SessionEnd");
    CHECK(end["reason"] == "other");
    CHECK(run.exit_code() == 0);
  }
  // A hook that would take 30 s (its own bound 60 s): the 1 s deadline writes the result, the
  // hook is killed and the run's outcome stands.
  Run run(
      R"([{"text":"hi"}])", {"-p", "go", "--output-format", "json", "--timeout", "1"}, "",
      R"({"extensionRunner":{"sessionEndTimeoutMs":60000},"hooks":{"SessionEnd":[{"hooks":[)"
      R"({"type":"command","command":"echo $$ > ../hook.pid; exec sleep 30","timeout":60}]}]}})");
  const Json result = last_json(run.lines(20000ms));
  CHECK(result["subtype"] == "success");
  CHECK(result["duration_ms"].get<std::int64_t>() < 10000);
  CHECK(run.exit_code() == 0);
  const pid_t pid = std::stoi(run.r.dir().read("hook.pid"));
  CHECK(testing::process_ended(pid));
}

TEST_CASE("one-shot: a hook's stop and a refused prompt end the run hook_stopped, exit 9") {
  {
    // PreToolUse continue:false: the batch completes, no further request.
    Run run(R"([{"toolCalls":[{"name":"bash","arguments":{"command":"true"}}]},{"text":"never"}])",
            {"-p", "go", "--output-format", "json"}, "",
            R"({"hooks":{"PreToolUse":[{"hooks":[{"type":"command","command":)"
            R"("echo '{\"continue\":false,\"stopReason\":\"enough for today\"}'"}]}]}})");
    const Json result = last_json(run.lines());
    CHECK(result["subtype"] == "success");
    CHECK(result["terminal_reason"] == "hook_stopped");
    CHECK(run.exit_code() == 9);
    CHECK(run.r.proc().stderr_text().find(
              "rebound: stopped by a hook: Operation stopped by hook: enough for today\n") !=
          std::string::npos);
    CHECK(run.script_request(1).is_null());  // no second request
  }
  Run run(R"([{"text":"never"}])", {"-p", "go", "--output-format", "json"}, "",
          R"({"hooks":{"UserPromptSubmit":[{"hooks":[{"type":"command","command":)"
          R"("echo no prompts today >&2; exit 2"}]}]}})");
  const Json result = last_json(run.lines());
  CHECK(result["terminal_reason"] == "hook_stopped");
  CHECK(result["num_turns"] == 0);
  CHECK(run.exit_code() == 9);
  CHECK(run.r.proc().stderr_text().find(
            "rebound: stopped by a hook: UserPromptSubmit operation blocked by hook:\n"
            "[echo no prompts today >&2; exit 2]: no prompts today") != std::string::npos);
  CHECK(run.script_request(0).is_null());
}

namespace {

const char* kPerson =
    R"({"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer"}},)"
    R"("required":["name"],"additionalProperties":false})";

// The tool_execution_end of `id` among a stream-json run's lines.
Json end_line(const std::vector<std::string>& lines, const std::string& id) {
  for (const auto& l : lines) {
    const Json j = Json::parse(l);
    if (j["type"] == "tool_execution_end" && j["toolCallId"] == id) return j;
  }
  FAIL("no tool_execution_end for " << id);
  return Json();
}

}  // namespace

TEST_CASE("one-shot: --json-schema accepts the first valid call, re-asks after plain text") {
  Run run(R"([{"text":"just text"},)"
          R"({"toolCalls":[{"name":"structured_output","arguments":{"nom":"x"}}]},)"
          R"({"toolCalls":[{"name":"bash","arguments":{"command":"touch ran.txt"}},)"
          R"({"name":"structured_output","arguments":{"name":"Ada","age":36.0}},)"
          R"({"name":"structured_output","arguments":{"name":"Bob"}}]},{"text":"never"}])",
          {"-p", "who", "--output-format", "stream-json", "--json-schema", kPerson});
  const auto lines = run.lines();
  const Json result = last_json(lines);
  CHECK(result["subtype"] == "success");
  CHECK(result["structured_output"] == Json::parse(R"({"name":"Ada","age":36.0})"));
  CHECK(result["result"] == R"({"name":"Ada","age":36.0})");
  CHECK(result["num_turns"] == 3);
  std::vector<std::string> keys;
  for (const auto& [k, v] : result.items())
    keys.push_back(k);
  REQUIRE(keys.size() > 8);
  CHECK(std::vector<std::string>(keys.begin() + 5, keys.begin() + 8) ==
        std::vector<std::string>{"num_turns", "result", "structured_output"});
  CHECK(run.exit_code() == 0);
  // The re-ask after the plain text, the validation errors, the calls of the accepting message.
  bool reasked = false;
  for (const auto& l : lines) {
    const Json j = Json::parse(l);
    if (j["type"] == "message_end" && j["message"]["role"] == "user")
      reasked = reasked || j["message"]["content"][0]["text"] ==
                               "Give the final answer by calling the structured_output tool with "
                               "arguments that match its schema. Plain text is not accepted.";
  }
  CHECK(reasked);
  CHECK(end_line(lines, "call_1")["result"]["content"][0]["text"] ==
        "Structured output does not match the schema:\n- (root): missing required property "
        "'name'\n- (root): property 'nom' is not allowed");
  CHECK(end_line(lines, "call_2")["result"]["content"][0]["text"] ==
        "Not run: the structured output was already given.");
  CHECK(end_line(lines, "call_3")["isError"] == false);
  CHECK(end_line(lines, "call_3")["result"]["content"][0]["text"] == "Structured output accepted.");
  CHECK(end_line(lines, "call_4")["isError"] == true);
  CHECK(!std::filesystem::exists(run.r.dir().path() / "work" / "ran.txt"));
  // The tool is offered last with the whole schema, the prompt ends with the paragraph.
  const Json request = run.script_request(0);
  CHECK(request["tools"].back() == "structured_output");
  const std::string prompt = request["systemPrompt"].get<std::string>();
  const std::string tail =
      "\n\nWhen the task is done, call the structured_output tool once with the final answer as "
      "its arguments. A plain-text answer is not accepted.";
  REQUIRE(prompt.size() > tail.size());
  CHECK(prompt.substr(prompt.size() - tail.size()) == tail);
  CHECK(run.script_request(4).is_null());
}

TEST_CASE("one-shot: --json-schema gives up with exit 8 after the re-asks") {
  {
    Run run(R"([{"text":"no"}])", {"-p", "who", "--output-format", "json", "--json-schema", kPerson,
                                   "--json-schema-retries", "1"});
    const Json result = last_json(run.lines());
    CHECK(result["subtype"] == "error_max_structured_output_retries");
    CHECK(result["terminal_reason"] == "structured_output_invalid");
    CHECK(result["errors"] == Json::array({"No valid structured output after 1 re-asks: the model "
                                           "answered without calling structured_output"}));
    CHECK(result["num_turns"] == 2);
    CHECK(!result.contains("structured_output"));
    CHECK(run.exit_code() == 8);
    CHECK(run.script_request(2).is_null());
  }
  // The last failure's other calls are not run; its invalid call gets its problems.
  Run run(R"([{"toolCalls":[{"name":"structured_output","arguments":{"name":7}},)"
          R"({"name":"bash","arguments":{"command":"touch ran.txt"}}]}])",
          {"-p", "who", "--output-format", "stream-json", "--json-schema", kPerson,
           "--json-schema-retries", "0"});
  const auto lines = run.lines();
  CHECK(last_json(lines)["errors"] ==
        Json::array(
            {"No valid structured output after 0 re-asks: /name: expected string, got number"}));
  CHECK(end_line(lines, "call_1")["result"]["content"][0]["text"] ==
        "Structured output does not match the schema:\n- /name: expected string, got number");
  CHECK(end_line(lines, "call_2")["result"]["content"][0]["text"] ==
        "Not run: no valid structured output after 0 re-asks.");
  CHECK(!std::filesystem::exists(run.r.dir().path() / "work" / "ran.txt"));
  CHECK(run.exit_code() == 8);
}

TEST_CASE("one-shot: re-asks are turns that --max-turns stops, and a bad --json-schema is exit 2") {
  {
    Run run(R"([{"text":"no"}])",
            {"-p", "who", "--output-format", "json", "--json-schema", kPerson, "--max-turns", "2"});
    const Json result = last_json(run.lines());
    CHECK(result["subtype"] == "error_max_turns");
    CHECK(result["num_turns"] == 2);
    CHECK(run.exit_code() == 7);
  }
  const std::vector<std::pair<std::string, std::string>> bad = {
      {R"({"type":"array"})",
       R"(rebound: --json-schema: the root must be an object schema ("type":"object"))"},
      {R"({"type":"object","oneOf":[]})",
       "rebound: --json-schema: unsupported keyword 'oneOf' at (root)"},
      {"{not json", "rebound: --json-schema: not valid JSON"},
      {"no-such-schema.json", "rebound: --json-schema: cannot read no-such-schema.json"}};
  for (const auto& [value, text] : bad) {
    Run run(R"([{"text":"x"}])", {"-p", "who", "--json-schema", value});
    CHECK(run.lines().empty());
    CHECK(run.exit_code() == 2);
    CHECK(run.r.proc().stderr_text().find(text) != std::string::npos);
  }
  for (const auto& args :
       std::vector<std::vector<std::string>>{{"-p", "x", "--max-budget-usd", "0"},
                                             {"-p", "x", "--max-budget-usd", "-1"},
                                             {"-p", "x", "--max-budget-usd", "inf"},
                                             {"-p", "x", "--json-schema-retries", "11"},
                                             {"--json-schema", kPerson},
                                             {"--max-budget-usd", "1"}}) {
    Run run(R"([{"text":"x"}])", args);
    CHECK(run.lines().empty());
    CHECK(run.exit_code() == 2);
  }
}

namespace {

// A one-shot run with --max-budget-usd against `fake`, whose model costs $1 per input token.
ReboundProcess budget_run(const FakeLlmServer& fake, const std::string& format,
                          const std::string& budget) {
  SubprocessOptions o;
  o.cwd = "@DIR@/work";
  o.stdin_file = "/dev/null";
  return ReboundProcess(
      {"--no-session", "-p", "go", "--output-format", format, "--max-budget-usd", budget}, o,
      {{"work/.keep", ""},
       {"agent/settings.json", R"({"defaultProvider":"local","defaultModel":"m1"})"},
       {"agent/models.json",
        R"({"providers":{"local":{"baseUrl":")" + fake.base_url() +
            R"(/v1","api":"openai-completions","models":[{"id":"m1","name":"M1","reasoning":false,)"
            R"("input":["text"],"contextWindow":128000,"maxTokens":4096,)"
            R"("cost":{"input":1000000,"output":0,"cacheRead":0,"cacheWrite":0}}]}}})"}});
}

}  // namespace

TEST_CASE("one-shot: --max-budget-usd stops where the run would go on past the budget") {
  // A model at $1 per input token: the first response (2 input tokens) costs $2.
  FakeResponse calls;
  calls.chunks = {
      FakeLlmServer::openai_chunk(
          R"({"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"bash","arguments":"{\"command\":\"touch ran.txt\"}"}}]})"),
      FakeLlmServer::openai_chunk("{}", R"("tool_calls")"),
      FakeLlmServer::sse(R"({"choices":[],"usage":{"prompt_tokens":2,"completion_tokens":0}})"),
      FakeLlmServer::sse("[DONE]")};
  FakeLlmServer fake({calls});
  ReboundProcess r = budget_run(fake, "stream-json", "1.5");
  r.expect_any_exit();
  const auto lines = r.proc().read_all_lines(10000ms);
  const Json result = last_json(lines);
  CHECK(result["subtype"] == "error_max_budget_usd");
  CHECK(result["terminal_reason"] == "budget_exhausted");
  CHECK(result["errors"] == Json::array({"Reached maximum budget ($1.5)"}));
  CHECK(result["total_cost_usd"] == 2);
  CHECK(end_line(lines, "call_1")["result"]["content"][0]["text"] ==
        "Not run: the run reached --max-budget-usd 1.5.");
  CHECK(!std::filesystem::exists(r.dir().path() / "work" / "ran.txt"));
  CHECK(fake.requests().size() == 1);
  const auto status = r.proc().wait(10000ms);
  REQUIRE(status.has_value());
  CHECK(*status == 7);
}

TEST_CASE("one-shot: a bash call and a hook start with SIGPIPE at its default action") {
  // Rebound ignores SIGPIPE itself; `yes | head -1` in a child that inherited that would spin.
  Run run(
      R"([{"toolCalls":[{"name":"bash","arguments":{"command":"grep -E '^SigIgn' /proc/self/status"}}]},)"
      R"({"text":"done"}])",
      {"-p", "go", "--output-format", "stream-json"}, "",
      R"({"hooks":{"PreToolUse":[{"hooks":[{"type":"command","command":)"
      R"("grep -E '^SigIgn' /proc/self/status > ../hook.txt"}]}]}})");
  const auto lines = run.lines();
  auto pipe_ignored = [](const std::string& text) {
    const std::size_t tab = text.find('\t');
    REQUIRE(tab != std::string::npos);
    const unsigned long long mask = std::stoull(text.substr(tab + 1), nullptr, 16);
    return (mask & (1ull << (SIGPIPE - 1))) != 0;
  };
  CHECK(
      !pipe_ignored(end_line(lines, "call_1")["result"]["content"][0]["text"].get<std::string>()));
  CHECK(!pipe_ignored(run.r.dir().read("hook.txt")));
  CHECK(run.exit_code() == 0);
}

TEST_CASE("one-shot: a compaction's summary request counts in usage and duration_api_ms") {
  // A tool call, an overflow, a summary that takes 600 ms with its own usage, then the answer.
  Run run(R"([{"toolCalls":[{"name":"bash","arguments":{"command":"true"}}],)"
          R"("usage":{"input":10,"output":2}},)"
          R"({"error":"400 This model's maximum context length is 128000 tokens"},)"
          R"({"text":"the summary","delayMs":600,"usage":{"input":100,"output":7,"cacheRead":4}},)"
          R"({"text":"done","usage":{"input":5,"output":1}}])",
          {"-p", "go", "--output-format", "json"});
  const Json result = last_json(run.lines());
  CHECK(result["subtype"] == "success");
  CHECK(result["result"] == "done");
  CHECK(result["compactions"] == 1);
  CHECK(result["usage"] == Json::parse(R"({"input_tokens":115,"cache_creation_input_tokens":0,)"
                                       R"("cache_read_input_tokens":4,"output_tokens":10})"));
  // The summary request alone took 600 ms (its script waits that long before its first event).
  CHECK(result["duration_api_ms"].get<std::int64_t>() >= 600);
  CHECK(result["duration_api_ms"].get<std::int64_t>() <= result["duration_ms"].get<std::int64_t>());
  CHECK(run.exit_code() == 0);
}

TEST_CASE("one-shot: a summary request's cost counts toward --max-budget-usd") {
  // A model at $1 per input token: the overflow costs nothing, the summary (3 input tokens) $3.
  FakeResponse overflow;
  overflow.status = 400;
  overflow.chunks = {
      R"({"error":{"message":"This model's maximum context length is 128000 tokens. However, )"
      R"(your messages resulted in 130000 tokens.","type":"invalid_request_error",)"
      R"("code":"context_length_exceeded"}})"};
  FakeResponse summary;
  summary.chunks = {
      FakeLlmServer::openai_chunk(R"({"content":"the summary"})"),
      FakeLlmServer::openai_chunk("{}", R"("stop")"),
      FakeLlmServer::sse(R"({"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":0}})"),
      FakeLlmServer::sse("[DONE]")};
  FakeLlmServer fake({overflow, summary});
  ReboundProcess r = budget_run(fake, "json", "2.5");
  r.expect_any_exit();
  const Json result = last_json(r.proc().read_all_lines(10000ms));
  CHECK(result["subtype"] == "error_max_budget_usd");
  CHECK(result["total_cost_usd"] == 3);
  CHECK(result["usage"]["input_tokens"] == 3);
  CHECK(result["compactions"] == 1);
  CHECK(fake.requests().size() == 2);  // no request after the summary
  const auto status = r.proc().wait(10000ms);
  REQUIRE(status.has_value());
  CHECK(*status == 7);
}
