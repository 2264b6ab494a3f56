// The Gemini decoder (providers.md section 3.2) behind the SSE parser with stray lines kept (a
// bare JSON error object mid-stream, section 3.3): no crash, one terminal event and nothing
// after it, blocks opened and ended in turn, every tool call complete with object arguments
// and the id `<name>_<n>`, n counting up from one past the calls before; and the scanner's fast
// path emits exactly what the general parser does.

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
  constexpr std::int64_t kCallsBefore = 4;
  GeminiStreamDecoder decoder(model, kCallsBefore);
  if (!decoder.wants_stray_lines()) std::abort();
  rebound::fuzz::BlockOrder order;
  std::int64_t calls = kCallsBefore;
  auto emit = [&](StreamEvent e) {
    order(e);
    if (e.kind == Kind::toolcall_start && e.tool_id != e.tool_name + "_" + std::to_string(++calls))
      std::abort();
  };
  GeminiStreamDecoder reference(model, kCallsBefore);
  rebound::fuzz::run_differential(input, decoder, reference, emit);
  if (order.terminal != 1) std::abort();
  return 0;
}
