#pragma once
// An HTTP/1.1 client for streamed LLM responses (runtime.md section 2): http:// or https:// (TLS
// through OpenSSL, certificate and host name verified, SNI set), deadlines for connect, for the
// response headers and for every silence inside the body. It knows requests and bytes, not
// providers. All callbacks run on the executor given to HttpClient; after cancel() or the
// HttpCall's destruction none runs. Beast and OpenSSL stay inside http_client.cpp.

#include <boost/asio/any_io_executor.hpp>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "net/url.h"

namespace rebound::net {

struct HttpTimeouts {
  std::int64_t connect_ms = 10000;
  std::int64_t response_ms = 60000;
  std::int64_t idle_ms = 120000;
};

struct HttpRequest {
  std::string url;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;  // sent with POST
  HttpTimeouts timeouts;
};

using HttpHeaders = std::map<std::string, std::string>;  // names lower-cased

/// Exactly one of end() and failure() ends a call that was not cancelled.
struct HttpCallbacks {
  std::function<void(int status, const HttpHeaders& headers)> head;
  std::function<void(std::string_view bytes)> data;
  /// The body ended: complete, or the server closed the connection after the headers.
  std::function<void()> end;
  /// The request failed before or during the body: text starts with "connection error: ".
  std::function<void(std::string message)> failure;
};

/// Backpressure from whoever consumes the response bodies: called before each read of a body.
/// Returns true to read now; or false after keeping `resume`, which it later calls on the
/// client's executor (never from inside this call) once reading may go on. Until then the
/// call reads nothing more, TCP flow control holds the server back, and no timeout runs.
using BodyGate = std::function<bool(std::function<void()> resume)>;

/// A request in flight; destroying it cancels it.
class HttpCall {
 public:
  virtual ~HttpCall() = default;
  virtual void cancel() = 0;
};

class HttpClient {
 public:
  explicit HttpClient(boost::asio::any_io_executor executor, ProxyConfig proxy = {});
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  std::unique_ptr<HttpCall> post(HttpRequest request, HttpCallbacks callbacks);
  /// A call that sends nothing and fails with `message` as it is, on the executor (never
  /// inside this call), unless cancelled first.
  std::unique_ptr<HttpCall> fail_soon(HttpCallbacks callbacks, std::string message);

  /// The gate every later request consults before reading more of its body (none: read on).
  void set_body_gate(BodyGate gate);
  /// Whether the TLS context (the system's certificates) was loaded: only for https requests.
  bool tls_context_loaded() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace rebound::net
