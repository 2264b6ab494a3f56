#pragma once
// An HTTP provider's wire API (runtime.md section 2): its name as models.json writes it, the
// path it posts to under the base URL, the headers that carry the key and the version, its
// request codec and its stream decoder. A provider's API is looked up once, by name, when the
// provider is set up; the HTTP provider then only follows what it was given. Adding a wire API
// (providers.md) is one entry in wire_api.cpp with its codec and decoder. Pure.

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "protocol/json.h"
#include "protocol/wire_types.h"
#include "session/llm/provider.h"
#include "session/llm/stream_decoder.h"

namespace rebound::session::llm {

using Headers = std::vector<std::pair<std::string, std::string>>;

struct WireApi {
  std::string_view name;  // "openai-completions", "anthropic-messages"
  std::string_view path;  // appended to the base URL without its trailing slashes
  /// The request's headers besides content-type: the key (when there is one) and any version.
  Headers (*headers)(const std::optional<std::string>& key);
  protocol::Json (*request_body)(const LlmRequest& request);
  std::unique_ptr<StreamDecoder> (*decoder)(const protocol::Model& model);
};

/// The wire API of that name, or null.
const WireApi* find_wire_api(std::string_view name);
/// OpenAI Chat Completions: what a models.json provider without `api` speaks.
const WireApi& default_wire_api();

/// The request URL: `base_url` without its trailing slashes, then the API's path.
std::string endpoint(const WireApi& api, std::string base_url);

}  // namespace rebound::session::llm
