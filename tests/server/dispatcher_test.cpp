#include "server/pi/rpc_dispatcher.h"

#include <doctest/doctest.h>

#include <set>

#include "tests/support/session_harness.h"

using namespace rebound;
using protocol::Json;

namespace {

struct Fixture {
  testing::SessionHarness h{std::nullopt, Json::object(), session::scripted_model("echo")};
  session::AgentSession& session = h.session;
  testing::MemorySettingsStore& store = h.store;
  std::vector<Json> out;
  server::RpcDispatcher dispatcher{session, [this](const Json& j) { out.push_back(j); }};

  Json one(const std::string& line) {
    out.clear();
    dispatcher.handle_line(line);
    REQUIRE(out.size() == 1);
    return out[0];
  }
};

}  // namespace

TEST_CASE("each implemented command answers once with success and does its work") {
  Fixture f;
  CHECK(f.one(R"({"id":1,"type":"set_auto_retry","enabled":false})") ==
        Json::parse(R"({"id":1,"type":"response","command":"set_auto_retry","success":true})"));
  CHECK_FALSE(f.session.auto_retry_enabled());
  CHECK(f.one(R"({"type":"abort_retry"})")["success"] == true);
  CHECK(f.one(R"({"type":"set_auto_compaction","enabled":false})")["success"] == true);
  CHECK(f.one(R"({"type":"set_steering_mode","mode":"all"})")["success"] == true);
  CHECK(f.one(R"({"type":"set_follow_up_mode","mode":"all"})")["success"] == true);
  CHECK(f.one(R"({"type":"set_interrupt_mode","mode":"wait"})")["success"] == true);
  CHECK(f.one(R"({"type":"set_thinking_level","level":"low"})")["success"] == true);
  const Json state = f.one(R"({"id":"s","type":"get_state"})");
  CHECK(state["data"]["autoCompactionEnabled"] == false);
  CHECK(state["data"]["steeringMode"] == "all");
  CHECK(state["data"]["followUpMode"] == "all");
  CHECK(state["data"]["interruptMode"] == "wait");
  CHECK_FALSE(state["data"].contains("autoRetryEnabled"));
  CHECK_FALSE(state["data"].contains("isRetrying"));
}

TEST_CASE("a rejected command leaves the session unchanged") {
  Fixture f;
  f.one(R"({"type":"set_auto_retry","enabled":"no"})");
  f.one(R"({"type":"set_steering_mode","mode":"most"})");
  CHECK(f.session.auto_retry_enabled());
  CHECK(f.session.state().steering_mode == protocol::QueueMode::one_at_a_time);
  CHECK(f.store.patches.empty());
}

TEST_CASE("an over-limit line gets the parse error") {
  Fixture f;
  f.dispatcher.handle_too_long(64);
  REQUIRE(f.out.size() == 1);
  CHECK(f.out[0] == Json::parse(R"({"type":"response","command":"parse","success":false,
        "error":"Failed to parse command: line exceeds the limit of 64 bytes"})"));
}

TEST_CASE("prompt is answered before its run's first event, a busy prompt is rejected") {
  Fixture f;
  std::vector<Json> all;
  server::RpcDispatcher d{f.session, [&all](const Json& j) { all.push_back(j); }};
  d.handle_line(R"({"id":"p1","type":"prompt","message":"hello"})");
  REQUIRE(all.size() == 1);
  CHECK(all[0] ==
        Json::parse(R"({"id":"p1","type":"response","command":"prompt","success":true})"));
  CHECK(f.h.sink.types().front() == "agent_start");
  d.handle_line(R"({"id":"p2","type":"prompt","message":"again"})");
  REQUIRE(all.size() == 2);
  CHECK(all[1]["success"] == false);
  CHECK(all[1]["error"].get<std::string>().rfind("Agent is already processing.", 0) == 0);
  d.handle_line(R"({"id":"a","type":"abort"})");
  REQUIRE(all.size() == 3);
  CHECK(all[2]["command"] == "abort");
  CHECK(f.h.sink.types().back() == "agent_end");
}

TEST_CASE("model commands answer with the spec's data shapes") {
  Fixture f;
  const Json models = f.one(R"({"id":1,"type":"get_available_models"})");
  CHECK(models["data"]["models"].size() == 2);
  CHECK(models["data"]["models"][0]["id"] == "echo");
  const Json set = f.one(R"({"type":"set_model","provider":"scripted","modelId":"script"})");
  CHECK(set["data"]["id"] == "script");
  CHECK(f.one(R"({"type":"set_model","provider":"x","modelId":"y"})")["error"] ==
        "Model not found: x/y");
  const Json cycled = f.one(R"({"type":"cycle_model"})");
  CHECK(cycled["data"]["model"]["id"] == "echo");
  CHECK(cycled["data"]["thinkingLevel"] == "off");
  CHECK(cycled["data"]["isScoped"] == false);
  const Json level = f.one(R"({"type":"cycle_thinking_level"})");
  CHECK(level.contains("data"));
  CHECK(level["data"].is_null());
}

TEST_CASE("history commands on an empty session") {
  Fixture f;
  CHECK(f.one(R"({"type":"get_messages"})")["data"] == Json::parse(R"({"messages":[]})"));
  const Json text = f.one(R"({"type":"get_last_assistant_text"})");
  CHECK(text["data"] == Json::object());
  const Json stats = f.one(R"({"type":"get_session_stats"})");
  CHECK(stats["data"]["sessionId"] == "sid-test");
  CHECK(stats["data"]["totalMessages"] == 0);
  CHECK(stats["data"]["cost"] == 0);
  CHECK(stats["data"]["sessionFile"] == "/sessions/sid-test.jsonl");
}

TEST_CASE("bash answers when the command ends, other commands are answered meanwhile") {
  Fixture f;
  f.out.clear();
  f.dispatcher.handle_line(R"({"id":7,"type":"bash","command":"make"})");
  CHECK(f.out.empty());
  CHECK(f.one(R"({"type":"get_state"})")["success"] == true);
  CHECK(f.one(R"({"type":"bash","command":"ls"})")["error"] == "A bash command is already running");
  CHECK(f.one(R"({"id":8,"type":"abort_bash"})") ==
        Json::parse(R"({"id":8,"type":"response","command":"abort_bash","success":true})"));
  REQUIRE(f.h.shell.jobs.size() == 1);
  CHECK(f.h.shell.jobs[0]->cancelled);
  f.out.clear();
  session::ShellResult r;
  r.output = "partial";
  r.cancelled = true;
  r.truncated = true;
  r.full_output_path = "/tmp/full.log";
  f.h.shell.finish(0, r);
  REQUIRE(f.out.size() == 1);
  CHECK(f.out[0] == Json::parse(R"({"id":7,"type":"response","command":"bash","success":true,
        "data":{"output":"partial","exitCode":null,"cancelled":true,"truncated":true,
                "fullOutputPath":"/tmp/full.log"}})"));
}

TEST_CASE("new_session and switch_session answer cancelled:false, a bad path is an error") {
  Fixture f;
  const Json created = f.one(R"({"id":1,"type":"new_session","parentSession":"/p.jsonl"})");
  CHECK(created == Json::parse(R"({"id":1,"type":"response","command":"new_session",
                                   "success":true,"data":{"cancelled":false}})"));
  CHECK(f.session.session_id() != "sid-test");
  const Json bad = f.one(R"({"type":"switch_session","sessionPath":"/none.jsonl"})");
  CHECK(bad["success"] == false);
  CHECK(bad["error"] == "Session file not found: /none.jsonl");
  CHECK(f.one(R"({"type":"switch_session"})")["error"] ==
        "Invalid field 'sessionPath': expected string");
}

TEST_CASE("the rpc command table holds exactly the commands of protocol.md section 2") {
  const auto names = server::rpc_command_table().names();
  const std::set<std::string> expected{"prompt",
                                       "steer",
                                       "follow_up",
                                       "abort",
                                       "new_session",
                                       "get_state",
                                       "set_model",
                                       "cycle_model",
                                       "get_available_models",
                                       "set_thinking_level",
                                       "cycle_thinking_level",
                                       "set_steering_mode",
                                       "set_follow_up_mode",
                                       "set_interrupt_mode",
                                       "compact",
                                       "set_auto_compaction",
                                       "set_auto_retry",
                                       "abort_retry",
                                       "bash",
                                       "abort_bash",
                                       "get_session_stats",
                                       "switch_session",
                                       "get_last_assistant_text",
                                       "get_messages",
                                       "get_tools",
                                       "get_retry_state",
                                       "set_retry_policy",
                                       "retry_now",
                                       "set_event_filter",
                                       "get_mcp_servers",
                                       "restart_mcp_server",
                                       "get_extensions",
                                       "restart_extension",
                                       "get_commands",
                                       "get_policy",
                                       "set_permission_mode",
                                       "extension_ui_response",
                                       "get_fork_messages",
                                       "fork",
                                       "clone",
                                       "set_session_name",
                                       "get_entries",
                                       "export_html"};
  CHECK(std::set<std::string>(names.begin(), names.end()) == expected);
  CHECK(names.size() == expected.size());
}

TEST_CASE("unknown commands and invalid fields are answered through the table, once") {
  Fixture f;
  CHECK(
      f.one(R"({"id":"u","type":"fly"})") ==
      Json::parse(
          R"({"id":"u","type":"response","command":"fly","success":false,"error":"Unknown command: fly"})"));
  CHECK(
      f.one(R"({"id":2,"type":"set_model","provider":"p"})") ==
      Json::parse(
          R"({"id":2,"type":"response","command":"set_model","success":false,"error":"Invalid field 'modelId': expected string"})"));
  CHECK(f.one(R"({"type":"set_model","provider":"x","modelId":"y"})")["error"] ==
        "Model not found: x/y");
}

TEST_CASE("a reply's code comes from the error's kind, never from its text") {
  std::vector<Json> out;
  auto sink = [&out](const Json& j) { out.push_back(j); };
  server::Reply(Json(1), "set_retry_policy", sink, server::ReplyStyle::jsonrpc)
      .fail(session::field_error("jitter", "number 0..1 or null"));
  // A text that looks like a field error but is not one keeps the failure code.
  server::Reply(Json(2), "bash", sink, server::ReplyStyle::jsonrpc)
      .fail(session::Error{session::ErrorKind::busy, "Invalid field 'x': expected y"});
  server::Reply(Json(3), "bash", sink, server::ReplyStyle::pi)
      .fail(session::Error{session::ErrorKind::busy, "A bash command is already running"});
  REQUIRE(out.size() == 3);
  CHECK(out[0]["error"]["code"] == -32602);
  CHECK(out[0]["error"]["message"] == "Invalid field 'jitter': expected number 0..1 or null");
  CHECK(out[1]["error"]["code"] == -32000);
  CHECK(out[2]["error"] == "A bash command is already running");
  CHECK(out[2]["success"] == false);
}

TEST_CASE("a reply through another dialect's wire is written once, the field kept") {
  struct Wire : server::ReplyWire {
    std::vector<std::string> seen;
    void ok(const std::optional<Json>& id, Json* data) override {
      seen.push_back("ok " + id->dump() + " " + (data ? data->dump() : "none"));
    }
    void fail(const std::optional<Json>& id, const session::Error& e) override {
      seen.push_back("fail " + id->dump() + " " + (e.field ? e.field->path : "-"));
    }
  };
  auto wire = std::make_shared<Wire>();
  {
    server::Reply r(Json("a"), "get_retry_state", wire);
    r.ok(Json::object());
    r.fail(session::field_error("x", "y"));  // ignored: answered already
  }
  server::Reply(Json("b"), "set_retry_policy", wire).fail(session::field_error("reset", "boolean"));
  CHECK(wire->seen == std::vector<std::string>{"ok \"a\" {}", "fail \"b\" reset"});
}
