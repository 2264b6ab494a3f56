#pragma once
// An HTTP provider's wire API (runtime.md section 2): its name as models.json writes it, the
// path it posts to under the base URL, the headers that carry the key and the version, its
// request codec and its stream decoder. A provider's API is looked up once, by name, when the
// provider is set up; the HTTP provider then only follows what it was given. Adding a wire API
// (providers.md) is one entry in wire_api.cpp with its codec and decoder. Pure.

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "protocol/json.h"
#include "protocol/wire_types.h"
#include "session/error.h"
#include "session/llm/provider.h"
#include "session/llm/stream_decoder.h"

namespace rebound::session::llm {

using Headers = std::vector<std::pair<std::string, std::string>>;

/// What the environment says about a wire API, read once at start-up: Azure OpenAI's
/// `AZURE_OPENAI_API_VERSION` and `AZURE_OPENAI_DEPLOYMENT_NAME_MAP` (providers.md section 2.5).
struct WireOptions {
  std::string azure_api_version = "v1";
  std::map<std::string, std::string> azure_deployments;  // model id → deployment name
  /// REBOUND_CACHE_RETENTION, over settings `cacheRetention` (providers.md section 7.3).
  std::optional<protocol::CacheRetention> cache_retention;
};

/// The cache retention a request goes with: the environment's over the request's.
protocol::CacheRetention cache_retention(const LlmRequest& request, const WireOptions& options);

/// `id=deployment,id2=deployment2` as a map; pairs without `=` or with an empty side are left
/// out, spaces around names trimmed.
std::map<std::string, std::string> parse_deployment_map(std::string_view text);

struct WireApi {
  std::string_view name;  // "openai-completions", "anthropic-messages", …
  /// What follows the base URL (without its trailing slashes): a path, and any query.
  std::string (*path)(const protocol::Model& model, const WireOptions& options);
  /// The request's headers besides content-type: the key (when there is one) and any version.
  Headers (*headers)(const std::optional<std::string>& key);
  protocol::Json (*request_body)(const LlmRequest& request, const WireOptions& options);
  std::unique_ptr<StreamDecoder> (*decoder)(const LlmRequest& request);
};

using Getenv = std::function<std::optional<std::string>(const std::string& name)>;

/// A models.json header value as it is sent (providers.md section 7.4, amendments A30): a value
/// that names a set environment variable is that variable's value, `${VAR}` expands (an unset
/// one to nothing). The failed error says why (never quoting the value) for a value that is
/// refused: `!command`, or one that holds a control character once expanded.
Result<std::string> header_value(const std::string& value, const Getenv& getenv);

/// Whether two header names are the same (HTTP names ignore case).
bool same_header_name(std::string_view a, std::string_view b);

/// Whether a header name is one that carries a key (authorization, x-api-key, api-key,
/// x-goog-api-key), which models.json headers never override.
bool auth_header(std::string_view name);

/// The wire API of that name, or null.
const WireApi* find_wire_api(std::string_view name);
/// OpenAI Chat Completions: what a models.json provider without `api` speaks.
const WireApi& default_wire_api();

/// The request URL: `base_url` without its trailing slashes, then the API's path for `model`.
std::string endpoint(const WireApi& api, std::string base_url, const protocol::Model& model,
                     const WireOptions& options = {});

}  // namespace rebound::session::llm
