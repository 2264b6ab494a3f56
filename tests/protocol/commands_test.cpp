#include "protocol/commands.h"

#include <doctest/doctest.h>

using namespace rebound::protocol;

namespace {

CommandEnvelope envelope_ok(const std::string& line) {
  auto r = parse_envelope_line(line);
  REQUIRE_MESSAGE(r.command.has_value(), (r.error ? r.error->message : std::string()));
  return *r.command;
}

ProtocolError envelope_err(const std::string& line) {
  auto r = parse_envelope_line(line);
  REQUIRE(r.error.has_value());
  return *r.error;
}

// The envelope and the command's reader, as the server's command table applies them.
template <typename Args>
Args args_ok(Args (*read)(const FieldReader&), const std::string& line) {
  auto r = read_command_args(read, envelope_ok(line));
  REQUIRE_MESSAGE(std::holds_alternative<Args>(r), std::get<ProtocolError>(r).message);
  return std::get<Args>(r);
}

template <typename Args>
ProtocolError args_err(Args (*read)(const FieldReader&), const std::string& line) {
  auto r = read_command_args(read, envelope_ok(line));
  REQUIRE(std::holds_alternative<ProtocolError>(r));
  return std::get<ProtocolError>(r);
}

}  // namespace

TEST_CASE("every command of the table parses with its fields") {
  CHECK(envelope_ok(R"({"type":"get_state"})").type == "get_state");
  const auto m = args_ok(
      read_prompt_args,
      R"({"type":"prompt","message":"hi","images":[{"type":"image","data":"AAA","mimeType":"image/png"}],"streamingBehavior":"followUp"})");
  CHECK(m.message == "hi");
  REQUIRE(m.images.size() == 1);
  CHECK(m.images[0].mime_type == "image/png");
  CHECK(m.streaming_behavior == StreamingBehavior::follow_up);
  CHECK(args_ok(read_message_args, R"({"type":"steer","message":"s"})").message == "s");
  CHECK(args_ok(read_message_args, R"({"type":"follow_up","message":"f"})").message == "f");
  CHECK(args_ok(read_new_session_args, R"({"type":"new_session","parentSession":"p"})")
            .parent_session == "p");
  const auto sm = args_ok(read_set_model_args,
                          R"({"type":"set_model","provider":"openai","modelId":"gpt-4o"})");
  CHECK(sm.provider == "openai");
  CHECK(sm.model_id == "gpt-4o");
  CHECK(
      args_ok(read_thinking_level_args, R"({"type":"set_thinking_level","level":"xhigh"})").level ==
      ThinkingLevel::xhigh);
  CHECK(args_ok(read_queue_mode_args, R"({"type":"set_steering_mode","mode":"all"})").mode ==
        QueueMode::all);
  CHECK(args_ok(read_queue_mode_args, R"({"type":"set_follow_up_mode","mode":"one-at-a-time"})")
            .mode == QueueMode::one_at_a_time);
  CHECK(args_ok(read_interrupt_mode_args, R"({"type":"set_interrupt_mode","mode":"wait"})").mode ==
        InterruptMode::wait);
  CHECK(args_ok(read_compact_args, R"({"type":"compact","customInstructions":"x"})")
            .custom_instructions == "x");
  CHECK(args_ok(read_enabled_args, R"({"type":"set_auto_compaction","enabled":false})").enabled ==
        false);
  CHECK(args_ok(read_enabled_args, R"({"type":"set_auto_retry","enabled":true})").enabled == true);
  CHECK(args_ok(read_bash_args, R"({"type":"bash","command":"ls"})").command == "ls");
  CHECK(args_ok(read_switch_session_args, R"({"type":"switch_session","sessionPath":"/x.jsonl"})")
            .session_path == "/x.jsonl");
  for (const char* bare :
       {"abort", "cycle_model", "get_available_models", "cycle_thinking_level", "abort_retry",
        "abort_bash", "get_session_stats", "get_last_assistant_text", "get_messages"}) {
    CAPTURE(bare);
    const auto c = envelope_ok(std::string(R"({"type":")") + bare + "\"}");
    CHECK(c.type == bare);
  }
}

TEST_CASE("ids are copied verbatim whatever their JSON type") {
  CHECK(*envelope_ok(R"({"id":"a","type":"abort"})").id == "a");
  CHECK(*envelope_ok(R"({"id":7,"type":"abort"})").id == 7);
  CHECK(envelope_ok(R"({"id":null,"type":"abort"})").id->is_null());
  CHECK(*envelope_ok(R"({"id":{"k":[1]},"type":"abort"})").id == Json::parse(R"({"k":[1]})"));
  CHECK_FALSE(envelope_ok(R"({"type":"abort"})").id.has_value());
}

TEST_CASE("unknown extra fields are ignored") {
  CHECK(envelope_ok(R"({"type":"get_state","extra":[1,2]})").type == "get_state");
  CHECK(args_ok(read_enabled_args, R"({"type":"set_auto_retry","enabled":true,"x":1})").enabled);
}

TEST_CASE("parse errors of section 4") {
  for (const char* line : {"null", "[]", "42", "\"x\"", "true"}) {
    CAPTURE(line);
    const auto e = envelope_err(line);
    CHECK(e.command == "parse");
    CHECK(e.message == "Failed to parse command: expected a JSON object");
    CHECK_FALSE(e.id);
  }
  const auto no_type = envelope_err(R"({"id":3})");
  CHECK(no_type.message == "Failed to parse command: missing string field 'type'");
  CHECK(*no_type.id == 3);
  CHECK(envelope_err(R"({"type":5})").message ==
        "Failed to parse command: missing string field 'type'");
  const auto unknown = unknown_command_error(envelope_ok(R"({"id":"u","type":"fly"})").id, "fly");
  CHECK(unknown.command == "fly");
  CHECK(unknown.message == "Unknown command: fly");
  CHECK(*unknown.id == "u");
  CHECK(envelope_err("{oops").message.rfind("Failed to parse command: ", 0) == 0);
  CHECK(line_too_long_error(10).message ==
        "Failed to parse command: line exceeds the limit of 10 bytes");
}

TEST_CASE("missing or mistyped fields name the field and the expected kind") {
  auto msg = [](const std::string& line) {
    // The reader the command table registers for the line's type.
    const std::string type = envelope_ok(line).type;
    if (type == "set_auto_retry") return args_err(read_enabled_args, line).message;
    if (type == "prompt") return args_err(read_prompt_args, line).message;
    if (type == "set_thinking_level") return args_err(read_thinking_level_args, line).message;
    if (type == "set_interrupt_mode") return args_err(read_interrupt_mode_args, line).message;
    if (type == "set_model") return args_err(read_set_model_args, line).message;
    if (type == "new_session") return args_err(read_new_session_args, line).message;
    FAIL("no reader for " << type);
    return std::string();
  };
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
  const auto e = args_err(read_bash_args, R"({"id":9,"type":"bash"})");
  CHECK(e.command == "bash");
  CHECK(*e.id == 9);
}
