// The input cost of a 30-turn tool session on Claude, with prompt caching and without
// (providers.md section 7.3), against the strict fake of tests/support/strict_llm.h, which
// accounts Anthropic's cache as documented; beside the pi agent on the same fake when its
// cli.js is given. Prices: Claude Sonnet 4.5's list prices per million input tokens (3 input,
// 0.30 cache read, 3.75 cache write; 6 for a 1-hour cache write).
// usage: bench_cache [turns (default 30)] [pi cli.js]

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "protocol/json.h"
#include "tests/support/strict_llm.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

using rebound::protocol::Json;
using rebound::testing::StrictLlm;
using rebound::testing::StrictTurn;
using rebound::testing::Subprocess;
using rebound::testing::SubprocessOptions;

namespace {

struct Outcome {
  std::int64_t input = 0, read = 0, write = 0;
  std::size_t requests = 0;
  std::string refused;
  double cost(double write_price) const {
    return (input * 3.0 + read * 0.3 + write * write_price) / 1e6;
  }
};

Outcome run(const std::string& name, const std::vector<std::string>& argv, int turns,
            const std::string& retention) {
  StrictLlm llm;
  rebound::testing::TempDir dir;
  const Json model{
      {"id", "claude-sonnet-4-5"},
      {"name", "Claude Sonnet 4.5"},
      {"reasoning", true},
      {"input", {"text", "image"}},
      {"contextWindow", 200000},
      {"maxTokens", 32000},
      {"cost", {{"input", 3}, {"output", 15}, {"cacheRead", 0.3}, {"cacheWrite", 3.75}}}};
  const Json models{{"providers",
                     {{"claude",
                       {{"api", "anthropic-messages"},
                        {"baseUrl", llm.base_url()},
                        {"apiKey", "sk-ant-bench"},
                        {"models", {model}}}}}}};
  Json settings{{"defaultProvider", "claude"},
                {"defaultModel", "claude-sonnet-4-5"},
                {"defaultThinkingLevel", "medium"},
                {"quietStartup", true},
                {"compaction", {{"enabled", false}}}};
  if (!retention.empty()) settings["cacheRetention"] = retention;
  dir.write("agent/models.json", models.dump());
  dir.write("agent/settings.json", settings.dump());
  dir.write("work/notes.txt", "alpha\nbeta\ngamma\n");
  for (int i = 0; i < turns; ++i) {
    StrictTurn t;
    t.text = "";
    t.calls = {{"read", Json{{"path", "notes.txt"}}}};
    llm.push(t);
  }
  StrictTurn last;
  last.text = "done";
  llm.push(last);
  SubprocessOptions o;
  o.cwd = dir.path() / "work";
  const std::string agent = (dir.path() / "agent").string();
  o.env = {{"HOME", dir.path().string()},
           {"PI_CODING_AGENT_DIR", agent},
           {"REBOUND_AGENT_DIR", agent},
           {"ANTHROPIC_API_KEY", ""}};
  Subprocess p(argv, o);
  p.write(Json{{"id", "p"}, {"type", "prompt"}, {"message", "Read notes.txt, one call a turn."}}
              .dump() +
          "\n");
  bool ended = false;
  while (auto line = p.read_line(std::chrono::milliseconds(60000))) {
    const Json j = Json::parse(*line, nullptr, false);
    if (!j.is_discarded() && j.value("type", "") == "agent_end") {
      ended = true;
      break;
    }
  }
  p.close_stdin();
  p.wait(std::chrono::milliseconds(10000));
  if (!ended) {
    std::fprintf(stderr, "%s: no agent_end; stderr:\n%s\n", name.c_str(), p.stderr_text().c_str());
    std::exit(1);
  }
  Outcome out;
  for (const auto& x : llm.exchanges()) {
    ++out.requests;
    out.input += x.cache.input;
    out.read += x.cache.cache_read;
    out.write += x.cache.cache_write;
  }
  out.refused = llm.refusals();
  return out;
}

void report(const char* name, const Outcome& o, double write_price, double baseline) {
  const double total = static_cast<double>(o.input + o.read + o.write);
  std::printf(
      "%-28s requests %3zu  input %8lld  cache read %8lld (%5.1f %%)  cache write %7lld  "
      "input cost $%.4f  (%.2fx no caching)%s\n",
      name, o.requests, static_cast<long long>(o.input), static_cast<long long>(o.read),
      total > 0 ? 100.0 * static_cast<double>(o.read) / total : 0.0,
      static_cast<long long>(o.write), o.cost(write_price),
      baseline > 0 ? o.cost(write_price) / baseline : 0.0,
      o.refused.empty() ? "" : "  REFUSED REQUESTS");
  if (!o.refused.empty()) std::printf("%s", o.refused.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  const int turns = argc > 1 ? std::atoi(argv[1]) : 30;
  const std::string pi = argc > 2 ? argv[2] : "";
  const std::vector<std::string> rebound{REBOUND_BINARY, "--no-session", "--no-extensions",
                                         "--no-mcp"};
  const Outcome none = run("rebound none", rebound, turns, "none");
  const Outcome short_term = run("rebound short", rebound, turns, "short");
  const Outcome long_term = run("rebound long", rebound, turns, "long");
  const double baseline = none.cost(3.75);
  std::printf("%d tool turns on claude-sonnet-4-5 (strict fake), input billed at list prices\n",
              turns);
  report("rebound, cacheRetention none", none, 3.75, baseline);
  report("rebound, short (default)", short_term, 3.75, baseline);
  report("rebound, long", long_term, 6.0, baseline);
  if (!pi.empty()) {
    const std::vector<std::string> pi_argv{"/usr/bin/env", "node", pi,
                                           "--mode",       "rpc",  "--no-session"};
    report("pi 0.73.1", run("pi", pi_argv, turns, ""), 3.75, baseline);
  }
  return 0;
}
