#include "protocol/commands.h"

#include <doctest/doctest.h>

using namespace rebound::protocol;

namespace {

Command parse_ok(const std::string& line) {
  auto r = parse_command_line(line);
  REQUIRE_MESSAGE(r.command.has_value(), (r.error ? r.error->message : std::string()));
  return *r.command;
}

ProtocolError parse_err(const std::string& line) {
  auto r = parse_command_line(line);
  REQUIRE(r.error.has_value());
  return *r.error;
}

}  // namespace

TEST_CASE("every command of the table parses with its fields") {
  CHECK(parse_ok(R"({"type":"get_state"})").type == CommandType::get_state);
  const auto p = parse_ok(
      R"({"type":"prompt","message":"hi","images":[{"type":"image","data":"AAA","mimeType":"image/png"}],"streamingBehavior":"followUp"})");
  const auto& m = std::get<MessageArgs>(p.args);
  CHECK(m.message == "hi");
  REQUIRE(m.images.size() == 1);
  CHECK(m.images[0].mime_type == "image/png");
  CHECK(m.streaming_behavior == StreamingBehavior::follow_up);
  CHECK(std::get<MessageArgs>(parse_ok(R"({"type":"steer","message":"s"})").args).message == "s");
  CHECK(std::get<MessageArgs>(parse_ok(R"({"type":"follow_up","message":"f"})").args).message ==
        "f");
  CHECK(std::get<NewSessionArgs>(parse_ok(R"({"type":"new_session","parentSession":"p"})").args)
            .parent_session == "p");
  const auto sm = std::get<SetModelArgs>(
      parse_ok(R"({"type":"set_model","provider":"openai","modelId":"gpt-4o"})").args);
  CHECK(sm.provider == "openai");
  CHECK(sm.model_id == "gpt-4o");
  CHECK(
      std::get<ThinkingLevelArgs>(parse_ok(R"({"type":"set_thinking_level","level":"xhigh"})").args)
          .level == ThinkingLevel::xhigh);
  CHECK(
      std::get<QueueModeArgs>(parse_ok(R"({"type":"set_steering_mode","mode":"all"})").args).mode ==
      QueueMode::all);
  CHECK(std::get<QueueModeArgs>(
            parse_ok(R"({"type":"set_follow_up_mode","mode":"one-at-a-time"})").args)
            .mode == QueueMode::one_at_a_time);
  CHECK(std::get<InterruptModeArgs>(parse_ok(R"({"type":"set_interrupt_mode","mode":"wait"})").args)
            .mode == InterruptMode::wait);
  CHECK(std::get<CompactArgs>(parse_ok(R"({"type":"compact","customInstructions":"x"})").args)
            .custom_instructions == "x");
  CHECK(std::get<EnabledArgs>(parse_ok(R"({"type":"set_auto_compaction","enabled":false})").args)
            .enabled == false);
  CHECK(
      std::get<EnabledArgs>(parse_ok(R"({"type":"set_auto_retry","enabled":true})").args).enabled ==
      true);
  CHECK(std::get<BashArgs>(parse_ok(R"({"type":"bash","command":"ls"})").args).command == "ls");
  CHECK(std::get<SwitchSessionArgs>(
            parse_ok(R"({"type":"switch_session","sessionPath":"/x.jsonl"})").args)
            .session_path == "/x.jsonl");
  for (const char* bare :
       {"abort", "cycle_model", "get_available_models", "cycle_thinking_level", "abort_retry",
        "abort_bash", "get_session_stats", "get_last_assistant_text", "get_messages"}) {
    CAPTURE(bare);
    const auto c = parse_ok(std::string(R"({"type":")") + bare + "\"}");
    CHECK(command_name(c.type) == bare);
  }
}

TEST_CASE("ids are copied verbatim whatever their JSON type") {
  CHECK(*parse_ok(R"({"id":"a","type":"abort"})").id == "a");
  CHECK(*parse_ok(R"({"id":7,"type":"abort"})").id == 7);
  CHECK(parse_ok(R"({"id":null,"type":"abort"})").id->is_null());
  CHECK(*parse_ok(R"({"id":{"k":[1]},"type":"abort"})").id == Json::parse(R"({"k":[1]})"));
  CHECK_FALSE(parse_ok(R"({"type":"abort"})").id.has_value());
}

TEST_CASE("unknown extra fields are ignored") {
  CHECK(parse_ok(R"({"type":"get_state","extra":[1,2]})").type == CommandType::get_state);
}

TEST_CASE("parse errors of section 4") {
  for (const char* line : {"null", "[]", "42", "\"x\"", "true"}) {
    CAPTURE(line);
    const auto e = parse_err(line);
    CHECK(e.command == "parse");
    CHECK(e.message == "Failed to parse command: expected a JSON object");
    CHECK_FALSE(e.id);
  }
  const auto no_type = parse_err(R"({"id":3})");
  CHECK(no_type.message == "Failed to parse command: missing string field 'type'");
  CHECK(*no_type.id == 3);
  CHECK(parse_err(R"({"type":5})").message ==
        "Failed to parse command: missing string field 'type'");
  const auto unknown = parse_err(R"({"id":"u","type":"fly"})");
  CHECK(unknown.command == "fly");
  CHECK(unknown.message == "Unknown command: fly");
  CHECK(*unknown.id == "u");
  CHECK(parse_err("{oops").message.rfind("Failed to parse command: ", 0) == 0);
  CHECK(line_too_long_error(10).message ==
        "Failed to parse command: line exceeds the limit of 10 bytes");
}

TEST_CASE("missing or mistyped fields name the field and the expected kind") {
  auto msg = [](const std::string& line) { return parse_err(line).message; };
  CHECK(msg(R"({"type":"set_auto_retry"})") == "Invalid field 'enabled': expected boolean");
  CHECK(msg(R"({"type":"set_auto_retry","enabled":"yes"})") ==
        "Invalid field 'enabled': expected boolean");
  CHECK(msg(R"({"type":"prompt"})") == "Invalid field 'message': expected string");
  CHECK(msg(R"({"type":"prompt","message":1})") == "Invalid field 'message': expected string");
  CHECK(msg(R"({"type":"prompt","message":"m","images":{}})") ==
        "Invalid field 'images': expected array");
  CHECK(msg(R"({"type":"prompt","message":"m","images":[{"type":"image","mimeType":"a"}]})") ==
        "Invalid field 'images[0].data': expected string");
  CHECK(msg(R"({"type":"prompt","message":"m","streamingBehavior":"later"})") ==
        "Invalid field 'streamingBehavior': expected one of steer, followUp");
  CHECK(msg(R"({"type":"set_thinking_level","level":"max"})") ==
        "Invalid field 'level': expected one of off, minimal, low, medium, high, xhigh");
  CHECK(msg(R"({"type":"set_interrupt_mode","mode":1})") ==
        "Invalid field 'mode': expected one of immediate, wait");
  CHECK(msg(R"({"type":"set_model","provider":"p"})") ==
        "Invalid field 'modelId': expected string");
  CHECK(msg(R"({"type":"new_session","parentSession":1})") ==
        "Invalid field 'parentSession': expected string");
  const auto e = parse_err(R"({"id":9,"type":"bash"})");
  CHECK(e.command == "bash");
  CHECK(*e.id == 9);
}
