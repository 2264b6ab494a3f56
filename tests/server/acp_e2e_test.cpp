// ACP mode (acp.md) end to end where the bytes matter: the real binary over pipes with the
// scripted provider, lines compared whole (key orders, the worked sequences of section 14), the
// error lines of section 10, the command line of section 2 and end of input (section 13). The
// flows through the official client library are in tests/node/acp_sdk.test.mjs.

#include <doctest/doctest.h>

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include "server/acp/acp_updates.h"
#include "tests/support/proc_status.h"
#include "tests/support/rebound_process.h"
#include "tests/support/session_text.h"

using namespace rebound;
using namespace std::chrono_literals;
using protocol::Json;
using testing::ReboundProcess;

namespace {

ReboundProcess acp_server(const std::string& script, const std::string& settings = "{}",
                          std::vector<std::string> extra = {}) {
  std::vector<std::string> args{"--mode",   "acp",      "--no-session",     "--provider",
                                "scripted", "--script", "@DIR@/script.json"};
  args.insert(args.end(), extra.begin(), extra.end());
  return ReboundProcess(args, {}, {{"agent/settings.json", settings}, {"script.json", script}});
}

std::string line_of(ReboundProcess& r) {
  return r.read_json().dump();
}

// initialize (with `caps`) and session/new in the test's directory; returns the session id.
std::string open_session(ReboundProcess& r, const std::string& caps = "{}") {
  r.send_raw(
      R"j({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":)j" +
      caps + "}}\n");
  CHECK(r.read_json()["result"]["protocolVersion"] == 1);
  r.send(Json{{"jsonrpc", "2.0"},
              {"id", 1},
              {"method", "session/new"},
              {"params", Json{{"cwd", r.dir().path().string()}, {"mcpServers", Json::array()}}}});
  const Json answer = r.read_json();
  REQUIRE(answer["result"].contains("sessionId"));
  return answer["result"]["sessionId"].get<std::string>();
}

std::string prompt_line(const std::string& session, const std::string& text, int id) {
  return Json{{"jsonrpc", "2.0"},
              {"id", id},
              {"method", "session/prompt"},
              {"params", Json{{"sessionId", session},
                              {"prompt", Json::array({Json{{"type", "text"}, {"text", text}}})}}}}
             .dump() +
         "\n";
}

}  // namespace

TEST_CASE("acp: the initialize answer, byte for byte") {
  ReboundProcess r = acp_server(R"j([{"text":"hi"}])j");
  r.send_raw(
      R"j({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":7,"clientCapabilities":{"fs":{"readTextFile":true,"writeTextFile":true},"terminal":true,"session":{"notices":{}}},"clientInfo":{"name":"zed","version":"0.230.0"}}})j"
      "\n");
  CHECK(
      line_of(r) ==
      std::string(
          R"j({"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{"loadSession":false,"promptCapabilities":{"image":true,"audio":false,"embeddedContext":true},"mcpCapabilities":{"http":false,"sse":false},"sessionCapabilities":{"close":{}},"_meta":{"rebound":{"retryNotifications":true,"compactionNotifications":true,"methods":["_rebound/abort_retry","_rebound/set_auto_retry","_rebound/get_retry_state","_rebound/retry_now","_rebound/set_retry_policy","_rebound/get_policy"]}}},"agentInfo":{"name":"rebound","title":"Rebound","version":")j") +
          REBOUND_VERSION + R"j("},"authMethods":[]}})j");
  // A missing protocolVersion is -32602.
  r.send_raw(R"j({"jsonrpc":"2.0","id":"x","method":"initialize","params":{}})j"
             "\n");
  CHECK(
      line_of(r) ==
      R"j({"jsonrpc":"2.0","id":"x","error":{"code":-32602,"message":"Invalid params: protocolVersion: expected integer"}})j");
}

TEST_CASE("acp: a 503 then success, the worked sequence of section 14 with notices") {
  ReboundProcess r =
      acp_server(R"j([{"error":"503 overloaded"},{"text":"Hello there.","chunks":2}])j",
                 R"j({"retry":{"baseDelayMs":2000}})j");
  const std::string s = open_session(r, R"j({"session":{"notices":{}}})j");
  r.send_raw(prompt_line(s, "say hello", 2));
  const std::string S = "\"sessionId\":\"" + s + "\"";
  CHECK(line_of(r) ==
        R"j({"jsonrpc":"2.0","method":"_rebound/auto_retry_start","params":{)j" + S +
            R"j(,"attempt":1,"maxAttempts":3,"delayMs":2000,"errorMessage":"503 overloaded"}})j");
  CHECK(
      line_of(r) ==
      R"j({"jsonrpc":"2.0","method":"session/update","params":{)j" + S +
          R"j(,"update":{"sessionUpdate":"notice","severity":"warning","title":"Retrying (1/3) in 2s","description":"503 overloaded","_meta":{"rebound":{"event":"auto_retry_start","attempt":1,"maxAttempts":3,"delayMs":2000}}}}})j");
  const Json chunk1 = r.read_json(5s);
  const Json chunk2 = r.read_json();
  CHECK(chunk1["params"]["update"]["content"]["text"] == "Hello ");
  CHECK(chunk2["params"]["update"]["content"]["text"] == "there.");
  CHECK(chunk1["params"]["update"]["messageId"] == chunk2["params"]["update"]["messageId"]);
  CHECK(r.read_json()["params"]["update"]["sessionUpdate"] == "usage_update");
  CHECK(line_of(r) == R"j({"jsonrpc":"2.0","method":"_rebound/auto_retry_end","params":{)j" + S +
                          R"j(,"success":true,"attempt":1}})j");
  CHECK(
      line_of(r) ==
      R"j({"jsonrpc":"2.0","method":"session/update","params":{)j" + S +
          R"j(,"update":{"sessionUpdate":"notice","severity":"info","title":"Recovered after 1 retry","_meta":{"rebound":{"event":"auto_retry_end","success":true,"attempt":1}}}}})j");
  CHECK(
      line_of(r) ==
      R"j({"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn","_meta":{"rebound":{"outcome":"stop","retries":1}}}})j");
}

TEST_CASE("acp: session/cancel during the backoff, the worked sequence of section 14") {
  ReboundProcess r = acp_server(R"j([{"error":"503 overloaded"},{"text":"never"}])j",
                                R"j({"retry":{"baseDelayMs":2000}})j");
  const std::string s = open_session(r);
  r.send_raw(prompt_line(s, "again", 3));
  CHECK(r.read_json()["method"] == "_rebound/auto_retry_start");
  r.send_raw(R"j({"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":")j" + s +
             "\"}}\n");
  CHECK(line_of(r) ==
        R"j({"jsonrpc":"2.0","method":"_rebound/auto_retry_end","params":{"sessionId":")j" + s +
            R"j(","success":false,"attempt":1,"finalError":"Retry cancelled"}})j");
  CHECK(
      line_of(r) ==
      R"j({"jsonrpc":"2.0","id":3,"result":{"stopReason":"cancelled","_meta":{"rebound":{"outcome":"cancelled","retries":1}}}})j");
  // A cancel while idle does nothing; the connection goes on.
  r.send_raw(R"j({"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":")j" + s +
             "\"}}\n");
  r.send_raw(R"j({"jsonrpc":"2.0","id":4,"method":"session/set_config_option","params":{}})j"
             "\n");
  CHECK(
      line_of(r) ==
      R"j({"jsonrpc":"2.0","id":4,"error":{"code":-32601,"message":"Method not found: session/set_config_option"}})j");
}

TEST_CASE("acp: the error lines of section 10") {
  ReboundProcess r = acp_server(R"j([{"text":"hi"}])j");
  const auto answer = [&](const std::string& line) {
    r.send_raw(line + "\n");
    return line_of(r);
  };
  CHECK(
      answer("[]") ==
      R"j({"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: batch requests are not supported"}})j");
  CHECK(
      answer(
          R"j([{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}])j") ==
      R"j({"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: batch requests are not supported"}})j");
  CHECK(
      answer("42") ==
      R"j({"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid request: expected a JSON object"}})j");
  CHECK(
      answer(R"j({"jsonrpc":"1.0","id":5,"method":"initialize"})j") ==
      R"j({"jsonrpc":"2.0","id":5,"error":{"code":-32600,"message":"Invalid request: jsonrpc must be \"2.0\""}})j");
  CHECK(
      answer(R"j({"jsonrpc":"2.0","id":1.5,"method":"initialize"})j") ==
      R"j({"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid request: id must be a string, an integer or null"}})j");
  CHECK(
      answer(R"j({"jsonrpc":"2.0","id":6,"method":7})j") ==
      R"j({"jsonrpc":"2.0","id":6,"error":{"code":-32600,"message":"Invalid request: method must be a string"}})j");
  CHECK(
      answer(R"j({"jsonrpc":"2.0","id":7})j") ==
      R"j({"jsonrpc":"2.0","id":7,"error":{"code":-32600,"message":"Invalid request: neither a request nor a response"}})j");
  CHECK(
      answer(R"j({"jsonrpc":"2.0","id":8,"method":"session/prompt","params":{"prompt":[]}})j") ==
      R"j({"jsonrpc":"2.0","id":8,"error":{"code":-32602,"message":"Invalid params: sessionId: expected string"}})j");
  CHECK(
      answer(R"j({"jsonrpc":"2.0","id":9,"method":"session/close","params":{"sessionId":"s"}})j") ==
      R"j({"jsonrpc":"2.0","id":9,"error":{"code":-32002,"message":"Resource not found: session s"}})j");
  CHECK(
      answer("{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"x\xff\"}")
          .rfind(
              R"j({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: invalid UTF-8)j",
              0) == 0);
  // A notification for an unknown method and a stray response are not answered; the next
  // request is.
  r.send_raw(R"j({"jsonrpc":"2.0","method":"_unknown/thing","params":{}})j"
             "\n");
  r.send_raw(R"j({"jsonrpc":"2.0","id":99,"result":{}})j"
             "\n");
  CHECK(
      answer(R"j({"jsonrpc":"2.0","id":11,"method":"authenticate","params":{"methodId":"k"}})j") ==
      R"j({"jsonrpc":"2.0","id":11,"error":{"code":-32602,"message":"Invalid params: unknown auth method: k"}})j");
}

TEST_CASE("acp: end of input answers a pending prompt cancelled and exits 0") {
  ReboundProcess r = acp_server(R"j([{"hang":true}])j");
  const std::string s = open_session(r);
  r.send_raw(prompt_line(s, "wait", 2));
  // Once a later request is answered the prompt's request is under way (a hang streams nothing).
  r.send_raw(
      R"j({"jsonrpc":"2.0","id":3,"method":"_rebound/get_retry_state","params":{"sessionId":")j" +
      s + "\"}}\n");
  CHECK(r.read_json()["id"] == 3);
  const auto t0 = std::chrono::steady_clock::now();
  r.proc().close_stdin();
  CHECK(
      line_of(r) ==
      R"j({"jsonrpc":"2.0","id":2,"result":{"stopReason":"cancelled","_meta":{"rebound":{"outcome":"cancelled","retries":0}}}})j");
  CHECK(r.proc().wait(5s) == 0);
  CHECK(std::chrono::steady_clock::now() - t0 < 1s);
}

TEST_CASE("acp: --session is refused with exit status 2") {
  ReboundProcess r({"--mode", "acp", "--session", "@DIR@/s.jsonl"}, {}, {});
  CHECK(r.proc().wait(5s) == 2);
  CHECK(r.proc().stderr_text().find("--session cannot be used with --mode acp") !=
        std::string::npos);
}

TEST_CASE("acp: tool call titles, kinds and locations (section 7.2)") {
  using server::acp::tool_call_info;
  const auto info = [](const char* name, const char* args) {
    return tool_call_info(name, Json::parse(args), "/w");
  };
  auto read = info("read", R"j({"path":"a.txt","offset":0})j");
  CHECK(read.kind == "read");
  CHECK(read.title == "Read a.txt");
  CHECK(read.locations.dump() == R"j([{"path":"/w/a.txt","line":1}])j");
  CHECK(info("read", R"j({"path":"/x/a.txt","offset":7.9})j").locations.dump() ==
        R"j([{"path":"/x/a.txt","line":7}])j");
  CHECK(info("read", R"j({"path":"a","offset":1e12})j").locations.dump() ==
        R"j([{"path":"/w/a"}])j");
  CHECK(info("write", R"j({"path":"d/b.txt","content":""})j").title == "Write d/b.txt");
  CHECK(info("edit", R"j({"path":"b.txt","edits":[]})j").locations.dump() ==
        R"j([{"path":"/w/b.txt"}])j");
  auto bash = info("bash", R"j({"command":"echo hi\necho there"})j");
  CHECK(bash.kind == "execute");
  CHECK(bash.title == "echo hi");
  CHECK(bash.locations.is_null());
  CHECK(info("bash", (R"j({"command":")j" + std::string(300, 'x') + "\"}").c_str()).title ==
        std::string(200, 'x'));
  // 200 characters, not bytes: a multi-byte character is never cut.
  std::string wide;
  for (int i = 0; i < 250; ++i)
    wide += "\xc3\xa9";
  CHECK(info("bash", (R"j({"command":")j" + wide + "\"}").c_str()).title == wide.substr(0, 400));
  CHECK(info("grep", R"j({"pattern":"TODO","path":"src"})j").title == "grep TODO in src");
  CHECK(info("grep", R"j({"pattern":"TODO"})j").locations.is_null());
  CHECK(info("find", R"j({"pattern":"*.h","path":"/inc"})j").locations.dump() ==
        R"j([{"path":"/inc"}])j");
  CHECK(info("ls", "{}").title == "ls .");
  CHECK(info("ls", "{}").locations.dump() == R"j([{"path":"/w"}])j");
  auto other = info("mcp__fs__read", "{}");
  CHECK(other.kind == "other");
  CHECK(other.title == "mcp__fs__read");
}

TEST_CASE("acp: prompt content blocks become one user input (section 6.1)") {
  using server::acp::prompt_input;
  auto input = prompt_input(Json::parse(
      R"j([{"type":"text","text":"look"},{"type":"resource_link","uri":"file:///a.c","name":"a.c"},{"type":"resource","resource":{"uri":"file:///b.c","text":"int b;"}},{"type":"image","data":"AA==","mimeType":"image/png"}])j"));
  REQUIRE(input.ok());
  const auto& in = input.value();
  CHECK(in.text == "look\n@file:///a.c\n<context uri=\"file:///b.c\">\nint b;\n</context>");
  REQUIRE(in.images.size() == 1);
  CHECK(in.images[0].mime_type == "image/png");
  CHECK(prompt_input(Json::array()).error().message ==
        "Invalid params: prompt: expected at least one text or image block");
  CHECK(
      prompt_input(
          Json::parse(
              R"j([{"type":"resource","resource":{"uri":"x","blob":"AA==","mimeType":"application/pdf"}}])j"))
          .error()
          .message == "Invalid params: unsupported content block: resource");
  CHECK(prompt_input(Json::parse(R"j([{"type":"text"}])j")).error().message ==
        "Invalid params: prompt[0].text: expected string");
}

TEST_CASE("acp: notice titles and turn endings") {
  using namespace server::acp;
  CHECK(retry_notice_title(1, 3, 2000) == "Retrying (1/3) in 2s");
  CHECK(retry_notice_title(2, 3, 999) == "Retrying (2/3) in 999 ms");
  CHECK(retry_notice_title(3, 3, 2500) == "Retrying (3/3) in 3s");
  CHECK(recovered_notice_title(1) == "Recovered after 1 retry");
  CHECK(recovered_notice_title(2) == "Recovered after 2 retries");
  CHECK(turn_ending(false, protocol::StopReason::length, false).stop_reason == "max_tokens");
  CHECK(turn_ending(true, protocol::StopReason::error, false).outcome == "cancelled");
  CHECK(turn_ending(false, protocol::StopReason::error, false).stop_reason == "end_turn");
  CHECK(turn_ending(false, protocol::StopReason::stop, true).outcome == "error");
  const std::string id = random_hex_id();
  CHECK(id.size() == 16);
  CHECK(id.find_first_not_of("0123456789abcdef") == std::string::npos);
  CHECK(random_hex_id() != id);
}

TEST_CASE("acp: malformed client answers to Rebound's requests refuse the call, never the server") {
  ReboundProcess r = acp_server(
      R"j([{"toolCalls":[{"name":"bash","arguments":{"command":"echo x > x.txt"}}]},{"toolCalls":[{"name":"read","arguments":{"path":"a.txt"}}]},{"text":"done"}])j",
      "{}", {"--acp-permissions", "ask"});
  const std::string s = open_session(r, R"j({"fs":{"readTextFile":true}})j");
  r.send_raw(prompt_line(s, "go", 2));
  std::vector<Json> all;  // every line read
  const auto request = [&](const std::string& method) {
    const auto lines = r.read_until([&](const Json& j) { return j.value("method", "") == method; });
    all.insert(all.end(), lines.begin(), lines.end());
    return lines.back();
  };
  const Json permission = request("session/request_permission");
  CHECK(permission["id"] == 0);
  // A mistyped outcome is a refusal; a stray answer for an id never sent is ignored.
  r.send_raw(
      R"j({"jsonrpc":"2.0","id":0,"result":{"outcome":{"outcome":5,"optionId":["allow_once"]}}})j"
      "\n");
  r.send_raw(R"j({"jsonrpc":"2.0","id":77,"result":{}})j"
             "\n");
  const Json read = request("fs/read_text_file");
  CHECK(read["id"] == 1);
  r.send_raw(R"j({"jsonrpc":"2.0","id":1,"result":{"content":42}})j"
             "\n");
  const auto rest = r.read_until([](const Json& j) { return j.value("id", Json()) == 2; });
  all.insert(all.end(), rest.begin(), rest.end());
  std::vector<std::string> finals;
  for (const auto& j : all) {
    if (!j.contains("params") || !j["params"].contains("update")) continue;
    const Json& u = j["params"]["update"];
    if (u.value("sessionUpdate", "") == "tool_call_update" && u.contains("content"))
      finals.push_back(u["status"].get<std::string>() + ": " +
                       u["content"][0]["content"]["text"].get<std::string>());
  }
  CHECK(finals == std::vector<std::string>{
                      "failed: Permission denied by the user",
                      "failed: The client's fs/read_text_file answer has no content text"});
  CHECK(rest.back()["result"]["stopReason"] == "end_turn");
  CHECK_FALSE(std::filesystem::exists(r.dir().path() / "x.txt"));
}

TEST_CASE("acp: a FIFO or a 2 GB file in the workspace neither blocks nor balloons the process") {
  // Edits go through the gate's local file path (no client fs), then through the client's
  // write with a local read (writeTextFile only), then a read with the client's read (its
  // image check): each ends with an error, the turn is answered, nothing blocks the loop.
  const std::string edit_pipe =
      R"j({"name":"edit","arguments":{"path":"pipe","edits":[{"oldText":"a","newText":"b"}]}})j";
  const std::string edit_big =
      R"j({"name":"edit","arguments":{"path":"big.txt","edits":[{"oldText":"a","newText":"b"}]}})j";
  const std::string script =
      "[{\"toolCalls\":[" + edit_pipe + "," + edit_big + "]},{\"text\":\"done\"}]";
  for (const char* caps : {"{}", R"j({"fs":{"writeTextFile":true}})j"}) {
    CAPTURE(caps);
    ReboundProcess r = acp_server(script);
    const auto dir = r.dir().path();
    REQUIRE(::mkfifo((dir / "pipe").c_str(), 0600) == 0);
    std::ofstream(dir / "big.txt") << "a";
    std::filesystem::resize_file(dir / "big.txt", 2LL * 1024 * 1024 * 1024);  // sparse
    const std::string s = open_session(r, caps);
    r.send_raw(prompt_line(s, "go", 2));
    const auto lines =
        r.read_until([](const Json& j) { return j.value("id", Json()) == 2; }, 20000ms);
    std::vector<std::string> finals;
    for (const auto& j : lines) {
      if (j.value("method", "") == "fs/write_text_file") FAIL("nothing may be written");
      if (!j.contains("params") || !j["params"].contains("update")) continue;
      const Json& u = j["params"]["update"];
      if (u.value("sessionUpdate", "") == "tool_call_update" && u.contains("content"))
        finals.push_back(u["status"].get<std::string>() + ": " +
                         u["content"][0]["content"]["text"].get<std::string>());
    }
    std::sort(finals.begin(), finals.end());  // the two calls run at once: either ends first
    CHECK(finals ==
          std::vector<std::string>{"failed: Could not edit file: big.txt. Error code: EFBIG.",
                                   "failed: Could not edit file: pipe. Error code: EINVAL."});
    CHECK(lines.back()["result"]["stopReason"] == "end_turn");
    // The 2 GB file was never read into memory.
    const long peak_kib = testing::proc_status_kib(r.proc().pid(), "VmHWM:");
    CHECK(peak_kib > 0);
    CHECK(peak_kib < 200 * 1024);
  }
  // With the client's read: a `read` of the FIFO asks the client (the image check opens it
  // non-blocking and sees it is no regular file).
  ReboundProcess r = acp_server(
      R"j([{"toolCalls":[{"name":"read","arguments":{"path":"pipe"}}]},{"text":"done"}])j");
  REQUIRE(::mkfifo((r.dir().path() / "pipe").c_str(), 0600) == 0);
  const std::string s = open_session(r, R"j({"fs":{"readTextFile":true}})j");
  r.send_raw(prompt_line(s, "go", 2));
  const auto asked =
      r.read_until([](const Json& j) { return j.value("method", "") == "fs/read_text_file"; });
  r.send(Json{{"jsonrpc", "2.0"},
              {"id", asked.back()["id"]},
              {"error", Json{{"code", -32000}, {"message", "not a text file"}}}});
  const auto rest = r.read_until([](const Json& j) { return j.value("id", Json()) == 2; });
  CHECK(rest.back()["result"]["stopReason"] == "end_turn");
}

TEST_CASE("acp: writes to a FIFO, /dev/zero and the server's stdout fail, the loop answers") {
  // Before issue 27 the write to the FIFO blocked in open(2) and /dev/zero's pre-tool snapshot
  // read until memory ran out; a write to /dev/stdout would put raw bytes into this stream.
  const std::string forged = R"j({"jsonrpc":"2.0","id":2,"result":{"stopReason":"forged"}})j";
  const Json calls = Json::array(
      {Json{{"name", "write"}, {"arguments", Json{{"path", "pipe"}, {"content", "x"}}}},
       Json{{"name", "write"}, {"arguments", Json{{"path", "/dev/zero"}, {"content", "x"}}}},
       Json{{"name", "write"},
            {"arguments", Json{{"path", "/dev/stdout"}, {"content", forged + "\n"}}}}});
  ReboundProcess r =
      acp_server(Json::array({Json{{"toolCalls", calls}}, Json{{"text", "done"}}}).dump());
  REQUIRE(::mkfifo((r.dir().path() / "pipe").c_str(), 0600) == 0);
  const std::string s = open_session(r);
  r.send_raw(prompt_line(s, "go", 2));
  const auto lines =
      r.read_until([](const Json& j) { return j.value("id", Json()) == 2; }, 20000ms);
  std::vector<std::string> finals;
  for (const auto& j : lines) {
    if (!j.contains("params") || !j["params"].contains("update")) continue;
    const Json& u = j["params"]["update"];
    if (u.value("sessionUpdate", "") == "tool_call_update" && u.contains("content"))
      finals.push_back(u["status"].get<std::string>() + ": " +
                       u["content"][0]["content"]["text"].get<std::string>());
  }
  std::sort(finals.begin(), finals.end());
  const std::string pipe = (r.dir().path() / "pipe").string();
  CHECK(finals == std::vector<std::string>{
                      "failed: EINVAL: not a regular file, open '/dev/zero'",
                      "failed: ENXIO: not a regular file, open '" + pipe + "'",
                      "failed: EPERM: operation not permitted (the server's own standard "
                      "stream), open '/dev/stdout'"});
  CHECK(lines.back()["result"]["stopReason"] == "end_turn");
  const long peak_kib = testing::proc_status_kib(r.proc().pid(), "VmHWM:");
  CHECK(peak_kib < 200 * 1024);
}

TEST_CASE("acp: session/cancel and $/cancel_request sent with an id are answered once") {
  ReboundProcess r = acp_server(R"j([{"error":"503 overloaded"},{"text":"never"}])j",
                                R"j({"retry":{"baseDelayMs":2000}})j");
  const std::string s = open_session(r);
  r.send_raw(prompt_line(s, "again", 3));
  CHECK(r.read_json()["method"] == "_rebound/auto_retry_start");
  r.send_raw(R"j({"jsonrpc":"2.0","id":"c1","method":"session/cancel","params":{"sessionId":")j" +
             s + "\"}}\n");
  CHECK(r.read_json()["method"] == "_rebound/auto_retry_end");
  CHECK(r.read_json()["result"]["stopReason"] == "cancelled");  // the prompt's answer
  CHECK(line_of(r) == R"j({"jsonrpc":"2.0","id":"c1","result":{}})j");
  r.send_raw(R"j({"jsonrpc":"2.0","id":7,"method":"$/cancel_request","params":{"requestId":99}})j"
             "\n");
  CHECK(line_of(r) == R"j({"jsonrpc":"2.0","id":7,"result":{}})j");
  // Sent as notifications they stay unanswered: the next line answers the next request.
  r.send_raw(R"j({"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":99}})j"
             "\n");
  r.send_raw(R"j({"jsonrpc":"2.0","id":8,"method":"session/set_mode","params":{}})j"
             "\n");
  CHECK(r.read_json()["id"] == 8);
}

TEST_CASE("acp: session/load reads its file off the loop, a prompt for it waits for the load") {
  // 30,000 messages (about 9 MB): a parse that takes far longer than the other session's turn
  // (0.4 s in a release build; the sanitizer builds are slower still).
  const std::string file = testing::linear_session_file("big-1", 30000);
  ReboundProcess r({"--mode", "acp", "--session-dir", "@DIR@/sessions", "--provider", "scripted",
                    "--script", "@DIR@/script.json"},
                   {},
                   {{"agent/settings.json", "{}"},
                    {"script.json", R"([{"text":"done"}])"},
                    {"sessions/2026-12-01T00-00-00-000Z_big-1.jsonl", file}});
  const std::string other = open_session(r);
  r.send(Json{{"jsonrpc", "2.0"},
              {"id", 5},
              {"method", "session/load"},
              {"params", Json{{"sessionId", "big-1"},
                              {"cwd", r.dir().path().string()},
                              {"mcpServers", Json::array()}}}});
  r.send_raw(prompt_line("big-1", "after the load", 7));
  r.send_raw(prompt_line(other, "meanwhile", 6));
  // Before the fix the loop parsed the file first: 5 answered before anything else ran.
  std::vector<Json> order;
  while (order.size() < 3) {
    const Json j = r.read_json(120000ms);
    if (j.contains("id") && (j.contains("result") || j.contains("error"))) order.push_back(j);
  }
  CHECK(order[0]["id"] == 6);  // the other session's prompt, answered while the file loads
  CHECK(order[1]["id"] == 5);  // the load
  CHECK(order[1].contains("result"));
  CHECK(order[2]["id"] == 7);  // the prompt for the loading session ran after its load
  CHECK(order[2]["result"]["stopReason"] == "end_turn");
}
