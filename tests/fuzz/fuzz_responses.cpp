// The OpenAI Responses decoder (providers.md section 2.2) behind the SSE parser: no crash, one
// terminal event and nothing after it, blocks opened and ended in turn (a tool call left open
// only by an error), every block end's signature of a text or thinking block valid JSON; and the
// scanner's fast path emits exactly what the general parser does.

#include <cstdint>
#include <cstdlib>
#include <string>

#include "protocol/json_line.h"
#include "tests/fuzz/decoder_record.h"
#include "session/llm/sse_parser.h"
#include "session/llm/stream_decoder.h"

using namespace rebound::session::llm;
using Kind = StreamEvent::Kind;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  rebound::protocol::Model model;
  model.cost.input = 3;
  ResponsesStreamDecoder decoder(model);
  int terminal = 0;
  bool open = false;
  auto emit = [&](StreamEvent e) {
    if (terminal > 0) std::abort();  // nothing after the end
    switch (e.kind) {
      case Kind::text_start:
      case Kind::thinking_start:
      case Kind::toolcall_start:
        if (open) std::abort();  // the block before was ended first
        open = true;
        break;
      case Kind::text_end:
      case Kind::thinking_end:
        if (!open) std::abort();
        open = false;
        if (!e.signature.empty() && !rebound::protocol::parse_provider_json(e.signature).value)
          std::abort();
        break;
      case Kind::toolcall_end:
        if (!open || !e.arguments.is_object()) std::abort();
        open = false;
        break;
      case Kind::done:
        if (open) std::abort();
        ++terminal;
        break;
      case Kind::error:
        ++terminal;
        break;
      default:
        break;
    }
  };
  ResponsesStreamDecoder reference(model);
  rebound::fuzz::run_differential(input, decoder, reference, emit);
  if (terminal != 1) std::abort();
  return 0;
}
