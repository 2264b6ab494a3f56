#pragma once
// A fake LLM HTTP server for tests: listens on 127.0.0.1 only (an ephemeral port), optionally
// with TLS from a test CA, and answers each request with the next scripted response (the last
// one repeats): a status, headers, a body streamed in chunks with delays, a connection dropped
// mid-stream, a stall before the headers or inside the body. It records every request it got.
// Runs its own threads; requests() is safe to call from the test thread.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace rebound::testing {

struct FakeResponse {
  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers;
  std::vector<std::string> chunks;  // 200: sent with chunked encoding; else joined as body
  std::int64_t chunk_delay_ms = 0;  // between chunks
  std::int64_t delay_before_headers_ms = 0;
  std::int64_t stall_after_chunks_ms = 0;  // silence before the body ends (idle timeouts)
  bool drop_after_chunks = false;          // close the connection instead of ending the body
  bool close_without_response = false;
  std::string interim;  // raw bytes before the status line (e.g. "HTTP/1.1 100 Continue\r\n\r\n")
};

struct ReceivedRequest {
  std::string method, target;
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;
};

/// A CA and a server certificate for 127.0.0.1/localhost, made with the openssl tool.
struct TestCertificates {
  std::filesystem::path ca_cert, server_cert, server_key;
  /// Creates them in `dir` (fails the test if openssl fails).
  static TestCertificates create(const std::filesystem::path& dir);
};

class FakeLlmServer {
 public:
  /// Answers a request (the nth, counting from 0) with a response made from it: for fakes whose
  /// answer depends on what was sent (tests/support/strict_llm.h). Called on the server's threads.
  using Responder = std::function<FakeResponse(const ReceivedRequest& request, std::size_t n)>;

  explicit FakeLlmServer(std::vector<FakeResponse> script,
                         std::optional<TestCertificates> tls = std::nullopt);
  explicit FakeLlmServer(Responder responder);
  ~FakeLlmServer();
  FakeLlmServer(const FakeLlmServer&) = delete;
  FakeLlmServer& operator=(const FakeLlmServer&) = delete;

  int port() const { return port_; }
  /// "http://127.0.0.1:<port>" (or https).
  std::string base_url() const;
  std::vector<ReceivedRequest> requests() const;
  /// Seconds each streamed (status 200) response took to send, from its status line to its
  /// last chunk handed to the kernel, in the order the responses ended (benchmarks).
  std::vector<double> send_seconds() const;
  /// When each streamed response started (its status line), for latency benchmarks.
  std::vector<std::chrono::steady_clock::time_point> send_starts() const;

  /// Server-sent events helpers for scripts.
  static std::string sse(const std::string& data) { return "data: " + data + "\n\n"; }
  static std::string sse(const std::string& event, const std::string& data) {
    return "event: " + event + "\ndata: " + data + "\n\n";
  }
  /// One OpenAI Chat Completions chunk with `delta_json` and a finish reason (JSON text).
  static std::string openai_chunk(const std::string& delta_json,
                                  const std::string& finish = "null") {
    return sse(R"({"choices":[{"index":0,"delta":)" + delta_json + R"(,"finish_reason":)" + finish +
               "}]}");
  }

 private:
  void accept_loop();
  void serve(int fd);

  std::vector<FakeResponse> script_;
  Responder responder_;
  std::optional<TestCertificates> tls_;
  void* ssl_ctx_ = nullptr;  // SSL_CTX*
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  mutable std::mutex mutex_;
  std::vector<ReceivedRequest> requests_;
  std::size_t next_ = 0;
  std::vector<double> send_seconds_;
  std::vector<std::chrono::steady_clock::time_point> send_starts_;
  std::thread acceptor_;
  std::vector<std::thread> workers_;
};

}  // namespace rebound::testing
