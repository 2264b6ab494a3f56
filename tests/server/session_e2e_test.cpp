// Sessions on disk end to end (runtime.md section 4, protocol.md section 2): the real binary
// writing, resuming and repairing session files, new_session/switch_session on the wire, and
// bash with real processes.

#include <fcntl.h>
#include <sys/ioctl.h>

#include <doctest/doctest.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>

#include "session/session_file.h"
#include "tests/support/event_summary.h"
#include "tests/support/rebound_process.h"

using namespace rebound;
using namespace std::chrono_literals;
using protocol::Json;
using testing::ReboundProcess;
using testing::summarize;
namespace fs = std::filesystem;

namespace {

const std::string kFastRetry =
    R"({"retry":{"enabled":true,"maxRetries":3,"baseDelayMs":100},"compaction":{"enabled":false}})";

ReboundProcess::Files script_files(const std::string& script,
                                   const std::string& settings = kFastRetry) {
  return {{"agent/settings.json", settings}, {"script.json", script}};
}

std::vector<std::string> scripted_args(std::vector<std::string> session_args) {
  std::vector<std::string> a{"--provider",        "scripted",     "--script",
                             "@DIR@/script.json", "--script-log", "@DIR@/script-log.jsonl"};
  a.insert(a.end(), session_args.begin(), session_args.end());
  return a;
}

Json prompt(const std::string& id, const std::string& text) {
  return Json{{"id", id}, {"type", "prompt"}, {"message", text}};
}

/// Sends a prompt and reads until the work is over (agent_end without retry and no chain).
std::vector<Json> run_prompt(ReboundProcess& r, const std::string& id, const std::string& text) {
  r.send(prompt(id, text));
  std::vector<Json> out;
  bool chain = false;
  while (true) {
    out.push_back(r.read_json());
    const Json& j = out.back();
    if (j["type"] == "auto_retry_start") chain = true;
    if (j["type"] == "auto_retry_end") return out;
    if (j["type"] == "agent_end" && !j["willRetry"].get<bool>() && !chain) return out;
  }
}

session::LoadedSession load_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto parsed = session::parse_session_file(text);
  if (!parsed) FAIL(parsed.error().message);
  return parsed.value();
}

std::vector<fs::path> files_under(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  if (!fs::exists(dir, ec)) return out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) out.push_back(e.path());
  }
  return out;
}

}  // namespace

TEST_CASE("overload, retry, resume: the file keeps the error, the context leaves it out") {
  ReboundProcess r(scripted_args({"--session-dir", "@DIR@/sessions"}), {},
                   script_files(R"([{"error":"503 overloaded"},{"text":"hello there"}])"));
  const Json state = r.command(Json{{"id", "s"}, {"type", "get_state"}});
  const std::string file = state["data"]["sessionFile"].get<std::string>();
  CHECK(fs::path(file).parent_path() == r.dir().path() / "sessions");
  CHECK(fs::path(file).filename().string().ends_with(
      "_" + state["data"]["sessionId"].get<std::string>() + ".jsonl"));
  CHECK_FALSE(fs::exists(file));  // not before the first assistant message
  run_prompt(r, "p", "hi");
  const auto loaded = load_file(file);
  CHECK(loaded.warnings.empty());
  CHECK(loaded.header.id == state["data"]["sessionId"]);
  CHECK(loaded.header.cwd == r.dir().path().string());
  std::vector<std::string> kinds;
  for (const auto& e : loaded.entries) {
    std::string kind = e["type"];
    if (kind == "message") kind = e["message"]["role"];
    if (kind == "assistant") kind += ":" + e["message"]["stopReason"].get<std::string>();
    kinds.push_back(kind);
  }
  CHECK(kinds == std::vector<std::string>{"model_change", "thinking_level_change", "user",
                                          "assistant:error", "assistant:stop"});
  CHECK(loaded.entries[4]["parentId"] == loaded.entries[3]["id"]);
  const Json messages = r.command(Json{{"id", "m"}, {"type", "get_messages"}})["data"]["messages"];
  REQUIRE(messages.size() == 2);
  CHECK(messages[1]["content"][0]["text"] == "hello there");
  r.proc().close_stdin();
  CHECK(r.proc().wait() == 0);

  // Resume it in a new process: the same context, the same id, and appends continue the chain.
  ReboundProcess resumed(scripted_args({"--session", file}), {},
                         script_files(R"([{"text":"second answer"}])"));
  CHECK(resumed.command(Json{{"id", "m"}, {"type", "get_messages"}})["data"]["messages"] ==
        messages);
  const Json st = resumed.command(Json{{"id", "s"}, {"type", "get_state"}})["data"];
  CHECK(st["sessionId"] == state["data"]["sessionId"]);
  CHECK(st["sessionFile"] == file);
  CHECK(st["messageCount"] == 2);
  const Json stats = resumed.command(Json{{"id", "t"}, {"type", "get_session_stats"}})["data"];
  CHECK(stats["assistantMessages"] == 2);  // the failed attempt is counted
  CHECK(stats["sessionFile"] == file);
  run_prompt(resumed, "p2", "more");
  // The resumed request carried the whole context: user, answer, new user.
  const auto log = resumed.jsonl("script-log.jsonl");
  REQUIRE(log.size() == 1);
  CHECK(log[0]["messages"].size() == 3);
  const auto after = load_file(file);
  REQUIRE(after.entries.size() == 7);
  CHECK(after.entries[5]["parentId"] == after.entries[4]["id"]);
}

TEST_CASE("a torn last line: resume works, the warning is on stderr, the fragment is cut off") {
  ReboundProcess first(scripted_args({"--session", "@DIR@/s.jsonl"}), {},
                       script_files(R"([{"text":"one"}])"));
  run_prompt(first, "p", "q1");
  first.proc().close_stdin();
  REQUIRE(first.proc().wait() == 0);
  const fs::path file = first.dir().path() / "s.jsonl";
  const auto complete = load_file(file);
  REQUIRE(complete.entries.size() == 4);
  {
    std::ofstream out(file, std::ios::app | std::ios::binary);
    out << R"({"type":"message","id":"deadbeef","parentId":")";  // a crash mid-line
  }
  ReboundProcess resumed(scripted_args({"--session", file.string()}), {},
                         script_files(R"([{"text":"two"}])"));
  const Json messages =
      resumed.command(Json{{"id", "m"}, {"type", "get_messages"}})["data"]["messages"];
  CHECK(messages.size() == 2);
  CHECK(resumed.proc().stderr_text().find("torn last line skipped") != std::string::npos);
  run_prompt(resumed, "p", "q2");
  const auto repaired = load_file(file);
  CHECK(repaired.warnings.empty());
  REQUIRE(repaired.entries.size() == 6);  // nothing before the tear was lost
  for (std::size_t i = 0; i < complete.entries.size(); ++i)
    CHECK(repaired.entries[i] == complete.entries[i]);
}

TEST_CASE("a session file of another version is refused at start-up with status 1") {
  ReboundProcess r({"--session", "@DIR@/old.jsonl"}, {},
                   {{"old.jsonl", R"({"type":"session","version":2,"id":"x","cwd":"/"})"
                                  "\n"}});
  CHECK(r.proc().wait() == 1);
  CHECK(r.proc().stderr_text().find("unsupported session file version 2") != std::string::npos);
}

TEST_CASE("the default location is under the agent directory, per working directory") {
  ReboundProcess r(std::vector<std::string>{}, {}, {});
  const Json st = r.command(Json{{"id", "s"}, {"type", "get_state"}})["data"];
  const fs::path file = st["sessionFile"].get<std::string>();
  std::string cwd = r.dir().path().string().substr(1);
  for (char& c : cwd) {
    if (c == '/') c = '-';
  }
  CHECK(file.parent_path() == r.dir().path() / "agent" / "sessions" / ("--" + cwd + "--"));
  run_prompt(r, "p", "hello");  // the echo model
  CHECK(load_file(file).entries.size() == 4);
}

TEST_CASE("--no-session keeps nothing on disk") {
  ReboundProcess r({"--no-session"});
  CHECK_FALSE(r.command(Json{{"id", "s"}, {"type", "get_state"}})["data"].contains("sessionFile"));
  run_prompt(r, "p", "hello");
  CHECK(files_under(r.dir().path() / "agent").empty());
}

TEST_CASE("switch_session during a backoff: retry end, the response, then the other session") {
  ReboundProcess r(scripted_args({"--session-dir", "@DIR@/sessions"}), {},
                   script_files(R"([{"text":"first"},{"error":"503 overloaded"}])",
                                R"({"retry":{"enabled":true,"maxRetries":3,"baseDelayMs":5000}})"));
  run_prompt(r, "p1", "one");
  const Json first = r.command(Json{{"id", "s1"}, {"type", "get_state"}})["data"];
  CHECK(r.command(Json{{"id", "n"}, {"type", "new_session"}})["data"] ==
        Json{{"cancelled", false}});
  r.send(prompt("p2", "two"));
  r.read_until_type("auto_retry_start");
  // The file is read off the loop: a command sent meanwhile may answer first, so the state is
  // asked for once the switch has answered.
  r.send(Json{{"id", "sw"}, {"type", "switch_session"}, {"sessionPath", first["sessionFile"]}});
  auto lines = r.read_until_response("sw");
  r.send(Json{{"id", "s2"}, {"type", "get_state"}});
  lines.push_back(r.read_until_response("s2").back());
  REQUIRE(lines.size() == 3);
  CHECK(lines[0] == Json::parse(R"({"type":"auto_retry_end","success":false,"attempt":1,
                                   "finalError":"Retry cancelled"})"));
  CHECK(lines[1] == Json::parse(R"({"id":"sw","type":"response","command":"switch_session",
                                   "success":true,"data":{"cancelled":false}})"));
  CHECK(lines[2]["data"]["sessionId"] == first["sessionId"]);
  CHECK(lines[2]["data"]["sessionFile"] == first["sessionFile"]);
  CHECK(lines[2]["data"]["messageCount"] == 2);
  CHECK(lines[2]["data"]["isStreaming"] == false);
  // A path that does not load is an error and changes nothing.
  const Json bad = r.command(Json{{"id", "b"},
                                  {"type", "switch_session"},
                                  {"sessionPath", (r.dir().path() / "none.jsonl").string()}});
  CHECK(bad["success"] == false);
  CHECK(bad["error"].get<std::string>().starts_with("Session file not found: "));
  CHECK(r.command(Json{{"id", "s3"}, {"type", "get_state"}})["data"]["sessionId"] ==
        first["sessionId"]);
}

TEST_CASE("bash: output and status, abort_bash, truncation, and the next prompt's context") {
  ReboundProcess r(scripted_args({"--no-session"}), {}, script_files(R"([{"text":"ok"}])"));
  const Json ok = r.command(
      Json{{"id", 1}, {"type", "bash"}, {"command", "echo out; echo err >&2; pwd; exit 3"}});
  CHECK(ok["success"] == true);
  CHECK(ok["data"] == Json{{"output", "out\nerr\n" + r.dir().path().string() + "\n"},
                           {"exitCode", 3},
                           {"cancelled", false},
                           {"truncated", false}});

  // A long command does not block other commands; abort_bash kills it and its children.
  r.send(Json{
      {"id", 2}, {"type", "bash"}, {"command", "echo started; sleep 30 & sleep 30; echo never"}});
  CHECK(r.command(Json{{"id", 3}, {"type", "get_state"}})["success"] == true);
  CHECK_FALSE(r.proc().read_line(300ms));  // still running, and nothing else waits for it
  const auto t0 = std::chrono::steady_clock::now();
  r.send(Json{{"id", 4}, {"type", "abort_bash"}});
  const auto lines = r.read_until_response(2);
  CHECK(std::chrono::steady_clock::now() - t0 < 2s);
  REQUIRE(lines.size() == 2);
  CHECK(lines[0]["id"] == 4);
  CHECK(lines[1]["data"]["cancelled"] == true);
  CHECK(lines[1]["data"]["exitCode"].is_null());
  CHECK(lines[1]["data"]["output"] == "started\n");

  // Over the limit (2000 lines / 50 KiB): the tail is kept, the whole output is in a file.
  const Json big = r.command(Json{{"id", 5}, {"type", "bash"}, {"command", "seq 1 30000"}});
  CHECK(big["data"]["truncated"] == true);
  CHECK(big["data"]["exitCode"] == 0);
  const std::string shown = big["data"]["output"];
  CHECK(shown.size() <= 50 * 1024);
  CHECK(shown.ends_with("29999\n30000\n"));
  CHECK(shown.starts_with("28001\n"));  // the last 2000 lines
  const std::string full_path = big["data"]["fullOutputPath"];
  std::ifstream full(full_path);
  std::string full_text((std::istreambuf_iterator<char>(full)), std::istreambuf_iterator<char>());
  CHECK(full_text.size() == 168894);  // `seq 1 30000 | wc -c`
  fs::remove(full_path);

  // The next prompt sees all three executions as context before its own message.
  run_prompt(r, "p", "what happened?");
  const auto log = r.jsonl("script-log.jsonl");
  REQUIRE(log.size() == 1);
  const Json& sent = log[0]["messages"];
  REQUIRE(sent.size() == 4);
  CHECK(sent[0]["role"] == "bashExecution");
  CHECK(sent[0]["exitCode"] == 3);
  CHECK(sent[1]["cancelled"] == true);
  CHECK(sent[2]["truncated"] == true);
  CHECK(sent[2]["fullOutputPath"] == full_path);
  CHECK(sent[3]["role"] == "user");
}

TEST_CASE("kill -9 at random moments: every file loads and keeps every entry the client saw end") {
  // One seeded run of 100 trials. Each trial streams prompts (with retried failures) into a
  // session file and is killed with SIGKILL after a random delay.
  std::mt19937 rng(20261130);
  const std::string script = R"([{"text":"alpha beta gamma delta","chunks":8,"chunkDelayMs":1},
      {"error":"503 overloaded"},{"text":"after retry","chunks":4,"chunkDelayMs":2},
      {"text":"third","chunks":2,"chunkDelayMs":1}])";
  int with_file = 0, messages_checked = 0;
  for (int trial = 0; trial < 100; ++trial) {
    CAPTURE(trial);
    ReboundProcess r(scripted_args({"--session", "@DIR@/s.jsonl"}), {},
                     script_files(script, R"({"retry":{"enabled":true,"baseDelayMs":3}})"));
    r.send(prompt("p", "first"));
    for (int i = 0; i < 3; ++i)
      r.send(Json{{"type", "follow_up"}, {"message", "more " + std::to_string(i)}});
    // The run has started once the prompt is answered; the kill falls somewhere in the next
    // 60 ms of streaming, retrying and follow-ups (whatever the build's speed).
    r.read_until_response("p");
    std::this_thread::sleep_for(std::chrono::microseconds(rng() % 60000));
    r.proc().send_signal(SIGKILL);
    REQUIRE(r.proc().wait() == 128 + SIGKILL);
    std::vector<Json> ended;  // messages whose message_end the client read
    for (const auto& line : r.proc().read_all_lines()) {
      const Json j = Json::parse(line);
      if (j["type"] == "message_end") ended.push_back(j["message"]);
    }
    const fs::path file = r.dir().path() / "s.jsonl";
    const bool saw_assistant = std::any_of(ended.begin(), ended.end(),
                                           [](const Json& m) { return m["role"] == "assistant"; });
    // A kill between creating the file and its first write leaves it empty; the server treats
    // an empty file as a new session (runtime.md section 4), so it counts as no file.
    if (!fs::exists(file) || fs::file_size(file) == 0) {
      CHECK_FALSE(saw_assistant);
      if (fs::exists(file)) {
        ReboundProcess resumed(scripted_args({"--session", file.string()}), {},
                               script_files(script));
        CHECK(resumed.command(Json{{"id", "s"}, {"type", "get_state"}})["success"] == true);
      }
      continue;
    }
    ++with_file;
    const auto loaded = load_file(file);
    CHECK(loaded.warnings.empty());
    std::vector<Json> on_disk;
    for (const auto& e : loaded.entries) {
      if (e["type"] == "message") on_disk.push_back(e["message"]);
    }
    // The file holds a prefix of what happened: every message the client saw end, in order.
    REQUIRE(on_disk.size() >= ended.size());
    for (std::size_t i = 0; i < ended.size(); ++i) {
      CHECK(on_disk[i] == ended[i]);
      ++messages_checked;
    }
    // And the real server resumes it.
    ReboundProcess resumed(scripted_args({"--session", file.string()}), {}, script_files(script));
    const Json st = resumed.command(Json{{"id", "s"}, {"type", "get_state"}});
    CHECK(st["success"] == true);
    CHECK(st["data"]["sessionId"] == loaded.header.id);
    CHECK(st["data"]["messageCount"].get<std::size_t>() ==
          session::restore_session(loaded.entries).context().size());
  }
  MESSAGE("trials with a file: " << with_file << ", messages checked: " << messages_checked);
  CHECK(with_file > 30);  // most random moments fall after the first answer
}

namespace {

// A process that exists and is not a zombie (an orphan is reaped by init, maybe later).
bool process_alive(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!std::getline(stat, text)) return false;
  const auto close = text.rfind(')');
  return close != std::string::npos && close + 2 < text.size() && text[close + 2] != 'Z';
}

bool dies_within(pid_t pid, std::chrono::milliseconds limit) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    if (!process_alive(pid)) return true;
    std::this_thread::sleep_for(10ms);
  }
  return !process_alive(pid);
}

// Runs a command that leaves `sleep 30` in the background and prints its pid first.
pid_t background_sleep(ReboundProcess& r, int id) {
  const auto t0 = std::chrono::steady_clock::now();
  const Json answer = r.command(
      Json{{"id", id}, {"type", "bash"}, {"command", "sleep 30 & echo $!; echo started"}});
  const auto took = std::chrono::steady_clock::now() - t0;
  MESSAGE("bash with a background job answered after "
          << std::chrono::duration_cast<std::chrono::milliseconds>(took).count() << " ms");
  CHECK(took < 2s);  // the shell's exit plus at most 100 ms, not the job's 30 s
  REQUIRE(answer["success"] == true);
  CHECK(answer["data"]["exitCode"] == 0);
  CHECK(answer["data"]["cancelled"] == false);
  const std::string out = answer["data"]["output"];
  CHECK(out.ends_with("\nstarted\n"));
  const pid_t pid = std::stoi(out);
  CHECK(process_alive(pid));  // a background job keeps running
  return pid;
}

}  // namespace

TEST_CASE("bash with a background job: answered when the shell exits, abort_bash kills the job") {
  ReboundProcess r(scripted_args({"--no-session"}), {}, script_files(R"([{"text":"ok"}])"));
  const pid_t first = background_sleep(r, 1);
  // The next command is not refused: the first one is over.
  CHECK(r.command(Json{{"id", 2}, {"type", "bash"}, {"command", "echo next"}})["data"]["output"] ==
        "next\n");
  CHECK(process_alive(first));
  CHECK(r.command(Json{{"id", 3}, {"type", "abort_bash"}})["success"] == true);
  CHECK(dies_within(first, 2000ms));
}

TEST_CASE("end of input and SIGTERM stop the server with a background job left by bash") {
  for (const bool by_signal : {false, true}) {
    CAPTURE(by_signal);
    ReboundProcess r(scripted_args({"--no-session"}), {}, script_files(R"([{"text":"ok"}])"));
    const pid_t job = background_sleep(r, 1);
    const auto t0 = std::chrono::steady_clock::now();
    if (by_signal) {
      r.proc().send_signal(SIGTERM);
    } else {
      r.proc().close_stdin();
    }
    const auto status = r.proc().wait(3000ms);
    REQUIRE(status.has_value());
    CHECK(*status == 0);
    MESSAGE("exited after " << std::chrono::duration_cast<std::chrono::milliseconds>(
                                   std::chrono::steady_clock::now() - t0)
                                   .count()
                            << " ms");
    CHECK(dies_within(job, 1000ms));  // its group was killed at shutdown
  }
}
