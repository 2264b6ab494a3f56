#pragma once
// The differential fuzz targets' common part: one line per decoded stream event with every
// field, and a run of one input through a decoder with its fast path and one without, which
// must emit exactly the same lines.

#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "session/llm/sse_parser.h"
#include "session/llm/stream_decoder.h"

namespace rebound::fuzz {

inline void record(std::vector<std::string>& to, const session::llm::StreamEvent& e) {
  to.push_back(std::to_string(static_cast<int>(e.kind)) + "|" + e.text + "|" + e.tool_id + "|" +
               e.tool_name + "|" +
               e.arguments.dump(-1, ' ', false, protocol::Json::error_handler_t::replace) + "|" +
               e.signature + "|" + std::to_string(static_cast<int>(e.stop_reason)) + "|" +
               std::to_string(e.usage.input) + "/" + std::to_string(e.usage.output) + "/" +
               std::to_string(e.usage.cache_read) + "/" + std::to_string(e.usage.cache_write) +
               "/" + std::to_string(e.usage.total_tokens) + "|" + e.response_id);
}

/// Feeds `input` to `decoder` (its events also to `check`) and to `reference` (its fast path
/// off) behind an SSE parser each; aborts when the two decoders' events differ.
template <typename Decoder, typename Check>
void run_differential(std::string_view input, Decoder& decoder, Decoder& reference, Check&& check) {
  using session::llm::SseEvent;
  using session::llm::StreamEvent;
  reference.set_fast_path(false);
  std::vector<std::string> fast, general;
  const auto fast_emit = [&](StreamEvent e) {
    record(fast, e);
    check(std::move(e));
  };
  const auto general_emit = [&](StreamEvent e) { record(general, e); };
  const auto run = [&](Decoder& d, const auto& emit) {
    session::llm::SseParser parser;
    parser.keep_stray_lines(d.wants_stray_lines());
    auto sink = [&](SseEvent e) { d.on_event(e, emit); };
    parser.feed(input, sink);
    parser.finish(sink);
    d.on_end(emit);
  };
  run(decoder, fast_emit);
  run(reference, general_emit);
  if (fast != general) std::abort();  // the fast path decided something the parser would not
}

}  // namespace rebound::fuzz
