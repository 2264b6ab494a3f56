// The sandbox through the real binary (policy.md section 8): what a sandboxed bash call sees and
// may do, the exit code of a command killed inside, the default prompt's line, the file tools
// kept to the roots (symlinks, `..`, `.git`, denyRead), and fail closed: every case of section
// 8.10 ends a bash call with `Sandbox unavailable: …` without running it, the rpc `bash` command
// too, and get_policy shows why. The escape suite runs in ctest as sandbox.escape_suite.

#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/support/rebound_process.h"
#include "tests/support/scripted_tools.h"

using namespace rebound;
using namespace rebound::testing;
using protocol::Json;

namespace {

// A sandboxed server working in <dir>/work (so that the workspace is not $HOME, which is <dir>).
ReboundProcess sandboxed(const Json& calls, const std::string& settings = "{}",
                         ReboundProcess::Files files = {}, std::vector<std::string> extra = {}) {
  ReboundProcess::Files all{
      {"agent/settings.json", settings}, {"script.json", script_of(calls)}, {"work/.keep", ""}};
  for (auto& [name, text] : files)
    all[name] = text;
  extra.insert(extra.begin(),
               {"--no-session", "--sandbox", "--tools", "read,bash,edit,write,grep,find,ls"});
  SubprocessOptions options;
  options.cwd = "@DIR@/work";
  options.env["OPENAI_API_KEY"] = "sk-canary-0123456789";
  options.env["GITHUB_TOKEN"] = "ghp-canary";
  return ReboundProcess(scripted_args(extra), options, all);
}

std::vector<Json> run(ReboundProcess& r) {
  r.send(prompt());
  return r.read_until_type("agent_end", std::chrono::milliseconds(20000));
}

std::string result_text(const std::vector<Json>& events, const std::string& id) {
  return text_of(end_of(events, id)["result"]);
}

Json bash_call(const std::string& command) {
  return call("bash", {{"command", command}});
}

}  // namespace

TEST_CASE("sandbox: the environment, $HOME, /tmp, .git and the exit code of a killed command") {
  ReboundProcess r = sandboxed(Json::array(
      {bash_call("echo sandbox=$REBOUND_SANDBOX tmp=$TMPDIR key=${OPENAI_API_KEY:-none} "
                 "token=${GITHUB_TOKEN:-none}; ls -A ~; touch /tmp/inside && "
                 "echo tmp-ok; echo x > ws.txt && echo ws-ok"),
       bash_call("kill -9 $$"),
       bash_call("tr '\\0' '\\n' < /proc/1/environ | grep -c canary || true"),
       bash_call("mkdir -p sub/.git/hooks && echo hook > sub/.git/hooks/post-commit"
                 " && echo made")}));
  const auto events = run(r);
  // $HOME is empty but for the workspace's mount point (it lies inside $HOME here).
  CHECK(result_text(events, "call_1") ==
        "sandbox=1 tmp=/tmp key=none token=none\nwork\ntmp-ok\nws-ok\n");
  CHECK(r.dir().read("work/ws.txt") == "x\n");
  CHECK_FALSE(std::filesystem::exists("/tmp/inside"));  // a private /tmp
  CHECK(result_text(events, "call_2") == "Command exited with code 137");
  CHECK(result_text(events, "call_3") == "0\n");
  // A repository the command creates is writable during that call.
  CHECK(result_text(events, "call_4") == "made\n");
  // The default prompt says so (section 8.7).
  const auto log = r.jsonl("script-log.jsonl");
  REQUIRE(!log.empty());
  CHECK(log[0]["systemPrompt"].get<std::string>().find(
            "- Commands run in a sandbox: they can change files only in the working directory "
            "(not in .git), the network is off, and background processes end when the command "
            "does.\n- Be concise.") != std::string::npos);
  const Json policy = r.command(Json{{"id", "g"}, {"type", "get_policy"}, {"wait", true}})["data"];
  CHECK(policy["sandbox"]["status"] == "active");
  CHECK(policy["sandbox"]["bwrapVersion"].get<std::string>().rfind("0.", 0) == 0);
  CHECK(policy["sandbox"]["workspace"] ==
        std::filesystem::canonical(r.dir().path() / "work").string());
  // The next command: the repository made above is read-only now.
  r.send(Json{{"id", "b"}, {"type", "bash"}, {"command", "echo x > sub/.git/hooks/post-commit"}});
  const Json bash = r.read_until_response("b").back();
  CHECK(bash["data"]["output"].get<std::string>().find("Read-only file system") !=
        std::string::npos);
  CHECK(r.dir().read("work/sub/.git/hooks/post-commit") == "hook\n");
}

TEST_CASE("sandbox: the file tools keep to the roots") {
  namespace fs = std::filesystem;
  ReboundProcess::Files files{{"outside/secret.txt", "outside"},
                              {"work/src/a.txt", "alpha"},
                              {"work/.git/config", "[core]"},
                              {"work/sub/.git/HEAD", "ref"},
                              {"work/hidden/x.txt", "hidden"}};
  const std::string settings = R"j({"sandbox":{"denyRead":["hidden"]}})j";
  ReboundProcess r = sandboxed(
      Json::array(
          {call("read", {{"path", "../outside/secret.txt"}}), call("read", {{"path", "link.txt"}}),
           call("read", {{"path", "linkdir/secret.txt"}}), call("read", {{"path", "src/a.txt"}}),
           call("read", {{"path", "/etc/hostname"}}),
           call("read", {{"path", "/proc/self/environ"}}), call("read", {{"path", "hidden/x.txt"}}),
           call("write", {{"path", ".git/config"}, {"content", "x"}}),
           call("write", {{"path", "sub/.git/hooks/post-checkout"}, {"content", "x"}}),
           call("write", {{"path", "inner-link.txt"}, {"content", "x"}}),
           call("write", {{"path", "../outside/new.txt"}, {"content", "x"}}),
           call("edit", {{"path", "linkdir/secret.txt"}, {"oldText", "outside"}, {"newText", "x"}}),
           call("write", {{"path", "src/b.txt"}, {"content", "b"}}), call("ls", {{"path", "."}}),
           call("grep", {{"pattern", "outside|alpha|hidden"}}),
           call("read", {{"path", "~/work/src/a.txt"}})}),
      settings, files);
  // Symlinks planted in the workspace: a file and a directory pointing outside, and one to write.
  const fs::path work = r.dir().path() / "work";
  fs::create_symlink(r.dir().path() / "outside/secret.txt", work / "link.txt");
  fs::create_symlink(r.dir().path() / "outside", work / "linkdir");
  fs::create_symlink(work / "src/a.txt", work / "inner-link.txt");
  const auto events = run(r);
  const std::string ws = (r.dir().path() / "work").string();
  const std::string dir = r.dir().path().string();
  CHECK(result_text(events, "call_1") ==
        "Sandbox: " + dir + "/outside/secret.txt is outside the paths this session may read");
  CHECK(result_text(events, "call_2") ==
        "Sandbox: " + ws + "/link.txt is outside the paths this session may read");
  CHECK(result_text(events, "call_3") ==
        "Sandbox: " + ws + "/linkdir/secret.txt is outside the paths this session may read");
  CHECK(result_text(events, "call_4") == "alpha");
  CHECK(end_of(events, "call_5")["isError"] == false);
  CHECK(result_text(events, "call_6") ==
        "Sandbox: /proc/self/environ is outside the paths this session may read");
  CHECK(result_text(events, "call_7") ==
        "Sandbox: " + ws + "/hidden/x.txt is hidden by sandbox.denyRead");
  CHECK(result_text(events, "call_8") ==
        "Sandbox: " + ws + "/.git/config is inside a .git directory, which is read-only");
  CHECK(result_text(events, "call_9") == "Sandbox: " + ws +
                                             "/sub/.git/hooks/post-checkout is inside a .git "
                                             "directory, which is read-only");
  CHECK(result_text(events, "call_10") ==
        "Sandbox: " + ws + "/inner-link.txt is a symbolic link; writes do not follow it");
  CHECK(result_text(events, "call_11") ==
        "Sandbox: " + dir + "/outside/new.txt is outside the paths this session may write");
  CHECK(result_text(events, "call_12") ==
        "Sandbox: " + ws + "/linkdir/secret.txt is outside the paths this session may write");
  CHECK(end_of(events, "call_13")["isError"] == false);
  CHECK(r.dir().read("work/.git/config") == "[core]");
  CHECK(r.dir().read("outside/secret.txt") == "outside");
  CHECK_FALSE(fs::exists(r.dir().path() / "outside/new.txt"));
  // A walk leaves out what lies outside the readable roots and what denyRead hides.
  const std::string listing = result_text(events, "call_14");
  CHECK(listing.find("src/") != std::string::npos);
  CHECK(("\n" + listing + "\n").find("\nlink.txt\n") == std::string::npos);
  CHECK(listing.find("linkdir") == std::string::npos);
  CHECK(listing.find("inner-link.txt") != std::string::npos);  // it stays inside
  CHECK(listing.find("hidden") == std::string::npos);
  const std::string found = result_text(events, "call_15");
  CHECK(found.find("alpha") != std::string::npos);
  CHECK(found.find("outside") == std::string::npos);
  CHECK(found.find("hidden") == std::string::npos);
  CHECK(result_text(events, "call_16") == "alpha");
}

namespace {

// A server whose sandbox cannot be used, and the reason it must give.
void check_unavailable(ReboundProcess& r, const std::string& reason) {
  const std::string marker = (r.dir().path() / "ran.txt").string();  // $HOME is the directory
  r.send(prompt());
  const auto events = r.read_until_type("agent_end", std::chrono::milliseconds(20000));
  CHECK(result_text(events, "call_1") == "Sandbox unavailable: " + reason);
  const Json bash = r.command(Json{{"id", "b"}, {"type", "bash"}, {"command", "touch " + marker}});
  CHECK(bash["success"] == false);
  CHECK(bash["error"] == "Sandbox unavailable: " + reason);
  CHECK_FALSE(std::filesystem::exists(marker));
  const Json policy = r.command(Json{{"id", "g"}, {"type", "get_policy"}, {"wait", true}})["data"];
  CHECK(policy["sandbox"]["status"] == "unavailable");
  CHECK(policy["sandbox"]["reason"] == reason);
  r.proc().close_stdin();
  r.proc().wait();
  CHECK(r.proc().stderr_text().find("sandbox unavailable: " + reason + "; bash calls will fail") !=
        std::string::npos);
}

// A command that would leave <dir>/ran.txt (the server works in <dir>/work or elsewhere).
Json touch_marker() {
  return Json::array({bash_call("touch \"$HOME/ran.txt\"")});
}

void write_executable(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  // Close-on-exec: a child forked meanwhile must not hold it open for writing (ETXTBSY).
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
  REQUIRE(fd >= 0);
  REQUIRE(::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()));
  ::close(fd);
}
}  // namespace

TEST_CASE("sandbox fails closed: bwrapPath missing, not on PATH, the workspace is $HOME") {
  {
    ReboundProcess r =
        sandboxed(touch_marker(), R"j({"sandbox":{"bwrapPath":"/nonexistent/bwrap"}})j");
    check_unavailable(r, "bubblewrap not found at /nonexistent/bwrap");
  }
  {
    ReboundProcess::Files files{{"agent/settings.json", "{}"},
                                {"script.json", script_of(touch_marker())},
                                {"work/.keep", ""}};
    SubprocessOptions options;
    options.cwd = "@DIR@/work";
    options.env["PATH"] = "/nonexistent-bin";
    ReboundProcess r(scripted_args({"--no-session", "--sandbox"}), options, files);
    check_unavailable(r, "bubblewrap (bwrap) not found on PATH");
  }
  {
    // The tests' HOME is the server's directory: working there, the workspace is $HOME.
    ReboundProcess r(scripted_args({"--no-session", "--sandbox"}), {},
                     {{"agent/settings.json", "{}"}, {"script.json", script_of(touch_marker())}});
    check_unavailable(r, "the workspace " + std::filesystem::canonical(r.dir().path()).string() +
                             " cannot be sandboxed: the workspace is $HOME");
  }
}

TEST_CASE("sandbox fails closed: a fake bubblewrap, one inside the workspace, a failing trial") {
  namespace fs = std::filesystem;
  struct Case {
    std::string program;  // the script at <place>/bin/bwrap ("": a file without execute bit)
    bool in_workspace;    // the server works in <place>, so the program lies in its workspace
    std::string reason;   // <bwrap>: the program's real path
  };
  const std::vector<Case> cases = {
      {"", false, "<bwrap> is not executable"},
      {"#!/bin/sh\necho 'bubblewrap 0.7.1'\n", false,
       "<bwrap> is not bubblewrap 0.8.0 or later (it printed: bubblewrap 0.7.1)"},
      {"#!/bin/sh\necho 'something else'\n", false,
       "<bwrap> is not bubblewrap 0.8.0 or later (it printed: something else)"},
      {"#!/bin/sh\nexec /usr/bin/bwrap \"$@\"\n", true,
       "bubblewrap at <bwrap> lies inside a writable path"},
      {"#!/bin/sh\nif [ \"$1\" = --version ]; then exec /usr/bin/bwrap --version; fi\n"
       "echo 'bwrap: No permissions to create a new namespace' >&2; exit 1\n",
       false,
       "bubblewrap cannot create the sandbox: bwrap: No permissions to create a new namespace"},
  };
  for (const auto& c : cases) {
    INFO(c.reason);
    TempDir place;
    const fs::path bin = place.path() / "bin/bwrap";
    if (c.program.empty()) {
      place.write("bin/bwrap", "not a program");
    } else {
      write_executable(bin, c.program);
    }
    SubprocessOptions options;
    options.cwd = c.in_workspace ? place.path() : fs::path("@DIR@/work");
    ReboundProcess r(
        scripted_args({"--no-session", "--sandbox"}), options,
        {{"agent/settings.json", R"j({"sandbox":{"bwrapPath":")j" + bin.string() + R"j("}})j"},
         {"script.json", script_of(touch_marker())},
         {"work/.keep", ""}});
    std::string reason = c.reason;
    if (const auto at = reason.find("<bwrap>"); at != std::string::npos)
      reason.replace(at, 7, fs::canonical(bin).string());
    check_unavailable(r, reason);
  }
}

TEST_CASE("sandbox: a command bubblewrap could not start ends with its last line") {
  TempDir place;
  // The trial (`echo $$`) runs in the real bubblewrap; every later command fails to start.
  write_executable(
      place.path() / "bin/bwrap",
      "#!/bin/sh\ncase \"$*\" in *'echo $$'*|--version) exec /usr/bin/bwrap \"$@\";; esac\n"
      "echo 'bwrap: Can'\"'\"'t mount proc on /newroot/proc: Operation not permitted' >&2\n"
      "exit 1\n");
  ReboundProcess r = sandboxed(
      Json::array({bash_call("touch ../ran.txt")}),
      R"j({"sandbox":{"bwrapPath":")j" + (place.path() / "bin/bwrap").string() + R"j("}})j");
  const auto events = run(r);
  CHECK(
      result_text(events, "call_1") ==
      "Sandbox failed to start: bwrap: Can't mount proc on /newroot/proc: Operation not permitted");
  CHECK_FALSE(std::filesystem::exists(r.dir().path() / "ran.txt"));
}

TEST_CASE("sandbox: MCP servers never start bare (policy.md 8.8): unavailable, off, a bad key") {
  // sandbox.mcpServers with a sandbox that cannot be used: the server fails with the reason; an
  // entry saying "sandbox":false starts outside (and fails here only because it does not exist).
  ReboundProcess r = sandboxed(
      Json::array(),
      R"({"sandbox":{"mcpServers":true,"bwrapPath":"/nonexistent/bwrap"},"mcpServers":{)"
      R"("in":{"command":"/bin/cat"},"out":{"command":"/nonexistent/server","sandbox":false},)"
      R"("odd":{"command":"/bin/cat","sandbox":"yes"}}})");
  const Json servers =
      r.command(Json{{"id", "m"}, {"type", "get_mcp_servers"}, {"wait", true}})["data"]["servers"];
  REQUIRE(servers.size() == 3);
  CHECK(servers[0]["error"] == "Sandbox unavailable: bubblewrap not found at /nonexistent/bwrap");
  CHECK(servers[1]["error"] == "Failed to start: No such file or directory");
  CHECK(servers[2]["error"] == "Invalid configuration: sandbox must be a boolean");
  const Json policy = r.command(Json{{"id", "p"}, {"type", "get_policy"}, {"wait", true}});
  // What would run in it (not a server whose entry is unusable).
  CHECK(policy["data"]["sandbox"]["mcpServers"] == Json::array({"in"}));
}

TEST_CASE("sandbox: an MCP entry asking for the sandbox while it is off does not start") {
  ReboundProcess r(
      {"--no-session"}, {},
      {{"agent/settings.json", R"({"mcpServers":{"s":{"command":"/bin/cat","sandbox":true}}})"}});
  const Json servers =
      r.command(Json{{"id", "m"}, {"type", "get_mcp_servers"}, {"wait", true}})["data"]["servers"];
  REQUIRE(servers.size() == 1);
  CHECK(servers[0]["status"] == "failed");
  CHECK(servers[0]["error"] == "Sandbox unavailable: the sandbox is not enabled (sandbox.enabled)");
}
