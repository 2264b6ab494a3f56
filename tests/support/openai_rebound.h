#pragma once
// The real binary on the OpenAI-compatible provider against a FakeLlmServer: no session file,
// warnings only on stderr, HOME and the agent directory in `dir`. For the benchmarks and tests
// that read its stdout themselves (Subprocess::stdout_fd()).

#include <memory>
#include <string>
#include <vector>

#include "tests/support/fake_llm_server.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

namespace rebound::testing {

namespace detail {

// The binary with `provider` (its arguments naming the provider), then `extra`.
inline std::unique_ptr<Subprocess> start_rebound(const std::string& binary, const TempDir& dir,
                                                 const std::vector<std::string>& provider,
                                                 const std::vector<std::string>& extra) {
  SubprocessOptions options;
  options.env["HOME"] = dir.path().string();
  std::vector<std::string> argv{binary,         "--agent-dir", dir.path().string(),
                                "--no-session", "--log-level", "warn"};
  argv.insert(argv.end(), provider.begin(), provider.end());
  argv.insert(argv.end(), extra.begin(), extra.end());
  return std::make_unique<Subprocess>(argv, options);
}

}  // namespace detail

inline std::unique_ptr<Subprocess> start_openai_rebound(
    const std::string& binary, const FakeLlmServer& server, const TempDir& dir,
    const std::vector<std::string>& extra = {}) {
  return detail::start_rebound(
      binary, dir,
      {"--provider", "openai", "--base-url", server.base_url() + "/v1", "--api-key", "sk-test"},
      extra);
}

/// The same on a models.json provider "fake" that speaks `api` (providers.md: openai-responses,
/// google-generative-ai, …) at the server's base URL plus `base_path`, model "m1", key
/// "sk-test"; models.json and settings.json written into `dir`.
inline std::unique_ptr<Subprocess> start_api_rebound(const std::string& binary,
                                                     const FakeLlmServer& server,
                                                     const TempDir& dir, const std::string& api,
                                                     const std::string& base_path,
                                                     const std::vector<std::string>& extra = {}) {
  dir.write("models.json", R"({"providers":{"fake":{"api":")" + api + R"(","baseUrl":")" +
                               server.base_url() + base_path +
                               R"(","apiKey":"sk-test","models":[{"id":"m1","contextWindow":)"
                               R"(128000,"maxTokens":4096}]}}})");
  dir.write("settings.json", R"({"defaultProvider":"fake","defaultModel":"m1"})");
  return detail::start_rebound(binary, dir, {}, extra);
}

}  // namespace rebound::testing
