// SessionHost: sessions owned by slot on one loop; each session's events carry its slot, so one
// sink serves several sessions; close() stops a session's work and destroys it.

#include "session/session_host.h"

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "tests/support/session_harness.h"

using namespace rebound;

TEST_CASE("two sessions in one host: slots on their events, close stops and removes one") {
  testing::SessionHarness h(R"([{"text":"hi","chunks":2,"chunkDelayMs":10}])");
  session::SessionHost host;
  auto make = [&](session::SessionSlot slot) {
    session::SessionOptions options{session::scripted_model("script"),
                                    "sid-" + std::to_string(slot), nullptr};
    options.slot = slot;
    return std::make_unique<session::AgentSession>(
        std::move(options), session::ModelRegistry::with_builtins(), h.deps(h.sink));
  };
  const auto a = host.add(make);
  const auto b = host.add(make);
  CHECK(a == 1);
  CHECK(b == 2);
  REQUIRE(host.find(a));
  CHECK(host.find(a)->session_id() == "sid-1");
  CHECK(host.find(b)->session_id() == "sid-2");
  CHECK(host.find(99) == nullptr);

  CHECK(host.find(a)->prompt({"one", {}}, std::nullopt, [] {}));
  CHECK(host.find(b)->prompt({"two", {}}, std::nullopt, [] {}));
  h.scheduler.run_ready();
  CHECK(h.sink.slots.front() == a);
  host.close(b);  // its run is aborted: its agent_end comes now, stamped with b
  CHECK(host.size() == 1);
  CHECK(h.sink.slots.back() == b);
  CHECK(h.sink.events.back()["type"] == "agent_end");
  h.scheduler.run_all();
  CHECK(h.sink.slots.back() == a);
  CHECK(h.sink.events.back()["type"] == "agent_end");
  std::size_t ends_of_a = 0;
  for (std::size_t i = 0; i < h.sink.events.size(); ++i) {
    if (h.sink.events[i]["type"] == "agent_end" && h.sink.slots[i] == a) ++ends_of_a;
  }
  CHECK(ends_of_a == 1);
}
