#include "tests/support/fake_llm_server.h"

#include "tests/support/loopback.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdlib>
#include <stdexcept>

namespace rebound::testing {

namespace {

using namespace std::chrono_literals;

std::string lower(std::string s) {
  for (auto& c : s)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// One connection, plain or TLS.
class Conn {
 public:
  Conn(int fd, SSL* ssl) : fd_(fd), ssl_(ssl) {}
  ~Conn() {
    if (ssl_) SSL_free(ssl_);
    ::close(fd_);
  }
  bool write(const std::string& data) {
    std::size_t done = 0;
    while (done < data.size()) {
      const int n =
          ssl_
              ? SSL_write(ssl_, data.data() + done, static_cast<int>(data.size() - done))
              : static_cast<int>(::send(fd_, data.data() + done, data.size() - done, MSG_NOSIGNAL));
      if (n <= 0) return false;
      done += static_cast<std::size_t>(n);
    }
    return true;
  }
  // Reads some bytes, waiting at most 5 s; empty on end or error.
  std::string read_some() {
    pollfd p{fd_, POLLIN, 0};
    if (!(ssl_ && SSL_pending(ssl_) > 0) && ::poll(&p, 1, 5000) <= 0) return {};
    char buf[16384];
    const int n =
        ssl_ ? SSL_read(ssl_, buf, sizeof buf) : static_cast<int>(::recv(fd_, buf, sizeof buf, 0));
    return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
  }
  // Ends the connection in the middle of the body (no terminating chunk). A FIN, not a reset:
  // with a reset the kernel may drop bytes the client has not read yet, which would make what
  // the client saw depend on timing.
  void drop() {
    if (ssl_) SSL_shutdown(ssl_);
    ::shutdown(fd_, SHUT_WR);
  }

 private:
  int fd_;
  SSL* ssl_;
};

// Sleeps in small steps so a stopping server does not wait out a long stall.
void nap(std::int64_t ms, const std::atomic<bool>& stop) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (!stop && std::chrono::steady_clock::now() < end)
    std::this_thread::sleep_for(5ms);
}

std::string hex(std::size_t n) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%zx", n);
  return buf;
}

}  // namespace

TestCertificates TestCertificates::create(const std::filesystem::path& dir) {
  TestCertificates c{dir / "ca.pem", dir / "server.pem", dir / "server.key"};
  const std::string d = dir.string();
  const std::string cmd =
      "cd '" + d +
      "' && "
      "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 "
      "-subj '/CN=Rebound Test CA' -keyout ca.key -out ca.pem && "
      "openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
      "-subj '/CN=localhost' -keyout server.key -out server.csr && "
      "printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\\n' > san.ext && "
      "openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 "
      "-extfile san.ext -out server.pem";
  if (std::system((cmd + " > /dev/null 2>&1").c_str()) != 0) {
    throw std::runtime_error("openssl could not make the test certificates");
  }
  return c;
}

FakeLlmServer::FakeLlmServer(std::vector<FakeResponse> script, std::optional<TestCertificates> tls)
    : script_(std::move(script)), tls_(std::move(tls)) {
  if (script_.empty()) script_.push_back({});
  if (tls_) {
    SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
    if (SSL_CTX_use_certificate_file(ctx, tls_->server_cert.c_str(), SSL_FILETYPE_PEM) != 1 ||
        SSL_CTX_use_PrivateKey_file(ctx, tls_->server_key.c_str(), SSL_FILETYPE_PEM) != 1) {
      SSL_CTX_free(ctx);
      throw std::runtime_error("cannot load the test server certificate");
    }
    ssl_ctx_ = ctx;
  }
  listen_fd_ = listen_on_loopback(port_);
  acceptor_ = std::thread([this] { accept_loop(); });
}

FakeLlmServer::FakeLlmServer(Responder responder) : responder_(std::move(responder)) {
  script_.push_back({});
  listen_fd_ = listen_on_loopback(port_);
  acceptor_ = std::thread([this] { accept_loop(); });
}

FakeLlmServer::~FakeLlmServer() {
  stop_ = true;
  acceptor_.join();
  for (auto& w : workers_)
    w.join();
  ::close(listen_fd_);
  if (ssl_ctx_) SSL_CTX_free(static_cast<SSL_CTX*>(ssl_ctx_));
}

std::string FakeLlmServer::base_url() const {
  return std::string(tls_ ? "https" : "http") + "://127.0.0.1:" + std::to_string(port_);
}

std::vector<std::chrono::steady_clock::time_point> FakeLlmServer::send_starts() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return send_starts_;
}

std::vector<double> FakeLlmServer::send_seconds() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return send_seconds_;
}

std::vector<ReceivedRequest> FakeLlmServer::requests() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return requests_;
}

void FakeLlmServer::accept_loop() {
  while (!stop_) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (::poll(&p, 1, 20) <= 0) continue;
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    workers_.emplace_back([this, fd] { serve(fd); });
  }
}

void FakeLlmServer::serve(int fd) {
  SSL* ssl = nullptr;
  if (ssl_ctx_) {
    ssl = SSL_new(static_cast<SSL_CTX*>(ssl_ctx_));
    SSL_set_fd(ssl, fd);
    if (SSL_accept(ssl) != 1) {  // e.g. the client rejected the certificate
      Conn dead(fd, ssl);
      return;
    }
  }
  Conn conn(fd, ssl);
  // The request: headers up to the blank line, then Content-Length bytes.
  std::string in;
  std::size_t head_end;
  while ((head_end = in.find("\r\n\r\n")) == std::string::npos) {
    const std::string more = conn.read_some();
    if (more.empty()) return;
    in += more;
  }
  ReceivedRequest req;
  std::size_t line_end = in.find("\r\n");
  const std::string request_line = in.substr(0, line_end);
  req.method = request_line.substr(0, request_line.find(' '));
  req.target =
      request_line.substr(req.method.size() + 1, request_line.rfind(' ') - req.method.size() - 1);
  std::size_t pos = line_end + 2;
  while (pos < head_end) {
    const std::size_t e = in.find("\r\n", pos);
    const std::string h = in.substr(pos, e - pos);
    const std::size_t colon = h.find(':');
    std::string value = h.substr(colon + 1);
    while (!value.empty() && value.front() == ' ')
      value.erase(0, 1);
    req.headers[lower(h.substr(0, colon))] = value;
    pos = e + 2;
  }
  const std::size_t length =
      req.headers.count("content-length") ? std::stoul(req.headers["content-length"]) : 0;
  req.body = in.substr(head_end + 4);
  while (req.body.size() < length) {
    const std::string more = conn.read_some();
    if (more.empty()) break;
    req.body += more;
  }
  std::size_t index = 0, n = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    requests_.push_back(req);
    index = std::min(next_, script_.size() - 1);
    n = next_;
    ++next_;
  }
  // The script never changes after construction: no copy (a 20,000-chunk answer took 1.5 ms
  // to copy before its first byte).
  FakeResponse made;
  if (responder_) made = responder_(req, n);
  const FakeResponse& r = responder_ ? made : script_[index];
  if (r.close_without_response) return;
  nap(r.delay_before_headers_ms, stop_);
  if (stop_) return;
  std::string head = r.interim + "HTTP/1.1 " + std::to_string(r.status) + " Status\r\n";
  for (const auto& [k, v] : r.headers)
    head += k + ": " + v + "\r\n";
  if (r.status == 200) {
    head += "Content-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n";
    // One response per connection, said so: a client that keeps connections (the SDKs in
    // tests/node) opens a new one for its next request. Not for a response that will be
    // dropped: after `Connection: close` some clients (Node's fetch) take the close for the
    // body's end, where a kept connection's close before the last chunk is a broken response.
    if (!r.drop_after_chunks) head += "Connection: close\r\n";
    head += "\r\n";
    const auto started = std::chrono::steady_clock::now();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      send_starts_.push_back(started);
    }
    if (!conn.write(head)) return;
    for (std::size_t i = 0; i < r.chunks.size(); ++i) {
      if (i > 0) nap(r.chunk_delay_ms, stop_);
      if (stop_ || !conn.write(hex(r.chunks[i].size()) + "\r\n" + r.chunks[i] + "\r\n")) return;
    }
    nap(r.stall_after_chunks_ms, stop_);
    if (r.drop_after_chunks) {
      conn.drop();
      conn.read_some();  // until the client closes its side
      return;
    }
    if (conn.write("0\r\n\r\n")) {
      const std::chrono::duration<double> took = std::chrono::steady_clock::now() - started;
      std::lock_guard<std::mutex> lock(mutex_);
      send_seconds_.push_back(took.count());
    }
  } else {
    std::string body;
    for (const auto& c : r.chunks)
      body += c;
    head += "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
            "\r\nConnection: close\r\n\r\n";
    conn.write(head + body);
  }
  // Let the client read everything before the socket closes.
  conn.read_some();
}

}  // namespace rebound::testing
