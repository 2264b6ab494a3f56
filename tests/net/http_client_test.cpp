#include "net/http_client.h"

#include <doctest/doctest.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <chrono>
#include <functional>
#include <string>

#include "tests/support/fake_llm_server.h"

using rebound::net::parse_url;
using rebound::net::ProxyConfig;

TEST_CASE("URLs: scheme, host, default ports, IPv6 literals, target") {
  const auto a = parse_url("https://api.openai.com/v1/chat/completions");
  REQUIRE(a);
  CHECK(a->tls);
  CHECK(a->host == "api.openai.com");
  CHECK(a->port == "443");
  CHECK(a->target == "/v1/chat/completions");
  const auto b = parse_url("http://127.0.0.1:8080");
  REQUIRE(b);
  CHECK(b->port == "8080");
  CHECK(b->target == "/");
  const auto c = parse_url("http://[::1]:9/x?y=1");
  REQUIRE(c);
  CHECK(c->host == "::1");
  CHECK(c->target == "/x?y=1");
  CHECK_FALSE(parse_url("ftp://x"));
  CHECK_FALSE(parse_url("https://"));
}

TEST_CASE("HTTPS_PROXY and NO_PROXY from the environment") {
  std::map<std::string, std::string> env{
      {"https_proxy", "proxy.local:3128"},
      {"NO_PROXY", " localhost, .internal.org ,10.0.0.1:80,example.com"}};
  auto get = [&](const std::string& k) -> std::optional<std::string> {
    const auto it = env.find(k);
    return it == env.end() ? std::nullopt : std::optional(it->second);
  };
  const ProxyConfig c = ProxyConfig::from_environment(get);
  REQUIRE(c.https_proxy);
  CHECK(c.https_proxy->host == "proxy.local");
  CHECK(c.https_proxy->port == "3128");
  CHECK(c.bypass("localhost"));
  CHECK(c.bypass("api.internal.org"));
  CHECK(c.bypass("internal.org"));
  CHECK(c.bypass("10.0.0.1"));
  CHECK(c.bypass("EXAMPLE.com"));
  CHECK(c.bypass("www.example.com"));
  CHECK_FALSE(c.bypass("notexample.com"));
  CHECK_FALSE(c.bypass("api.openai.com"));
  env.erase("NO_PROXY");
  env.emplace("NO_PROXY", "*");  // (assigning the literal trips a GCC 12 -Wrestrict false positive)
  CHECK(ProxyConfig::from_environment(get).bypass("anything"));
  env.clear();
  CHECK_FALSE(ProxyConfig::from_environment(get).https_proxy);
}

TEST_CASE("A body gate that says wait stops reading until it resumes the call") {
  rebound::testing::FakeLlmServer server({rebound::testing::FakeResponse{
      200, {}, {"first ", "second ", "third"}, 0, 0, 0, false, false, ""}});
  boost::asio::io_context io;
  rebound::net::HttpClient http(io.get_executor());
  int asked = 0;
  std::function<void()> resume;
  http.set_body_gate([&](std::function<void()> r) {
    ++asked;
    if (asked > 1) return true;
    resume = std::move(r);  // the first read of the body waits
    return false;
  });
  int status = 0;
  std::string body;
  bool ended = false;
  rebound::net::HttpRequest request;
  request.url = server.base_url() + "/stream";
  request.body = "{}";
  auto call =
      http.post(request, rebound::net::HttpCallbacks{
                             [&](int s, const rebound::net::HttpHeaders&) { status = s; },
                             [&](std::string_view bytes) { body += bytes; }, [&] { ended = true; },
                             [&](std::string message) { FAIL(message); }});
  // Paused with nothing left to do: the loop runs out of work instead of reading on.
  io.run_for(std::chrono::seconds(10));
  CHECK(status == 200);
  CHECK(asked == 1);
  CHECK(body.empty());
  CHECK_FALSE(ended);
  REQUIRE(resume);
  io.restart();
  boost::asio::post(io, resume);
  io.run_for(std::chrono::seconds(10));
  CHECK(body == "first second third");
  CHECK(ended);
  CHECK(asked >= 2);
}

TEST_CASE("the TLS context is made for an https request only") {
  rebound::testing::FakeLlmServer server(
      {rebound::testing::FakeResponse{200, {}, {"ok"}, 0, 0, 0, false, false, ""}});
  boost::asio::io_context io;
  rebound::net::HttpClient http(io.get_executor());
  bool ended = false;
  std::string failure;
  rebound::net::HttpRequest request;
  request.url = server.base_url() + "/plain";
  request.body = "{}";
  auto callbacks = [&] {
    return rebound::net::HttpCallbacks{[](int, const rebound::net::HttpHeaders&) {},
                                       [](std::string_view) {}, [&] { ended = true; },
                                       [&](std::string message) { failure = message; }};
  };
  auto call = http.post(request, callbacks());
  io.run_for(std::chrono::seconds(10));
  CHECK(ended);
  CHECK_FALSE(http.tls_context_loaded());
  // An https request to a port where nothing listens: the context is made, the call fails.
  io.restart();
  request.url = "https://127.0.0.1:1/x";
  auto secure = http.post(request, callbacks());
  io.run_for(std::chrono::seconds(10));
  CHECK(http.tls_context_loaded());
  CHECK(failure.find("connection refused") != std::string::npos);
}
