// The OpenAI Responses decoder (providers.md section 2.2) behind the SSE parser: no crash, one
// terminal event and nothing after it, blocks opened and ended in turn (a tool call left open
// only by an error), every block end's signature of a text or thinking block valid JSON; and the
// scanner's fast path emits exactly what the general parser does.

#include <cstdint>
#include <cstdlib>
#include <string>

#include "protocol/json_line.h"
#include "session/llm/sse_parser.h"
#include "session/llm/stream_decoder.h"
#include "tests/fuzz/decoder_checks.h"

using namespace rebound::session::llm;
using Kind = StreamEvent::Kind;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  rebound::protocol::Model model;
  model.cost.input = 3;
  ResponsesStreamDecoder decoder(model);
  rebound::fuzz::BlockOrder order;
  auto emit = [&](StreamEvent e) {
    order(e);
    if ((e.kind == Kind::text_end || e.kind == Kind::thinking_end) && !e.signature.empty() &&
        !rebound::protocol::parse_provider_json(e.signature).value)
      std::abort();
  };
  ResponsesStreamDecoder reference(model);
  rebound::fuzz::run_differential(input, decoder, reference, emit);
  if (order.terminal != 1) std::abort();
  return 0;
}
