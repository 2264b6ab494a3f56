// SSE parser + both stream decoders: no crash, at most one terminal event, nothing after it,
// and the parser gives the same events however the bytes are split.

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

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const auto whole = events_of(input, input.size());
  if (size > 0 && events_of(input, data[0] % (size + 1)) != whole) std::abort();
  decode<OpenAiStreamDecoder>(input);
  decode<AnthropicStreamDecoder>(input);
  return 0;
}
