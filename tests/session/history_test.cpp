// get_messages, get_last_assistant_text and get_session_stats over a session with a retry.

#include <doctest/doctest.h>

#include "tests/support/session_harness.h"

using namespace rebound;
using testing::SessionHarness;

TEST_CASE("the context leaves the retried error out, the stats count it") {
  SessionHarness h(R"([{"error":"503 overloaded","usage":{"input":7,"output":0}},
                       {"text":"hello world","usage":{"input":9,"output":2}}])");
  h.prompt("say hello");
  h.scheduler.run_all();
  REQUIRE(h.session.messages().size() == 2);
  CHECK(h.session.messages()[1].text() == "hello world");
  CHECK(h.session.last_assistant_text() == "hello world");
  const auto st = h.session.stats();
  CHECK(st.user_messages == 1);
  CHECK(st.assistant_messages == 2);
  CHECK(st.total_messages == 3);
  CHECK(st.tokens.input == 16);  // what was really spent, the failed attempt included
  CHECK(st.tokens.output == 2);
  CHECK(st.tokens.total_tokens == 18);
}

TEST_CASE("tool calls and results are counted, text-less answers are skipped for the last text") {
  SessionHarness h(
      R"([{"text":"looking","toolCalls":[{"name":"bash","arguments":{}},{"name":"read"}]},
                       {"toolCalls":[{"name":"bash"}],"stopReason":"toolUse"},
                       {"text":""}])");
  h.prompt("go");
  h.scheduler.run_all();
  const auto st = h.session.stats();
  CHECK(st.tool_calls == 3);
  CHECK(st.tool_results == 3);
  CHECK(st.assistant_messages == 3);
  CHECK(h.session.last_assistant_text() == "looking");
}

TEST_CASE("no assistant text at all gives nullopt") {
  SessionHarness h(R"([{"error":"401 no"}])");
  CHECK_FALSE(h.session.last_assistant_text());
  h.prompt("x");
  h.scheduler.run_all();
  CHECK_FALSE(h.session.last_assistant_text());
}
