// fake_llm_scenarios API: serves the named scenarios of tests/support/provider_streams.h for one
// API ("responses" or "gemini") on 127.0.0.1, one per request in their order, for
// tests/node/provider_sdk.test.mjs. Writes one line to stdout first:
//   {"port":N,"scenarios":[{"name":…,"expect":{…}}…]}
// and serves until its stdin closes (the test ends it that way, or by a signal).

#include <cstdio>
#include <iostream>
#include <string>

#include "tests/support/provider_streams.h"

int main(int argc, char** argv) {
  using namespace rebound::testing;
  const std::string api = argc == 2 ? argv[1] : "";
  std::vector<ProviderScenario> scenarios;
  if (api == "responses") {
    scenarios = responses_scenarios();
  } else if (api == "gemini") {
    scenarios = gemini_scenarios();
  } else {
    std::fprintf(stderr, "usage: fake_llm_scenarios responses|gemini\n");
    return 2;
  }
  std::vector<FakeResponse> script;
  rebound::protocol::Json list = rebound::protocol::Json::array();
  for (const auto& s : scenarios) {
    script.push_back(s.response);
    list.push_back({{"name", s.name}, {"expect", s.expect}});
  }
  FakeLlmServer server(std::move(script));
  std::cout << rebound::protocol::Json{{"port", server.port()}, {"scenarios", list}}.dump()
            << std::endl;
  for (std::string line; std::getline(std::cin, line);) {
  }
  return 0;
}
