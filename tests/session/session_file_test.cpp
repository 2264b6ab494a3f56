// The session file format (runtime.md section 4): parsing with the crash rules, the path to the
// leaf, and rebuilding the runtime context.

#include "session/session_file.h"

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "protocol/json_line.h"
#include "tests/support/event_summary.h"

using namespace rebound;
using protocol::AgentMessage;
using protocol::ContentBlock;
using protocol::Json;

namespace {

const char* kHeader =
    R"({"type":"session","version":3,"id":"s1","timestamp":"2026-11-30T08:00:00.000Z","cwd":"/w"})";

std::string entry(const std::string& id, const char* parent, const Json& body) {
  Json e = Json::object();
  e["type"] = body["type"];
  e["id"] = id;
  e["parentId"] = parent ? Json(parent) : Json(nullptr);
  e["timestamp"] = "2026-11-30T08:00:01.000Z";
  for (auto& [k, v] : body.items()) {
    if (k != "type") e[k] = v;
  }
  return protocol::to_line(e);
}

AgentMessage user(const std::string& text) {
  AgentMessage m;
  m.role = protocol::Role::user;
  m.content.push_back(protocol::ContentBlock::make_text(text));
  return m;
}

AgentMessage assistant(const std::string& text,
                       protocol::StopReason reason = protocol::StopReason::stop,
                       std::optional<std::string> error = std::nullopt) {
  AgentMessage m;
  m.role = protocol::Role::assistant;
  if (!text.empty()) m.content.push_back(protocol::ContentBlock::make_text(text));
  m.stop_reason = reason;
  m.error_message = std::move(error);
  return m;
}

session::LoadedSession parse_ok(const std::string& text) {
  auto parsed = session::parse_session_file(text);
  if (!parsed) FAIL(parsed.error().message);
  return parsed.value();
}

std::vector<std::string> texts(const std::vector<AgentMessage>& ms) {
  std::vector<std::string> out;
  for (const auto& m : ms) {
    out.push_back(m.role == protocol::Role::compaction_summary ? "summary:" + m.summary : m.text());
  }
  return out;
}

}  // namespace

TEST_CASE("iso timestamps round-trip with milliseconds") {
  CHECK(session::iso_timestamp(1796027882123) == "2026-11-30T08:38:02.123Z");
  CHECK(session::parse_iso_timestamp("2026-11-30T08:38:02.123Z") == 1796027882123);
  CHECK(session::parse_iso_timestamp("2026-11-30T08:38:02Z") == 1796027882000);
  CHECK_FALSE(session::parse_iso_timestamp("yesterday"));
}

TEST_CASE("a header of another version, or no header, is refused with a clear error") {
  auto v2 = session::parse_session_file(
      R"({"type":"session","version":2,"id":"s","timestamp":"t","cwd":"/"})"
      "\n");
  REQUIRE(!v2.ok());
  CHECK(v2.error().message == "unsupported session file version 2 (this server reads version 3)");
  auto none = session::parse_session_file("{\"type\":\"message\"}\n");
  REQUIRE(!none.ok());
  CHECK(none.error().message.find("not a session header") != std::string::npos);
  CHECK(!session::parse_session_file("").ok());
}

TEST_CASE("a torn last line is skipped with a warning, a malformed middle line names its number") {
  const std::string u = entry("a1", nullptr, session::message_entry(user("hi")));
  const std::string a = entry("a2", "a1", session::message_entry(assistant("hello")));
  SUBCASE("torn last line") {
    const std::string torn = a.substr(0, a.size() / 2);  // no LF: the writer stopped mid-line
    const auto loaded = parse_ok(std::string(kHeader) + "\n" + u + torn);
    CHECK(loaded.entries.size() == 1);
    REQUIRE(loaded.warnings.size() == 1);
    CHECK(loaded.warnings[0].find("line 3: torn last line skipped") == 0);
  }
  SUBCASE("a complete last line without its LF is kept") {
    const auto loaded = parse_ok(std::string(kHeader) + "\n" + u + a.substr(0, a.size() - 1));
    CHECK(loaded.entries.size() == 2);
    CHECK(loaded.warnings.empty());
  }
  SUBCASE("malformed line in the middle") {
    const auto loaded = parse_ok(std::string(kHeader) + "\n" + u + "{oops\n" + a);
    CHECK(loaded.entries.size() == 2);
    REQUIRE(loaded.warnings.size() == 1);
    CHECK(loaded.warnings[0] == "line 3: not valid JSON, skipped");
  }
  SUBCASE("an entry without id or with an unknown message role") {
    const auto loaded = parse_ok(
        std::string(kHeader) + "\n" + R"({"type":"message","parentId":null,"message":{}})" + "\n" +
        R"({"type":"message","id":"x","parentId":null,"message":{"role":"robot"}})" + "\n" + u);
    CHECK(loaded.entries.size() == 1);
    REQUIRE(loaded.warnings.size() == 2);
    CHECK(loaded.warnings[0] == "line 2: entry skipped: no string 'id'");
    CHECK(loaded.warnings[1] == "line 3: entry skipped: unknown message role 'robot'");
  }
}

TEST_CASE("restoring leaves out the retried error and empty errors, keeps a final one with text") {
  const std::string text =
      std::string(kHeader) + "\n" +
      entry("m0", nullptr, session::model_change_entry("openai", "gpt-4o")) +
      entry("t0", "m0", session::thinking_level_change_entry(protocol::ThinkingLevel::low)) +
      entry("u1", "t0", session::message_entry(user("q1"))) +
      entry("e1", "u1",
            session::message_entry(assistant("", protocol::StopReason::error, "503 overloaded"))) +
      entry("a1", "e1", session::message_entry(assistant("answer1"))) +
      entry("u2", "a1", session::message_entry(user("q2"))) +
      entry("e2", "u2",
            session::message_entry(assistant("partial", protocol::StopReason::error, "401 no")));
  const auto restored = session::restore_session(parse_ok(text).entries);
  CHECK(texts(restored.context()) == std::vector<std::string>{"q1", "answer1", "q2", "partial"});
  CHECK(restored.history.size() == 5);  // the retried error stays in the history
  CHECK(restored.provider == "openai");
  CHECK(restored.model_id == "gpt-4o");
  CHECK(restored.thinking_level == protocol::ThinkingLevel::low);
}

TEST_CASE("restoring follows the parent chain from the last entry, not file order") {
  const std::string text = std::string(kHeader) + "\n" +
                           entry("u1", nullptr, session::message_entry(user("root"))) +
                           entry("a1", "u1", session::message_entry(assistant("branch A"))) +
                           entry("a2", "u1", session::message_entry(assistant("branch B")));
  const auto restored = session::restore_session(parse_ok(text).entries);
  CHECK(texts(restored.context()) == std::vector<std::string>{"root", "branch B"});
}

TEST_CASE("a compaction entry: its summary, the kept messages, and what overflow removed") {
  const std::string base =
      std::string(kHeader) + "\n" + entry("u1", nullptr, session::message_entry(user("old q"))) +
      entry("a1", "u1", session::message_entry(assistant("old a"))) +
      entry("u2", "a1", session::message_entry(user("kept q"))) +
      entry("a2", "u2", session::message_entry(assistant("kept a"))) +
      entry("u3", "a2", session::message_entry(user("big q"))) +
      entry("e3", "u3",
            session::message_entry(
                assistant("some text", protocol::StopReason::error, "prompt is too long")));
  SUBCASE("overflow") {
    const std::string text =
        base + entry("c1", "e3", session::compaction_entry("S", "u2", 5000, "overflow")) +
        entry("a3", "c1", session::message_entry(assistant("after")));
    const auto restored = session::restore_session(parse_ok(text).entries);
    CHECK(texts(restored.context()) ==
          std::vector<std::string>{"summary:S", "kept q", "kept a", "big q", "after"});
    CHECK(restored.context()[0].tokens_before == 5000);
    CHECK(restored.context()[0].timestamp == 1796025601000);
  }
  SUBCASE("threshold keeps the message before it") {
    const std::string text =
        base + entry("a4", "e3", session::message_entry(assistant("fine"))) +
        entry("c1", "a4", session::compaction_entry("S", "u3", 10, "threshold"));
    const auto restored = session::restore_session(parse_ok(text).entries);
    CHECK(texts(restored.context()) == std::vector<std::string>{"summary:S", "big q", "fine"});
  }
}

TEST_CASE("messages of every role read back as they were written") {
  AgentMessage a = assistant("t", protocol::StopReason::error, "boom");
  a.api = "openai-completions";
  a.provider = "openai";
  a.model = "gpt-4o";
  a.usage.input = 3;
  a.usage.cost_total = 0.25;
  a.content.push_back(protocol::ContentBlock::make_thinking("hmm"));
  a.content.push_back(protocol::ContentBlock::make_tool_call("c1", "bash", Json{{"x", 1}}));
  a.timestamp = 42;
  AgentMessage u = user("hi");
  u.content.push_back(protocol::ContentBlock::make_image("AAAA", "image/png"));
  AgentMessage r;
  r.role = protocol::Role::tool_result;
  r.tool_call_id = "c1";
  r.tool_name = "bash";
  r.content.push_back(protocol::ContentBlock::make_text("out"));
  r.details = Json{{"k", "v"}};
  r.is_error = true;
  AgentMessage b;
  b.role = protocol::Role::bash_execution;
  b.command = "ls";
  b.output = "a\nb";
  b.exit_code = 2;
  b.truncated = true;
  b.full_output_path = "/tmp/x.log";
  AgentMessage killed = b;
  killed.exit_code.reset();
  killed.cancelled = true;
  killed.full_output_path.reset();
  AgentMessage s;
  s.role = protocol::Role::compaction_summary;
  s.summary = "sum";
  s.tokens_before = 99;
  const AgentMessage c = protocol::make_custom_message(
      "hook", "PostToolUse:bash hook additional context: x",
      Json{{"hookEvent", "PostToolUse"}, {"command", "post.sh"}, {"toolCallId", "c1"}}, 7);
  AgentMessage blocks = c;
  blocks.content_is_string = false;
  blocks.display = false;
  blocks.details = Json();
  for (const auto& m : {a, u, r, b, killed, s, c, blocks}) {
    const Json j = protocol::to_json(m);
    CAPTURE(j.dump());
    const auto back = protocol::message_from_json(j);
    REQUIRE(back);
    CHECK(protocol::to_json(*back) == j);
  }
  std::string error;
  CHECK_FALSE(protocol::message_from_json(Json::parse(R"({"role":"user","content":5})"), &error));
  CHECK(error == "a message's 'content' must be an array");
  CHECK_FALSE(protocol::message_from_json(Json(3), &error));
}

TEST_CASE("block signatures: written after the block's other keys, read back, never on images") {
  AgentMessage a;
  a.role = protocol::Role::assistant;
  a.api = "openai-responses";
  a.provider = "openai";
  a.model = "gpt-5";
  auto thinking = ContentBlock::make_thinking("plan");
  thinking.signature = R"({"id":"rs_1","type":"reasoning","encrypted_content":"e"})";
  auto text = ContentBlock::make_text("hi");
  text.signature = R"({"v":1,"id":"msg_1"})";
  auto call = ContentBlock::make_tool_call("call_1|fc_1", "read", Json{{"path", "a"}});
  call.signature = "c2ln";
  a.content = {thinking, text, call, ContentBlock::make_text("plain")};
  const Json j = protocol::to_json(a);
  CHECK(j["content"][0].dump() ==
        R"({"type":"thinking","thinking":"plan","thinkingSignature":"{\"id\":\"rs_1\",)"
        R"(\"type\":\"reasoning\",\"encrypted_content\":\"e\"}"})");
  CHECK(j["content"][1].dump() ==
        R"({"type":"text","text":"hi","textSignature":"{\"v\":1,\"id\":\"msg_1\"}"})");
  CHECK(j["content"][2].dump() ==
        R"({"type":"toolCall","id":"call_1|fc_1","name":"read","arguments":{"path":"a"},)"
        R"("thoughtSignature":"c2ln"})");
  CHECK(j["content"][3].dump() == R"({"type":"text","text":"plain"})");
  const auto back = protocol::message_from_json(j);
  REQUIRE(back);
  CHECK(back->content[0].signature == thinking.signature);
  CHECK(back->content[1].signature == text.signature);
  CHECK(back->content[2].signature == "c2ln");
  CHECK(back->content[3].signature.empty());
  CHECK(protocol::to_json(*back) == j);
  // An image never carries one, whatever was set or read.
  auto image = ContentBlock::make_image("AAAA", "image/png");
  image.signature = "x";
  CHECK(protocol::to_json(image).dump() ==
        R"({"type":"image","data":"AAAA","mimeType":"image/png"})");
}

TEST_CASE(
    "a custom message: pi's keys and order, its own entry, back as a message of the context") {
  const AgentMessage c = protocol::make_custom_message(
      "hook", "Stop hook feedback:\n[check.sh]: not done", Json{{"hookEvent", "Stop"}}, 7);
  CHECK(
      protocol::to_json(c).dump() ==
      R"({"role":"custom","customType":"hook","content":"Stop hook feedback:\n[check.sh]: not done",)"
      R"("display":true,"details":{"hookEvent":"Stop"},"timestamp":7})");
  CHECK(protocol::llm_text(c) == "Stop hook feedback:\n[check.sh]: not done");
  const Json e = session::message_entry(c);
  CHECK(e.dump() ==
        R"({"type":"custom_message","customType":"hook","content":"Stop hook )"
        R"(feedback:\n[check.sh]: not done","display":true,"details":{"hookEvent":"Stop"}})");
  const std::string text =
      std::string(kHeader) + "\n" + entry("a", nullptr, session::message_entry(user("one"))) +
      entry("b", "a", e) + entry("c", "b", session::message_entry(assistant("ok")));
  const auto restored = session::restore_session(parse_ok(text).entries);
  REQUIRE(restored.context().size() == 3);
  const AgentMessage back = restored.context()[1];
  CHECK(back.role == protocol::Role::custom);
  CHECK(back.entry_id == "b");
  CHECK(back.timestamp == 1796025601000);  // the entry's time
  Json written = protocol::to_json(back);
  written.erase("timestamp");
  Json expected = protocol::to_json(c);
  expected.erase("timestamp");
  CHECK(written == expected);
  CHECK(restored.stats.total_messages == 3);
  // A custom_message entry without its keys is skipped with a warning.
  const auto bad =
      parse_ok(std::string(kHeader) + "\n" +
               entry("x", nullptr, Json{{"type", "custom_message"}, {"content", "t"}}));
  REQUIRE(bad.warnings.size() == 1);
  CHECK(bad.warnings[0] == "line 2: entry skipped: no string 'customType'");
}

TEST_CASE("bash and summary messages reach the model as user text") {
  AgentMessage b;
  b.role = protocol::Role::bash_execution;
  b.command = "false";
  b.exit_code = 1;
  CHECK(protocol::llm_text(b) == "Ran `false`\n(no output)\n\nCommand exited with code 1");
  b.output = "x";
  b.exit_code.reset();
  b.cancelled = true;
  CHECK(protocol::llm_text(b) == "Ran `false`\n```\nx\n```\n\n(command cancelled)");
}

TEST_CASE("a parent cycle ends the path instead of looping") {
  const std::string text = std::string(kHeader) + "\n" +
                           entry("a", "b", session::message_entry(user("one"))) +
                           entry("b", "a", session::message_entry(user("two")));
  const auto restored = session::restore_session(parse_ok(text).entries);
  CHECK(texts(restored.context()) == std::vector<std::string>{"one", "two"});
  CHECK(restored.history.size() == 2);
}

TEST_CASE("an entry nested past 512 levels is skipped with a warning, the rest loads") {
  const std::string deep =
      R"({"type":"message","id":"deep","parentId":null,"timestamp":"t","message":)" +
      std::string(100000, '[') + std::string(100000, ']') + "}\n";
  const std::string text =
      std::string(kHeader) + "\n" + deep +
      entry("a1", nullptr, Json{{"type", "model_change"}, {"provider", "p"}, {"modelId", "m"}});
  auto parsed = rebound::session::parse_session_file(text);
  REQUIRE(parsed.ok());
  const auto& loaded = parsed.value();
  CHECK(loaded.entries.size() == 1);
  REQUIRE(loaded.warnings.size() == 1);
  CHECK(loaded.warnings[0] == "line 2: nesting deeper than 512 levels, skipped");
}
