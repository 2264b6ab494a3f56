// The Anthropic decoder (runtime.md section 2, amendments A21) behind the SSE parser: no crash,
// one terminal event and nothing after it, blocks opened and ended in turn, tool calls with
// object arguments; a redacted block's end carries a signature (its data, possibly empty) and
// only after the placeholder text; no signature on a text block.

#include <cstdint>
#include <cstdlib>
#include <string>

#include "session/llm/sse_parser.h"
#include "session/llm/stream_decoder.h"
#include "tests/fuzz/decoder_checks.h"

using namespace rebound::session::llm;
using Kind = StreamEvent::Kind;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  rebound::protocol::Model model;
  model.cost.input = 3;
  AnthropicStreamDecoder decoder(model);
  rebound::fuzz::BlockOrder order;
  std::string thinking;  // the open thinking block's text
  auto emit = [&](StreamEvent e) {
    order(e);
    if (e.kind == Kind::thinking_start) thinking.clear();
    if (e.kind == Kind::thinking_delta) thinking += e.text;
    if (e.kind == Kind::thinking_end && e.redacted && thinking != "[Reasoning redacted]")
      std::abort();
    if (e.kind == Kind::text_end && !e.signature.empty()) std::abort();
  };
  SseParser parser;
  auto sink = [&](const SseEvent& e) { decoder.on_event(e, emit); };
  parser.feed(input, sink);
  parser.finish(sink);
  decoder.on_end(emit);
  if (order.terminal != 1) std::abort();
  return 0;
}
