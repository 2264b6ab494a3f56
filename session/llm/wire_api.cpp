#include "session/llm/wire_api.h"

#include <algorithm>
#include <cctype>

#include "session/llm/request_codec.h"

namespace rebound::session::llm {

namespace {

Headers openai_headers(const std::optional<std::string>& key) {
  if (!key) return {};
  return {{"authorization", "Bearer " + *key}};
}

Headers anthropic_headers(const std::optional<std::string>& key) {
  Headers h{{"anthropic-version", "2023-06-01"}};
  if (key) h.emplace_back("x-api-key", *key);
  return h;
}

// providers.md section 2.5: the key in `api-key`, no Authorization.
Headers azure_headers(const std::optional<std::string>& key) {
  if (!key) return {};
  return {{"api-key", *key}};
}

// providers.md section 3.1: the key in `x-goog-api-key`, no Authorization.
Headers gemini_headers(const std::optional<std::string>& key) {
  if (!key) return {};
  return {{"x-goog-api-key", *key}};
}

// A URL path segment or query value: unreserved characters as they are, the rest %XX.
std::string percent_encoded(std::string_view text) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    const bool unreserved = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                            (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' || c == '~';
    if (unreserved) {
      out += c;
    } else {
      out += '%';
      out += kHex[u >> 4];
      out += kHex[u & 15];
    }
  }
  return out;
}

template <const char* Path>
std::string fixed_path(const protocol::Model&, const WireOptions&) {
  return Path;
}

std::string azure_path(const protocol::Model&, const WireOptions& options) {
  return "/responses?api-version=" + percent_encoded(options.azure_api_version);
}

std::string gemini_path(const protocol::Model& model, const WireOptions&) {
  return "/models/" + percent_encoded(model.id) + ":streamGenerateContent?alt=sse";
}

template <protocol::Json (*Body)(const LlmRequest&)>
protocol::Json plain_body(const LlmRequest& request, const WireOptions&) {
  return Body(request);
}

// Azure's `model` is the deployment: the model id unless the map names another.
protocol::Json azure_body(const LlmRequest& request, const WireOptions& options) {
  protocol::Json body = openai_responses_request_body(request);
  const auto it = options.azure_deployments.find(request.model.id);
  if (it != options.azure_deployments.end()) body["model"] = it->second;
  return body;
}

protocol::Json anthropic_body(const LlmRequest& request, const WireOptions& options) {
  return anthropic_request_body(request, cache_retention(request, options));
}

template <typename Decoder>
std::unique_ptr<StreamDecoder> make_decoder(const LlmRequest& request) {
  return std::make_unique<Decoder>(request.model);
}

std::unique_ptr<StreamDecoder> make_gemini_decoder(const LlmRequest& request) {
  return std::make_unique<GeminiStreamDecoder>(request.model, request.tool_calls_before);
}

constexpr char kChatPath[] = "/chat/completions";
constexpr char kMessagesPath[] = "/v1/messages";
constexpr char kResponsesPath[] = "/responses";

const WireApi kWireApis[] = {
    {"openai-completions", fixed_path<kChatPath>, openai_headers, plain_body<openai_request_body>,
     make_decoder<OpenAiStreamDecoder>},
    {"anthropic-messages", fixed_path<kMessagesPath>, anthropic_headers, anthropic_body,
     make_decoder<AnthropicStreamDecoder>},
    {"openai-responses", fixed_path<kResponsesPath>, openai_headers,
     plain_body<openai_responses_request_body>, make_decoder<ResponsesStreamDecoder>},
    {"azure-openai-responses", azure_path, azure_headers, azure_body,
     make_decoder<ResponsesStreamDecoder>},
    {"google-generative-ai", gemini_path, gemini_headers, plain_body<gemini_request_body>,
     make_gemini_decoder},
};

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
    s.remove_suffix(1);
  return s;
}

}  // namespace

std::map<std::string, std::string> parse_deployment_map(std::string_view text) {
  std::map<std::string, std::string> out;
  while (!text.empty()) {
    const std::size_t comma = text.find(',');
    const std::string_view pair = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    const std::size_t eq = pair.find('=');
    if (eq == std::string_view::npos) continue;
    const std::string_view id = trimmed(pair.substr(0, eq));
    const std::string_view deployment = trimmed(pair.substr(eq + 1));
    if (!id.empty() && !deployment.empty()) out[std::string(id)] = std::string(deployment);
  }
  return out;
}

namespace {

bool variable_name(std::string_view s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
  for (const char c : s) {
    const bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    if (!ok) return false;
  }
  return true;
}

}  // namespace

Result<std::string> header_value(const std::string& value, const Getenv& getenv) {
  if (value.starts_with("!")) return failure("a command ('!…') as a header value is not run");
  std::string out;
  if (variable_name(value)) {
    if (auto v = getenv(value))
      out = *v;
    else
      out = value;  // no such variable: the text itself
  } else {
    for (std::size_t i = 0; i < value.size();) {
      const std::size_t close = value.find('}', i);
      if (value.compare(i, 2, "${") == 0 && close != std::string::npos &&
          variable_name(std::string_view(value).substr(i + 2, close - i - 2))) {
        if (auto v = getenv(value.substr(i + 2, close - i - 2))) out += *v;
        i = close + 1;
      } else {
        out += value[i++];
      }
    }
  }
  for (const char c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
      return failure("the value holds a control character once expanded");
  }
  return Result<std::string>(std::move(out));
}

bool same_header_name(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

bool auth_header(std::string_view name) {
  for (const char* key : {"authorization", "x-api-key", "api-key", "x-goog-api-key"})
    if (same_header_name(name, key)) return true;
  return false;
}

protocol::CacheRetention cache_retention(const LlmRequest& request, const WireOptions& options) {
  return options.cache_retention.value_or(request.cache_retention);
}

const WireApi* find_wire_api(std::string_view name) {
  for (const auto& api : kWireApis) {
    if (api.name == name) return &api;
  }
  return nullptr;
}

const WireApi& default_wire_api() {
  return kWireApis[0];
}

std::string endpoint(const WireApi& api, std::string base_url, const protocol::Model& model,
                     const WireOptions& options) {
  while (!base_url.empty() && base_url.back() == '/')
    base_url.pop_back();
  return base_url + api.path(model, options);
}

}  // namespace rebound::session::llm
