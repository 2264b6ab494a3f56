#pragma once
// The HTTP providers over HttpClient (runtime.md section 2, providers.md): with the wire API of
// the request's model (else the provider's), builds the request body, sends it with the key, turns
// an error status into
// "<status> <message>[ retry-after-ms=<n>]", and streams SSE through the API's decoder. Never
// retries. The key is resolved per request and scrubbed from every error text; a key with a
// control character fails the request instead of being sent. Event loop only.

#include <functional>
#include <optional>
#include <set>
#include <string>

#include "net/http_client.h"
#include "session/llm/provider.h"
#include "session/llm/wire_api.h"

namespace rebound::net {

/// A key and where it came from ("auth.json", "--api-key", …), for errors that must name the
/// key without showing it.
struct ApiKey {
  std::string value;
  std::string source;
};

struct HttpProviderConfig {
  const session::llm::WireApi* api = &session::llm::default_wire_api();  // chosen once
  std::string base_url;                    // e.g. https://api.openai.com/v1
  session::llm::WireOptions wire_options;  // from the environment, read once
  /// The key for a request of this session, or nullopt for none (local servers).
  std::function<std::optional<ApiKey>(const std::string& session_id)> api_key;
  HttpTimeouts timeouts;
  std::function<std::int64_t()> now_epoch_ms;
  /// The environment, for models.json header values (providers.md section 7.4).
  session::llm::Getenv getenv;
};

class HttpProvider : public session::llm::Provider {
 public:
  HttpProvider(HttpClient& client, HttpProviderConfig config);

  std::unique_ptr<session::llm::StreamHandle> stream(const session::llm::LlmRequest& request,
                                                     session::llm::StreamHandler handler) override;

 private:
  /// Rebound's headers, then the model's models.json headers (never one that carries a key).
  void add_model_headers(const protocol::Model& model, HttpRequest& http);

  HttpClient& client_;
  HttpProviderConfig config_;
  std::set<std::string> warned_;  // "<model>\n<header>" already reported as refused
};

}  // namespace rebound::net
