// Retry timing on the real binary with the scripted provider:
//  - how much later than its delayMs each retry starts (auto_retry_start → next agent_start, as
//    seen by a client reading stdout);
//  - how long abort_retry takes to be answered (abort_retry sent → auto_retry_end read, and →
//    its response read);
//  - how long retry_now takes (retry_now sent → its response, → the continued run's
//    agent_start).
// usage: bench_retry [retries (default 40)] [delayMs (default 50)]

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "protocol/json.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

using Clock = std::chrono::steady_clock;
using rebound::protocol::Json;
using rebound::testing::Subprocess;

namespace {

double ms(Clock::duration d) {
  return std::chrono::duration<double, std::milli>(d).count();
}

void report(const char* what, std::vector<double> v) {
  std::sort(v.begin(), v.end());
  std::printf("%-44s median %8.3f ms   p90 %8.3f ms   min %8.3f ms   max %8.3f ms   (n=%zu)\n",
              what, v[v.size() / 2], v[v.size() * 9 / 10], v.front(), v.back(), v.size());
}

Json read_until(Subprocess& p, const std::string& type, Clock::time_point* at = nullptr) {
  while (auto line = p.read_line(std::chrono::milliseconds(10000))) {
    Json j = Json::parse(*line);
    if (j["type"] == type) {
      if (at) *at = Clock::now();
      return j;
    }
  }
  std::fprintf(stderr, "timed out waiting for %s: %s\n", type.c_str(), p.stderr_text().c_str());
  std::exit(1);
}

// One 503 and then an answer per prompt.
std::string fail_once_per_prompt(int prompts) {
  std::string script = "[";
  for (int i = 0; i < prompts; ++i)
    script += R"({"error":"503 overloaded"},{"text":"ok"},)";
  return script + R"({"text":"ok"}])";
}

std::unique_ptr<Subprocess> start(rebound::testing::TempDir& dir, const std::string& script,
                                  int delay_ms, const char* log_level = "warn") {
  dir.write("agent/settings.json", R"({"retry":{"enabled":true,"maxRetries":1,"baseDelayMs":)" +
                                       std::to_string(delay_ms) + "}}");
  dir.write("script.json", script);
  rebound::testing::SubprocessOptions o;
  o.env["HOME"] = dir.path().string();
  return std::make_unique<Subprocess>(
      std::vector<std::string>{REBOUND_BINARY, "--agent-dir", (dir.path() / "agent").string(),
                               "--no-session", "--provider", "scripted", "--script",
                               (dir.path() / "script.json").string(), "--log-level", log_level},
      o);
}

// The lateness of every `timer of DELAY ms fired X ms after its deadline` debug line.
std::vector<double> timer_lateness(const std::string& log, int delay_ms) {
  std::vector<double> out;
  const std::string key = "timer of " + std::to_string(delay_ms) + " ms fired ";
  for (std::size_t at = log.find(key); at != std::string::npos; at = log.find(key, at + 1))
    out.push_back(std::strtod(log.c_str() + at + key.size(), nullptr));
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const int retries = argc > 1 ? std::atoi(argv[1]) : 40;
  const int delay_ms = argc > 2 ? std::atoi(argv[2]) : 50;

  std::vector<double> excess, server_late;
  {
    rebound::testing::TempDir dir;
    const std::string script = fail_once_per_prompt(retries);
    // Debug logs carry the server's own view: how late each timer fired.
    auto p = start(dir, script, delay_ms, "debug");
    for (int i = 0; i < retries; ++i) {
      p->write(R"({"type":"prompt","message":"go"})"
               "\n");
      Clock::time_point started, resumed;
      const Json s = read_until(*p, "auto_retry_start", &started);
      read_until(*p, "agent_start", &resumed);
      read_until(*p, "auto_retry_end");
      excess.push_back(ms(resumed - started) - s["delayMs"].get<double>());
    }
    p->close_stdin();
    p->wait();
    server_late = timer_lateness(p->stderr_text(), delay_ms);
  }

  std::vector<double> to_end, to_response;
  {
    rebound::testing::TempDir dir;
    auto p = start(dir, R"([{"error":"503 overloaded"}])", 60000);
    for (int i = 0; i < retries; ++i) {
      p->write(R"({"type":"prompt","message":"go"})"
               "\n");
      read_until(*p, "auto_retry_start");
      const auto sent = Clock::now();
      p->write(R"({"id":"a","type":"abort_retry"})"
               "\n");
      Clock::time_point ended, answered;
      read_until(*p, "auto_retry_end", &ended);
      read_until(*p, "response", &answered);
      to_end.push_back(ms(ended - sent));
      to_response.push_back(ms(answered - sent));
    }
  }

  // retry_now in a 60 s backoff (retry.md section 17): sent → its response, sent → the continued
  // run's agent_start.
  std::vector<double> now_to_response, now_to_start;
  {
    rebound::testing::TempDir dir;
    const std::string script = fail_once_per_prompt(retries);
    auto p = start(dir, script, 60000);
    for (int i = 0; i < retries; ++i) {
      p->write(R"({"type":"prompt","message":"go"})"
               "\n");
      read_until(*p, "auto_retry_start");
      const auto sent = Clock::now();
      p->write(R"({"id":"n","type":"retry_now"})"
               "\n");
      Clock::time_point answered, resumed;
      read_until(*p, "response", &answered);
      read_until(*p, "agent_start", &resumed);
      read_until(*p, "auto_retry_end");
      now_to_response.push_back(ms(answered - sent));
      now_to_start.push_back(ms(resumed - sent));
    }
  }

  std::printf("retry delay %d ms, %d retries each\n", delay_ms, retries);
  report("retry start later than delayMs", excess);
  if (!server_late.empty()) report("server: backoff timer fired after deadline", server_late);
  report("abort_retry sent -> auto_retry_end read", to_end);
  report("abort_retry sent -> its response read", to_response);
  report("retry_now sent -> its response read", now_to_response);
  report("retry_now sent -> agent_start read", now_to_start);
  return 0;
}
