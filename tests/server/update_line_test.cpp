// UpdateLineBuilder writes exactly what serializing events::message_update() writes, for every
// step of random streams (text and thinking deltas with multi-byte and escaped characters, tool
// calls, usage changes).

#include "server/events/update_line.h"

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <random>

#include "protocol/json_line.h"

using namespace rebound::protocol;
using namespace rebound::server;
namespace events = rebound::server::pi;

TEST_CASE("incremental message_update lines equal the serialized events, byte for byte") {
  std::mt19937 rng(20261130);
  const std::vector<std::string> pieces{"a",     "é",    "\"",   "\\",
                                        "\n",    "日本", "\t",   "🙂",
                                        " ",     "</x>", "\x01", "\xff" /* invalid: U+FFFD */,
                                        "\u2028"};
  int lines = 0;
  for (int stream = 0; stream < 200; ++stream) {
    AgentMessage m;
    m.role = Role::assistant;
    m.api = "openai-completions";
    m.provider = "openai";
    m.model = "gpt-4o-mini";
    m.timestamp = 1796027882123 + stream;
    UpdateLineBuilder b;
    b.reset(m);
    for (int step = 0; step < 40; ++step) {
      const int what = static_cast<int>(rng() % 10);
      std::optional<std::string> delta, content;
      const ContentBlock* tool_call = nullptr;
      std::string type;
      if (what == 0 || m.content.empty()) {
        const bool thinking = rng() % 3 == 0;
        m.content.push_back(thinking ? ContentBlock::make_thinking("")
                                     : ContentBlock::make_text(""));
        b.reset(m);
        type = thinking ? "thinking_start" : "text_start";
      } else if (what == 1) {
        m.content.push_back(
            ContentBlock::make_tool_call("call_" + std::to_string(step), "bash", Json::object()));
        b.reset(m);
        type = "toolcall_start";
      } else if (what == 2 && m.content.back().kind == ContentBlock::Kind::tool_call) {
        m.content.back().arguments = Json{{"command", "ls \"x\""}};
        b.reset(m);
        type = "toolcall_end";
        tool_call = &m.content.back();
      } else if (what == 3) {
        m.usage.input += 7;
        m.usage.output += 1;
        m.usage.cost_total += 0.125;
        // Only the keys after the content change (a stream that reports usage in every event).
        if (b.appendable() && rng() % 2 == 0) {
          b.replace_usage(m);
        } else {
          b.reset(m);
        }
        continue;  // usage changes produce no event of their own
      } else if (what == 4 && m.content.back().kind != ContentBlock::Kind::tool_call) {
        type = m.content.back().kind == ContentBlock::Kind::text ? "text_end" : "thinking_end";
        content = m.content.back().text;
      } else if (m.content.back().kind != ContentBlock::Kind::tool_call) {
        std::string d;
        for (int k = 0, n = 1 + static_cast<int>(rng() % 3); k < n; ++k)
          d += pieces[rng() % pieces.size()];
        m.content.back().text += d;
        if (b.appendable()) {
          b.append_to_last_block(d);
        } else {
          b.reset(m);
        }
        type = m.content.back().kind == ContentBlock::Kind::text ? "text_delta" : "thinking_delta";
        delta = d;
      } else {
        type = "toolcall_delta";
        delta = "{\"co";
      }
      const events::AssistantUpdate u{type, m.content.size() - 1, delta, content, tool_call};
      const std::string expected = to_line(events::message_update(u, m));
      REQUIRE(b.line(u) == expected);
      ++lines;
    }
  }
  CHECK(lines > 7000);
}
