// A crash repeats nothing and hides nothing (runtime.md section 8, amendments A3, A4, A7, A8)
// on the real binary: the bash spool beside the session file and what a load makes of it, the
// writer lock that keeps a second process off a running session, one-shot's
// `unknown_outcomes` and stream-json order, and the repeat of such a call refused in one-shot.

#include <signal.h>
#include <sys/stat.h>

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/rebound_process.h"
#include "tests/support/scripted_tools.h"

using namespace rebound;
using namespace rebound::testing;
using namespace std::chrono_literals;
using protocol::Json;
namespace fs = std::filesystem;

namespace {

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

unsigned mode_of(const fs::path& p) {
  struct stat st {};
  REQUIRE(::stat(p.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

// A one-shot run reads stdin to its end: none here.
SubprocessOptions no_stdin() {
  SubprocessOptions o;
  o.stdin_file = "/dev/null";
  return o;
}

std::int64_t epoch_ms_now() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Runs a server on session `file` whose model calls bash `command` once, and kills it with
// SIGKILL once `marker` exists (the command makes it, then sleeps) and, with `spooled`, once the
// call's spool file holds that text.
void crash_during_bash(const std::string& file, const std::string& command, const fs::path& marker,
                       const std::string& spooled = "") {
  ReboundProcess first(
      scripted_args({"--session", file}), {},
      {{"agent/settings.json", "{}"},
       {"script.json", script_of(Json::array({call("bash", {{"command", command}})}))}});
  first.send(prompt());
  first.read_until_type("tool_execution_start", 20000ms);
  for (int i = 0; i < 2000 && !fs::exists(marker); ++i)
    std::this_thread::sleep_for(10ms);
  REQUIRE(fs::exists(marker));
  if (!spooled.empty()) {
    const fs::path spool = fs::path(file).replace_extension(".d") / "call_1.out";
    for (int i = 0; i < 2000 && read_text(spool) != spooled; ++i)
      std::this_thread::sleep_for(10ms);
    REQUIRE(read_text(spool) == spooled);
  }
  first.proc().send_signal(SIGKILL);
  first.expect_any_exit();
  first.proc().wait(10000ms);
}

}  // namespace

TEST_CASE("a crashed bash call's spooled output and start time are in its unknown outcome") {
  TempDir dir;
  const std::string file = (dir.path() / "crashed.jsonl").string();
  const fs::path marker = dir.path() / "began";
  const fs::path spool = dir.path() / "crashed.d" / "call_1.out";
  const std::int64_t before = epoch_ms_now();
  crash_during_bash(
      file,
      "echo spooled before the stop; echo second line; touch " + marker.string() + "; sleep 30",
      marker, "spooled before the stop\nsecond line\n");
  const std::int64_t after = epoch_ms_now();
  // The spool is what the call printed, private to the user.
  REQUIRE(fs::exists(spool));
  CHECK(read_text(spool) == "spooled before the stop\nsecond line\n");
  CHECK(mode_of(spool) == 0600);
  CHECK(mode_of(spool.parent_path()) == 0700);
  // A start-up load: the event is the first line, before the first command's response.
  ReboundProcess second(scripted_args({"--session", file}), {},
                        {{"agent/settings.json", "{}"}, {"script.json", R"([{"text":"x"}])"}});
  second.send(Json{{"id", "s"}, {"type", "get_state"}});
  const auto lines = second.read_until_response("s", 20000ms);
  REQUIRE(lines.size() == 2);
  CHECK(lines[0]["type"] == "tool_outcome_unknown");
  CHECK(lines[0]["toolCallId"] == "call_1");
  const std::int64_t started = lines[0]["startedAt"].get<std::int64_t>();
  CHECK(started >= before - 1000);  // the spool's birth (a second of slack for coarse clocks)
  CHECK(started <= after);
  const Json messages =
      second.command(Json{{"id", "m"}, {"type", "get_messages"}})["data"]["messages"];
  const std::string text = messages.back()["content"][0]["text"];
  CHECK(text.starts_with("Outcome unknown: Rebound stopped while this call was running (started "));
  CHECK(text.ends_with(
      "It may have taken effect, fully or in part. Check the current state before repeating "
      "it.\n\nspooled before the stop\nsecond line\n"));
  CHECK(messages.back()["details"] == Json{{"outcome", "unknown"}});
  CHECK(!fs::exists(spool));  // the result is on file: the spool went
}

TEST_CASE("a finished bash call's spool goes with its result unless it is the full output") {
  TempDir dir;
  const std::string file = (dir.path() / "spool.jsonl").string();
  ReboundProcess r(
      scripted_args({"--session", file}), {},
      {{"agent/settings.json", "{}"},
       {"script.json", script_of(Json::array({call("bash", {{"command", "echo short"}}),
                                              call("bash", {{"command", "seq 1 3000"}})}))}});
  r.send(prompt());
  const auto events = r.read_until_type("agent_end", 20000ms);
  const fs::path folder = dir.path() / "spool.d";
  CHECK(!fs::exists(folder / "call_1.out"));
  const fs::path kept = folder / "call_2.out";
  REQUIRE(fs::exists(kept));
  CHECK(read_text(kept).size() == 13893);  // every line of seq 1 3000
  const Json end = end_of(events, "call_2");
  CHECK(end["result"]["details"]["fullOutputPath"] == kept.string());
  const std::string text = end["result"]["content"][0]["text"];
  CHECK(text.ends_with("[Showing lines 1002-3001 of 3001. Full output: " + kept.string() + "]"));
  // The file tools may read it back, also with the sandbox on (tested in sandbox_test); here
  // the read tool finds it by the path the notice gives.
  CHECK(mode_of(kept) == 0600);
}

TEST_CASE("a session another process is running is refused and --continue passes it by") {
  TempDir dir;
  const std::string sessions = (dir.path() / "sessions").string();
  // Both the holder and the --continue run work in `dir` (the session header's cwd).
  SubprocessOptions in_dir = no_stdin();
  in_dir.cwd = dir.path().string();
  SubprocessOptions holder_options;
  holder_options.cwd = dir.path().string();
  ReboundProcess holder(scripted_args({"--session-dir", sessions}), holder_options,
                        {{"agent/settings.json", "{}"}, {"script.json", R"([{"text":"hi"}])"}});
  holder.send(prompt());
  holder.read_until_type("agent_end", 20000ms);
  const Json state = holder.command(Json{{"id", "s"}, {"type", "get_state"}})["data"];
  const std::string file = state["sessionFile"];
  REQUIRE(fs::exists(file));
  CHECK(mode_of(file + ".lock") == 0600);
  const std::string in_use = "Session file is in use by another Rebound process: " + file;
  {
    // At start-up: exit 2, nothing on stdout, nothing appended.
    const auto size = fs::file_size(file);
    ReboundProcess second(scripted_args({"--session", file}), {},
                          {{"agent/settings.json", "{}"}, {"script.json", R"([{"text":"x"}])"}});
    second.expect_any_exit();
    CHECK(second.proc().read_all_lines(10000ms).empty());
    CHECK(second.proc().wait(10000ms) == 2);
    CHECK(second.proc().stderr_text().find(in_use) != std::string::npos);
    CHECK(fs::file_size(file) == size);
  }
  {
    // switch_session: an error response, the session left as it was.
    ReboundProcess third(scripted_args({"--no-session"}), {},
                         {{"agent/settings.json", "{}"}, {"script.json", R"([{"text":"x"}])"}});
    const Json r =
        third.command(Json{{"id", "w"}, {"type", "switch_session"}, {"sessionPath", file}});
    CHECK(r["success"] == false);
    CHECK(r["error"] == in_use);
    CHECK(third.command(Json{{"id", "g"}, {"type", "get_state"}})["data"]["messageCount"] == 0);
  }
  {
    // --continue takes the cwd's latest file nobody holds: the holder's is the latest of this
    // cwd, so without the lock it would be taken; here a new session starts.
    ReboundProcess fourth(
        scripted_args(
            {"--session-dir", sessions, "-p", "again", "--continue", "--output-format", "json"}),
        in_dir, {{"agent/settings.json", "{}"}, {"script.json", R"([{"text":"fresh"}])"}});
    fourth.expect_any_exit();
    const auto out = fourth.proc().read_all_lines(20000ms);
    REQUIRE(!out.empty());
    const Json result = Json::parse(out.back());
    CHECK(result["result"] == "fresh");
    CHECK(result["sessionFile"] != file);
    CHECK(fourth.proc().wait(10000ms) == 0);
  }
  holder.command(Json{{"id", "q"}, {"type", "get_state"}});  // still running, undisturbed
}

TEST_CASE("one-shot: unknown outcomes follow the header and repeating such a call is refused") {
  TempDir dir;
  const std::string file = (dir.path() / "crashed.jsonl").string();
  const fs::path counter = dir.path() / "counter";
  const std::string command = "echo ran >> " + counter.string() + "; sleep 30";
  crash_during_bash(file, command, counter);
  // The resumed run's model repeats the call word for word, and makes one other call. Even a
  // rule that allows all of bash does not let the repeat through: nobody can answer its
  // question in one-shot mode.
  const fs::path other = dir.path() / "other";
  ReboundProcess run(
      scripted_args({"-p", "go on", "--resume", file, "--output-format", "stream-json",
                     "--permission-mode", "default", "--allowed-tools", "bash"}),
      no_stdin(),
      {{"agent/settings.json", "{}"},
       {"script.json",
        script_of(Json::array({call("bash", {{"command", command}}),
                               call("bash", {{"command", "touch " + other.string()}})}))}});
  run.expect_any_exit();
  const auto out = run.proc().read_all_lines(30000ms);
  REQUIRE(out.size() >= 3);
  CHECK(Json::parse(out[0])["type"] == "session");
  const Json unknown = Json::parse(out[1]);
  CHECK(unknown["type"] == "tool_outcome_unknown");
  CHECK(unknown["toolCallId"] == "call_1");
  const Json result = Json::parse(out.back());
  CHECK(result["unknown_outcomes"] == Json::array({"call_1"}));
  REQUIRE(result["permission_denials"].size() == 1);
  CHECK(result["permission_denials"][0]["tool_input"] == Json{{"command", command}});
  CHECK(result["permission_denials"][0]["message"] ==
        "Rebound requested permissions to repeat a bash call whose outcome is unknown, but you "
        "haven't granted it yet. Check the current state instead.");
  CHECK(run.proc().wait(10000ms) == 9);
  CHECK(read_text(counter) == "ran\n");  // once, before the crash
  CHECK(fs::exists(other));              // the other call ran
  // A run without a load that appended anything has no unknown_outcomes key.
  ReboundProcess plain(scripted_args({"--no-session", "-p", "hi", "--output-format", "json"}),
                       no_stdin(),
                       {{"agent/settings.json", "{}"}, {"script.json", R"([{"text":"x"}])"}});
  plain.expect_any_exit();
  const auto plain_out = plain.proc().read_all_lines(20000ms);
  REQUIRE(!plain_out.empty());
  CHECK(!Json::parse(plain_out.back()).contains("unknown_outcomes"));
  CHECK(plain.proc().wait(10000ms) == 0);
}

TEST_CASE("bypassPermissions lets the repeat run: the policy asks only in the other modes") {
  TempDir dir;
  const std::string file = (dir.path() / "crashed.jsonl").string();
  const fs::path counter = dir.path() / "counter";
  // The first run sleeps (and is killed); the repeat finds two lines and ends at once.
  const std::string command = "echo ran >> " + counter.string() + "; [ $(wc -l < " +
                              counter.string() + ") -gt 1 ] || sleep 30";
  crash_during_bash(file, command, counter);
  ReboundProcess run(
      scripted_args({"-p", "go on", "--resume", file, "--output-format", "json",
                     "--permission-mode", "bypassPermissions"}),
      no_stdin(),
      {{"agent/settings.json", "{}"},
       {"script.json", script_of(Json::array({call("bash", {{"command", command}})}))}});
  run.expect_any_exit();
  const auto out = run.proc().read_all_lines(30000ms);
  REQUIRE(!out.empty());
  const Json result = Json::parse(out.back());
  CHECK(result["permission_denials"].empty());
  CHECK(read_text(counter) == "ran\nran\n");
  CHECK(run.proc().wait(10000ms) == 0);
}
