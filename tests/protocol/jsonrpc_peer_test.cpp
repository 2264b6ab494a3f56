// The requester side of a JSON-RPC connection: MCP servers (mcp.md sections 3.1 and 5) and
// ACP's requests to the client.

#include <doctest/doctest.h>

#include <vector>

#include "protocol/json_line.h"
#include "protocol/jsonrpc_peer.h"

using namespace rebound::protocol;

TEST_CASE("jsonrpc peer: ids from 1, answers matched by id in any order, forgotten ones dropped") {
  std::vector<std::string> sent;
  JsonRpcPeer peer([&](const Json& m) { sent.push_back(to_line(m)); });
  std::vector<std::string> answers;
  const auto a = peer.request("initialize", Json{{"protocolVersion", "2025-11-25"}},
                              [&](const Json& r) { answers.push_back("a:" + r["result"].dump()); });
  const auto b = peer.request("tools/list", Json::object(),
                              [&](const Json& r) { answers.push_back("b:" + r["error"].dump()); });
  const auto c =
      peer.request("tools/call", Json::object(), [&](const Json&) { answers.push_back("c"); });
  CHECK(a == 1);
  CHECK(b == 2);
  CHECK(
      sent[0] ==
      R"j({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}})j"
      "\n");
  peer.forget(c);
  CHECK(peer.receive(R"j({"jsonrpc":"2.0","id":3,"result":{}})j") ==
        JsonRpcPeer::Received::message);
  CHECK(peer.receive(R"j({"jsonrpc":"2.0","id":2,"error":{"code":-32000,"message":"no"}})j") ==
        JsonRpcPeer::Received::message);
  peer.receive(R"j({"jsonrpc":"2.0","id":1,"result":{"ok":true}})j");
  peer.receive(R"j({"jsonrpc":"2.0","id":1,"result":{"again":true}})j");  // answered already
  CHECK(answers ==
        std::vector<std::string>{R"j(b:{"code":-32000,"message":"no"})j", R"j(a:{"ok":true})j"});
  CHECK(peer.pending() == 0);
}

TEST_CASE("jsonrpc peer: notifications both ways, the server's ping and other requests") {
  std::vector<std::string> sent;
  JsonRpcPeer peer([&](const Json& m) { sent.push_back(to_line(m)); });
  std::vector<std::string> seen;
  peer.on_notification([&](const std::string& method, const Json& params) {
    seen.push_back(method + " " + params.dump());
  });
  // MCP's peer serves ping (mcp.md section 5); other requests get -32601.
  peer.on_request([](const std::string& method, const Json&) -> std::optional<Json> {
    if (method == "ping") return Json::object();
    return std::nullopt;
  });
  peer.notify("notifications/initialized");
  peer.notify("notifications/cancelled", Json{{"requestId", 4}, {"reason", "Request was aborted"}});
  CHECK(sent[0] == "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
  CHECK(
      sent[1] ==
      R"j({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":4,"reason":"Request was aborted"}})j"
      "\n");
  peer.receive(R"j({"jsonrpc":"2.0","method":"notifications/tools/list_changed"})j");
  peer.receive(
      R"j({"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":3,"progress":1}})j");
  CHECK(seen ==
        std::vector<std::string>{"notifications/tools/list_changed {}",
                                 R"j(notifications/progress {"progressToken":3,"progress":1})j"});
  peer.receive(R"j({"jsonrpc":"2.0","id":"s1","method":"ping"})j");
  peer.receive(R"j({"jsonrpc":"2.0","id":9,"method":"sampling/createMessage","params":{}})j");
  CHECK(sent[2] == "{\"jsonrpc\":\"2.0\",\"id\":\"s1\",\"result\":{}}\n");
  CHECK(sent[3] ==
        R"j({"jsonrpc":"2.0","id":9,"error":{"code":-32601,"message":"Method not found"}})j"
        "\n");
}

TEST_CASE("jsonrpc peer: what is not an object is the caller's to report") {
  JsonRpcPeer peer([](const Json&) {});
  CHECK(peer.receive("npm WARN something") == JsonRpcPeer::Received::not_an_object);
  CHECK(peer.receive("[1,2]") == JsonRpcPeer::Received::not_an_object);
  CHECK(peer.receive(R"j({"jsonrpc":"2.0","id":"x","result":{}})j") ==
        JsonRpcPeer::Received::message);
}

TEST_CASE("jsonrpc peer: ACP's ids from 0, a response already read, one never sent") {
  std::vector<Json> sent;
  JsonRpcPeer peer([&](const Json& m) { sent.push_back(m); }, 0);
  std::vector<Json> answers;
  CHECK(peer.request("fs/read_text_file", Json{{"path", "/a"}},
                     [&](const Json& r) { answers.push_back(r); }) == 0);
  CHECK(sent.at(0)["id"] == 0);
  CHECK_FALSE(peer.answer(Json{{"jsonrpc", "2.0"}, {"id", 7}, {"result", Json::object()}}));
  CHECK_FALSE(peer.answer(Json{{"jsonrpc", "2.0"}, {"id", "0"}, {"result", Json::object()}}));
  CHECK(answers.empty());
  CHECK(peer.answer(Json{{"jsonrpc", "2.0"}, {"id", 0}, {"result", Json{{"content", "x"}}}}));
  REQUIRE(answers.size() == 1);
  CHECK(answers[0]["result"]["content"] == "x");
  CHECK_FALSE(peer.answer(Json{{"jsonrpc", "2.0"}, {"id", 0}, {"result", Json::object()}}));
  CHECK(peer.pending() == 0);
}
