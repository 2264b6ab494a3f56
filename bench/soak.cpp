// Soak driver (issue 8): one server process, N prompts against the fake OpenAI-compatible
// server with a seeded mix of answers, 503s, 429s, dropped streams, response timeouts and
// context overflows, and abort / abort_retry at random moments. Through RpcClient it checks
// that every retry chain ends exactly once (one auto_retry_end per chain, attempts counting up
// from 1), that each prompt's work ends (wait_for_idle never times out), and compares the
// server's resident memory and open descriptors after warm-up with those at the end. A new
// session starts every 50 prompts (a conversation's own memory grows with it).
// usage: bench_soak [prompts (default 10000)] [seed (default 20261130)]

#include <dirent.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <random>
#include <string>
#include <thread>

#include "rebound/rpc_client.h"
#include "tests/support/fake_llm_server.h"
#include "tests/support/proc_status.h"
#include "tests/support/temp_dir.h"

using namespace std::chrono_literals;
using rebound::Json;
using rebound::testing::FakeLlmServer;
using rebound::testing::FakeResponse;

namespace {

FakeResponse answer(std::mt19937& rng) {
  FakeResponse r;
  const int deltas = 1 + static_cast<int>(rng() % 6);
  for (int i = 0; i < deltas; ++i) {
    r.chunks.push_back(FakeLlmServer::sse(
        R"({"choices":[{"index":0,"delta":{"content":"word "},"finish_reason":null}]})"));
  }
  r.chunks.push_back(FakeLlmServer::sse(
      R"({"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":9,"completion_tokens":3}})"));
  r.chunks.push_back(FakeLlmServer::sse("[DONE]"));
  r.chunk_delay_ms = rng() % 4 == 0 ? 1 : 0;
  return r;
}

FakeResponse error(int status, const std::string& message) {
  FakeResponse r;
  r.status = status;
  r.chunks = {Json{{"error", Json{{"message", message}}}}.dump()};
  return r;
}

std::vector<FakeResponse> script(std::mt19937& rng, std::size_t n) {
  std::vector<FakeResponse> out;
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned roll = rng() % 1000;
    if (roll < 600) {
      out.push_back(answer(rng));
    } else if (roll < 800) {
      out.push_back(error(503, "overloaded"));
    } else if (roll < 880) {
      out.push_back(error(429, "Rate limit reached"));
    } else if (roll < 950) {
      FakeResponse r = answer(rng);
      r.chunks.resize(1);
      r.drop_after_chunks = true;  // connection error mid-stream
      out.push_back(r);
    } else if (roll < 953) {
      FakeResponse r = answer(rng);
      r.delay_before_headers_ms = 300;  // over the 100 ms response timeout
      out.push_back(r);
    } else {
      out.push_back(error(400, "prompt is too long: 200000 tokens > 128000 maximum"));
    }
  }
  return out;
}

int open_fds(int pid) {
  int n = 0;
  if (DIR* d = ::opendir(("/proc/" + std::to_string(pid) + "/fd").c_str())) {
    while (const dirent* e = ::readdir(d))
      n += e->d_name[0] != '.';
    ::closedir(d);
  }
  return n;
}

}  // namespace

int main(int argc, char** argv) {
  const int prompts = argc > 1 ? std::atoi(argv[1]) : 10000;
  const unsigned seed = argc > 2 ? static_cast<unsigned>(std::atoi(argv[2])) : 20261130u;
  std::mt19937 rng(seed);
  FakeLlmServer server(script(rng, static_cast<std::size_t>(prompts) * 3));
  rebound::testing::TempDir dir;
  dir.write("settings.json", R"({"retry":{"enabled":true,"maxRetries":3,"baseDelayMs":1},
      "compaction":{"enabled":true,"keepRecentTokens":50},
      "http":{"responseTimeoutMs":100,"idleTimeoutMs":100}})");
  rebound::RpcClientOptions o;
  o.server_path = REBOUND_BINARY;
  o.args = {"--agent-dir", dir.path().string(),       "--no-session", "--provider", "openai",
            "--base-url",  server.base_url() + "/v1", "--api-key",    "sk-soak",    "--log-level",
            "error"};
  o.env["HOME"] = dir.path().string();
  rebound::RpcClient client(o);

  // Chain bookkeeping from the events (reader thread).
  std::mutex mu;
  long chains_opened = 0, chains_closed = 0, violations = 0, compactions = 0, starts = 0;
  long open_attempt = 0;  // attempt of the open chain, 0 when none
  auto sub = client.on_event([&](const Json& e) {
    std::lock_guard<std::mutex> lock(mu);
    const std::string t = e.value("type", std::string());
    if (t == "auto_retry_start") {
      const long attempt = e["attempt"].get<long>();
      if (attempt == 1) {
        if (open_attempt != 0) ++violations;  // a chain opened twice
        ++chains_opened;
      } else if (attempt != open_attempt + 1) {
        ++violations;
      }
      open_attempt = attempt;
      ++starts;
    } else if (t == "auto_retry_end") {
      if (open_attempt == 0 && e["attempt"].get<long>() != 0) ++violations;  // closed twice
      if (open_attempt != 0) ++chains_closed;
      open_attempt = 0;
    } else if (t == "auto_compaction_start") {
      ++compactions;
    }
  });

  long aborts = 0, abort_retries = 0, hangs = 0;
  long rss_warm = 0, fds_warm = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < prompts; ++i) {
    if (i == prompts / 10) {
      rss_warm = rebound::testing::proc_status_kib(client.pid(), "VmRSS:");
      fds_warm = open_fds(client.pid());
    }
    try {
      // A conversation's memory grows with it by design; sessions of 50 prompts make the
      // process's own growth visible.
      if (i % 50 == 0) client.new_session();
      client.prompt("prompt " + std::to_string(i));
      const unsigned roll = rng() % 100;
      if (roll < 4) {
        std::this_thread::sleep_for(std::chrono::microseconds(rng() % 3000));
        client.abort();
        ++aborts;
      } else if (roll < 10) {
        std::this_thread::sleep_for(std::chrono::microseconds(rng() % 3000));
        client.abort_retry();
        ++abort_retries;
      }
      if (!client.wait_for_idle(30s)) {
        ++hangs;
        std::fprintf(stderr, "prompt %d did not end within 30 s\n", i);
        client.abort();
      }
    } catch (const rebound::RpcError& e) {
      std::fprintf(stderr, "prompt %d: %s\n", i, e.what());
      return 1;
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const long rss_end = rebound::testing::proc_status_kib(client.pid(), "VmRSS:");
  const int fds_end = open_fds(client.pid());
  const long requests = static_cast<long>(server.requests().size());
  client.stop();
  std::lock_guard<std::mutex> lock(mu);
  const double growth = rss_warm > 0 ? 100.0 * (rss_end - rss_warm) / rss_warm : 0;
  std::printf(
      "%d prompts in %.1f s (seed %u): %ld LLM requests, %ld chains opened, %ld closed, "
      "%ld retries, %ld compactions, %ld aborts, %ld abort_retry, %ld hangs, %ld "
      "violations\n",
      prompts, seconds, seed, requests, chains_opened, chains_closed, starts, compactions, aborts,
      abort_retries, hangs, violations);
  std::printf("RSS after warm-up %ld KiB, at the end %ld KiB (%+.1f %%); open fds %ld → %d\n",
              rss_warm, rss_end, growth, fds_warm, fds_end);
  const bool ok = chains_opened == chains_closed && violations == 0 && hangs == 0 &&
                  growth < 10.0 && fds_end <= fds_warm;
  std::printf("%s\n", ok ? "SOAK OK" : "SOAK FAILED");
  return ok ? 0 : 1;
}
