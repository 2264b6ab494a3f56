// The HTTP providers end to end: the real binary, real sockets on 127.0.0.1, the fake LLM
// server speaking both APIs (runtime.md section 2, retry.md section 2).

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <doctest/doctest.h>

#include "tests/support/event_summary.h"
#include "tests/support/fake_connect_proxy.h"
#include "tests/support/fake_llm_server.h"
#include "tests/support/rebound_process.h"

using namespace rebound;
using protocol::Json;
using testing::FakeLlmServer;
using testing::FakeResponse;
using testing::ReboundProcess;
using testing::retry_events;
using testing::summarize;
using V = std::vector<std::string>;

namespace {

const std::string kCanary = "sk-canary-7f3a9c1e5b";

std::string openai_chunk(const std::string& delta_json, const std::string& finish = "null") {
  return FakeLlmServer::openai_chunk(delta_json, finish);
}

FakeResponse openai_ok(const std::string& a = "Hel", const std::string& b = "lo") {
  FakeResponse r;
  r.chunks = {
      openai_chunk(R"({"content":")" + a + R"("})"), openai_chunk(R"({"content":")" + b + R"("})"),
      openai_chunk("{}", R"("stop")"),
      FakeLlmServer::sse(
          R"({"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":3,"prompt_tokens_details":{"cached_tokens":2}}})"),
      FakeLlmServer::sse("[DONE]")};
  r.chunk_delay_ms = 5;
  return r;
}

FakeResponse anthropic_ok() {
  FakeResponse r;
  r.chunks = {
      FakeLlmServer::sse(
          "message_start",
          R"({"type":"message_start","message":{"usage":{"input_tokens":20,"output_tokens":1}}})"),
      FakeLlmServer::sse(
          "content_block_start",
          R"({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}})"),
      FakeLlmServer::sse(
          "content_block_delta",
          R"({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi "}})"),
      FakeLlmServer::sse(
          "content_block_delta",
          R"({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"there"}})"),
      FakeLlmServer::sse("content_block_stop", R"({"type":"content_block_stop","index":0})"),
      FakeLlmServer::sse(
          "message_delta",
          R"({"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":7}})"),
      FakeLlmServer::sse("message_stop", R"({"type":"message_stop"})")};
  return r;
}

FakeResponse error_response(int status, const std::string& body,
                            std::vector<std::pair<std::string, std::string>> headers = {}) {
  FakeResponse r;
  r.status = status;
  r.chunks = {body};
  r.headers = std::move(headers);
  return r;
}

std::string settings(int max_retries = 3, int base_delay_ms = 20, const std::string& extra = "") {
  return R"({"retry":{"enabled":true,"maxRetries":)" + std::to_string(max_retries) +
         R"(,"baseDelayMs":)" + std::to_string(base_delay_ms) + "}" + extra + "}";
}

ReboundProcess server_for(const std::string& provider, const std::string& base_url,
                          const std::string& settings_json, ReboundProcess::Files files = {},
                          testing::SubprocessOptions options = {}) {
  files["agent/settings.json"] = settings_json;
  return ReboundProcess({"--no-session", "--provider", provider, "--base-url", base_url,
                         "--api-key", kCanary, "--log-level", "trace"},
                        std::move(options), std::move(files));
}

Json prompt(const std::string& text = "hello") {
  return Json{{"id", "p"}, {"type", "prompt"}, {"message", text}};
}

std::string error_of_last_assistant(const std::vector<Json>& events) {
  for (auto it = events.rbegin(); it != events.rend(); ++it) {
    if ((*it)["type"] == "message_end" && (*it)["message"]["role"] == "assistant") {
      return (*it)["message"].value("errorMessage", std::string());
    }
  }
  return {};
}

// A port on 127.0.0.1 that refuses connections: bound (so nobody else can take it) but not
// listening, for as long as the object lives.
class RefusingPort {
 public:
  RefusingPort() : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    socklen_t len = sizeof addr;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
  }
  ~RefusingPort() { ::close(fd_); }
  int port() const { return port_; }

 private:
  int fd_;
  int port_ = 0;
};

}  // namespace

TEST_CASE("OpenAI: streamed deltas and usage, the request went to /chat/completions") {
  FakeLlmServer fake({openai_ok()});
  auto r = server_for("openai", fake.base_url() + "/v1", settings());
  r.send(prompt());
  const auto events = r.read_until_type("agent_end");
  V updates;
  for (const auto& e : events) {
    if (e["type"] == "message_update") updates.push_back(summarize(e));
  }
  CHECK(updates ==
        V{"update:text_start", "update:text_delta", "update:text_delta", "update:text_end"});
  const Json answer = events.back()["messages"][1];
  CHECK(answer["content"][0]["text"] == "Hello");
  CHECK(answer["stopReason"] == "stop");
  CHECK(answer["api"] == "openai-completions");
  CHECK(answer["usage"]["input"] == 10);
  CHECK(answer["usage"]["cacheRead"] == 2);
  CHECK(answer["usage"]["output"] == 3);
  const auto reqs = fake.requests();
  REQUIRE(reqs.size() == 1);
  CHECK(reqs[0].target == "/v1/chat/completions");
  CHECK(reqs[0].headers.at("authorization") == "Bearer " + kCanary);
  const Json body = Json::parse(reqs[0].body);
  CHECK(body["model"] == "gpt-4o-mini");
  CHECK(body["stream"] == true);
  CHECK(body["stream_options"]["include_usage"] == true);
  CHECK(body["messages"].back()["content"] == "hello");
}

TEST_CASE("a 2xx other than 200 carries the stream like 200") {
  FakeResponse created = openai_ok();
  created.status = 201;
  FakeLlmServer fake({created});
  auto r = server_for("openai", fake.base_url() + "/v1", settings());
  r.send(prompt());
  const auto events = r.read_until_type("agent_end");
  const Json answer = events.back()["messages"][1];
  CHECK(answer["stopReason"] == "stop");
  CHECK(answer["content"][0]["text"] == "Hello");
}

TEST_CASE("Anthropic: streamed deltas and usage, the request went to /v1/messages") {
  FakeLlmServer fake({anthropic_ok()});
  auto r = server_for("anthropic", fake.base_url(), settings());
  r.send(prompt());
  const auto events = r.read_until_type("agent_end");
  const Json answer = events.back()["messages"][1];
  CHECK(answer["content"][0]["text"] == "Hi there");
  CHECK(answer["usage"]["input"] == 20);
  CHECK(answer["usage"]["output"] == 7);
  CHECK(answer["model"] == "claude-sonnet-4-5");
  const auto reqs = fake.requests();
  REQUIRE(reqs.size() == 1);
  CHECK(reqs[0].target == "/v1/messages");
  CHECK(reqs[0].headers.at("x-api-key") == kCanary);
  CHECK(reqs[0].headers.at("anthropic-version") == "2023-06-01");
}

TEST_CASE("an overload once, then success: one retry with the spec's events") {
  for (const std::string provider : {"openai", "anthropic"}) {
    CAPTURE(provider);
    const bool oa = provider == "openai";
    FakeLlmServer fake(
        {oa ? error_response(503, R"({"error":{"message":"overloaded"}})")
            : error_response(
                  529,
                  R"({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})"),
         oa ? openai_ok() : anthropic_ok()});
    auto r = server_for(provider, fake.base_url() + (oa ? "/v1" : ""), settings(3, 30));
    r.send(prompt());
    const auto events = r.read_until_type("auto_retry_end");
    const std::string error = oa ? "503 overloaded" : "529 Overloaded";
    CHECK(retry_events(events) == V{"auto_retry_start:1/3:30:" + error, "auto_retry_end:true:1"});
    CHECK(fake.requests().size() == 2);
  }
}

namespace {

// What differs between the two APIs in these tests.
struct Api {
  std::string provider;   // "openai" / "anthropic"
  std::string base_path;  // appended to the fake server's URL for --base-url
  bool openai() const { return provider == "openai"; }

  FakeResponse ok() const { return openai() ? openai_ok() : anthropic_ok(); }

  FakeResponse error(int status, const std::string& type, const std::string& message,
                     std::vector<std::pair<std::string, std::string>> headers = {}) const {
    const Json body =
        openai() ? Json{{"error", Json{{"message", message}, {"type", type}}}}
                 : Json{{"type", "error"}, {"error", Json{{"type", type}, {"message", message}}}};
    return error_response(status, body.dump(), std::move(headers));
  }

  // Streams "par", "tial" and then the connection is reset.
  FakeResponse dropped() const {
    FakeResponse r;
    if (openai()) {
      r = openai_ok("par", "tial");
      r.chunks.resize(2);
    } else {
      r = anthropic_ok();
      r.chunks.resize(2);
      r.chunks.push_back(FakeLlmServer::sse(
          "content_block_delta",
          R"({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"par"}})"));
      r.chunks.push_back(FakeLlmServer::sse(
          "content_block_delta",
          R"({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"tial"}})"));
    }
    r.drop_after_chunks = true;
    return r;
  }

  // A bash call whose arguments stream in two fragments: `{"command":` and `"<command>"}`.
  FakeResponse tool_call(const std::string& command = "ls") const {
    FakeResponse r;
    const std::string quoted = Json(command).dump();
    if (openai()) {
      r.chunks = {
          openai_chunk(
              R"({"tool_calls":[{"index":0,"id":"call_x","type":"function","function":{"name":"bash","arguments":""}}]})"),
          openai_chunk(R"({"tool_calls":[{"index":0,"function":{"arguments":"{\"command\":"}}]})"),
          openai_chunk(Json{
              {"tool_calls",
               Json::array({Json{{"index", 0}, {"function", Json{{"arguments", quoted + "}"}}}}})}}
                           .dump()),
          openai_chunk("{}", R"("tool_calls")"), FakeLlmServer::sse("[DONE]")};
    } else {
      r.chunks = {
          FakeLlmServer::sse("message_start",
                             R"({"type":"message_start","message":{"usage":{"input_tokens":5}}})"),
          FakeLlmServer::sse(
              "content_block_start",
              R"({"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"call_x","name":"bash","input":{}}})"),
          FakeLlmServer::sse(
              "content_block_delta",
              R"({"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"command\":"}})"),
          FakeLlmServer::sse(
              "content_block_delta",
              Json{{"type", "content_block_delta"},
                   {"index", 0},
                   {"delta", Json{{"type", "input_json_delta"}, {"partial_json", quoted + "}"}}}}
                  .dump()),
          FakeLlmServer::sse("content_block_stop", R"({"type":"content_block_stop","index":0})"),
          FakeLlmServer::sse(
              "message_delta",
              R"({"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":9}})"),
          FakeLlmServer::sse("message_stop", R"({"type":"message_stop"})")};
    }
    return r;
  }

  std::string answer_text() const { return openai() ? "Hello" : "Hi there"; }
  std::string key_header() const { return openai() ? "authorization" : "x-api-key"; }
};

const std::vector<Api> kApis{{"openai", "/v1"}, {"anthropic", ""}};

}  // namespace

TEST_CASE("429 with retry-after: the hint is appended, the local backoff stays") {
  for (const auto& api : kApis) {
    CAPTURE(api.provider);
    FakeLlmServer fake({api.error(429, "rate_limit_error", "Rate limit reached for requests",
                                  {{"retry-after", "2"}}),
                        api.ok()});
    auto r = server_for(api.provider, fake.base_url() + api.base_path, settings(3, 25));
    r.send(prompt());
    const auto events = r.read_until_type("auto_retry_end");
    CHECK(retry_events(events) ==
          V{"auto_retry_start:1/3:25:429 Rate limit reached for requests retry-after-ms=2000",
            "auto_retry_end:true:1"});
  }
}

TEST_CASE("connection refused is a retryable connection error") {
  for (const auto& api : kApis) {
    CAPTURE(api.provider);
    RefusingPort refusing;
    auto r = server_for(api.provider, "http://127.0.0.1:" + std::to_string(refusing.port()),
                        settings(1, 10));
    r.send(prompt());
    const auto events = r.read_until_type("auto_retry_end");
    CHECK(retry_events(events) == V{"auto_retry_start:1/1:10:connection error: connection refused",
                                    "auto_retry_end:false:1:connection error: connection refused"});
  }
}

// A port on 127.0.0.1 where connects hang: a listener with a backlog of 0 whose only queue slot
// is taken by a connection nobody accepts, so the kernel drops further SYNs.
class HangingPort {
 public:
  HangingPort() : listener_(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    ::listen(listener_, 0);
    socklen_t len = sizeof addr;
    ::getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    filler_ = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    ::connect(filler_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  }
  ~HangingPort() {
    ::close(filler_);
    ::close(listener_);
  }
  int port() const { return port_; }

 private:
  int listener_;
  int filler_ = -1;
  int port_ = 0;
};

TEST_CASE("a connect that hangs ends with the connect timeout") {
  for (const auto& api : kApis) {
    CAPTURE(api.provider);
    HangingPort hanging;
    auto r = server_for(api.provider, "http://127.0.0.1:" + std::to_string(hanging.port()),
                        settings(0, 10, R"(,"http":{"connectTimeoutMs":300})"));
    r.send(prompt());
    const auto events = r.read_until_type("agent_end");
    CHECK(error_of_last_assistant(events) == "connection error: connect timed out after 300 ms");
  }
}

TEST_CASE("a connection dropped mid-stream keeps the streamed text in the error message") {
  for (const auto& api : kApis) {
    CAPTURE(api.provider);
    FakeLlmServer fake({api.dropped()});
    auto r = server_for(api.provider, fake.base_url() + api.base_path, settings(0, 10));
    r.send(prompt());
    const auto events = r.read_until_type("auto_retry_end");
    CHECK(error_of_last_assistant(events) ==
          "connection error: stream ended before the response was complete");
    CHECK(events.back()["finalError"] ==
          "connection error: stream ended before the response was complete");
    for (auto it = events.rbegin(); it != events.rend(); ++it) {
      if ((*it)["type"] == "message_end") {
        CHECK((*it)["message"]["content"][0]["text"] == "partial");
        break;
      }
    }
  }
}

TEST_CASE("response-header and idle-stream timeouts") {
  for (const auto& api : kApis) {
    CAPTURE(api.provider);
    FakeResponse slow_head = api.ok();
    slow_head.delay_before_headers_ms = 3000;
    FakeResponse stalled = api.ok();
    stalled.chunks.resize(1);
    stalled.stall_after_chunks_ms = 3000;
    FakeLlmServer fake({slow_head, stalled});
    auto r =
        server_for(api.provider, fake.base_url() + api.base_path,
                   settings(0, 10, R"(,"http":{"responseTimeoutMs":300,"idleTimeoutMs":300})"));
    r.send(prompt());
    auto events = r.read_until_type("agent_end");
    CHECK(error_of_last_assistant(events) == "connection error: no response within 300 ms");
    r.read_until_type("auto_retry_end");
    r.send(prompt());
    events = r.read_until_type("agent_end");
    CHECK(error_of_last_assistant(events) == "connection error: no data for 300 ms");
  }
}

TEST_CASE("malformed SSE data is a connection error") {
  for (const auto& api : kApis) {
    CAPTURE(api.provider);
    FakeResponse bad;
    bad.chunks = {"data: {this is not json\n\n"};
    FakeLlmServer fake({bad});
    auto r = server_for(api.provider, fake.base_url() + api.base_path, settings(0, 10));
    r.send(prompt());
    const auto events = r.read_until_type("agent_end");
    CHECK(error_of_last_assistant(events).rfind("connection error: malformed event in the stream",
                                                0) == 0);
  }
}

TEST_CASE("a context-length 400 and a 401 are not retried") {
  for (const auto& api : kApis) {
    CAPTURE(api.provider);
    FakeLlmServer fake(
        {api.error(400, "invalid_request_error",
                   "prompt is too long: 210000 tokens > 200000 maximum"),
         api.error(401, "authentication_error", "Incorrect API key provided: " + kCanary)});
    auto r = server_for(api.provider, fake.base_url() + api.base_path, settings(3, 10));
    r.send(prompt());
    auto events = r.read_until_type("agent_end");
    CHECK(events.back()["willRetry"] == false);
    CHECK(error_of_last_assistant(events) ==
          "400 prompt is too long: 210000 tokens > 200000 maximum");
    r.send(prompt("again"));
    events = r.read_until_type("agent_end");
    CHECK(events.back()["willRetry"] == false);
    // The server echoed the key; it is scrubbed from the error text.
    CHECK(error_of_last_assistant(events) == "401 Incorrect API key provided: ***");
    r.send(Json{{"id", "s"}, {"type", "get_state"}});
    CHECK(retry_events(r.read_until_response("s")).empty());
  }
}

TEST_CASE("streamed tool calls are assembled into toolCall blocks") {
  for (const auto& api : kApis) {
    CAPTURE(api.provider);
    FakeLlmServer fake({api.tool_call(), api.ok()});
    auto r = server_for(api.provider, fake.base_url() + api.base_path, settings());
    r.send(prompt());
    const auto events = r.read_until_type("agent_end");
    const Json call = events.back()["messages"][1]["content"][0];
    CHECK(call ==
          Json::parse(
              R"({"type":"toolCall","id":"call_x","name":"bash","arguments":{"command":"ls"}})"));
    CHECK(events.back()["messages"][1]["stopReason"] == "toolUse");
    // The second request carries the call and its result in the API's own shape (OpenAI's
    // first message is the system prompt).
    const Json second = Json::parse(fake.requests().at(1).body);
    if (api.openai()) {
      CHECK(second["messages"][0]["role"] == "system");
      CHECK(second["messages"][2]["tool_calls"][0]["id"] == "call_x");
      CHECK(second["messages"][3]["role"] == "tool");
      CHECK(second["messages"][3]["tool_call_id"] == "call_x");
    } else {
      CHECK(second["messages"][1]["content"][0]["type"] == "tool_use");
      CHECK(second["messages"][2]["content"][0]["type"] == "tool_result");
      CHECK(second["messages"][2]["content"][0]["tool_use_id"] == "call_x");
    }
  }
}

TEST_CASE("TLS with a test CA works, an unverifiable certificate is a clear error") {
  testing::TempDir certs;
  const auto tls = testing::TestCertificates::create(certs.path());
  for (const auto& api : kApis) {
    CAPTURE(api.provider);
    FakeLlmServer fake({api.ok()}, tls);
    {
      testing::SubprocessOptions o;
      o.env["SSL_CERT_FILE"] = tls.ca_cert.string();
      auto r = server_for(api.provider, fake.base_url() + api.base_path, settings(), {}, o);
      r.send(prompt());
      const auto events = r.read_until_type("agent_end");
      CHECK(events.back()["messages"][1]["content"][0]["text"] == api.answer_text());
    }
    {
      testing::SubprocessOptions o;
      o.env["SSL_CERT_FILE"] = "/nonexistent/ca.pem";
      auto r = server_for(api.provider, fake.base_url() + api.base_path, settings(0, 10), {}, o);
      r.send(prompt());
      const auto events = r.read_until_type("agent_end");
      CHECK(error_of_last_assistant(events).rfind(
                "connection error: TLS handshake with 127.0.0.1 failed: certificate verify failed",
                0) == 0);
    }
  }
}

TEST_CASE("the API key never appears on stdout, stderr at trace level, or in files") {
  for (const auto& api : kApis) {
    CAPTURE(api.provider);
    FakeLlmServer fake({api.error(401, "authentication_error", "bad key " + kCanary), api.ok()});
    std::string out;
    auto r = server_for(api.provider, fake.base_url() + api.base_path, settings(), {});
    r.send(prompt());
    for (const auto& e : r.read_until_type("agent_end"))
      out += e.dump();
    r.send(prompt("again"));
    for (const auto& e : r.read_until_type("agent_end"))
      out += e.dump();
    r.send(Json{{"id", "s"}, {"type", "get_state"}});
    for (const auto& e : r.read_until_response("s"))
      out += e.dump();
    r.proc().close_stdin();
    for (const auto& l : r.proc().read_all_lines())
      out += l;
    CHECK(r.proc().wait() == 0);
    CHECK(out.find(kCanary) == std::string::npos);
    CHECK(out.find("***") != std::string::npos);  // the echoed key was there, scrubbed
    CHECK(r.proc().stderr_text().find(kCanary) == std::string::npos);
    CHECK(r.proc().stderr_text().size() > 0);  // trace logging did write
    for (const auto& f : std::filesystem::recursive_directory_iterator(r.dir().path())) {
      if (!f.is_regular_file()) continue;
      CAPTURE(f.path().string());
      CHECK(r.dir()
                .read(std::filesystem::relative(f.path(), r.dir().path()).string())
                .find(kCanary) == std::string::npos);
    }
    const auto reqs = fake.requests();
    REQUIRE(reqs.size() == 2);  // the key did reach the server
    CHECK(reqs[0].headers.at(api.key_header()).find(kCanary) != std::string::npos);
  }
}

TEST_CASE("two stored keys: a usage limit on the first retries at once with the second") {
  for (const auto& api : kApis) {
    CAPTURE(api.provider);
    FakeLlmServer fake({api.error(429, "rate_limit_error", "usage limit reached"), api.ok()});
    ReboundProcess r(
        {"--no-session", "--provider", api.provider, "--base-url", fake.base_url() + api.base_path},
        {},
        {{"agent/settings.json", settings(3, 5000)},
         {"agent/auth.json", R"({")" + api.provider + R"(":[{"type":"api_key","key":"sk-first"},
                                                      {"type":"api_key","key":"sk-second"}]})"}});
    r.send(prompt());
    const auto events = r.read_until_type("auto_retry_end");
    CHECK(retry_events(events) ==
          V{"auto_retry_start:1/3:0:429 usage limit reached", "auto_retry_end:true:1"});
    const auto reqs = fake.requests();
    REQUIRE(reqs.size() == 2);
    CHECK(reqs[0].headers.at(api.key_header()) != reqs[1].headers.at(api.key_header()));
  }
}

TEST_CASE("an agent directory laid out as the pi agent lays it out works as is") {
  FakeLlmServer fake({openai_ok()});
  ReboundProcess r({"--no-session"}, {},
                   {{"agent/settings.json",
                     R"({"defaultProvider":"local","defaultModel":"m1","defaultThinkingLevel":"off",
            "retry":{"enabled":true,"maxRetries":3,"baseDelayMs":2000},
            "compaction":{"enabled":true,"reserveTokens":16384,"keepRecentTokens":20000}})"},
                    {"agent/models.json", R"({"providers":{"local":{"baseUrl":")" +
                                              fake.base_url() + R"(/v1","api":"openai-completions",
            "models":[{"id":"m1","name":"M1","reasoning":false,"input":["text"],"contextWindow":128000,
                       "maxTokens":4096,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0}}]}}})"}});
  r.send(Json{{"id", "s"}, {"type", "get_state"}});
  const Json state = r.read_json();
  CHECK(state["data"]["model"]["provider"] == "local");
  CHECK(state["data"]["model"]["id"] == "m1");
  r.send(prompt());
  const auto events = r.read_until_type("agent_end");
  CHECK(events.back()["messages"][1]["content"][0]["text"] == "Hello");
  const auto reqs = fake.requests();
  REQUIRE(reqs.size() == 1);
  CHECK(reqs[0].target == "/v1/chat/completions");
  CHECK(reqs[0].headers.count("authorization") == 0);  // a local provider without a key
  CHECK(Json::parse(reqs[0].body)["max_tokens"] == 4096);
}

TEST_CASE("model commands over the wire: available models follow the keys, set_model persists") {
  testing::SubprocessOptions o;
  o.env["ANTHROPIC_API_KEY"] = kCanary;
  ReboundProcess r({"--no-session", "--provider", "scripted"}, o);
  r.send(Json{{"id", "m"}, {"type", "get_available_models"}});
  const Json models = r.read_json();
  std::vector<std::string> names;
  for (const auto& m : models["data"]["models"])
    names.push_back(m["provider"].get<std::string>() + "/" + m["id"].get<std::string>());
  CHECK(names == std::vector<std::string>{"scripted/echo", "scripted/script",
                                          "anthropic/claude-sonnet-4-5",
                                          "anthropic/claude-haiku-4-5"});
  r.send(Json{{"id", "t"}, {"type", "cycle_thinking_level"}});
  CHECK(r.read_json()["data"].is_null());  // echo has no reasoning
  r.send(Json{{"id", "s"},
              {"type", "set_model"},
              {"provider", "anthropic"},
              {"modelId", "claude-haiku-4-5"}});
  const Json set = r.read_json();
  CHECK(set["data"]["id"] == "claude-haiku-4-5");
  CHECK(set["data"]["reasoning"] == true);
  r.send(Json{{"id", "t2"}, {"type", "cycle_thinking_level"}});
  CHECK(r.read_json()["data"]["level"] == "minimal");
  r.send(Json{{"id", "x"}, {"type", "set_model"}, {"provider", "openai"}, {"modelId", "gpt-4o"}});
  CHECK(r.read_json()["error"] == "No API key for provider openai");
  r.send(Json{{"id", "c"}, {"type", "cycle_model"}});
  CHECK(r.read_json()["data"]["model"]["id"] == "echo");
  const Json saved = Json::parse(r.dir().read("agent/settings.json"));
  CHECK(saved["defaultProvider"] == "scripted");
  CHECK(saved["defaultModel"] == "echo");
  CHECK(saved["defaultThinkingLevel"] == "minimal");
}

TEST_CASE("HTTPS_PROXY tunnels https requests with CONNECT, NO_PROXY bypasses it") {
  testing::TempDir certs;
  const auto tls = testing::TestCertificates::create(certs.path());
  FakeLlmServer fake({openai_ok()}, tls);
  const std::string authority = "127.0.0.1:" + std::to_string(fake.port());
  {
    testing::FakeConnectProxy proxy;
    testing::SubprocessOptions o;
    o.env["SSL_CERT_FILE"] = tls.ca_cert.string();
    o.env["HTTPS_PROXY"] = proxy.url();
    o.unset_env = {"NO_PROXY", "no_proxy", "https_proxy"};
    auto r = server_for("openai", fake.base_url(), settings(), {}, o);
    r.send(prompt());
    CHECK(r.read_until_type("agent_end").back()["messages"][1]["content"][0]["text"] == "Hello");
    CHECK(proxy.targets() == std::vector<std::string>{authority});
  }
  {
    testing::FakeConnectProxy proxy;
    testing::SubprocessOptions o;
    o.env["SSL_CERT_FILE"] = tls.ca_cert.string();
    o.env["HTTPS_PROXY"] = proxy.url();
    o.env["NO_PROXY"] = "example.org, 127.0.0.1";
    auto r = server_for("openai", fake.base_url(), settings(), {}, o);
    r.send(prompt());
    CHECK(r.read_until_type("agent_end").back()["messages"][1]["stopReason"] == "stop");
    CHECK(proxy.targets().empty());
  }
}

TEST_CASE("a proxy that refuses the tunnel is a clear connection error") {
  testing::FakeConnectProxy proxy(/*refuse=*/true);
  testing::SubprocessOptions o;
  o.env["HTTPS_PROXY"] = proxy.url();
  o.unset_env = {"NO_PROXY", "no_proxy"};
  auto r = server_for("openai", "https://127.0.0.1:9", settings(0, 10), {}, o);
  r.send(prompt());
  const auto events = r.read_until_type("agent_end");
  CHECK(error_of_last_assistant(events) ==
        "connection error: proxy refused the tunnel to 127.0.0.1:9 (status 403)");
}

TEST_CASE("overflow over HTTP: compaction with the same provider, then the continued run") {
  for (const auto& api : kApis) {
    CAPTURE(api.provider);
    FakeLlmServer fake({api.error(503, "overloaded_error", "overloaded"),
                        api.error(400, "invalid_request_error",
                                  "prompt is too long: 210000 tokens > 200000 maximum"),
                        api.ok(), api.ok()});
    auto r = server_for(api.provider, fake.base_url() + api.base_path, settings(3, 10));
    r.send(prompt("a long story"));
    const auto events = r.read_until([](const Json& j) {
      return j["type"] == "agent_end" && j["messages"].size() == 1 &&
             j["messages"][0]["stopReason"] == "stop";
    });
    V tail;
    for (const auto& e : events) {
      const std::string t = e["type"];
      if (t.starts_with("auto_") || t == "agent_end" || t == "agent_start")
        tail.push_back(summarize(e));
    }
    // The retry chain meets the overflow and ends first; then compaction; then the continuation.
    CHECK(tail ==
          V{"agent_start", "agent_end:willRetry=true", "auto_retry_start:1/3:10:503 overloaded",
            "agent_start", "agent_end:willRetry=false",
            "auto_retry_end:false:1:400 prompt is too long: 210000 tokens > 200000 maximum",
            "auto_compaction_start:overflow", "auto_compaction_end:aborted=false:willRetry=true",
            "agent_start", "agent_end:willRetry=false"});
    for (const auto& e : events) {
      if (e["type"] == "auto_compaction_end") CHECK(e["result"]["summary"] == api.answer_text());
    }
    const auto requests = fake.requests();
    REQUIRE(requests.size() == 4);
    // The summary request went to the same endpoint with the summarizing instructions.
    CHECK(requests[2].target == requests[1].target);
    CHECK(requests[2].body.find("Summarize the conversation below") != std::string::npos);
    // The continued request sends the summary as user text, then the kept message.
    CHECK(requests[3].body.find("compacted into this summary") != std::string::npos);
    CHECK(requests[3].body.find("a long story") != std::string::npos);
  }
}

namespace {

// A successful answer that reports `input` prompt tokens.
FakeResponse ok_with_input(const Api& api, long input) {
  FakeResponse r = api.ok();
  for (auto& chunk : r.chunks) {
    for (const std::string& from :
         {std::string("\"prompt_tokens\":12"), std::string("\"input_tokens\":20")}) {
      const auto at = chunk.find(from);
      if (at != std::string::npos) {
        chunk.replace(at, from.size(), from.substr(0, from.find(':') + 1) + std::to_string(input));
      }
    }
  }
  return r;
}

// The session-level events of a stream, summarized (no deltas, no message events).
V session_events(const std::vector<Json>& events) {
  V out;
  for (const auto& e : events) {
    const std::string t = e["type"];
    if (t.starts_with("auto_") || t == "agent_end" || t == "agent_start") {
      out.push_back(summarize(e));
    }
  }
  return out;
}

}  // namespace

TEST_CASE("compaction over HTTP: each path of runtime.md section 5, for both APIs") {
  const std::string once =
      "auto_compaction_end:aborted=false:willRetry=false:Context overflow recovery failed after "
      "one compact-and-retry attempt. Try reducing context or switching to a larger-context "
      "model.";
  for (const auto& api : kApis) {
    CAPTURE(api.provider);
    const auto overflow = api.error(400, "invalid_request_error", "prompt is too long");
    const std::string compaction = R"(,"compaction":{"enabled":true,"keepRecentTokens":1})";
    {  // overflow, compaction, continued run; the session file resumes to the same
      FakeLlmServer fake({overflow, api.ok(), api.ok()});
      testing::TempDir sessions;
      auto r = ReboundProcess(
          {"--session", (sessions.path() / "s.jsonl").string(), "--provider", api.provider,
           "--base-url", fake.base_url() + api.base_path, "--api-key", kCanary},
          {}, {{"agent/settings.json", settings(3, 10, compaction)}});
      r.send(prompt("a long story"));
      r.read_until_type("agent_end");
      const auto events = r.read_until_type("agent_end");
      CHECK(session_events(events) == V{"auto_compaction_start:overflow",
                                        "auto_compaction_end:aborted=false:willRetry=true",
                                        "agent_start", "agent_end:willRetry=false"});
      r.send(Json{{"id", "m"}, {"type", "get_messages"}});
      const Json messages = r.read_until_response("m").back()["data"]["messages"];
      REQUIRE(messages.size() == 3);
      CHECK(messages[0]["summary"] == api.answer_text());
      r.proc().close_stdin();
      REQUIRE(r.proc().wait() == 0);
      auto resumed = ReboundProcess({"--session", (sessions.path() / "s.jsonl").string(),
                                     "--provider", api.provider, "--api-key", kCanary});
      resumed.send(Json{{"id", "m"}, {"type", "get_messages"}});
      CHECK(resumed.read_until_response("m").back()["data"]["messages"] == messages);
    }
    {  // a second overflow ends with the once-per-prompt error
      FakeLlmServer fake({overflow, api.ok(), overflow});
      auto r =
          server_for(api.provider, fake.base_url() + api.base_path, settings(3, 10, compaction));
      r.send(prompt());
      const auto events = r.read_until([&](const Json& j) {
        return j["type"] == "auto_compaction_end" && j["willRetry"] == false;
      });
      CHECK(session_events(events).back() == once);
      CHECK(fake.requests().size() == 3);
    }
    {  // a failing summary
      FakeLlmServer fake({overflow, api.error(500, "api_error", "boom")});
      auto r =
          server_for(api.provider, fake.base_url() + api.base_path, settings(3, 10, compaction));
      r.send(prompt());
      const auto events = r.read_until_type("auto_compaction_end");
      CHECK(events.back()["errorMessage"] == "Context overflow recovery failed: 500 boom");
      CHECK(fake.requests().size() == 2);  // the summary is never retried
    }
    {  // compaction disabled: nothing after agent_end
      FakeLlmServer fake({overflow});
      auto r = server_for(api.provider, fake.base_url() + api.base_path,
                          settings(3, 10, R"(,"compaction":{"enabled":false})"));
      r.send(prompt());
      r.read_until_type("agent_end");
      r.send(Json{{"id", "s"}, {"type", "get_state"}});
      CHECK(r.read_json()["id"] == "s");  // the very next line
      CHECK(fake.requests().size() == 1);
    }
    {  // threshold compaction after a run above contextWindow - reserveTokens
      const long window = api.openai() ? 128000 : 200000;
      FakeLlmServer fake({ok_with_input(api, window - 10000), api.ok()});
      auto r =
          server_for(api.provider, fake.base_url() + api.base_path, settings(3, 10, compaction));
      r.send(prompt());
      const auto events = r.read_until_type("auto_compaction_end");
      CHECK(session_events(events) == V{"agent_start", "agent_end:willRetry=false",
                                        "auto_compaction_start:threshold",
                                        "auto_compaction_end:aborted=false:willRetry=false"});
    }
  }
}

TEST_CASE("each chunk reaches the client while the server pauses before the next one") {
  // The answer's first chunks, then 3 s of silence before the rest. The client must see the
  // first delta during the silence: it aborts then and gets an aborted message. (The HTTP
  // reader once held every chunk back until the next one came, so the delta arrived only after
  // the whole stream, and the run ended on its own before the abort.)
  for (const auto& api : kApis) {
    CAPTURE(api.provider);
    FakeResponse paused = api.ok();
    paused.chunks.resize(api.openai() ? 1 : 3);  // up to the first text delta
    paused.stall_after_chunks_ms = 3000;
    FakeLlmServer fake({paused});
    auto r = server_for(api.provider, fake.base_url() + api.base_path, settings(0, 10));
    r.send(prompt());
    r.read_until([](const Json& j) {
      return j["type"] == "message_update" && j["assistantMessageEvent"]["type"] == "text_delta";
    });
    r.send(Json{{"id", "a"}, {"type", "abort"}});
    const auto events = r.read_until_type("agent_end");
    const Json& last = events.back()["messages"].back();
    CHECK(last["stopReason"] == "aborted");
  }
}

TEST_CASE(
    "a tool call runs for real and the follow-up request carries its result as each API expects") {
  for (const auto& api : kApis) {
    CAPTURE(api.provider);
    FakeLlmServer fake({api.tool_call("echo from-tool; exit 2"), api.ok()});
    auto r = server_for(api.provider, fake.base_url() + api.base_path, settings());
    r.send(prompt("run it"));
    const auto events = r.read_until_type("agent_end");
    const Json first = Json::parse(fake.requests().at(0).body);
    const Json second = Json::parse(fake.requests().at(1).body);
    const std::string expected_text = "from-tool\n\n\nCommand exited with code 2";
    if (api.openai()) {
      CHECK(first["messages"][0]["role"] == "system");
      CHECK(first["messages"][0]["content"].get<std::string>().rfind("You are a coding assistant",
                                                                     0) == 0);
      REQUIRE(first["tools"].size() == 4);
      CHECK(
          first["tools"][1].dump() ==
          Json{
              {"type", "function"},
              {"function",
               Json{
                   {"name", "bash"},
                   {"description",
                    "Run a command with bash in the working directory and return its combined "
                    "stdout and stderr. Output keeps the last 2000 lines or 50KB, whichever "
                    "comes first; when it is cut, the complete output is saved to a temporary "
                    "file whose path is given. An optional timeout in seconds stops the "
                    "command."},
                   {"parameters",
                    Json::parse(
                        R"j({"type":"object","required":["command"],"properties":{"command":{"type":"string","description":"The command line to run"},"timeout":{"type":"number","description":"Stop the command after this many seconds (no limit when absent)"}}})j")}}}}
              .dump());
      CHECK(
          second["messages"][2].dump() ==
          R"j({"role":"assistant","content":null,"tool_calls":[{"id":"call_x","type":"function","function":{"name":"bash","arguments":"{\"command\":\"echo from-tool; exit 2\"}"}}]})j");
      CHECK(second["messages"][3].dump() ==
            Json{{"role", "tool"}, {"content", expected_text}, {"tool_call_id", "call_x"}}.dump());
    } else {
      // The system prompt as one cached text block (providers.md section 7.3).
      CHECK(first["system"][0]["text"].get<std::string>().rfind("You are a coding assistant", 0) ==
            0);
      CHECK(first["system"][0]["cache_control"] == Json{{"type", "ephemeral"}});
      REQUIRE(first["tools"].size() == 4);
      CHECK(first["tools"][0]["name"] == "read");
      CHECK(
          first["tools"][0]["input_schema"].dump() ==
          R"j({"type":"object","required":["path"],"properties":{"path":{"type":"string","description":"File to read, relative to the working directory or absolute"},"offset":{"type":"number","description":"First line to return, counting from 1"},"limit":{"type":"number","description":"Largest number of lines to return"}}})j");
      // edit's top-level additionalProperties is not sent.
      CHECK_FALSE(first["tools"][2]["input_schema"].contains("additionalProperties"));
      CHECK(
          second["messages"][1]["content"][0].dump() ==
          R"j({"type":"tool_use","id":"call_x","name":"bash","input":{"command":"echo from-tool; exit 2"}})j");
      CHECK(second["messages"][2]["content"][0].dump() ==
            Json{{"type", "tool_result"},
                 {"tool_use_id", "call_x"},
                 {"content", expected_text},
                 {"is_error", true},
                 {"cache_control", {{"type", "ephemeral"}}}}
                .dump());
    }
    bool ended = false;
    for (const auto& e : events)
      if (e["type"] == "tool_execution_end") {
        ended = true;
        CHECK(e["result"]["content"][0]["text"] == expected_text);
      }
    CHECK(ended);
  }
}
