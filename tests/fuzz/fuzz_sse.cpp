// SSE parser + both stream decoders: no crash, at most one terminal event, nothing after it,
// and the parser gives the same events however the bytes are split. The OpenAI decoder's fast
// path (protocol/json_scan.h) must emit exactly what the general JSON parser's path emits.

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "session/llm/sse_parser.h"
#include "session/llm/stream_decoder.h"

using namespace rebound::session::llm;

namespace {

std::vector<std::string> events_of(std::string_view input, std::size_t cut) {
  SseParser p;
  std::vector<std::string> out;
  auto sink = [&](SseEvent e) { out.push_back(e.event + '\0' + e.data); };
  p.feed(input.substr(0, cut), sink);
  p.feed(input.substr(cut), sink);
  p.finish(sink);
  return out;
}

template <typename Decoder>
void decode(std::string_view input) {
  rebound::protocol::Model model;
  model.cost.input = 3;
  Decoder decoder(model);
  SseParser p;
  int terminal = 0;
  bool after_terminal = false;
  auto emit = [&](StreamEvent e) {
    if (terminal > 0) after_terminal = true;
    if (e.kind == StreamEvent::Kind::done || e.kind == StreamEvent::Kind::error) ++terminal;
  };
  auto sink = [&](SseEvent e) { decoder.on_event(e, emit); };
  p.feed(input, sink);
  p.finish(sink);
  decoder.on_end(emit);
  if (terminal != 1 || after_terminal) std::abort();
}

// Every event of the OpenAI decoder as text, with the fast path on or off.
std::vector<std::string> openai_events(std::string_view input, bool fast) {
  rebound::protocol::Model model;
  model.cost.input = 3;
  OpenAiStreamDecoder decoder(model);
  decoder.set_fast_path(fast);
  std::vector<std::string> out;
  auto emit = [&](StreamEvent e) {
    out.push_back(std::to_string(static_cast<int>(e.kind)) + '\0' + e.text + '\0' + e.tool_id +
                  '\0' + e.tool_name + '\0' + e.arguments.dump() + '\0' +
                  std::to_string(e.usage.input) + '/' + std::to_string(e.usage.output) + '/' +
                  std::to_string(e.usage.cache_read) + '\0' +
                  std::to_string(static_cast<int>(e.stop_reason)));
  };
  SseParser p;
  auto sink = [&](SseEvent e) { decoder.on_event(e, emit); };
  p.feed(input, sink);
  p.finish(sink);
  decoder.on_end(emit);
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const auto whole = events_of(input, input.size());
  if (size > 0 && events_of(input, data[0] % (size + 1)) != whole) std::abort();
  decode<OpenAiStreamDecoder>(input);
  if (openai_events(input, true) != openai_events(input, false)) std::abort();
  decode<AnthropicStreamDecoder>(input);
  return 0;
}
