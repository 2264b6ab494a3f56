#pragma once
// The decoder fuzz targets' common part: the order every decoder's events keep, one line per
// decoded event with every field, and a run of one input through a decoder with its fast path
// and one without, which must emit exactly the same lines.

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

/// What every decoder's events keep to: a block ends before the next one opens (an error may
/// leave one open), a tool call's arguments are an object, and exactly one terminal event (done
/// or error) comes, with nothing after it (check `terminal == 1` at the end).
struct BlockOrder {
  int terminal = 0;
  bool open = false;
  void operator()(const session::llm::StreamEvent& e) {
    using Kind = session::llm::StreamEvent::Kind;
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
  }
};

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
