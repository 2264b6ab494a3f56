// The event filter, the delta form of message_update (protocol.md section 8) and the JSON-RPC
// 2.0 envelope (section 9), end to end: the real binary over pipes with the scripted provider.
// Every rule of the two sections has a case here; the lines are compared byte for byte where
// the spec fixes them.

#include <doctest/doctest.h>

#include <chrono>
#include <map>
#include <string>
#include <thread>

#include "tests/support/rebound_process.h"

using namespace rebound;
using namespace std::chrono_literals;
using protocol::Json;
using testing::of_type;
using testing::ReboundProcess;

namespace {

ReboundProcess server(const std::string& script, std::vector<std::string> extra = {},
                      const std::string& settings = "{}") {
  std::vector<std::string> args{"--no-session", "--provider", "scripted", "--script",
                                "@DIR@/script.json"};
  args.insert(args.end(), extra.begin(), extra.end());
  return ReboundProcess(args, {}, {{"agent/settings.json", settings}, {"script.json", script}});
}

bool is_rpc_answer(const Json& j, const Json& id) {
  return j.contains("jsonrpc") && !j.contains("method") && j.value("id", Json()) == id;
}

// Sends a raw line and reads through the JSON-RPC answer with this id.
std::vector<Json> rpc_exchange(ReboundProcess& r, const std::string& line, const Json& id) {
  r.send_raw(line + "\n");
  return r.read_until([&](const Json& j) { return is_rpc_answer(j, id); });
}

Json rpc_answer(ReboundProcess& r, const std::string& line, const Json& id) {
  return rpc_exchange(r, line, id).back();
}

// The event type of a pi line or a JSON-RPC notification.
std::string event_type(const Json& j) {
  if (j.contains("method")) return j["method"].get<std::string>();
  return j.value("type", "");
}

std::vector<std::string> types(const std::vector<Json>& lines) {
  std::vector<std::string> out;
  for (const auto& j : lines)
    out.push_back(j.contains("jsonrpc") && !j.contains("method") ? "answer" : event_type(j));
  return out;
}

// Reads the lines of one prompt run up to its agent_end (pi events).
std::vector<Json> run_prompt(ReboundProcess& r, const std::string& id = "p") {
  const auto lines = r.read_until_response(id);
  CHECK(lines.back()["success"] == true);
  return r.read_until_type("agent_end");
}

}  // namespace

TEST_CASE("set_event_filter answers with the filter as sent and restores the default when empty") {
  ReboundProcess r = server(R"j([{"text":"hello world","chunks":2}])j");
  CHECK(
      r
          .command(Json::parse(
              R"j({"id":"f1","type":"set_event_filter","events":["agent_end","agent_end","from_the_future"],"messageUpdates":"delta"})j"))
          .dump() ==
      R"j({"id":"f1","type":"response","command":"set_event_filter","success":true,"data":{"events":["agent_end","agent_end","from_the_future"],"messageUpdates":"delta"}})j");
  // Replace semantics: every omitted field goes back to its default.
  CHECK(
      r.command(Json::parse(R"j({"id":"f2","type":"set_event_filter"})j")).dump() ==
      R"j({"id":"f2","type":"response","command":"set_event_filter","success":true,"data":{"events":null,"messageUpdates":"full"}})j");
  CHECK(
      r
          .command(Json::parse(
              R"j({"id":"f3","type":"set_event_filter","events":null,"messageUpdates":"delta"})j"))
          .dump() ==
      R"j({"id":"f3","type":"response","command":"set_event_filter","success":true,"data":{"events":null,"messageUpdates":"delta"}})j");
  CHECK(r.command(Json::parse(R"j({"id":"f4","type":"set_event_filter","events":[]})j"))["data"] ==
        Json::parse(R"j({"events":[],"messageUpdates":"full"})j"));
}

TEST_CASE("an allow-list passes only the listed events, [] passes none, responses always pass") {
  ReboundProcess r = server(R"j([{"text":"one two","chunks":2},{"text":"three"}])j");
  r.command(Json::parse(
      R"j({"id":"f","type":"set_event_filter","events":["agent_start","agent_end","unknown_event"]})j"));
  r.send(Json{{"id", "p"}, {"type", "prompt"}, {"message", "hi"}});
  auto lines = r.read_until_type("agent_end");
  CHECK(types(lines) == std::vector<std::string>{"response", "agent_start", "agent_end"});
  CHECK(lines[2]["messages"].size() == 2);  // the filtered event itself is whole

  r.command(Json::parse(R"j({"id":"none","type":"set_event_filter","events":[]})j"));
  r.send(Json{{"id", "p2"}, {"type", "prompt"}, {"message", "again"}});
  CHECK(r.read_json()["id"] == "p2");
  // Nothing of the run is written; errors of every kind still are.
  r.send_raw("{oops\n");
  const Json parse_error = r.read_json();
  CHECK(parse_error["command"] == "parse");
  CHECK(parse_error["error"].get<std::string>().rfind("Failed to parse command: ", 0) == 0);
  r.send_raw(R"j({"id":"u","type":"fly"})j"
             "\n");
  CHECK(r.read_json()["error"] == "Unknown command: fly");
  r.send_raw(R"j({"jsonrpc":"2.0","id":9,"method":"fly"})j"
             "\n");
  CHECK(r.read_json()["error"]["code"] == -32601);
  // The run went on unseen: its answer is in the context.
  const Json messages = r.command(Json{{"id", "m"}, {"type", "get_messages"}});
  CHECK(messages["data"]["messages"].size() == 4);
}

TEST_CASE("a rejected filter leaves the previous one in force (all or nothing)") {
  ReboundProcess r = server(R"j([{"text":"one two","chunks":2}])j");
  r.command(Json::parse(R"j({"id":"f","type":"set_event_filter","events":["agent_end"]})j"));
  CHECK(
      r.command(Json::parse(R"j({"id":"b1","type":"set_event_filter","events":"agent_end"})j"))
          .dump() ==
      R"j({"id":"b1","type":"response","command":"set_event_filter","success":false,"error":"Invalid field 'events': expected array of non-empty strings or null"})j");
  CHECK(r.command(Json::parse(
            R"j({"id":"b2","type":"set_event_filter","events":["agent_start",""]})j"))["error"] ==
        "Invalid field 'events': expected array of non-empty strings or null");
  CHECK(r.command(Json::parse(
            R"j({"id":"b3","type":"set_event_filter","events":["agent_start",7]})j"))["error"] ==
        "Invalid field 'events': expected array of non-empty strings or null");
  // A valid `events` with an invalid `messageUpdates` changes nothing either.
  CHECK(
      r
          .command(Json::parse(
              R"j({"id":"b4","type":"set_event_filter","events":null,"messageUpdates":"partial"})j"))
          .dump() ==
      R"j({"id":"b4","type":"response","command":"set_event_filter","success":false,"error":"Invalid field 'messageUpdates': expected one of full, delta"})j");
  CHECK(r.command(Json::parse(
            R"j({"id":"b5","type":"set_event_filter","messageUpdates":null})j"))["error"] ==
        "Invalid field 'messageUpdates': expected one of full, delta");
  r.send(Json{{"id", "p"}, {"type", "prompt"}, {"message", "hi"}});
  const auto lines = r.read_until_type("agent_end");
  CHECK(types(lines) == std::vector<std::string>{"response", "agent_end"});
}

TEST_CASE("delta message_update lines have the exact shape and rebuild the final message") {
  const std::string script =
      R"j([{"thinking":"ponder it","text":"Hello world","chunks":3,"toolCalls":[{"name":"fly","arguments":{"command":"ls"}}]},{"text":"done"}])j";
  ReboundProcess r = server(script);
  CHECK(r.command(Json::parse(
            R"j({"id":"f","type":"set_event_filter","messageUpdates":"delta"})j"))["success"] ==
        true);
  r.send(Json{{"id", "p"}, {"type", "prompt"}, {"message", "hi"}});
  const auto lines = run_prompt(r);
  const auto updates = of_type(lines, "message_update");
  REQUIRE(!updates.empty());
  std::map<std::size_t, std::string> text;  // rebuilt per contentIndex
  std::size_t message = 0;
  std::map<std::size_t, std::map<std::size_t, std::string>> ended;  // message → index → content
  for (const auto& j : lines) {
    if (j["type"] == "message_start" && j["message"]["role"] == "assistant") {
      text.clear();
      ++message;
    }
    if (j["type"] != "message_update") continue;
    // Keys in order: type, assistantMessageEvent, message; no partial anywhere.
    CHECK(j.dump().rfind(R"j({"type":"message_update","assistantMessageEvent":{"type":")j", 0) ==
          0);
    CHECK(j["message"].dump() == R"j({"role":"assistant"})j");
    const Json& e = j["assistantMessageEvent"];
    CHECK_FALSE(e.contains("partial"));
    std::vector<std::string> keys;
    for (auto it = e.begin(); it != e.end(); ++it)
      keys.push_back(it.key());
    const std::string kind = e["type"];
    const std::size_t index = e["contentIndex"];
    if (kind.ends_with("_delta")) {
      CHECK(keys == std::vector<std::string>{"type", "contentIndex", "delta"});
      text[index] += e["delta"].get<std::string>();
    } else if (kind == "text_end" || kind == "thinking_end") {
      CHECK(keys == std::vector<std::string>{"type", "contentIndex", "content"});
      CHECK(e["content"] == text[index]);
      ended[message][index] = e["content"];
    } else if (kind == "toolcall_end") {
      CHECK(keys == std::vector<std::string>{"type", "contentIndex", "toolCall"});
      CHECK(Json::parse(text[index]) == e["toolCall"]["arguments"]);
      CHECK(
          j.dump() ==
          R"j({"type":"message_update","assistantMessageEvent":{"type":"toolcall_end","contentIndex":2,"toolCall":{"type":"toolCall","id":)j" +
              e["toolCall"]["id"].dump() +
              R"j(,"name":"fly","arguments":{"command":"ls"}}},"message":{"role":"assistant"}})j");
    } else {
      CHECK(keys == std::vector<std::string>{"type", "contentIndex"});
    }
  }
  CHECK(ended[1][0] == "ponder it");
  CHECK(ended[1][1] == "Hello world");
  CHECK(ended[2][0] == "done");
  // The exact text_delta line of the spec's example shape.
  bool saw = false;
  for (const auto& j : updates) {
    if (j["assistantMessageEvent"]["type"] == "text_delta" && !saw) {
      saw = true;
      CHECK(
          j.dump() ==
          R"j({"type":"message_update","assistantMessageEvent":{"type":"text_delta","contentIndex":1,"delta":)j" +
              j["assistantMessageEvent"]["delta"].dump() +
              R"j(},"message":{"role":"assistant"}})j");
    }
  }
  CHECK(saw);
  // Everything else keeps its full message.
  const auto ends = of_type(lines, "message_end");
  CHECK(ends.at(1)["message"]["content"].at(1)["text"] == "Hello world");
  CHECK(of_type(lines, "turn_end").at(0)["message"]["content"].size() == 3);
  CHECK(of_type(lines, "tool_execution_end").at(0)["result"]["content"][0]["text"] ==
        "Tool fly not found");
}

TEST_CASE("delta mode: a retried attempt is a new message whose indexes start at 0 again") {
  ReboundProcess r = server(
      R"j([{"text":"par","chunks":3,"error":"503 overloaded"},{"text":"full answer","chunks":2}])j",
      {}, R"j({"retry":{"enabled":true,"maxRetries":2,"baseDelayMs":1}})j");
  r.command(Json::parse(R"j({"id":"f","type":"set_event_filter","messageUpdates":"delta"})j"));
  r.send(Json{{"id", "p"}, {"type", "prompt"}, {"message", "hi"}});
  const auto lines = r.read_until_type("auto_retry_end");
  std::string rebuilt;
  for (const auto& j : lines) {
    if (j["type"] == "message_start" && j["message"]["role"] == "assistant") rebuilt.clear();
    if (j["type"] == "message_update" && j["assistantMessageEvent"]["type"] == "text_delta") {
      CHECK(j["assistantMessageEvent"]["contentIndex"] == 0);
      rebuilt += j["assistantMessageEvent"]["delta"].get<std::string>();
    }
  }
  CHECK(rebuilt == "full answer");
  CHECK(of_type(lines, "message_end").back()["message"]["content"][0]["text"] == "full answer");
}

TEST_CASE(
    "a filter set in the middle of a stream applies from its response on, full lines stay exact") {
  ReboundProcess r = server(R"j([{"text":"abcdefghij","chunks":10,"chunkDelayMs":30}])j");
  r.send(Json{{"id", "p"}, {"type", "prompt"}, {"message", "hi"}});
  auto first = r.read_until([](const Json& j) {
    return j["type"] == "message_update" && j["assistantMessageEvent"]["type"] == "text_delta";
  });
  // Off, then back on: the full partial message must still be the whole text so far.
  r.send(Json::parse(R"j({"id":"off","type":"set_event_filter","events":["agent_end"]})j"));
  r.read_until_response("off");
  std::this_thread::sleep_for(100ms);  // deltas go by unseen
  r.send(Json::parse(R"j({"id":"on","type":"set_event_filter"})j"));
  const auto rest = r.read_until_type("agent_end");
  bool checked = false;
  for (const auto& j : rest) {
    if (j["type"] != "message_update" || j["assistantMessageEvent"]["type"] != "text_delta")
      continue;
    const std::string partial = j["message"]["content"][0]["text"];
    CHECK(partial == std::string("abcdefghij").substr(0, partial.size()));
    CHECK(j["assistantMessageEvent"]["partial"] == j["message"]);
    checked = true;
  }
  CHECK(checked);
}

TEST_CASE("the filter belongs to the connection: kept across new_session and switch_session") {
  ReboundProcess r({"--provider", "scripted", "--session-dir", "@DIR@/sessions"});
  r.command(Json::parse(
      R"j({"id":"f","type":"set_event_filter","events":["agent_end"],"messageUpdates":"delta"})j"));
  r.send(Json{{"id", "p"}, {"type", "prompt"}, {"message", "hi"}});
  CHECK(types(r.read_until_type("agent_end")) == std::vector<std::string>{"response", "agent_end"});
  const Json state = r.command(Json{{"id", "s"}, {"type", "get_state"}});
  r.command(Json{{"id", "n"}, {"type", "new_session"}});
  r.send(Json{{"id", "p2"}, {"type", "prompt"}, {"message", "hi"}});
  CHECK(types(r.read_until_type("agent_end")) == std::vector<std::string>{"response", "agent_end"});
  const Json sw = r.command(
      Json{{"id", "w"}, {"type", "switch_session"}, {"sessionPath", state["data"]["sessionFile"]}});
  CHECK(sw["success"] == true);
  r.send(Json{{"id", "p3"}, {"type", "prompt"}, {"message", "hi"}});
  CHECK(types(r.read_until_type("agent_end")) == std::vector<std::string>{"response", "agent_end"});
}

TEST_CASE("JSON-RPC requests get results with the spec's key order and the id as sent") {
  ReboundProcess r = server(R"j([{"text":"hello"}])j");
  CHECK(rpc_answer(
            r, R"j({"jsonrpc":"2.0","id":1,"method":"set_auto_retry","params":{"enabled":false}})j",
            1)
            .dump() == R"j({"jsonrpc":"2.0","id":1,"result":null})j");
  CHECK(rpc_answer(r, R"j({"jsonrpc":"2.0","id":"1","method":"abort_retry"})j", "1").dump() ==
        R"j({"jsonrpc":"2.0","id":"1","result":null})j");
  CHECK(
      rpc_answer(r, R"j({"jsonrpc":"2.0","id":null,"method":"abort_retry","params":{}})j", nullptr)
          .dump() == R"j({"jsonrpc":"2.0","id":null,"result":null})j");
  CHECK(rpc_answer(r, R"j({"jsonrpc":"2.0","id":2.5,"method":"abort_retry"})j", 2.5).dump() ==
        R"j({"jsonrpc":"2.0","id":2.5,"result":null})j");
  // data:null gives result:null too (the scripted model has no reasoning levels to cycle).
  CHECK(rpc_answer(r, R"j({"jsonrpc":"2.0","id":3,"method":"cycle_thinking_level"})j", 3).dump() ==
        R"j({"jsonrpc":"2.0","id":3,"result":null})j");
  // result is the section 2 data.
  const Json state = rpc_answer(r, R"j({"jsonrpc":"2.0","id":4,"method":"get_state"})j", 4);
  const Json pi_state = r.command(Json{{"id", 5}, {"type", "get_state"}});
  CHECK(state["result"] == pi_state["data"]);
  std::vector<std::string> keys;
  for (auto it = state.begin(); it != state.end(); ++it)
    keys.push_back(it.key());
  CHECK(keys == std::vector<std::string>{"jsonrpc", "id", "result"});
  // `type` and `id` inside params are ignored.
  CHECK(
      rpc_answer(
          r,
          R"j({"jsonrpc":"2.0","id":6,"method":"set_auto_compaction","params":{"type":"abort","id":"x","enabled":false}})j",
          6)
          .dump() == R"j({"jsonrpc":"2.0","id":6,"result":null})j");
  CHECK(r.command(Json{{"id", 7}, {"type", "get_state"}})["data"]["autoCompactionEnabled"] ==
        false);
  // A pi command after the switch still gets a pi response.
  CHECK(r.command(Json{{"id", 8}, {"type", "abort_retry"}}).dump() ==
        R"j({"id":8,"type":"response","command":"abort_retry","success":true})j");
}

TEST_CASE("JSON-RPC errors: codes, messages, data and the order of the checks") {
  ReboundProcess r = server(R"j([{"text":"hello"}])j");
  CHECK(
      rpc_answer(
          r,
          R"j({"jsonrpc":"2.0","id":1,"method":"set_model","params":{"provider":"x","modelId":"y"}})j",
          1)
          .dump() ==
      R"j({"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"Model not found: x/y","data":{"command":"set_model"}}})j");
  CHECK(
      rpc_answer(r, R"j({"jsonrpc":"2.0","id":2,"method":"fly"})j", 2).dump() ==
      R"j({"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"Unknown command: fly","data":{"command":"fly"}}})j");
  CHECK(
      rpc_answer(r, R"j({"jsonrpc":"2.0","id":3,"method":"set_auto_retry"})j", 3).dump() ==
      R"j({"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"Invalid field 'enabled': expected boolean","data":{"command":"set_auto_retry"}}})j");
  // A handler's own field check is -32602 as well.
  CHECK(
      rpc_answer(
          r, R"j({"jsonrpc":"2.0","id":4,"method":"set_retry_policy","params":{"maxRetries":-1}})j",
          4)
          .dump() ==
      R"j({"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"Invalid field 'maxRetries': expected integer 0..100 or null","data":{"command":"set_retry_policy"}}})j");
  CHECK(rpc_answer(
            r, R"j({"jsonrpc":"2.0","id":5,"method":"set_event_filter","params":{"events":3}})j",
            5)["error"]["code"] == -32602);
  CHECK(
      rpc_answer(r, R"j({"jsonrpc":"2.0","id":6,"method":"prompt","params":[1,2]})j", 6).dump() ==
      R"j({"jsonrpc":"2.0","id":6,"error":{"code":-32602,"message":"Invalid params: params must be an object","data":{"command":"prompt"}}})j");
  // -32600: the id echoed when it is a string or a number, null otherwise; even without an id.
  const std::vector<std::pair<std::string, std::string>> invalid{
      {R"j({"jsonrpc":"1.0","id":7,"method":"get_state"})j",
       R"j({"jsonrpc":"2.0","id":7,"error":{"code":-32600,"message":"Invalid Request: jsonrpc must be \"2.0\""}})j"},
      {R"j({"jsonrpc":2,"id":"s","method":"get_state"})j",
       R"j({"jsonrpc":"2.0","id":"s","error":{"code":-32600,"message":"Invalid Request: jsonrpc must be \"2.0\""}})j"},
      {R"j({"jsonrpc":"1.0","method":"get_state"})j",
       R"j({"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: jsonrpc must be \"2.0\""}})j"},
      {R"j({"jsonrpc":"1.0","id":{"a":1},"method":7})j",
       R"j({"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: jsonrpc must be \"2.0\""}})j"},
      {R"j({"jsonrpc":"2.0","id":[1],"method":7})j",
       R"j({"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: id must be a string, a number or null"}})j"},
      {R"j({"jsonrpc":"2.0","id":true,"method":"get_state"})j",
       R"j({"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: id must be a string, a number or null"}})j"},
      {R"j({"jsonrpc":"2.0","id":8,"params":"x"})j",
       R"j({"jsonrpc":"2.0","id":8,"error":{"code":-32600,"message":"Invalid Request: method must be a string"}})j"},
      {R"j({"jsonrpc":"2.0","method":["get_state"]})j",
       R"j({"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: method must be a string"}})j"},
      {R"j({"jsonrpc":"2.0","id":"9","method":"get_state","params":"x"})j",
       R"j({"jsonrpc":"2.0","id":"9","error":{"code":-32600,"message":"Invalid Request: params must be an object or an array"}})j"},
      {R"j({"jsonrpc":"2.0","method":"get_state","params":null})j",
       R"j({"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: params must be an object or an array"}})j"},
  };
  for (const auto& [line, expected] : invalid) {
    r.send_raw(line + "\n");
    CHECK(r.read_json().dump() == expected);
  }
}

TEST_CASE("notifications run, are never answered, and switch the events to notifications") {
  ReboundProcess r = server(R"j([{"text":"hi there","chunks":2}])j");
  // Failing notifications write nothing: the next line is the marker request's answer.
  r.send_raw(R"j({"jsonrpc":"2.0","method":"fly"})j"
             "\n");
  r.send_raw(R"j({"jsonrpc":"2.0","method":"set_auto_retry"})j"
             "\n");
  r.send_raw(R"j({"jsonrpc":"2.0","method":"prompt","params":[1]})j"
             "\n");
  r.send_raw(R"j({"jsonrpc":"2.0","method":"set_model","params":{"provider":"x","modelId":"y"}})j"
             "\n");
  // A succeeding one does its work, unanswered.
  r.send_raw(R"j({"jsonrpc":"2.0","method":"set_auto_compaction","params":{"enabled":false}})j"
             "\n");
  r.send_raw(R"j({"jsonrpc":"2.0","id":"m","method":"get_state"})j"
             "\n");
  const Json first = r.read_json();
  CHECK(first["id"] == "m");
  CHECK(first["result"]["autoCompactionEnabled"] == false);
  // A prompt sent as a notification runs; its events are notifications.
  r.send_raw(R"j({"jsonrpc":"2.0","method":"prompt","params":{"message":"hello"}})j"
             "\n");
  const auto lines =
      r.read_until([](const Json& j) { return j.value("method", "") == "agent_end"; });
  CHECK(lines.front().dump() ==
        R"j({"jsonrpc":"2.0","method":"agent_start","params":{"type":"agent_start"}})j");
  for (const auto& j : lines) {
    CHECK(j.contains("method"));
    CHECK(j["params"]["type"] == j["method"]);
    std::vector<std::string> keys;
    for (auto it = j.begin(); it != j.end(); ++it)
      keys.push_back(it.key());
    CHECK(keys == std::vector<std::string>{"jsonrpc", "method", "params"});
  }
  CHECK(lines.back()["params"]["messages"][1]["content"][0]["text"] == "hi there");
}

TEST_CASE("auto envelope: pi until the first valid request, then notifications for good") {
  ReboundProcess r = server(R"j([{"text":"one"},{"text":"two"},{"text":"three"}])j");
  r.send(Json{{"id", "p"}, {"type", "prompt"}, {"message", "hi"}});
  auto pi_lines = run_prompt(r);
  CHECK(pi_lines.front()["type"] == "agent_start");
  // Neither an invalid request nor a batch switches.
  r.send_raw(R"j({"jsonrpc":"1.0","id":1,"method":"get_state"})j"
             "\n");
  CHECK(r.read_json()["error"]["code"] == -32600);
  r.send_raw(R"j([{"jsonrpc":"2.0","id":2,"method":"get_state"}])j"
             "\n");
  CHECK(
      r.read_json().dump() ==
      R"j({"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: batch requests are not supported"}})j");
  r.send_raw("[1,2]\n");  // while pi: an array is not a batch, only not an object
  CHECK(
      r.read_json().dump() ==
      R"j({"type":"response","command":"parse","success":false,"error":"Failed to parse command: expected a JSON object"})j");
  r.send_raw("{bad\n");
  CHECK(r.read_json()["command"] == "parse");
  r.send(Json{{"id", "p2"}, {"type", "prompt"}, {"message", "hi"}});
  CHECK(run_prompt(r, "p2").front()["type"] == "agent_start");

  // The prompt that switches is answered in JSON-RPC before its run's first notification.
  const auto lines = rpc_exchange(
      r, R"j({"jsonrpc":"2.0","id":"p3","method":"prompt","params":{"message":"go"}})j", "p3");
  CHECK(lines.size() == 1);
  CHECK(lines.back().dump() == R"j({"jsonrpc":"2.0","id":"p3","result":null})j");
  auto run = r.read_until([](const Json& j) { return j.value("method", "") == "agent_end"; });
  CHECK(run.front()["method"] == "agent_start");
  // Sticky: a pi command gets a pi response, but the events stay notifications, also after
  // new_session; lines without an envelope now get JSON-RPC errors.
  CHECK(r.command(Json{{"id", "n"}, {"type", "new_session"}})["success"] == true);
  r.send_raw("{bad\n");
  const Json parse_error = r.read_json();
  std::vector<std::string> keys;
  for (auto it = parse_error.begin(); it != parse_error.end(); ++it)
    keys.push_back(it.key());
  CHECK(keys == std::vector<std::string>{"jsonrpc", "id", "error"});
  CHECK(parse_error["id"].is_null());
  CHECK(parse_error["error"]["code"] == -32700);
  CHECK(parse_error["error"].size() == 2);  // no data for -32700
  CHECK(parse_error["error"]["message"].get<std::string>().rfind(
            "Failed to parse command: parse error at line 1", 0) == 0);
  r.send_raw("\xff\n");
  CHECK(r.read_json()["error"]["code"] == -32700);
  r.send_raw("42\n");
  CHECK(
      r.read_json().dump() ==
      R"j({"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: expected a JSON object"}})j");
  r.send_raw("[1,2]\n");
  CHECK(r.read_json()["error"]["message"] == "Invalid Request: batch requests are not supported");
  r.send_raw("[]\n");
  CHECK(r.read_json()["error"]["message"] == "Invalid Request: batch requests are not supported");
  r.send_raw(R"j({"id":"t"})j"
             "\n");  // a pi line without type keeps its pi error
  CHECK(
      r.read_json().dump() ==
      R"j({"id":"t","type":"response","command":"parse","success":false,"error":"Failed to parse command: missing string field 'type'"})j");
  r.send(Json{{"id", "p4"}, {"type", "prompt"}, {"message", "hi"}});
  const auto after =
      r.read_until([](const Json& j) { return j.value("method", "") == "agent_end"; });
  CHECK(after.front().dump() ==
        R"j({"id":"p4","type":"response","command":"prompt","success":true})j");
  CHECK(after.at(1)["method"] == "agent_start");
}

TEST_CASE("--envelope pi pins events and parse errors, requests are still answered in JSON-RPC") {
  ReboundProcess r = server(R"j([{"text":"one"}])j", {"--envelope", "pi"});
  const auto lines = rpc_exchange(
      r, R"j({"jsonrpc":"2.0","id":1,"method":"prompt","params":{"message":"go"}})j", 1);
  CHECK(lines.back().dump() == R"j({"jsonrpc":"2.0","id":1,"result":null})j");
  const auto run = r.read_until_type("agent_end");
  CHECK(run.front().dump() == R"j({"type":"agent_start"})j");
  r.send_raw("{bad\n");
  CHECK(r.read_json()["command"] == "parse");
  r.send_raw("[1]\n");
  CHECK(r.read_json()["command"] == "parse");
}

TEST_CASE("--envelope jsonrpc: notifications from the start, over-long lines get -32700") {
  ReboundProcess r =
      server(R"j([{"text":"one"}])j", {"--envelope", "jsonrpc", "--max-line-bytes", "200"});
  r.send_raw(std::string(300, 'x') + "\n");
  CHECK(
      r.read_json().dump() ==
      R"j({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Failed to parse command: line exceeds the limit of 200 bytes"}})j");
  r.send_raw("[{\"type\":\"get_state\"}]\n");
  CHECK(r.read_json()["error"]["message"] == "Invalid Request: batch requests are not supported");
  r.send(Json{{"id", "p"}, {"type", "prompt"}, {"message", "hi"}});
  const auto lines =
      r.read_until([](const Json& j) { return j.value("method", "") == "agent_end"; });
  CHECK(lines.front().dump() ==
        R"j({"id":"p","type":"response","command":"prompt","success":true})j");
  CHECK(lines.at(1).dump() ==
        R"j({"jsonrpc":"2.0","method":"agent_start","params":{"type":"agent_start"}})j");
}

TEST_CASE("the filter and the delta form apply to notifications by their event type") {
  ReboundProcess r = server(R"j([{"text":"abc","chunks":3}])j", {"--envelope", "jsonrpc"});
  // Set by a notification: no answer, in force at once.
  r.send_raw(
      R"j({"jsonrpc":"2.0","method":"set_event_filter","params":{"events":["message_update","agent_end"],"messageUpdates":"delta"}})j"
      "\n");
  const auto lines = rpc_exchange(
      r, R"j({"jsonrpc":"2.0","id":1,"method":"prompt","params":{"message":"go"}})j", 1);
  CHECK(lines.size() == 1);
  const auto run = r.read_until([](const Json& j) { return j.value("method", "") == "agent_end"; });
  std::vector<std::string> seen;
  for (const auto& j : run)
    seen.push_back(j["method"]);
  CHECK(seen == std::vector<std::string>{"message_update", "message_update", "message_update",
                                         "message_update", "message_update", "agent_end"});
  CHECK(
      run.at(1).dump() ==
      R"j({"jsonrpc":"2.0","method":"message_update","params":{"type":"message_update","assistantMessageEvent":{"type":"text_delta","contentIndex":0,"delta":"a"},"message":{"role":"assistant"}}})j");
}

TEST_CASE(
    "JSON-RPC keeps the order rules: abort answers after agent_end, auto_retry_end before "
    "abort_retry's answer") {
  ReboundProcess r = server(R"j([{"hang":true},{"error":"503 overloaded"},{"text":"late"}])j", {},
                            R"j({"retry":{"enabled":true,"maxRetries":3,"baseDelayMs":60000}})j");
  rpc_exchange(r, R"j({"jsonrpc":"2.0","id":1,"method":"prompt","params":{"message":"go"}})j", 1);
  r.read_until([](const Json& j) { return j.value("method", "") == "message_start"; });
  const auto aborted = rpc_exchange(r, R"j({"jsonrpc":"2.0","id":2,"method":"abort"})j", 2);
  CHECK(aborted.at(aborted.size() - 2)["method"] == "agent_end");
  CHECK(aborted.back().dump() == R"j({"jsonrpc":"2.0","id":2,"result":null})j");

  rpc_exchange(r, R"j({"jsonrpc":"2.0","id":3,"method":"prompt","params":{"message":"again"}})j",
               3);
  r.read_until([](const Json& j) { return j.value("method", "") == "auto_retry_start"; });
  const auto cancelled = rpc_exchange(r, R"j({"jsonrpc":"2.0","id":4,"method":"abort_retry"})j", 4);
  REQUIRE(cancelled.size() == 2);
  CHECK(cancelled[0]["method"] == "auto_retry_end");
  CHECK(cancelled[0]["params"]["success"] == false);
  CHECK(cancelled[1].dump() == R"j({"jsonrpc":"2.0","id":4,"result":null})j");
}

TEST_CASE("a retry-control command sent as a notification turns the typed retry fields on") {
  ReboundProcess r =
      server(R"j([{"error":"503 overloaded"},{"text":"ok"}])j", {"--retry-seed", "1"},
             R"j({"retry":{"enabled":true,"maxRetries":3,"baseDelayMs":10}})j");
  r.send_raw(R"j({"jsonrpc":"2.0","method":"get_retry_state"})j"
             "\n");
  r.send_raw(R"j({"jsonrpc":"2.0","id":1,"method":"prompt","params":{"message":"go"}})j"
             "\n");
  const auto lines =
      r.read_until([](const Json& j) { return j.value("method", "") == "auto_retry_end"; });
  CHECK(lines.front().dump() == R"j({"jsonrpc":"2.0","id":1,"result":null})j");
  Json start;
  for (const auto& j : lines)
    if (j.value("method", "") == "auto_retry_start") start = j["params"];
  CHECK(start["errorClass"] == "overloaded");
  CHECK(start["delaySource"] == "backoff");
  CHECK(lines.back()["params"]["reason"] == "success");
}

TEST_CASE("get_entries is built as text and answers in the JSON-RPC envelope as in the pi form") {
  ReboundProcess r = server(R"j([{"text":"one"}])j", {"--envelope", "jsonrpc"});
  const Json answer =
      rpc_answer(r, R"j({"jsonrpc":"2.0","id":7,"method":"get_entries","params":{}})j", 7);
  CHECK(answer["jsonrpc"] == "2.0");
  CHECK(answer["id"] == 7);
  REQUIRE(answer["result"]["entries"].size() == 2);
  CHECK(answer["result"]["leafId"] == answer["result"]["entries"][1]["id"]);
  CHECK(answer.dump().starts_with(
      R"j({"jsonrpc":"2.0","id":7,"result":{"entries":[{"type":"model_change",)j"));
  // And in the pi form on the same server, the same data.
  r.send_raw(R"j({"id":"e","type":"get_entries"})j"
             "\n");
  const Json pi = r.read_until([](const Json& j) { return j.value("id", Json()) == "e"; }).back();
  CHECK(pi["success"] == true);
  CHECK(pi["data"] == answer["result"]);
}
