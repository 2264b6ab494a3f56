// What the permission policy and the sandbox cost a tool call (policy.md section 10):
// - the sandbox: the same 50 `true` bash calls, one per LLM request, in a workspace holding one
//   git repository, without and with --sandbox; each call's time from its tool_execution_start
//   line to its tool_execution_end line as a client reading stdout sees them. Target: the
//   difference of the medians at most 5 ms (Codex: 28-43 ms; bare bubblewrap about 4 ms).
// - the decision: Policy::judge in process on a CI-like rule set, for bash commands (analysed
//   part by part), file paths and MCP names. Target: under 20 µs per call.
// usage: bench_policy [calls (default 50)] [runs (default 3)]

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "bench/tool_call_timing.h"
#include "policy/dir_index.h"
#include "policy/policy.h"
#include "protocol/json.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

using Clock = std::chrono::steady_clock;
using rebound::protocol::Json;
using rebound::testing::Subprocess;
namespace policy = rebound::policy;

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

std::vector<double> run_calls(int calls, bool sandbox) {
  rebound::testing::TempDir dir;
  dir.write("agent/settings.json", "{}");
  dir.write("work/README.md", "repo\n");
  std::system(("git -C " + (dir.path() / "work").string() + " init -q").c_str());
  Json script = Json::array();
  for (int i = 0; i < calls; ++i)
    script.push_back(
        Json{{"toolCalls",
              Json::array({Json{{"name", "bash"}, {"arguments", {{"command", "true"}}}}})}});
  script.push_back(Json{{"text", "done"}});
  dir.write("script.json", script.dump());
  rebound::testing::SubprocessOptions o;
  o.env["HOME"] = dir.path().string();
  o.cwd = dir.path() / "work";
  std::vector<std::string> argv{REBOUND_BINARY,
                                "--agent-dir",
                                (dir.path() / "agent").string(),
                                "--no-session",
                                "--provider",
                                "scripted",
                                "--script",
                                (dir.path() / "script.json").string(),
                                "--log-level",
                                "warn"};
  if (sandbox) argv.push_back("--sandbox");
  Subprocess p(argv, o);
  p.write(R"({"id":"p","type":"prompt","message":"run it"})"
          "\n");
  return rebound::bench::tool_call_times(p, calls);
}

// Decisions per call on a rule set like the README's CI example, the workspace a temporary
// directory with a few files.
void decisions() {
  rebound::testing::TempDir dir;
  dir.write("src/a.cpp", "x");
  dir.write(".env", "SECRET=1");
  policy::PolicySettings s;
  s.workspace = dir.path().string();
  s.home = dir.path().string();
  s.mode = policy::Mode::dont_ask;
  const std::vector<std::pair<policy::Behavior, const char*>> rules = {
      {policy::Behavior::allow, "Read"},
      {policy::Behavior::allow, "Grep"},
      {policy::Behavior::allow, "Edit(src/**)"},
      {policy::Behavior::allow, "Bash(npm ci)"},
      {policy::Behavior::allow, "Bash(npm test:*)"},
      {policy::Behavior::allow, "Bash(git diff:*)"},
      {policy::Behavior::allow, "mcp__github__get_issue"},
      {policy::Behavior::deny, "Bash(git push:*)"},
      {policy::Behavior::deny, "Bash(rm:*)"},
      {policy::Behavior::deny, "Read(./.env)"},
      {policy::Behavior::ask, "Bash(curl:*)"}};
  for (const auto& [b, text] : rules) {
    policy::Rule r = policy::parse_rule(text, b, {}).value();
    r.source = "cli";
    s.rules.push_back(std::move(r));
  }
  const policy::Policy p(s);
  const std::vector<std::pair<std::string, Json>> calls = {
      {"bash", Json{{"command", "git diff HEAD~1 -- src/a.cpp"}}},
      {"bash", Json{{"command", "npm test -- --runInBand && git diff --stat | head -20"}}},
      {"bash", Json{{"command", "cat .env"}}},
      {"read", Json{{"path", "src/a.cpp"}}},
      {"edit", Json{{"path", "src/a.cpp"}}},
      {"write", Json{{"path", "docs/new.md"}}},
      {"mcp__github__get_issue", Json::object()},
  };
  // First in a workspace just made (every bash path word costs an lstat), then in one whose top
  // directory has not changed for the last 2 s, as between most tool calls: the bash path words
  // are then looked up in its kept listing (policy/dir_index.h). Only bash judgements differ.
  for (const char* workspace : {"just made", "settled"}) {
    if (std::string_view(workspace) == "settled")
      std::this_thread::sleep_for(
          std::chrono::milliseconds(policy::DirIndex::kSettledNs / 1'000'000 + 100));
    for (const auto& [tool, input] : calls) {
      if (std::string_view(workspace) == "settled" && tool != "bash") continue;
      const int n = 20000;
      std::vector<double> each;
      each.reserve(n);
      for (int i = 0; i < n; ++i) {
        const auto t0 = Clock::now();
        policy::Call c(tool, input, tool.rfind("mcp__", 0) == 0 ? "github" : "");
        const policy::Verdict v = p.judge(c);
        const auto t1 = Clock::now();
        if (v.text.size() > 1u << 20) std::abort();  // keep the work
        each.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
      }
      std::printf("policy decision, %-9s %-24s %-60s median %.2f µs (n=%d, target < 20 µs)\n",
                  workspace, tool.c_str(), input.dump().c_str(), median(each), n);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int calls = argc > 1 ? std::atoi(argv[1]) : 50;
  const int runs = argc > 2 ? std::atoi(argv[2]) : 3;
  decisions();
  for (int run = 1; run <= runs; ++run) {
    const double bare = median(run_calls(calls, false));
    const double boxed = median(run_calls(calls, true));
    std::printf(
        "bash `true`, run %d: median start→end %.3f ms unsandboxed, %.3f ms sandboxed: +%.3f ms "
        "(n=%d each, target <= 5 ms)\n",
        run, bare, boxed, boxed - bare, calls);
  }
  return 0;
}
