#include "session/llm/wire_api.h"

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

template <typename Decoder>
std::unique_ptr<StreamDecoder> make_decoder(const protocol::Model& model) {
  return std::make_unique<Decoder>(model);
}

const WireApi kWireApis[] = {
    {"openai-completions", "/chat/completions", openai_headers, openai_request_body,
     make_decoder<OpenAiStreamDecoder>},
    {"anthropic-messages", "/v1/messages", anthropic_headers, anthropic_request_body,
     make_decoder<AnthropicStreamDecoder>},
    {"openai-responses", "/responses", openai_headers, openai_responses_request_body,
     make_decoder<ResponsesStreamDecoder>},
};

}  // namespace

const WireApi* find_wire_api(std::string_view name) {
  for (const auto& api : kWireApis) {
    if (api.name == name) return &api;
  }
  return nullptr;
}

const WireApi& default_wire_api() {
  return kWireApis[0];
}

std::string endpoint(const WireApi& api, std::string base_url) {
  while (!base_url.empty() && base_url.back() == '/')
    base_url.pop_back();
  return base_url + std::string(api.path);
}

}  // namespace rebound::session::llm
