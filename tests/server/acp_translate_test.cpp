// ACP mode's pure parts (acp.md sections 4 and 6 to 11): the event translation, the replay of a
// loaded session, the method table's params readers and the reply guard, without a process.

#include <doctest/doctest.h>

#include <vector>

#include "server/acp/acp_methods.h"
#include "server/acp/acp_replay.h"
#include "server/acp/acp_reply.h"
#include "server/acp/acp_translate.h"

using namespace rebound;
using namespace rebound::server::acp;
using protocol::AgentMessage;
using protocol::ContentBlock;
using protocol::Json;
namespace ev = session::ev;

TEST_CASE("acp translate: deltas become chunks with the message id, other updates none") {
  AgentMessage partial;
  partial.role = protocol::Role::assistant;
  using K = session::AssistantUpdateKind;
  auto chunk = delta_chunk(ev::MessageUpdate{partial, K::text_delta, 0, "hi", 1}, "m3");
  REQUIRE(chunk);
  CHECK(
      chunk->dump() ==
      R"j({"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"},"messageId":"m3"})j");
  CHECK((*delta_chunk(ev::MessageUpdate{partial, K::thinking_delta, 0, "hm", 1},
                      "m3"))["sessionUpdate"] == "agent_thought_chunk");
  CHECK_FALSE(delta_chunk(ev::MessageUpdate{partial, K::text_delta, 0, "", 1}, "m3"));
  CHECK_FALSE(delta_chunk(ev::MessageUpdate{partial, K::toolcall_end, 0, "", 1}, "m3"));
}

TEST_CASE("acp translate: a tool call's end is a diff when the file around it is known") {
  const std::string id = "call1", name = "edit";
  session::ToolResult ok;
  ok.content.push_back(ContentBlock::make_text("Successfully replaced 1 block(s) in a.txt."));
  ToolState state;
  state.info = tool_call_info("edit", Json{{"path", "a.txt"}}, "/w");
  state.before = "old\n";
  state.after = "new\n";
  const Json diff = tool_end_update(ev::ToolExecutionEnd{id, name, ok}, &state);
  CHECK(diff["status"] == "completed");
  CHECK(diff["content"].dump() ==
        R"j([{"type":"diff","path":"/w/a.txt","oldText":"old\n","newText":"new\n"}])j");
  CHECK(diff["rawOutput"]["content"][0]["text"] == "Successfully replaced 1 block(s) in a.txt.");
  // The after unknown (the gate could not read it): the result's content.
  state.after.reset();
  CHECK(tool_end_update(ev::ToolExecutionEnd{id, name, ok}, &state)["content"][0]["type"] ==
        "content");
  // A failed call never shows a diff.
  state.after = "new\n";
  const session::ToolResult failed = session::ToolResult::error("Could not edit file");
  const Json end = tool_end_update(ev::ToolExecutionEnd{id, name, failed}, &state);
  CHECK(end["status"] == "failed");
  CHECK(end["content"][0]["content"]["text"] == "Could not edit file");
  CHECK(tool_end_update(ev::ToolExecutionEnd{id, name, ok}, nullptr)["content"][0]["type"] ==
        "content");
}

TEST_CASE("acp translate: retry notices, compaction updates, turn results") {
  const std::string error = "503 Service Unavailable";
  const Json start = retry_start_notice(ev::AutoRetryStart{1, 3, 2000, error});
  CHECK(start["severity"] == "warning");
  CHECK(start["description"] == error);
  CHECK(start["_meta"]["rebound"].dump() ==
        R"j({"event":"auto_retry_start","attempt":1,"maxAttempts":3,"delayMs":2000})j");
  CHECK_FALSE(retry_end_notice(ev::AutoRetryEnd{false, 3, "Retry cancelled"}));
  CHECK((*retry_end_notice(
            ev::AutoRetryEnd{true, 2, std::nullopt}))["_meta"]["rebound"]["attempt"] == 2);
  session::CompactionResult result{"the summary", "e1", 100};
  CHECK(
      compaction_ended(ev::AutoCompactionEnd{&result, false, false, std::nullopt}, "c1").dump() ==
      R"j({"sessionUpdate":"compaction_update","compactionId":"c1","status":"completed","summary":[{"type":"text","text":"the summary"}]})j");
  CHECK(compaction_ended(ev::AutoCompactionEnd{nullptr, true, false, std::nullopt},
                         "c1")["status"] == "cancelled");
  CHECK(compaction_ended(ev::AutoCompactionEnd{nullptr, false, false, "too big"}, "c1")["error"] ==
        "too big");
  CHECK(
      turn_result(turn_ending(false, protocol::StopReason::error, false), 2, "boom").dump() ==
      R"j({"stopReason":"end_turn","_meta":{"rebound":{"outcome":"error","retries":2,"errorMessage":"boom"}}})j");
  CHECK(cancelled_result().dump() ==
        R"j({"stopReason":"cancelled","_meta":{"rebound":{"outcome":"cancelled","retries":0}}})j");
  CHECK(error_chunk("boom", true, "m9")["content"]["text"] == "\n\nError: boom");
}

TEST_CASE("acp replay: what a loaded session shows, tool calls with their results") {
  std::vector<AgentMessage> history(5);
  history[0].role = protocol::Role::user;
  history[0].content = {ContentBlock::make_text("fix it")};
  history[0].entry_id = "u1";
  history[1].role = protocol::Role::assistant;  // a failed attempt that was retried: not shown
  history[1].stop_reason = protocol::StopReason::error;
  history[1].error_message = "503";
  history[1].entry_id = "a1";
  history[2].role = protocol::Role::assistant;
  history[2].content = {ContentBlock::make_text("reading"),
                        ContentBlock::make_tool_call("c1", "read", Json{{"path", "a.txt"}})};
  history[2].entry_id = "a2";
  history[3].role = protocol::Role::tool_result;
  history[3].tool_call_id = "c1";
  history[3].content = {ContentBlock::make_text("line")};
  history[4].role = protocol::Role::assistant;  // the last answer failed: its error is shown
  history[4].stop_reason = protocol::StopReason::error;
  history[4].error_message = "overloaded";
  history[4].entry_id = "a3";
  const auto updates = replay_updates(history, "/w");
  std::vector<std::string> kinds;
  for (const auto& u : updates)
    kinds.push_back(u["sessionUpdate"].get<std::string>());
  CHECK(kinds == std::vector<std::string>{"user_message_chunk", "agent_message_chunk", "tool_call",
                                          "agent_message_chunk"});
  CHECK(updates[2]["status"] == "completed");
  CHECK(updates[2]["locations"].dump() == R"j([{"path":"/w/a.txt"}])j");
  CHECK(updates[3]["content"]["text"] == "Error: overloaded");
  CHECK(updates[3]["messageId"] == "a3-error");
}

TEST_CASE("acp methods: typed params, a notification never answered, one answer per request") {
  std::vector<Json> out;
  server::JsonSink sink = [&out](const Json& j) { out.push_back(j); };
  AcpMethodTable table;
  int ran = 0;
  table.add<SessionParams>("x/y", MethodKind::either, read_session_params,
                           [&ran](SessionParams p, AcpReply r) {
                             ++ran;
                             r.ok(Json{{"id", p.session_id}});
                             r.ok(Json{{"again", true}});  // ignored
                           });
  const auto* entry = table.find("x/y");
  REQUIRE(entry);
  CHECK_FALSE(table.find("x/z"));
  entry->run(Json{{"sessionId", 5}}, AcpReply(Json(1), sink));       // a bad param, answered
  entry->run(Json{{"sessionId", 5}}, AcpReply(std::nullopt, sink));  // a notification: silent
  entry->run(Json{{"sessionId", "s"}}, AcpReply(Json("r"), sink));
  REQUIRE(out.size() == 2);
  CHECK(
      out[0].dump() ==
      R"j({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params: sessionId: expected string"}})j");
  CHECK(out[1].dump() == R"j({"jsonrpc":"2.0","id":"r","result":{"id":"s"}})j");
  CHECK(ran == 1);
  auto cwd = read_new_session(Json{{"cwd", "relative"}});
  CHECK(std::get<ParamsError>(cwd).message == "Invalid params: cwd must be an absolute path");
  auto servers = read_new_session(Json{{"cwd", "/"}, {"mcpServers", 3}});
  CHECK(std::get<ParamsError>(servers).message == "Invalid params: mcpServers: expected array");
  CHECK(
      std::get<OpenParams>(read_load_session(Json{{"cwd", "/"}, {"sessionId", "a"}})).session_id ==
      "a");
}

TEST_CASE("acp errors: from the kind and the field, one mapping") {
  using session::Error;
  using session::ErrorKind;
  auto of = [](const Error& e) {
    const auto j = acp_error(Json(1), e);
    return std::to_string(j.code) + " " + j.message;
  };
  CHECK(of(session::field_error("jitter", "number 0..1 or null")) ==
        "-32602 Invalid params: jitter: expected number 0..1 or null");
  CHECK(of(Error{ErrorKind::not_found, "session abc"}) == "-32002 Resource not found: session abc");
  CHECK(of(Error{ErrorKind::busy, "Compaction already in progress"}) ==
        "-32000 Compaction already in progress");
  CHECK(of(Error{ErrorKind::failed, "disk full"}) == "-32603 Internal error: disk full");
}

TEST_CASE("acp replay: a long text becomes chunks of at most 64 KiB, cut between characters") {
  std::vector<protocol::AgentMessage> history(2);
  history[0].role = protocol::Role::user;
  // 300 KB of three-byte characters with one ASCII byte first: no 64 KiB cut lands on a
  // character boundary by itself.
  std::string text = "a";
  while (text.size() < 300 * 1024)
    text += "\xE2\x82\xAC";  // €
  history[0].content = {ContentBlock::make_text(text)};
  history[0].entry_id = "u1";
  history[1].role = protocol::Role::assistant;
  history[1].content = {ContentBlock::make_text("ok")};
  history[1].entry_id = "a1";
  const auto updates = replay_updates(history, "/w");
  std::string joined;
  std::size_t user_chunks = 0;
  for (const auto& u : updates) {
    if (u["sessionUpdate"] != "user_message_chunk") continue;
    ++user_chunks;
    const std::string piece = u["content"]["text"];
    CHECK(piece.size() <= rebound::server::acp::kReplayChunkBytes);
    CHECK(u["messageId"] == "u1");
    joined += piece;
  }
  CHECK(user_chunks == 5);  // before: one update with the whole 300 KB
  CHECK(joined == text);
  CHECK(updates.back()["content"]["text"] == "ok");
}

TEST_CASE("acp replay: a tool result longer than 64 KiB is cut in the replayed tool_call") {
  std::vector<protocol::AgentMessage> history(3);
  history[0].role = protocol::Role::user;
  history[0].content = {ContentBlock::make_text("go")};
  history[0].entry_id = "u1";
  history[1].role = protocol::Role::assistant;
  history[1].content = {ContentBlock::make_tool_call("c1", "mcp__big__dump", Json::object())};
  history[1].stop_reason = protocol::StopReason::tool_use;
  history[1].entry_id = "a1";
  history[2].role = protocol::Role::tool_result;
  history[2].tool_call_id = "c1";
  history[2].content = {ContentBlock::make_text(std::string(1 << 20, 'r'))};
  const auto updates = replay_updates(history, "/w");
  const Json* call = nullptr;
  for (const auto& u : updates)
    if (u["sessionUpdate"] == "tool_call") call = &u;
  REQUIRE(call);
  // Before: the 1 MiB text twice (content and rawOutput) in one line.
  CHECK(call->dump().size() < 3 * rebound::server::acp::kReplayChunkBytes);
  const std::string text = (*call)["content"][0]["content"]["text"];
  CHECK(text == std::string(rebound::server::acp::kReplayChunkBytes, 'r') + "\n\n[" +
                    std::to_string((1 << 20) - rebound::server::acp::kReplayChunkBytes) +
                    " more bytes of this result are not replayed]");
}
