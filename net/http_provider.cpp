#include "net/http_provider.h"

#include <spdlog/spdlog.h>

#include "protocol/json_line.h"
#include "session/credential_store.h"
#include "session/llm/request_codec.h"
#include "session/llm/secret_text.h"
#include "session/llm/sse_parser.h"
#include "session/llm/stream_decoder.h"

namespace rebound::net {

using session::llm::StreamEvent;

namespace {

// Any 2xx carries the stream (a proxy may answer 201 or 203); everything else is a failure.
bool success_status(int status) {
  return status >= 200 && status <= 299;
}

constexpr std::size_t kMaxErrorBody = 64 * 1024;

std::string missing_base_url(const session::llm::WireApi& api) {
  if (api.name == "azure-openai-responses")
    return "Azure OpenAI base URL is required: set the provider's baseUrl in models.json, "
           "AZURE_OPENAI_BASE_URL or AZURE_OPENAI_RESOURCE_NAME";
  return "The provider's base URL is required: set baseUrl in models.json";
}

// One request: owns the decoder state; the handle owns the HTTP call.
struct Exchange {
  session::llm::StreamHandler handler;
  std::unique_ptr<session::llm::StreamDecoder> decoder;
  session::llm::SseParser parser;
  std::optional<std::string> key;
  std::function<std::int64_t()> now;
  int status = 0;
  HttpHeaders headers;
  std::string error_body;
  bool ended = false;

  void emit(StreamEvent&& e) {
    if (ended) return;
    const bool terminal = e.kind == StreamEvent::Kind::done || e.kind == StreamEvent::Kind::error;
    if (e.kind == StreamEvent::Kind::error)
      e.text = session::llm::scrub_secret(std::move(e.text), key);
    if (terminal) ended = true;
    handler(std::move(e));
  }
  void error(const std::string& message) {
    StreamEvent e;
    e.kind = StreamEvent::Kind::error;
    e.text = message;
    emit(std::move(e));
  }
};

class Handle : public session::llm::StreamHandle {
 public:
  Handle(std::shared_ptr<Exchange> x, std::unique_ptr<HttpCall> call)
      : exchange_(std::move(x)), call_(std::move(call)) {}
  ~Handle() override { cancel(); }
  void cancel() override {
    exchange_->ended = true;
    if (call_) call_->cancel();
  }

 private:
  std::shared_ptr<Exchange> exchange_;
  std::unique_ptr<HttpCall> call_;
};

}  // namespace

HttpProvider::HttpProvider(HttpClient& client, HttpProviderConfig config)
    : client_(client), config_(std::move(config)) {}

void HttpProvider::add_model_headers(const protocol::Model& model, HttpRequest& http) {
  const session::llm::Getenv none = [](const std::string&) { return std::nullopt; };
  for (const auto& [name, raw] : model.headers) {
    std::string problem;
    std::optional<std::string> value;
    if (session::llm::auth_header(name) || session::llm::same_header_name(name, "content-type")) {
      problem = "it would replace the request's own " + name + " header";
    } else {
      auto expanded = session::llm::header_value(raw, config_.getenv ? config_.getenv : none);
      if (expanded)
        value = std::move(*expanded);
      else
        problem = expanded.error().message;
    }
    if (!value) {
      // Named, never quoted: a header value may be a secret.
      if (warned_.insert(model.provider + "/" + model.id + "\n" + name).second)
        spdlog::warn("models.json: header '{}' of {}/{} is not sent: {}", name, model.provider,
                     model.id, problem);
      continue;
    }
    std::erase_if(http.headers,
                  [&](const auto& h) { return session::llm::same_header_name(h.first, name); });
    http.headers.emplace_back(name, std::move(*value));
  }
}

std::unique_ptr<session::llm::StreamHandle> HttpProvider::stream(
    const session::llm::LlmRequest& request, session::llm::StreamHandler handler) {
  // A model's own `api` wins over its provider's (providers.md section 1).
  const session::llm::WireApi* own = session::llm::find_wire_api(request.model.api);
  const session::llm::WireApi& api = own ? *own : *config_.api;
  auto x = std::make_shared<Exchange>();
  x->handler = std::move(handler);
  const std::optional<ApiKey> key =
      config_.api_key ? config_.api_key(request.session_id) : std::nullopt;
  if (key) x->key = key->value;
  x->now = config_.now_epoch_ms;
  x->decoder = api.decoder(request);
  x->decoder->set_secret(x->key);
  if (api.name == "anthropic-messages" &&
      session::llm::cache_retention(request, config_.wire_options) ==
          protocol::CacheRetention::long_term)
    x->decoder->price_long_cache_writes();
  x->parser.keep_stray_lines(x->decoder->wants_stray_lines());

  const std::string& base =
      request.model.base_url.empty() ? config_.base_url : request.model.base_url;
  HttpRequest http;
  http.url = session::llm::endpoint(api, base, request.model, config_.wire_options);
  http.timeouts = config_.timeouts;
  http.headers.emplace_back("content-type", "application/json");
  for (auto& header : api.headers(x->key))
    http.headers.push_back(std::move(header));
  add_model_headers(request.model, http);
  http.body = api.request_body(request, config_.wire_options)
                  .dump(-1, ' ', false, nlohmann::detail::error_handler_t::replace);
  protocol::replace_surrogate_markers(http.body);  // a client's lone surrogate goes as U+FFFD

  std::weak_ptr<Exchange> weak = x;
  HttpCallbacks cb;
  cb.head = [weak](int status, const HttpHeaders& headers) {
    if (auto x = weak.lock()) {
      x->status = status;
      x->headers = headers;
    }
  };
  cb.data = [weak](std::string_view bytes) {
    auto x = weak.lock();
    if (!x || x->ended) return;
    if (!success_status(x->status)) {
      if (x->error_body.size() < kMaxErrorBody) x->error_body.append(bytes);
      return;
    }
    x->parser.feed(bytes, [&](const session::llm::SseEvent& e) {
      x->decoder->on_event(e, [&](StreamEvent&& ev) { x->emit(std::move(ev)); });
    });
    if (!x->parser.error().empty()) x->error("connection error: " + x->parser.error());
  };
  cb.end = [weak] {
    auto x = weak.lock();
    if (!x || x->ended) return;
    if (!success_status(x->status)) {
      x->error(session::llm::http_error_message(x->status, x->error_body, x->headers,
                                                x->now ? x->now() : 0, x->key));
      return;
    }
    auto emit = [&](StreamEvent&& ev) { x->emit(std::move(ev)); };
    x->parser.finish([&](const session::llm::SseEvent& e) { x->decoder->on_event(e, emit); });
    x->decoder->on_end(emit);
  };
  cb.failure = [weak](std::string message) {
    if (auto x = weak.lock()) x->error(message);
  };
  std::unique_ptr<HttpCall> call;
  if (base.empty()) {
    // Nothing to post to (providers.md section 2.5): a configuration error, not retried.
    call = client_.fail_soon(std::move(cb), missing_base_url(api));
  } else if (key && session::has_control_characters(key->value)) {
    // Sent as is, a CR or LF would end the header and start one of the key's choosing.
    call = client_.fail_soon(std::move(cb), "Invalid API key from " + key->source +
                                                ": it contains control characters (not sent)");
  } else {
    call = client_.post(std::move(http), std::move(cb));
  }
  return std::make_unique<Handle>(std::move(x), std::move(call));
}

}  // namespace rebound::net
