#include "net/http_client.h"

#include <openssl/ssl.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>

#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <charconv>

#include <cctype>
#include <chrono>
#include <optional>
#include <variant>

#include "session/scheduler.h"

namespace rebound::net {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;

namespace {

using PlainStream = beast::tcp_stream;
using TlsStream = beast::ssl_stream<beast::tcp_stream>;

class Call : public HttpCall, public std::enable_shared_from_this<Call> {
 public:
  Call(asio::any_io_executor ex, ssl::context* tls, const ProxyConfig& proxy, Url url,
       HttpRequest request, HttpCallbacks cb, BodyGate gate)
      : executor_(ex),
        resolver_(ex),
        resolve_deadline_(ex),
        request_(std::move(request)),
        cb_(std::move(cb)),
        gate_(std::move(gate)) {
    url_ = std::move(url);
    if (url_.tls && proxy.https_proxy && !proxy.bypass(url_.host)) tunnel_ = proxy.https_proxy;
    if (url_.tls) {
      stream_.emplace<TlsStream>(ex, *tls);
    } else {
      stream_.emplace<PlainStream>(ex);
    }
  }

  void start() {
    const auto connect = session::saturated_delay(request_.timeouts.connect_ms);
    // One deadline for name resolution and the connection together.
    lowest().expires_after(connect);
    resolve_deadline_.expires_after(connect);
    resolve_deadline_.async_wait([weak = weak_from_this()](const beast::error_code& ec) {
      auto self = weak.lock();
      if (ec || !self || self->resolved_) return;
      self->resolver_.cancel();
      self->fail(self->timeout_connect());
    });
    const Url& first_hop = tunnel_ ? *tunnel_ : url_;
    // A numeric address needs no resolver (whose first use starts a thread: most of a local
    // request's set-up time).
    beast::error_code not_numeric;
    const auto address = asio::ip::make_address(first_hop.host, not_numeric);
    unsigned short port = 0;
    const auto [end, bad] =
        std::from_chars(first_hop.port.data(), first_hop.port.data() + first_hop.port.size(), port);
    if (!not_numeric && bad == std::errc() &&
        end == first_hop.port.data() + first_hop.port.size()) {
      auto results = tcp::resolver::results_type::create(tcp::endpoint(address, port),
                                                         first_hop.host, first_hop.port);
      asio::post(executor_, [self = shared_from_this(), results = std::move(results)]() mutable {
        self->on_resolve({}, std::move(results));
      });
      return;
    }
    resolver_.async_resolve(
        first_hop.host, first_hop.port,
        [self = shared_from_this()](beast::error_code ec, tcp::resolver::results_type results) {
          self->on_resolve(ec, std::move(results));
        });
  }

  void cancel() override {
    if (done_) return;
    done_ = true;
    resolver_.cancel();
    resolve_deadline_.cancel();
    beast::error_code ignored;
    lowest().socket().shutdown(tcp::socket::shutdown_both, ignored);
    lowest().close();
  }

 private:
  beast::tcp_stream& lowest() {
    if (auto* tls = std::get_if<TlsStream>(&stream_)) return beast::get_lowest_layer(*tls);
    return std::get<PlainStream>(stream_);
  }

  template <typename F>
  void with_stream(F&& f) {
    if (auto* tls = std::get_if<TlsStream>(&stream_)) {
      f(*tls);
    } else {
      f(std::get<PlainStream>(stream_));
    }
  }

  void fail(const std::string& what) {
    if (done_) return;
    done_ = true;
    beast::error_code ignored;
    lowest().socket().close(ignored);
    if (cb_.failure) cb_.failure("connection error: " + what);
  }

  void finish() {
    if (done_) return;
    done_ = true;
    beast::error_code ignored;
    lowest().socket().close(ignored);
    if (cb_.end) cb_.end();
  }

  std::string describe(const beast::error_code& ec) {
    if (ec == asio::error::connection_refused) return "connection refused";
    if (ec == asio::error::connection_reset) return "connection reset by peer";
    if (ec == asio::error::host_not_found || ec == asio::error::host_not_found_try_again) {
      return "cannot resolve " + url_.host;
    }
    return ascii_lower(ec.message());
  }

  void on_resolve(beast::error_code ec, tcp::resolver::results_type results) {
    resolved_ = true;
    resolve_deadline_.cancel();
    if (done_) return;
    if (ec) return fail(ec == beast::error::timeout ? timeout_connect() : describe(ec));
    endpoints_ = std::move(results);
    connect_to(endpoints_.begin(), {});
  }

  // Tries the resolved addresses in turn. Each socket is made close-on-exec from the start
  // (Asio's own open does not set it), so no child process (a bash command, a tool, an MCP
  // server) inherits the connection that carries the API key.
  void connect_to(tcp::resolver::results_type::const_iterator it, beast::error_code last) {
    if (done_) return;
    if (it == endpoints_.end()) return on_connect(last ? last : asio::error::host_not_found);
    auto& socket = lowest().socket();
    beast::error_code ignored;
    socket.close(ignored);
    const tcp protocol = it->endpoint().protocol();
    const int fd = ::socket(protocol.family(), SOCK_STREAM | SOCK_CLOEXEC, IPPROTO_TCP);
    if (fd < 0)
      return connect_to(std::next(it), beast::error_code(errno, beast::system_category()));
    beast::error_code assigned;
    socket.assign(protocol, fd, assigned);
    if (assigned) {
      ::close(fd);
      return connect_to(std::next(it), assigned);
    }
    lowest().async_connect(it->endpoint(), [self = shared_from_this(), it](beast::error_code e) {
      if (e && e != beast::error::timeout && !self->done_ &&
          std::next(it) != self->endpoints_.end()) {
        return self->connect_to(std::next(it), e);
      }
      self->on_connect(e);
    });
  }

  std::string timeout_connect() {
    return "connect timed out after " + std::to_string(request_.timeouts.connect_ms) + " ms";
  }
  std::string timeout_response() {
    return "no response within " + std::to_string(request_.timeouts.response_ms) + " ms";
  }
  std::string timeout_idle() {
    return "no data for " + std::to_string(request_.timeouts.idle_ms) + " ms";
  }

  void on_connect(beast::error_code ec) {
    if (done_) return;
    if (ec) {
      if (ec == beast::error::timeout) return fail(timeout_connect());
      return fail(tunnel_ ? "proxy " + tunnel_->host + ":" + tunnel_->port + ": " + describe(ec)
                          : describe(ec));
    }
    if (tunnel_) return open_tunnel();
    start_tls_or_send();
  }

  // HTTPS through a proxy: CONNECT host:port, a 2xx answer, then TLS inside the tunnel.
  void open_tunnel() {
    connect_request_ = "CONNECT " + url_.host + ":" + url_.port +
                       " HTTP/1.1\r\nHost: " + url_.host + ":" + url_.port + "\r\n\r\n";
    asio::async_write(lowest(), asio::buffer(connect_request_),
                      [self = shared_from_this()](beast::error_code e, std::size_t) {
                        if (self->done_) return;
                        if (e) return self->fail("proxy: " + self->describe(e));
                        self->connect_parser_.skip(true);  // a CONNECT answer has no body
                        http::async_read_header(
                            self->lowest(), self->buffer_, self->connect_parser_,
                            [self](beast::error_code e2, std::size_t) { self->on_tunnel(e2); });
                      });
  }

  void on_tunnel(beast::error_code ec) {
    if (done_) return;
    if (ec) return fail(ec == beast::error::timeout ? timeout_connect() : "proxy: " + describe(ec));
    const unsigned status = connect_parser_.get().result_int();
    if (status < 200 || status > 299) {
      return fail("proxy refused the tunnel to " + url_.host + ":" + url_.port + " (status " +
                  std::to_string(status) + ")");
    }
    start_tls_or_send();
  }

  void start_tls_or_send() {
    if (auto* tls = std::get_if<TlsStream>(&stream_)) {
      if (!SSL_set_tlsext_host_name(tls->native_handle(), url_.host.c_str())) {
        return fail("cannot set the TLS server name");
      }
      tls->set_verify_mode(ssl::verify_peer);
      tls->set_verify_callback(ssl::host_name_verification(url_.host));
      tls->async_handshake(
          ssl::stream_base::client,
          [self = shared_from_this()](beast::error_code e) { self->on_handshake(e); });
      return;
    }
    send();
  }

  void on_handshake(beast::error_code ec) {
    if (done_) return;
    if (ec) {
      if (ec == beast::error::timeout) return fail(timeout_connect());
      std::string reason = ascii_lower(ec.message());
      if (const long v = SSL_get_verify_result(std::get<TlsStream>(stream_).native_handle());
          v != X509_V_OK) {
        reason = std::string("certificate verify failed: ") + X509_verify_cert_error_string(v);
      }
      return fail("TLS handshake with " + url_.host + " failed: " + reason);
    }
    send();
  }

  void send() {
    req_.method(http::verb::post);
    req_.target(url_.target);
    req_.version(11);
    const bool default_port = url_.port == (url_.tls ? "443" : "80");
    req_.set(http::field::host, default_port ? url_.host : url_.host + ":" + url_.port);
    req_.set(http::field::user_agent, "rebound");
    req_.set(http::field::accept, "text/event-stream");
    for (const auto& [k, v] : request_.headers)
      req_.set(k, v);
    req_.body() = request_.body;
    req_.prepare_payload();
    lowest().expires_after(session::saturated_delay(request_.timeouts.response_ms));
    with_stream([&](auto& s) {
      http::async_write(s, req_, [self = shared_from_this()](beast::error_code e, std::size_t) {
        self->on_write(e);
      });
    });
  }

  void on_write(beast::error_code ec) {
    if (done_) return;
    if (ec) return fail(ec == beast::error::timeout ? timeout_response() : describe(ec));
    read_header();
  }

  // A fresh parser per response head: interim 1xx answers (100 Continue, 103 Early Hints) are
  // skipped until the final one, all within the response deadline.
  void read_header() {
    parser_.emplace();
    parser_->body_limit(boost::none);
    with_stream([&](auto& s) {
      http::async_read_header(
          s, buffer_, *parser_,
          [self = shared_from_this()](beast::error_code e, std::size_t) { self->on_header(e); });
    });
  }

  void on_header(beast::error_code ec) {
    if (done_) return;
    if (ec) {
      if (ec == beast::error::timeout) return fail(timeout_response());
      if (ec == http::error::end_of_stream || ec == asio::error::eof) {
        return fail("the server closed the connection before responding");
      }
      return fail(describe(ec));
    }
    const unsigned status = parser_->get().result_int();
    if (status >= 100 && status <= 199) return read_header();
    HttpHeaders headers;
    for (const auto& f : parser_->get()) {
      headers[ascii_lower(std::string(f.name_string()))] = std::string(f.value());
    }
    if (cb_.head) cb_.head(static_cast<int>(status), headers);
    if (done_) return;
    // Eager: one put() parses every chunk in the buffer (a network read of a token stream
    // carries many small SSE chunks), not one chunk per trip through the event loop.
    parser_->eager(true);
    read_body();
  }

  // Hands on the body bytes already buffered, a piece of at most 4 KiB at a time with the gate
  // asked before each, then reads more from the socket. (Beast's http::async_read_some with an
  // eager parser goes on reading until its parse needs no more input, so a chunk waited for the
  // next one to arrive: a stream that paused between tokens showed nothing until it went on.
  // Hence the loop here.)
  void read_body() {
    while (!parser_->is_done()) {
      if (gate_ && !gate_([weak = weak_from_this()] {
            if (auto self = weak.lock()) self->resume_body();
          })) {
        paused_ = true;
        return;
      }
      if (buffer_.size() == 0 || !parse_piece()) break;
      if (done_) return;
    }
    if (done_) return;
    if (parser_->is_done()) return finish();
    lowest().expires_after(session::saturated_delay(request_.timeouts.idle_ms));
    with_stream([&](auto& s) {
      s.async_read_some(
          buffer_.prepare(kReadSize),
          [self = shared_from_this()](beast::error_code e, std::size_t n) { self->on_read(e, n); });
    });
  }

  // A streaming body is one-way: nothing we send carries the ACKs, so the kernel delays them,
  // and a server with Nagle's algorithm on holds its next small chunk until the ACK comes (40
  // ms stalls in the middle of a token stream). Quick-ACK mode is not sticky in Linux: it is
  // asked for again after every read.
  void quick_ack() {
#ifdef TCP_QUICKACK
    const int one = 1;
    (void)::setsockopt(lowest().socket().native_handle(), IPPROTO_TCP, TCP_QUICKACK, &one,
                       sizeof one);
#endif
  }

  // Parses buffered bytes into at most one body piece and hands it on. False when the parser
  // needs more input (or the call ended: a callback cancelled it, or the body is malformed).
  bool parse_piece() {
    parser_->get().body().data = chunk_;
    parser_->get().body().size = sizeof chunk_;
    beast::error_code ec;
    const std::size_t used = parser_->put(buffer_.data(), ec);
    buffer_.consume(used);
    const std::size_t got = sizeof chunk_ - parser_->get().body().size;
    if (got > 0 && cb_.data) {
      cb_.data(std::string_view(chunk_, got));
      if (done_) return false;
    }
    if (ec == http::error::need_more) return false;
    if (ec && ec != http::error::need_buffer) {
      fail(describe(ec));
      return false;
    }
    return used > 0 || got > 0;
  }

  void resume_body() {
    if (done_ || !paused_) return;
    paused_ = false;
    read_body();
  }

  void on_read(beast::error_code ec, std::size_t n) {
    if (done_) return;
    buffer_.commit(n);
    if (!ec) {
      quick_ack();
      return read_body();
    }
    if (ec == beast::error::timeout) return fail(timeout_idle());
    // The server went away inside the body: what arrived is handed on, and the provider's
    // decoder decides whether it was complete.
    if (ec == asio::error::eof || ec == ssl::error::stream_truncated ||
        ec == asio::error::connection_reset) {
      while (!done_ && buffer_.size() > 0 && !parser_->is_done() && parse_piece()) {
      }
      return finish();
    }
    fail(describe(ec));
  }

  asio::any_io_executor executor_;
  tcp::resolver resolver_;
  asio::steady_timer resolve_deadline_;
  bool resolved_ = false;
  tcp::resolver::results_type endpoints_;
  HttpRequest request_;
  HttpCallbacks cb_;
  Url url_;
  std::optional<Url> tunnel_;  // the proxy, for https through HTTPS_PROXY
  std::string connect_request_;
  http::response_parser<http::empty_body> connect_parser_;
  std::variant<std::monostate, PlainStream, TlsStream> stream_;
  http::request<http::string_body> req_;
  beast::flat_buffer buffer_;
  std::optional<http::response_parser<http::buffer_body>> parser_;
  static constexpr std::size_t kReadSize = 65536;
  char chunk_[4096];
  BodyGate gate_;
  bool paused_ = false;  // the gate said wait; resume_body() goes on
  bool done_ = false;
};

class CallHandle : public HttpCall {
 public:
  explicit CallHandle(std::shared_ptr<Call> call) : call_(std::move(call)) {}
  ~CallHandle() override { call_->cancel(); }
  void cancel() override { call_->cancel(); }

 private:
  std::shared_ptr<Call> call_;
};

}  // namespace

struct HttpClient::Impl {
  Impl(asio::any_io_executor ex, ProxyConfig p) : executor(std::move(ex)), proxy(std::move(p)) {}
  // Made on the first request: loading the system's CA certificates costs ~50 ms of CPU, which
  // start-up must not pay (an offline or plain-HTTP session never needs them).
  ssl::context& tls() {
    if (!tls_context) {
      tls_context.emplace(ssl::context::tls_client);
      tls_context->set_default_verify_paths();  // honours SSL_CERT_FILE / SSL_CERT_DIR
      tls_context->set_verify_mode(ssl::verify_peer);
    }
    return *tls_context;
  }
  asio::any_io_executor executor;
  std::optional<ssl::context> tls_context;
  ProxyConfig proxy;
  BodyGate gate;
};

HttpClient::HttpClient(asio::any_io_executor executor, ProxyConfig proxy)
    : impl_(std::make_unique<Impl>(std::move(executor), std::move(proxy))) {}

HttpClient::~HttpClient() = default;

bool HttpClient::tls_context_loaded() const {
  return impl_->tls_context.has_value();
}

void HttpClient::set_body_gate(BodyGate gate) {
  impl_->gate = std::move(gate);
}

std::unique_ptr<HttpCall> HttpClient::fail_soon(HttpCallbacks callbacks, std::string message) {
  auto fail = std::move(callbacks.failure);
  auto alive = std::make_shared<bool>(true);
  asio::post(impl_->executor,
             [fail, message = std::move(message), weak = std::weak_ptr<bool>(alive)] {
               if (!weak.expired() && fail) fail(message);
             });
  struct Dead : HttpCall {
    explicit Dead(std::shared_ptr<bool> k) : keep(std::move(k)) {}
    void cancel() override { keep.reset(); }
    std::shared_ptr<bool> keep;
  };
  return std::make_unique<Dead>(std::move(alive));
}

std::unique_ptr<HttpCall> HttpClient::post(HttpRequest request, HttpCallbacks callbacks) {
  const auto url = parse_url(request.url);
  if (!url)
    return fail_soon(std::move(callbacks), "connection error: unsupported URL " + request.url);
  // The TLS context (and the system's certificates) only for an https request.
  ssl::context* tls = url->tls ? &impl_->tls() : nullptr;
  auto call = std::make_shared<Call>(impl_->executor, tls, impl_->proxy, *url, std::move(request),
                                     std::move(callbacks), impl_->gate);
  call->start();
  return std::make_unique<CallHandle>(std::move(call));
}

}  // namespace rebound::net
