// Hostile input, second round, end to end: the real binary with the scripted provider, the
// model's tool calls as the hostile party. Endless sources, NUL bytes in paths, FIFOs without a
// reader, the server's own standard streams as a target, catastrophic searches. Each case
// failed on the binary before its fix (issue 27).

#include <sys/stat.h>
#include <unistd.h>

#include <doctest/doctest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "tests/support/proc_status.h"
#include "tests/support/rebound_process.h"
#include "tests/support/scripted_tools.h"
#include "tests/support/session_text.h"

using namespace rebound;
using namespace std::chrono_literals;
using protocol::Json;
using testing::call;
using testing::end_of;
using testing::of_type;
using testing::prompt;
using testing::ReboundProcess;
using testing::script_of;
using testing::text_of;
using testing::tool_server;
namespace fs = std::filesystem;

namespace {

const std::vector<std::string> kAllTools{"--tools", "read,bash,edit,write,grep,find,ls"};

// The server still answers a command.
bool still_answers(ReboundProcess& r) {
  return r.command(Json{{"id", "alive"}, {"type", "get_state"}})["success"] == true;
}

std::chrono::milliseconds since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                               t);
}

}  // namespace

TEST_CASE("read of /dev/zero and /proc/self/pagemap ends on its own after 16 MB") {
  ReboundProcess r = tool_server(script_of(Json::array(
      {call("read", {{"path", "/dev/zero"}}), call("read", {{"path", "/proc/self/pagemap"}})})));
  r.send(prompt());
  // No abort: both calls end by themselves (before the fix /dev/zero read until aborted).
  const auto events = r.read_until_type("agent_end", 30000ms);
  for (const char* id : {"call_1", "call_2"}) {
    CAPTURE(id);
    const std::string text = text_of(end_of(events, id)["result"]);
    CHECK(text.find("[Stopped reading after 16.0MB: ") != std::string::npos);
    CHECK(text.find("is not a regular file of known size]") != std::string::npos);
  }
  CHECK(text_of(end_of(events, "call_1")["result"]).rfind("[Line 1 is 16.0MB, exceeds", 0) == 0);
}

TEST_CASE("a path with a NUL is refused before the call runs, never cut short") {
  ReboundProcess r = tool_server(
      script_of(Json::array(
          {call("write", {{"path", std::string("work/victim.txt\0 (a new note).md", 31)},
                          {"content", "overwritten"}}),
           call("bash", {{"command", std::string("echo hi\0; touch work/x", 23)}})})),
      {{"victim.txt", "precious"}});
  r.send(prompt());
  const auto events = r.read_until_type("agent_end");
  const Json w = end_of(events, "call_1");
  CHECK(w["isError"] == true);
  CHECK(text_of(w["result"]).find("path: must not contain a NUL character") != std::string::npos);
  CHECK(text_of(end_of(events, "call_2")["result"])
            .find("command: must not contain a NUL character") != std::string::npos);
  CHECK(r.dir().read("work/victim.txt") == "precious");
  CHECK(!fs::exists(r.dir().path() / "work/victim.txt (a new note).md"));
}

TEST_CASE("writes to FIFOs without a reader fail at once, a read in the same batch runs") {
  ReboundProcess r = tool_server(
      script_of(Json::array(
          {call("write", {{"path", "f1"}, {"content", "x"}}),
           call("write", {{"path", "f2"}, {"content", "y"}}),
           call("edit", {{"path", "f1"},
                         {"edits", Json::array({Json{{"oldText", "a"}, {"newText", "b"}}})}}),
           call("read", {{"path", "work/small.txt"}})})),
      {{"small.txt", "small"}});
  for (const char* name : {"f1", "f2"})
    REQUIRE(::mkfifo((r.dir().path() / name).c_str(), 0600) == 0);
  r.send(prompt());
  const auto events = r.read_until_type("agent_end", 10000ms);
  const std::string f1 = (r.dir().path() / "f1").string();
  CHECK(text_of(end_of(events, "call_1")["result"]) ==
        "ENXIO: not a regular file, open '" + f1 + "'");
  CHECK(text_of(end_of(events, "call_3")["result"]) ==
        "Could not edit file: f1. Error code: EINVAL.");
  CHECK(text_of(end_of(events, "call_4")["result"]) == "small");
  const auto closed = std::chrono::steady_clock::now();
  r.proc().close_stdin();
  CHECK(r.proc().wait(3000ms) == 0);
  CHECK(since(closed) < 3000ms);
}

TEST_CASE("no tool reads or writes the server's own standard streams") {
  const std::string forged = R"j({"type":"response","id":"FORGED","command":"x","success":true})j";
  const Json edits = Json::array({Json{{"oldText", "a"}, {"newText", "b"}}});
  ReboundProcess r = tool_server(script_of(Json::array({
      call("write", {{"path", "/dev/stdout"}, {"content", forged + "\n"}}),
      call("write", {{"path", "/proc/self/fd/1"}, {"content", forged + "\n{\"half"}}),
      call("write", {{"path", "/dev/stderr"}, {"content", "noise"}}),
      call("edit", {{"path", "/proc/self/fd/1"}, {"edits", edits}}),
      call("read", {{"path", "/dev/stdin"}}),
  })));
  r.send(prompt());
  const auto events = r.read_until_type("agent_end");  // every line parses as JSON
  for (const auto& e : events)
    CHECK(e.value("id", Json()) != "FORGED");
  CHECK(text_of(end_of(events, "call_1")["result"]) ==
        "EPERM: operation not permitted (the server's own standard stream), open '/dev/stdout'");
  CHECK(text_of(end_of(events, "call_2")["result"]).rfind("EPERM: ", 0) == 0);
  CHECK(text_of(end_of(events, "call_3")["result"]).rfind("EPERM: ", 0) == 0);
  CHECK(text_of(end_of(events, "call_4")["result"]) ==
        "Could not edit file: /proc/self/fd/1. Error code: EPERM.");
  CHECK(text_of(end_of(events, "call_5")["result"]) ==
        "EPERM: operation not permitted (the server's own standard stream), open '/dev/stdin'");
  // stdin was not read from: the next command still arrives whole.
  CHECK(r.command(Json{{"id", "s"}, {"type", "get_state"}})["success"] == true);
}

TEST_CASE("a catastrophic grep ends at abort and at end of input within a second") {
  std::string evil;
  for (int i = 0; i < 20000; ++i)
    evil += std::string(18, 'a') + "!\n";
  for (const bool by_abort : {true, false}) {
    CAPTURE(by_abort);
    ReboundProcess r = tool_server(
        script_of(
            Json::array({call("grep", {{"pattern", "^(a|a)*$"}, {"path", "work/evil.txt"}})})),
        {{"evil.txt", evil}}, kAllTools);
    r.send(prompt());
    r.read_until_type("tool_execution_start");
    std::this_thread::sleep_for(300ms);  // the search is running
    const auto asked = std::chrono::steady_clock::now();
    if (by_abort) {
      r.send(Json{{"id", "a"}, {"type", "abort"}});
      const auto events = r.read_until_response("a");
      CHECK(text_of(end_of(events, "call_1")["result"]) == "Operation aborted");
    }
    r.proc().close_stdin();
    // Before the fix the worker stayed in one PCRE2 call for ~25 s and the exit waited for it.
    CHECK(r.proc().wait(5000ms) == 0);
    CHECK(since(asked) < 1000ms);
  }
}

TEST_CASE("no key in use reaches a tool's environment, an event, the session file or a request") {
  const std::string env_key = "sk-canary-env-0123456789abcdef";
  const std::string flag_key = "sk-canary-flag-fedcba9876543210";
  testing::SubprocessOptions options;
  options.env = {{"OPENAI_API_KEY", env_key}, {"SAME_KEY_OTHER_NAME", env_key}};
  const std::string command =
      "env; tr '\\0' ' ' < /proc/$PPID/cmdline; echo; cat work/keyfile; echo "
      "\"[$SAME_KEY_OTHER_NAME]\"";
  ReboundProcess r(
      {"--session-dir", "@DIR@/sessions", "--provider", "scripted", "--script", "@DIR@/script.json",
       "--script-log", "@DIR@/script-log.jsonl", "--api-key", flag_key},
      options,
      {{"agent/settings.json", "{}"},
       {"script.json", script_of(Json::array({call("bash", {{"command", command}})}))},
       {"work/keyfile", "env " + env_key + " flag " + flag_key + "\n"}});
  r.send(prompt());
  const auto events = r.read_until_type("agent_end");
  const std::string out = text_of(end_of(events, "call_1")["result"]);
  CHECK(out.find("OPENAI_API_KEY=") == std::string::npos);
  CHECK(out.find("SAME_KEY_OTHER_NAME=") == std::string::npos);
  CHECK(out.find("--api-key  ") != std::string::npos);  // the value wiped: empty argument
  CHECK(out.find("env [redacted] flag [redacted]") != std::string::npos);
  CHECK(out.find("[]") != std::string::npos);
  std::string everything;
  for (const auto& e : events)
    everything += e.dump();
  for (const auto& f : fs::recursive_directory_iterator(r.dir().path() / "sessions"))
    if (f.is_regular_file()) everything += r.dir().read(fs::relative(f.path(), r.dir().path()));
  everything += r.dir().read("script-log.jsonl");
  CHECK(r.dir().read("script-log.jsonl").find("[redacted]") != std::string::npos);
  for (const auto& key : {env_key, flag_key}) {
    CHECK(everything.find(key) == std::string::npos);
    CHECK(everything.find(key.substr(0, 14)) == std::string::npos);
  }
}

TEST_CASE("a process of the same user cannot open the server's fds, environ or read its key") {
  // As root every /proc file is open to us; the check needs an ordinary user, so a root test
  // runs the server as `nobody`.
  testing::SubprocessOptions options;
  // The launcher opens the test's directory (the server's cwd) to that user first.
  if (::geteuid() == 0)
    options.launcher = {"/bin/sh", "-c",
                        "chmod -R a+rwX . && exec setpriv --reuid=65534 --regid=65534 "
                        "--clear-groups -- \"$@\"",
                        "sh"};
  const std::string key = "sk-canary-dumpable-00112233445566";
  options.env = {{"ANTHROPIC_API_KEY", key}};
  const std::string command =
      "ls /proc/$PPID/fd >/dev/null 2>&1 && echo fd-open || echo fd-closed; "
      "grep -c canary /proc/$PPID/environ 2>/dev/null || echo environ-closed; "
      "head -c 1 /proc/$PPID/mem 2>/dev/null && echo mem-open || echo mem-closed";
  ReboundProcess r(
      {"--no-session", "--provider", "scripted", "--script", "@DIR@/script.json"}, options,
      {{"agent/settings.json", "{}"},
       {"script.json", script_of(Json::array({call("bash", {{"command", command}})}))}});
  r.send(prompt());
  const auto events = r.read_until_type("agent_end");
  CHECK(text_of(end_of(events, "call_1")["result"]) == "fd-closed\nenviron-closed\nmem-closed\n");
}

namespace {

// Under AddressSanitizer or ThreadSanitizer the server's resident memory says little (freed
// memory waits in a quarantine, shadow memory grows with every allocation, the sanitizer's own
// allocator keeps what is freed): the bounds are checked without them.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kMemoryChecked = false;
#else
constexpr bool kMemoryChecked = true;
#endif

// Waits up to `limit` while the server's resident memory stays under `kib`; its peak after.
long peak_within(pid_t pid, long kib, std::chrono::milliseconds limit) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < until && testing::proc_status_kib(pid, "VmRSS:") < kib)
    std::this_thread::sleep_for(20ms);  // watching another process, not pacing the test
  return testing::proc_status_kib(pid, "VmHWM:");
}

}  // namespace

TEST_CASE("rpc: commands whose answers are not read pause the reading of stdin") {
  ReboundProcess r;  // the offline echo model
  r.send(Json{{"id", "p"}, {"type", "prompt"}, {"message", std::string(1 << 20, 'x')}});
  r.read_until_type("agent_end", 20000ms);
  const long before_kib = testing::proc_status_kib(r.proc().pid(), "VmHWM:");
  // 200 get_messages of a session holding 2 MB of messages: 400 MB of answers, none read.
  std::string burst;
  for (int i = 0; i < 200; ++i)
    burst += Json{{"id", "g" + std::to_string(i)}, {"type", "get_messages"}}.dump() + "\n";
  r.send_raw(burst);
  const long peak_kib = peak_within(r.proc().pid(), before_kib + 300 * 1024, 2000ms);
  MESSAGE("peak RSS " << before_kib / 1024 << " MB before the burst, " << peak_kib / 1024
                      << " MB with 200 answers of 2 MB unread");
  if (kMemoryChecked) CHECK(peak_kib < before_kib + 64 * 1024);  // before the fix: ~400 MB more
  // Nothing is lost: reading now, every command is answered in order.
  int answered = 0;
  while (answered < 200) {
    const auto line = r.proc().read_line(20000ms);
    REQUIRE_MESSAGE(line.has_value(), answered << " answered");
    if (line->rfind("{\"id\":\"g", 0) != 0) continue;  // a response: its id comes first
    CHECK(line->rfind("{\"id\":\"g" + std::to_string(answered) + "\",\"type\":\"response\"", 0) ==
          0);
    ++answered;
  }
}

TEST_CASE("acp: a client that writes requests and reads nothing is read no further") {
  ReboundProcess r({"--mode", "acp", "--no-session"});
  const long before_kib = testing::proc_status_kib(r.proc().pid(), "VmHWM:");
  // 4,000 requests of 16 KB whose errors quote them (64 MB in, 64 MB out), written by a
  // thread that blocks once the server stops reading.
  const std::string method = "x/" + std::string(16 * 1024, 'm');
  std::thread writer([&] {
    for (int i = 0; i < 4000; ++i)
      r.send(Json{{"jsonrpc", "2.0"}, {"id", i}, {"method", method}});
  });
  const long peak_kib = peak_within(r.proc().pid(), before_kib + 200 * 1024, 2000ms);
  MESSAGE("peak RSS " << peak_kib / 1024 << " MB with 64 MB of requests sent, none answered read");
  if (kMemoryChecked) CHECK(peak_kib < before_kib + 48 * 1024);  // before: above 128 MB more
  int answered = 0;
  while (answered < 4000) {
    const auto line = r.proc().read_line(20000ms);
    REQUIRE(line.has_value());
    CHECK(line->find("\"id\":" + std::to_string(answered) + ",") != std::string::npos);
    ++answered;
  }
  writer.join();
}

TEST_CASE("rpc: paused input still ends when the client closes stdin and reads nothing") {
  ReboundProcess r;
  r.send(Json{{"id", "p"}, {"type", "prompt"}, {"message", std::string(1 << 20, 'x')}});
  r.read_until_type("agent_end", 20000ms);
  std::string burst;
  for (int i = 0; i < 50; ++i)
    burst += Json{{"id", "g" + std::to_string(i)}, {"type", "get_messages"}}.dump() + "\n";
  r.send_raw(burst);
  const auto closed = std::chrono::steady_clock::now();
  r.proc().close_stdin();
  // The pause notices the hang-up (2 s of it), then the usual bounded shutdown (2 s).
  CHECK(r.proc().wait(10000ms) == 0);
  MESSAGE("exited " << since(closed).count() << " ms after stdin closed");
}

namespace {

// Whether `pid` is a live process (a zombie waiting to be reaped is not).
bool alive(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!std::getline(in, text)) return false;
  const auto close = text.rfind(')');
  return close != std::string::npos && close + 2 < text.size() && text[close + 2] != 'Z';
}

}  // namespace

TEST_CASE("bash: background processes outlive the call and end with the server, setsid ones too") {
  const std::string command =
      "nohup sleep 300 >/dev/null 2>&1 & echo $! > bg1; "
      "setsid sleep 312 >/dev/null 2>&1 & echo $! > bg2; echo started";
  ReboundProcess r = tool_server(script_of(Json::array({call("bash", {{"command", command}})})));
  r.send(prompt());
  const auto events = r.read_until_type("agent_end");
  CHECK(text_of(end_of(events, "call_1")["result"]) == "started\n");
  // The `bash` command's background processes too.
  const Json ran = r.command(Json{{"id", "b"},
                                  {"type", "bash"},
                                  {"command", "setsid sleep 313 >/dev/null 2>&1 & echo $! > bg3"}});
  CHECK(ran["success"] == true);
  std::vector<pid_t> pids;
  for (const char* name : {"bg1", "bg2", "bg3"})
    pids.push_back(std::stoi(r.dir().read(name)));
  CHECK(still_answers(r));  // a loop turn after the calls ended: a wrongful kill has landed
  for (pid_t pid : pids)
    CHECK_MESSAGE(alive(pid), pid << " was killed when its call ended");  // before: bg1 was
  r.proc().close_stdin();
  CHECK(r.proc().wait(5000ms) == 0);
  for (pid_t pid : pids) {
    for (int i = 0; i < 100 && alive(pid); ++i)
      std::this_thread::sleep_for(10ms);  // the kill is sent; the kernel takes a moment
    CHECK_MESSAGE(!alive(pid), pid << " outlived the server");  // before: bg2, bg3 did
  }
}

TEST_CASE("bash: an orphaned background process is reparented to the server and reaped") {
  const std::string command = "sh -c 'sleep 0.2 & echo $! > orphan'; echo done";
  ReboundProcess r = tool_server(script_of(Json::array({call("bash", {{"command", command}})})));
  r.send(prompt());
  r.read_until_type("agent_end");
  const pid_t pid = std::stoi(r.dir().read("orphan"));
  bool gone = false;
  bool ours = false;
  for (int i = 0; i < 300 && !gone; ++i) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string text;
    gone = !std::getline(in, text);
    if (!gone) {
      std::istringstream fields(text.substr(text.rfind(')') + 2));
      std::string state;
      pid_t ppid = 0;
      fields >> state >> ppid;
      ours = ours || ppid == r.proc().pid();
      std::this_thread::sleep_for(10ms);  // watching another process
    }
  }
  CHECK(ours);  // the subreaper: its parent shell exited, the server became its parent
  CHECK(gone);  // and it was reaped (not left a zombie) within 3 s
}

TEST_CASE("switch_session of a large file is read off the loop: get_state answers meanwhile") {
  // 60,000 entries (about 18 MB): a parse that takes far longer than a get_state.
  const std::string file = testing::linear_session_file("big-1", 60000);
  ReboundProcess r({"--session-dir", "@DIR@/sessions"}, {}, {{"big.jsonl", file}});
  r.send(Json{{"id", "sw"},
              {"type", "switch_session"},
              {"sessionPath", (r.dir().path() / "big.jsonl").string()}});
  r.send(Json{{"id", "st"}, {"type", "get_state"}});
  // Before the fix the loop parsed the file first: the switch answered before get_state.
  const auto lines = r.read_until_response("st", 120000ms);
  for (const auto& l : lines)
    CHECK(l.value("id", Json()) != "sw");
  CHECK(lines.back()["data"]["sessionId"] != "big-1");  // still the session before the switch
  const Json switched = r.read_until_response("sw", 120000ms).back();
  CHECK(switched["success"] == true);
  const Json state = r.command(Json{{"id", "st2"}, {"type", "get_state"}})["data"];
  CHECK(state["sessionId"] == "big-1");
  CHECK(state["messageCount"] == 60000);
}

TEST_CASE("a loaded session holds its conversation once: resident memory near the file's size") {
  // 20,000 messages of 2,000 characters (about 43 MB). The session keeps the context and the
  // stats, not a second copy of every message as its history; the load's own memory is given
  // back.
  const std::string file = testing::linear_session_file("big-1", 20000, 2000);
  const long file_kib = static_cast<long>(file.size() / 1024);
  ReboundProcess r({"--session-dir", "@DIR@/sessions"}, {}, {{"big.jsonl", file}});
  r.command(Json{{"id", "up"}, {"type", "get_state"}});  // started up fully
  const long idle_kib = testing::proc_status_kib(r.proc().pid(), "VmRSS:");
  r.send(Json{{"id", "sw"},
              {"type", "switch_session"},
              {"sessionPath", (r.dir().path() / "big.jsonl").string()}});
  const Json switched = r.read_until_response("sw", 120000ms).back();
  CHECK(switched["success"] == true);
  CHECK(r.command(Json{{"id", "st"}, {"type", "get_state"}})["data"]["messageCount"] == 20000);
  const long held_kib = testing::proc_status_kib(r.proc().pid(), "VmRSS:") - idle_kib;
  const long peak_kib = testing::proc_status_kib(r.proc().pid(), "VmHWM:") - idle_kib;
  MESSAGE("file ", file_kib, " KiB, held ", held_kib, " KiB, peak ", peak_kib, " KiB");
  if (kMemoryChecked) {
    // Measured: held 1.3-1.5 times, peak 2.6-2.8 (before: 2.9 and 3.8); the bounds leave room
    // for a machine under load.
    CHECK(held_kib < file_kib * 2);
    CHECK(peak_kib < file_kib * 7 / 2);
  }
}

TEST_CASE("bash that cannot start its process ends the call with an error, not the server") {
  // Issue 50: a command over the kernel's 128 KiB argument limit, or a long shellCommandPrefix,
  // makes the shell's exec fail; the call's completion had been moved into the call that never
  // started, and calling the moved-from one ended the server (bad_function_call, exit 1).
  const std::string huge(200 * 1024, 'x');
  SUBCASE("rpc: a 200 KiB command, then the run goes on and the server answers") {
    ReboundProcess r =
        tool_server(script_of(Json::array({call("bash", {{"command", "echo " + huge}}),
                                           call("bash", {{"command", "echo fine"}})})),
                    {}, kAllTools);
    r.send(prompt());
    const auto events = r.read_until_type("agent_end", 30000ms);
    const Json failed = end_of(events, "call_1");
    CHECK(failed["isError"] == true);
    CHECK(text_of(failed["result"]).find("Cannot run") != std::string::npos);
    CHECK(text_of(end_of(events, "call_2")["result"]).find("fine") != std::string::npos);
    CHECK(still_answers(r));
  }
  SUBCASE("rpc: a shellCommandPrefix over the limit fails every call the same way") {
    ReboundProcess r = tool_server(script_of(Json::array({call("bash", {{"command", "true"}})})),
                                   {}, kAllTools, Json{{"shellCommandPrefix", huge}}.dump());
    r.send(prompt());
    const auto events = r.read_until_type("agent_end", 30000ms);
    CHECK(end_of(events, "call_1")["isError"] == true);
    CHECK(still_answers(r));
  }
  SUBCASE("one-shot: the call fails, the answer comes, the result line is written, exit 0") {
    ReboundProcess r(
        testing::scripted_args(
            {"--no-session", "-p", "go", "--output-format", "json", "--tools", "bash"}),
        [] {
          testing::SubprocessOptions o;
          o.cwd = "@DIR@/work";
          o.stdin_file = "/dev/null";
          return o;
        }(),
        {{"agent/settings.json", "{}"},
         {"script.json", script_of(Json::array({call("bash", {{"command", "echo " + huge}})}))},
         {"work/.keep", ""}});
    r.expect_any_exit();
    const auto lines = r.proc().read_all_lines(30000ms);
    REQUIRE(!lines.empty());
    const Json result = Json::parse(lines.back());
    CHECK(result["type"] == "result");
    CHECK(result["result"] == "done");
    CHECK(r.proc().wait(10000ms) == 0);
  }
}

TEST_CASE("bash that cannot start: through a hook's updatedInput, and out of descriptors") {
  const std::string huge(200 * 1024, 'x');
  SUBCASE("rpc: a PreToolUse hook's updatedInput over the argument limit") {
    // The hook's answer holds a 200 KiB command, written by a shell script from the test.
    const std::string hook =
        "head -c 0; printf '{\"hookSpecificOutput\":{\"hookEventName\":"
        "\"PreToolUse\",\"updatedInput\":{\"command\":\"echo %s\"}}}' "
        "\"$(head -c 204800 /dev/zero | tr '\\0' x)\"";
    const std::string settings = R"j({"hooks":{"PreToolUse":[{"matcher":"bash","hooks":[
      {"type":"command","command":)j" +
                                 Json(hook).dump() + "}]}]}}";
    ReboundProcess r =
        tool_server(script_of(Json::array({call("bash", {{"command", "echo small"}})})), {},
                    kAllTools, settings);
    r.send(prompt());
    const auto events = r.read_until_type("agent_end", 30000ms);
    const Json failed = end_of(events, "call_1");
    CHECK(failed["isError"] == true);
    CHECK(text_of(failed["result"]).find("Cannot run") != std::string::npos);
    CHECK(still_answers(r));
  }
  SUBCASE("rpc: 300 parallel calls under a limit of 64 descriptors") {
    Json calls = Json::array();
    for (int i = 0; i < 300; ++i)
      calls.push_back(call("bash", {{"command", "echo n" + std::to_string(i)}}));
    testing::SubprocessOptions o;
    o.launcher = {"/bin/sh", "-c", "ulimit -n 64 && exec \"$@\"", "sh"};
    ReboundProcess r = tool_server(script_of(calls), {}, kAllTools, "{}", o);
    r.send(prompt());
    const auto events = r.read_until_type("agent_end", 60000ms);
    int ran = 0, refused = 0;
    for (int i = 0; i < 300; ++i) {
      const Json end = end_of(events, "call_" + std::to_string(i + 1));
      if (end["isError"] == true) {
        ++refused;
      } else {
        CHECK(text_of(end["result"]) == "n" + std::to_string(i) + "\n");
        ++ran;
      }
    }
    CHECK(ran + refused == 300);
    MESSAGE(ran << " calls ran, " << refused << " could not start");
    CHECK(still_answers(r));
  }
}
