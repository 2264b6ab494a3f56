#include "session/llm/stream_decoder.h"

#include <doctest/doctest.h>

#include "tests/support/event_summary.h"
#include "tests/support/provider_streams.h"

using namespace rebound::session::llm;
using rebound::protocol::Json;

namespace {

rebound::protocol::Model priced_model() {
  rebound::protocol::Model m;
  m.id = "m";
  m.cost.input = 1.0;  // $ per million
  m.cost.output = 2.0;
  m.cost.cache_read = 0.5;
  return m;
}

struct Decoded {
  std::vector<std::string> kinds;  // "text_delta:he", "done:toolUse", "error:…"
  std::vector<StreamEvent> events;
};

std::string describe(const StreamEvent& e) {
  using K = StreamEvent::Kind;
  switch (e.kind) {
    case K::text_start:
      return "text_start";
    case K::text_delta:
      return "text_delta:" + e.text;
    case K::text_end:
      return "text_end" + (e.signature.empty() ? "" : "|" + e.signature);
    case K::thinking_start:
      return "thinking_start";
    case K::thinking_delta:
      return "thinking_delta:" + e.text;
    case K::thinking_end:
      return "thinking_end" + (e.signature.empty() ? "" : "|" + e.signature);
    case K::toolcall_start:
      return "toolcall_start:" + e.tool_id + ":" + e.tool_name;
    case K::toolcall_delta:
      return "toolcall_delta:" + e.text;
    case K::toolcall_end:
      return "toolcall_end:" + e.arguments.dump() + (e.signature.empty() ? "" : "|" + e.signature);
    case K::usage:
      return "usage:" + std::to_string(e.usage.input) + "/" + std::to_string(e.usage.output) + "/" +
             std::to_string(e.usage.cache_read);
    case K::done:
      return std::string("done:") + std::string(rebound::protocol::to_string(e.stop_reason));
    case K::error:
      return "error:" + e.text;
  }
  return "?";
}

Decoded run(StreamDecoder& decoder, const std::string& stream, std::size_t cut = std::string::npos,
            bool close = true) {
  SseParser parser;
  parser.keep_stray_lines(decoder.wants_stray_lines());
  Decoded out;
  auto emit = [&](StreamEvent e) {
    out.kinds.push_back(describe(e));
    out.events.push_back(std::move(e));
  };
  auto sink = [&](SseEvent e) { decoder.on_event(e, emit); };
  if (cut == std::string::npos || cut > stream.size()) {
    parser.feed(stream, sink);
  } else {
    parser.feed(std::string_view(stream).substr(0, cut), sink);
    parser.feed(std::string_view(stream).substr(cut), sink);
  }
  if (close) {
    parser.finish(sink);
    decoder.on_end(emit);
  }
  return out;
}

template <typename Decoder>
Decoded decode(const std::string& stream, std::size_t cut = std::string::npos, bool close = true) {
  Decoder decoder(priced_model());
  return run(decoder, stream, cut, close);
}

// The OpenAI decoder's events for a whole stream, with its fast path on or off.
std::vector<std::string> openai_kinds(const std::string& stream, bool fast) {
  OpenAiStreamDecoder decoder(priced_model());
  decoder.set_fast_path(fast);
  SseParser parser;
  std::vector<std::string> kinds;
  auto emit = [&](StreamEvent e) { kinds.push_back(describe(e)); };
  auto sink = [&](const SseEvent& e) { decoder.on_event(e, emit); };
  parser.feed(stream, sink);
  parser.finish(sink);
  decoder.on_end(emit);
  return kinds;
}

const std::string kOpenAiText =
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n"
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"}}]}\n\n"
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"lo \xC3\xA9\"}}]}\n\n"
    "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n"
    "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":100,\"completion_tokens\":5,"
    "\"prompt_tokens_details\":{\"cached_tokens\":40}}}\n\n"
    "data: [DONE]\n\n";

}  // namespace

TEST_CASE("OpenAI: streamed text, finish reason, usage with cached tokens and cost") {
  const auto d = decode<OpenAiStreamDecoder>(kOpenAiText);
  CHECK(d.kinds == std::vector<std::string>{"text_start", "text_delta:Hel",
                                            "text_delta:lo \xC3\xA9", "usage:60/5/40", "text_end",
                                            "done:stop"});
  const auto& usage = d.events[3].usage;
  CHECK(usage.total_tokens == 105);
  CHECK(usage.cost_input == doctest::Approx(60 * 1.0 / 1e6));
  CHECK(usage.cost_output == doctest::Approx(5 * 2.0 / 1e6));
  CHECK(usage.cost_cache_read == doctest::Approx(40 * 0.5 / 1e6));
}

TEST_CASE("OpenAI: the same stream split at every byte gives the same events") {
  const auto whole = decode<OpenAiStreamDecoder>(kOpenAiText).kinds;
  for (std::size_t cut = 0; cut <= kOpenAiText.size(); ++cut) {
    CAPTURE(cut);
    CHECK(decode<OpenAiStreamDecoder>(kOpenAiText, cut).kinds == whole);
  }
}

TEST_CASE("OpenAI: reasoning, then streamed tool calls assembled with their arguments") {
  const std::string stream =
      "data: {\"choices\":[{\"delta\":{\"reasoning_content\":\"think\"}}]}\n\n"
      "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_a\","
      "\"type\":\"function\",\"function\":{\"name\":\"bash\",\"arguments\":\"\"}}]}}]}\n\n"
      "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":"
      "{\"arguments\":\"{\\\"command\\\":\"}}]}}]}\n\n"
      "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":"
      "{\"arguments\":\"\\\"ls\\\"}\"}}]}}]}\n\n"
      "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":1,\"id\":\"call_b\","
      "\"function\":{\"name\":\"read\",\"arguments\":\"{}\"}}]}}]}\n\n"
      "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n"
      "data: [DONE]\n\n";
  CHECK(decode<OpenAiStreamDecoder>(stream).kinds ==
        std::vector<std::string>{"thinking_start", "thinking_delta:think", "thinking_end",
                                 "toolcall_start:call_a:bash",
                                 "toolcall_delta:{\"command\":", "toolcall_delta:\"ls\"}",
                                 "toolcall_end:{\"command\":\"ls\"}", "toolcall_start:call_b:read",
                                 "toolcall_delta:{}", "toolcall_end:{}", "done:toolUse"});
}

TEST_CASE("OpenAI: finish_reason length, a stream without [DONE] is complete once it said how") {
  const std::string stream =
      "data: {\"choices\":[{\"delta\":{\"content\":\"x\"},\"finish_reason\":\"length\"}]}\n\n";
  CHECK(decode<OpenAiStreamDecoder>(stream).kinds.back() == "done:length");
}

TEST_CASE("OpenAI: a stream that ends early is a connection error") {
  const std::string stream = "data: {\"choices\":[{\"delta\":{\"content\":\"par\"}}]}\n\n";
  const auto d = decode<OpenAiStreamDecoder>(stream);
  CHECK(d.kinds == std::vector<std::string>{
                       "text_start", "text_delta:par", "text_end",
                       "error:connection error: stream ended before the response was complete"});
  const std::string dropped =
      "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c\",\"function\":"
      "{\"name\":\"bash\",\"arguments\":\"{\\\"com\"}}]}}]}\n\n"
      "data: [DONE]\n\n";
  CHECK(decode<OpenAiStreamDecoder>(dropped).kinds.back() ==
        "error:connection error: stream ended before the response was complete");
}

TEST_CASE("OpenAI: an error object inside a 200 stream, and malformed data") {
  CHECK(decode<OpenAiStreamDecoder>(
            "data: {\"error\":{\"type\":\"server_error\",\"message\":\"The server had an "
            "error\"}}\n\n")
            .kinds == std::vector<std::string>{"error:server_error: The server had an error"});
  const auto bad = decode<OpenAiStreamDecoder>("data: {not json\n\n");
  REQUIRE(bad.kinds.size() == 1);
  CHECK(bad.kinds[0].rfind("error:connection error: malformed event in the stream", 0) == 0);
}

TEST_CASE("Anthropic: signature deltas append, a redacted block keeps its data (A21)") {
  auto event = [](const std::string& type, const std::string& data) {
    return "event: " + type + "\ndata: " + data + "\n\n";
  };
  const std::string stream =
      event("message_start", R"({"type":"message_start","message":{"usage":{"input_tokens":5}}})") +
      event(
          "content_block_start",
          R"({"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}})") +
      event(
          "content_block_delta",
          R"({"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"a"}})") +
      event(
          "content_block_delta",
          R"({"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"AB"}})") +
      event(
          "content_block_delta",
          R"({"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"CD"}})") +
      event("content_block_stop", R"({"type":"content_block_stop","index":0})") +
      event(
          "content_block_start",
          R"({"type":"content_block_start","index":1,"content_block":{"type":"redacted_thinking","data":"XYZ"}})") +
      // Deltas sent for a redacted block change neither its text nor its data.
      event(
          "content_block_delta",
          R"({"type":"content_block_delta","index":1,"delta":{"type":"thinking_delta","thinking":"x"}})") +
      event(
          "content_block_delta",
          R"({"type":"content_block_delta","index":1,"delta":{"type":"signature_delta","signature":"Q"}})") +
      event("content_block_stop", R"({"type":"content_block_stop","index":1})") +
      event("message_delta", R"({"type":"message_delta","delta":{"stop_reason":"end_turn"}})") +
      event("message_stop", R"({"type":"message_stop"})");
  const auto d = decode<AnthropicStreamDecoder>(stream);
  CHECK(d.kinds == std::vector<std::string>{"usage:5/0/0", "thinking_start", "thinking_delta:a",
                                            "thinking_end|ABCD", "thinking_start",
                                            "thinking_delta:[Reasoning redacted]",
                                            "thinking_end|XYZ", "done:stop"});
  std::vector<bool> redacted;
  for (const auto& e : d.events)
    if (e.kind == StreamEvent::Kind::thinking_end) redacted.push_back(e.redacted);
  CHECK(redacted == std::vector<bool>{false, true});
}

TEST_CASE("Anthropic: thinking, text, tool use, usage and stop reason") {
  const std::string stream =
      "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":"
      "{\"input_tokens\":50,\"cache_read_input_tokens\":10,\"output_tokens\":1}}}\n\n"
      "event: ping\ndata: {\"type\":\"ping\"}\n\n"
      "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,"
      "\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\"}}\n\n"
      "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,"
      "\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"hmm\"}}\n\n"
      "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,"
      "\"delta\":{\"type\":\"signature_delta\",\"signature\":\"sig\"}}\n\n"
      "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n"
      "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,"
      "\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"
      "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,"
      "\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi\"}}\n\n"
      "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":1}\n\n"
      "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":2,"
      "\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"bash\","
      "\"input\":{}}}\n\n"
      "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":2,"
      "\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"command\\\": "
      "\\\"ls\\\"}\"}}\n\n"
      "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":2}\n\n"
      "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":"
      "\"tool_use\"},\"usage\":{\"output_tokens\":30}}\n\n"
      "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
  const auto d = decode<AnthropicStreamDecoder>(stream);
  CHECK(d.kinds == std::vector<std::string>{
                       "usage:50/1/10", "thinking_start", "thinking_delta:hmm", "thinking_end|sig",
                       "text_start", "text_delta:Hi", "text_end", "toolcall_start:toolu_1:bash",
                       "toolcall_delta:{\"command\": \"ls\"}", "toolcall_end:{\"command\":\"ls\"}",
                       "usage:50/30/10", "done:toolUse"});
  for (std::size_t cut = 0; cut <= stream.size(); cut += 7) {
    CHECK(decode<AnthropicStreamDecoder>(stream, cut).kinds == d.kinds);
  }
}

TEST_CASE("Anthropic: an error event in a 200 stream and stop reasons") {
  CHECK(decode<AnthropicStreamDecoder>(
            "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\","
            "\"message\":\"Overloaded\"}}\n\n")
            .kinds == std::vector<std::string>{"error:overloaded_error: Overloaded"});
  CHECK(decode<AnthropicStreamDecoder>(
            "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":"
            "\"max_tokens\"}}\n\n")
            .kinds.back() == "done:length");
  // message_delta said how it ended: complete without message_stop.
  CHECK(decode<AnthropicStreamDecoder>(
            "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":"
            "\"end_turn\"}}\n\n")
            .kinds.back() == "done:stop");
  CHECK(decode<AnthropicStreamDecoder>(
            "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,"
            "\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n")
            .kinds.back() ==
        "error:connection error: stream ended before the response was complete");
}

TEST_CASE("nothing is emitted after the terminal event") {
  OpenAiStreamDecoder decoder(priced_model());
  std::vector<std::string> kinds;
  auto emit = [&](StreamEvent e) { kinds.push_back(describe(e)); };
  decoder.on_event({"message", "{\"error\":{\"message\":\"boom\"}}", {}}, emit);
  decoder.on_event({"message", "{\"choices\":[{\"delta\":{\"content\":\"x\"}}]}", {}}, emit);
  decoder.on_end(emit);
  CHECK(kinds == std::vector<std::string>{"error:boom"});
  CHECK(decoder.finished());
}

TEST_CASE("fields of the wrong type never throw: they count as absent") {
  // Found by fuzz_sse: "type":0 made nlohmann's value() throw through the decoder.
  const auto a = decode<AnthropicStreamDecoder>(
      "event: content_block_start\ndata: {\"type\":0,\"content_block\":{\"type\":\"text\"}}\n\n"
      "event: x\ndata: {\"type\":\"content_block_start\",\"content_block\":[1]}\n\n"
      "event: x\ndata: "
      "{\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":\"5\"}}}\n\n"
      "event: x\ndata: {\"type\":\"error\",\"error\":7}\n\n");
  CHECK(a.kinds.back() == "error:7");
  const auto o = decode<OpenAiStreamDecoder>(
      "data: "
      "{\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":\"0\",\"id\":5,\"function\":3}]}}]}\n\n"
      "data: {\"choices\":[7],\"usage\":{\"prompt_tokens\":-5,\"completion_tokens\":\"x\"}}\n\n"
      "data: {\"choices\":[{\"finish_reason\":\"stop\"}]}\n\n");
  CHECK(o.kinds.back() == "done:stop");
}

TEST_CASE("tool arguments nested past 512 levels end the answer as a malformed stream") {
  const std::string open =
      "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c\","
      "\"function\":{\"name\":\"read\",\"arguments\":\"" +
      std::string(600, '[') + "\"}}]}}]}\n\n";
  const auto d = decode<OpenAiStreamDecoder>(
      open + "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n");
  REQUIRE(d.kinds.size() == 3);
  CHECK(d.kinds[0] == "toolcall_start:c:read");
  CHECK(d.kinds[2] ==
        "error:connection error: malformed tool call arguments in the stream: nesting deeper "
        "than 512 levels");
  // Arguments that are merely not JSON stay an empty object, as before.
  const auto plain = decode<OpenAiStreamDecoder>(
      "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c\",\"function\":"
      "{\"name\":\"read\",\"arguments\":\"{oops\"}}]}}]}\n\n"
      "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n");
  CHECK(plain.kinds.back() == "done:toolUse");
  CHECK(plain.kinds[plain.kinds.size() - 2] == "toolcall_end:{}");
}

TEST_CASE("a malformed event quotes 200 bytes of it, never a beginning of the key") {
  const std::string key = "sk-decoder-secret-123";
  for (std::size_t pad = 170; pad < 200; ++pad) {
    CAPTURE(pad);
    OpenAiStreamDecoder decoder(priced_model());
    decoder.set_secret(key);
    std::vector<std::string> errors;
    SseEvent e;
    e.data = std::string(pad, 'z') + key + " not json";
    decoder.on_event(e, [&](StreamEvent ev) {
      if (ev.kind == StreamEvent::Kind::error) errors.push_back(ev.text);
    });
    REQUIRE(errors.size() == 1);
    CHECK(errors[0].find("sk-d") == std::string::npos);
    CHECK(errors[0].rfind("connection error: malformed event in the stream: zzz", 0) == 0);
  }
}

TEST_CASE("OpenAI: the scanner's fast path emits exactly what the general parser's path emits") {
  // Chunks the fast path takes and chunks it must hand to the general path; each decoded both
  // ways, alone and after a text delta.
  const std::vector<std::string> chunks{
      R"({"choices":[{"index":0,"delta":{"content":"plain"},"finish_reason":null}]})",
      R"({"id":"x","object":"chat.completion.chunk","created":1,"model":"m","system_fingerprint":"fp","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]})",
      R"({"choices":[{"delta":{"content":"q\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00"}}]})",
      R"({"choices":[{"delta":{"reasoning_content":"think","reasoning":"more","content":"say"}}]})",
      R"({"choices":[{"delta":{"content":"a","content":"b"}}]})",
      R"({"choices":[{"delta":{"content":"x"},"finish_reason":"length"}]})",
      R"({"choices":[{"delta":{},"finish_reason":"content_filter"}]})",
      R"({"choices":[{"delta":{},"finish_reason":"tool_calls"}]})",
      R"({"choices":[{"delta":{"content":7}}]})",
      R"({"choices":[{"delta":"text"}]})",
      R"({"choices":[7]})",
      R"({"choices":[]})",
      R"({"choices":{}})",
      R"({})",
      R"([1])",
      R"("s")",
      R"({"choices":[{"delta":{"content":"\ud800 lone"}}]})",
      R"({"c\u0068oices":[{"delta":{"content":"escaped key"}}]})",
      R"({"choices":[{"delta":{"content":"a"}}],"error":null})",
      R"({"choices":[{"delta":{"content":"a"}}],"error":{"message":"bad"}})",
      R"({"choices":[{"delta":{"content":"a"}}],"usage":{"prompt_tokens":3}})",
      R"({"choices":[{"delta":{"content":"a"}}],"usage":null})",
      R"({"choices":[{"delta":{"tool_calls":[{"index":0,"id":"c","function":{"name":"f","arguments":"{}"}}]}}]})",
      R"({"choices":[{"delta":{"content":"unterminated"}})",
      "{\"choices\":[{\"delta\":{\"content\":\"bad \xff utf8\"}}]}",
      " \t{\"choices\":[{\"delta\":{\"content\":\"spaced\"}}]} \r",
      R"({"created":1e999,"choices":[{"delta":{"content":"overflowing number"}}]})",
      R"({"created":1e-999,"choices":[{"delta":{"content":"underflowing number"}}]})",
  };
  const std::string first = "data: {\"choices\":[{\"delta\":{\"content\":\"start\"}}]}\n\n";
  for (const auto& chunk : chunks) {
    for (const std::string& prefix : {std::string(), first}) {
      const std::string stream = prefix + "data: " + chunk + "\n\ndata: [DONE]\n\n";
      CAPTURE(stream);
      CHECK(openai_kinds(stream, true) == openai_kinds(stream, false));
    }
  }
}

TEST_CASE("OpenAI: chunks that reuse the previous chunk's frame decode as the general path does") {
  // The fast path remembers the bytes around a plain chunk's content; these middles test its
  // string check: escapes, a quote that changes the structure, bad UTF-8, an empty string, a
  // lone surrogate; each stream ends in a middle that breaks the JSON (a trailing backslash, a
  // control character).
  const std::vector<std::string> middles{
      "a",       "b\\\"c",           "d\\\\",    "f\",\"content\":\"g",  "h\xff",   "",
      "\\ud800", "\\ud83d\\ude00 j", "k\\u0041", "l\"},\"x\":{\"y\":\"", "m\\n\\t", "\xc3\xa9 n",
      "o"};
  const std::string head = R"(data: {"id":"c","choices":[{"index":0,"delta":{"content":")";
  const std::string tail = "\"},\"finish_reason\":null}]}\n\n";
  for (const std::string& last : {std::string("e\\"), std::string("i\x01")}) {
    std::string stream = head + "first" + tail;
    for (const auto& m : middles)
      stream += head + m + tail;
    stream += head + last + tail + "data: [DONE]\n\n";
    CAPTURE(last);
    const auto general = openai_kinds(stream, false);
    CHECK(openai_kinds(stream, true) == general);
    CHECK(general.size() > middles.size());  // every middle was decoded before the last failed
    CHECK(general.back().rfind("error:", 0) == 0);
  }
}

namespace {

// One Gemini SSE event: a GenerateContentResponse with the given parts and fields.
std::string gemini(const Json& parts, const Json& extra = Json::object()) {
  Json r{{"candidates", Json::array({Json{{"content", {{"role", "model"}, {"parts", parts}}}}})}};
  for (const auto& [k, v] : extra.items()) {
    if (k == "finishReason") {
      r["candidates"][0]["finishReason"] = v;
    } else {
      r[k] = v;
    }
  }
  return "data: " + r.dump() + "\r\n\r\n";
}

const Json kGeminiUsage{{"promptTokenCount", 100},
                        {"cachedContentTokenCount", 40},
                        {"candidatesTokenCount", 5},
                        {"thoughtsTokenCount", 7},
                        {"totalTokenCount", 112}};

Decoded gemini_decode(const std::string& stream, std::int64_t calls_before = 0,
                      std::size_t cut = std::string::npos) {
  GeminiStreamDecoder decoder(priced_model(), calls_before);
  return run(decoder, stream, cut);
}

}  // namespace

TEST_CASE("Gemini: thoughts, text with its signature, a call numbered in the session, usage") {
  const std::string stream =
      gemini(Json::array({Json{{"text", "Let me "}, {"thought", true}}})) +
      gemini(Json::array(
          {Json{{"text", "think."}, {"thought", true}, {"thoughtSignature", "c2lnMQ=="}}})) +
      gemini(Json::array(
          {Json{{"text", "Reading"}}, Json{{"text", ""}, {"thoughtSignature", "c2lnMg=="}}})) +
      gemini(Json::array({Json{{"functionCall", {{"name", "read"}, {"args", {{"path", "a"}}}}},
                               {"thoughtSignature", "c2lnMw=="}},
                          Json{{"functionCall", {{"name", "bash"}, {"id", "ignored"}}}}})) +
      gemini(Json::array(), Json{{"finishReason", "STOP"}, {"usageMetadata", kGeminiUsage}});
  const std::vector<std::string> expected{"thinking_start",
                                          "thinking_delta:Let me ",
                                          "thinking_delta:think.",
                                          "thinking_end|c2lnMQ==",
                                          "text_start",
                                          "text_delta:Reading",
                                          "text_end|c2lnMg==",
                                          "toolcall_start:read_4:read",
                                          "toolcall_delta:{\"path\":\"a\"}",
                                          "toolcall_end:{\"path\":\"a\"}|c2lnMw==",
                                          "toolcall_start:bash_5:bash",
                                          "toolcall_delta:{}",
                                          "toolcall_end:{}",
                                          "usage:60/12/40",
                                          "done:toolUse"};
  const Decoded d = gemini_decode(stream, 3);
  CHECK(d.kinds == expected);
  CHECK(d.events[13].usage.total_tokens == 112);
  // Framed with CRLF or LF and cut anywhere, the same events.
  std::string lf = stream;
  for (std::size_t at; (at = lf.find("\r\n")) != std::string::npos;)
    lf.erase(at, 1);
  for (std::size_t cut = 0; cut <= stream.size(); cut += 7)
    CHECK(gemini_decode(stream, 3, cut).kinds == expected);
  CHECK(gemini_decode(lf, 3).kinds == expected);
}

TEST_CASE("Gemini: finish reasons, a prompt blocked, a stream without a finish reason") {
  const std::string text = gemini(Json::array({Json{{"text", "I cannot"}}}));
  CHECK(gemini_decode(text + gemini(Json::array(), Json{{"finishReason", "MAX_TOKENS"}})).kinds ==
        std::vector<std::string>{"text_start", "text_delta:I cannot", "text_end", "done:length"});
  // Any other reason is an error that keeps the content and says why.
  for (const char* reason : {"SAFETY", "RECITATION", "MALFORMED_FUNCTION_CALL", "OTHER"}) {
    const Decoded d = gemini_decode(text + gemini(Json::array(), Json{{"finishReason", reason}}));
    CHECK(d.kinds == std::vector<std::string>{"text_start", "text_delta:I cannot", "text_end",
                                              std::string("error:finish reason ") + reason});
  }
  // The usage after the finish reason still counts; STOP without calls is stop.
  CHECK(gemini_decode(text + gemini(Json::array(), Json{{"finishReason", "STOP"}}) +
                      "data: {\"usageMetadata\":{\"promptTokenCount\":3}}\n\n")
            .kinds == std::vector<std::string>{"text_start", "text_delta:I cannot", "text_end",
                                               "usage:3/0/0", "done:stop"});
  CHECK(gemini_decode("data: {\"promptFeedback\":{\"blockReason\":\"PROHIBITED_CONTENT\"}}\n\n")
            .kinds == std::vector<std::string>{"error:prompt blocked: PROHIBITED_CONTENT"});
  CHECK(gemini_decode(text).kinds ==
        std::vector<std::string>{"text_start", "text_delta:I cannot", "text_end",
                                 std::string("error:") + StreamDecoder::kIncomplete});
}

TEST_CASE("Gemini: an error in the 200 stream, as a bare JSON object or a data event") {
  const std::string text = gemini(Json::array({Json{{"text", "partial"}}}));
  const std::vector<std::string> expected{
      "text_start", "text_delta:partial", "text_end",
      "error:503 The model is overloaded. Please try again later."};
  // How the service sends it: the object alone, pretty-printed, outside any `data:` field.
  const std::string bare =
      "{\n  \"error\": {\n    \"code\": 503,\n    \"message\": \"The model is overloaded. Please "
      "try again later.\",\n    \"status\": \"UNAVAILABLE\"\n  }\n}\n";
  CHECK(gemini_decode(text + bare).kinds == expected);
  for (std::size_t cut = 0; cut <= bare.size(); cut += 5)
    CHECK(gemini_decode(text + bare, 0, text.size() + cut).kinds == expected);
  CHECK(gemini_decode(text +
                      "data: {\"error\":{\"code\":503,\"message\":\"The model is overloaded. "
                      "Please try again later.\",\"status\":\"UNAVAILABLE\"}}\n\n")
            .kinds == expected);
  // Stray lines that are not an error are ignored, as SSE ignores unknown fields.
  CHECK(gemini_decode(text + "garbage\n\n" + gemini(Json::array(), Json{{"finishReason", "STOP"}}))
            .kinds ==
        std::vector<std::string>{"text_start", "text_delta:partial", "text_end", "done:stop"});
  CHECK(gemini_decode("data: {not json\n\n")
            .kinds.back()
            .starts_with("error:connection error: malformed event in the stream"));
}

namespace {

// The Responses decoder's events for a whole stream, with its fast path on or off.
std::vector<std::string> responses_kinds(const std::string& stream, bool fast) {
  ResponsesStreamDecoder decoder(priced_model());
  decoder.set_fast_path(fast);
  return run(decoder, stream).kinds;
}

std::string joined(const rebound::testing::FakeResponse& r) {
  std::string out;
  for (const auto& c : r.chunks)
    out += c;
  return out;
}

// Every 200 stream of the fake's scenarios (also read by the official SDKs in tests/node) gives
// the same events with the fast path as without; `kinds(stream, fast)` decodes one.
template <typename Kinds>
void check_scenarios_agree(const std::vector<rebound::testing::ProviderScenario>& scenarios,
                           Kinds kinds) {
  for (const auto& s : scenarios) {
    if (s.response.status != 200) continue;
    CAPTURE(s.name);
    const std::string stream = joined(s.response);
    const auto general = kinds(stream, false);
    CHECK_FALSE(general.empty());
    CHECK(kinds(stream, true) == general);
  }
}

}  // namespace

TEST_CASE("Responses: the scanner's fast path decodes every stream as the general parser") {
  // The fake's scenarios (also read by the official SDK in tests/node), then delta events the
  // fast path must decode right or hand on: escapes, a repeated key, keys in another order, a
  // response object, a delta that is no string, invalid JSON, a delta for no open block.
  check_scenarios_agree(rebound::testing::responses_scenarios(), responses_kinds);
  const std::string open =
      R"(event: response.output_item.added
data: {"type":"response.output_item.added","output_index":0,"item":{"type":"message","id":"m"}}

)";
  const std::vector<std::string> deltas{
      R"({"type":"response.output_text.delta","delta":"a\"b\u00e9\ud83d\ude00\n"})",
      R"({"type":"response.output_text.delta","delta":"x","delta":"y"})",
      R"({"delta":"first","sequence_number":3,"type":"response.output_text.delta"})",
      R"({"type":"response.output_text.delta","delta":"r","response":{"id":"resp_9"}})",
      R"({"type":"response.output_text.delta","delta":7})",
      R"({"type":"response.output_text.delta","delta":"bad" )",
      R"({"type":"response.reasoning_summary_text.delta","delta":"not a thinking block"})",
      R"({"type":"response.output_text.delta","delta":"\ud800"})",
      R"({"type":"response.\u006futput_text.delta","delta":"escaped type"})",
  };
  for (const auto& d : deltas) {
    CAPTURE(d);
    const std::string stream = open + "event: response.output_text.delta\ndata: " + d + "\n\n" +
                               "data: {\"type\":\"response.completed\"}\n\n";
    CHECK(responses_kinds(stream, true) == responses_kinds(stream, false));
  }
  // The decoded text itself, not only the agreement.
  const std::string stream = open + "data: " + deltas[0] + "\n\n" + "data: " + deltas[1] +
                             "\n\ndata: {\"type\":\"response.completed\"}\n\n";
  CHECK(responses_kinds(stream, true) ==
        std::vector<std::string>{"text_start", "text_delta:a\"b\xC3\xA9\xF0\x9F\x98\x80\n",
                                 "text_delta:y", "text_end", "done:stop"});
}

namespace {

std::vector<std::string> gemini_kinds(const std::string& stream, bool fast) {
  GeminiStreamDecoder decoder(priced_model(), 2);
  decoder.set_fast_path(fast);
  return run(decoder, stream).kinds;
}

}  // namespace

TEST_CASE("Gemini: the scanner's fast path decodes every stream as the general parser") {
  check_scenarios_agree(rebound::testing::gemini_scenarios(), gemini_kinds);
  // Events the fast path must decode right or hand on: usage in each event (as the service sends
  // it), escapes, repeated keys, two parts, a thought, a signature, counts that are no plain
  // integers, an escaped usage key, a part that is no text, an error, invalid JSON.
  const std::string text = R"("content":{"parts":[{"text":"a\"b\u00e9\ud83d\ude00\n"}]})";
  const std::vector<std::string> events{
      R"({"candidates":[{)" + text +
          R"(}],"usageMetadata":{"promptTokenCount":9,"totalTokenCount":9},"responseId":"r1"})",
      R"({"candidates":[{"content":{"parts":[{"text":"x","text":"y"}]}}]})",
      R"({"candidates":[{"content":{"parts":[{"text":"x"},{"text":"y","thought":true}]}}]})",
      R"({"candidates":[{"content":{"parts":[{"thought":true,"text":"deep"}]}}]})",
      R"({"candidates":[{"content":{"parts":[{"text":"s","thoughtSignature":"c2ln"}]}}]})",
      R"({"candidates":[{"content":{"parts":[{"text":"n"}]}}],"usageMetadata":{"promptTokenCount":-1}})",
      R"({"candidates":[{"content":{"parts":[{"text":"n"}]}}],"usageMetadata":{"promptTokenCount":2.0}})",
      R"({"candidates":[{"content":{"parts":[{"text":"n"}]}}],"usageMetadata":{"\u0070romptTokenCount":3}})",
      R"({"candidates":[{"content":{"parts":[{"text":"n"}]}}],"usageMetadata":{}})",
      R"({"candidates":[{"content":{"parts":[{"text":7}]}}]})",
      R"({"candidates":[{"content":{"parts":[{"text":"e"}]}}],"error":null})",
      R"({"candidates":[{"content":{"parts":[{"text":"bad"}]}}] )",
      R"({"candidates":[{"content":{"parts":[{"text":"\ud800"}]}}]})",
      R"({"candidates":[{"content":{"parts":[{"text":"id"}]}}],"responseId":7})",
      R"({"candidates":[{"content":{"parts":[{"text":"late"}]}}],"candidates":[]})",
  };
  const std::string end =
      "data: " + Json{{"candidates", Json::array({Json{{"finishReason", "STOP"}}})}}.dump() +
      "\n\n";
  for (const auto& e : events) {
    CAPTURE(e);
    const std::string stream = "data: " + e + "\n\n" + end;
    CHECK(gemini_kinds(stream, true) == gemini_kinds(stream, false));
  }
  // The decoded events themselves, not only the agreement.
  CHECK(gemini_kinds("data: " + events[0] + "\n\n" + end, true) ==
        std::vector<std::string>{"text_start", "text_delta:a\"b\xC3\xA9\xF0\x9F\x98\x80\n",
                                 "usage:9/0/0", "text_end", "done:stop"});
}

TEST_CASE(
    "Responses and Gemini: events that reuse the previous event's bytes decode as the "
    "general path does") {
  // The fast path remembers the bytes around a delta event's varying values (Responses: the
  // delta, sequence_number, obfuscation; Gemini: the part's text, the usage object); each
  // variant below follows two events of the same frame and precedes a third, so it is checked
  // against the template: other valid values, values of another kind, values that change the
  // structure, escapes, lone surrogates, bad UTF-8, numbers that are no plain integers, nesting
  // past the limit.
  const std::string deep = std::string(600, '[') + std::string(600, ']');
  const auto responses_event = [](const std::string& delta, const std::string& seq,
                                  const std::string& obfuscation) {
    return "event: response.output_text.delta\ndata: "
           R"({"type":"response.output_text.delta","sequence_number":)" +
           seq + R"(,"item_id":"m","output_index":0,"content_index":0,"delta":)" + delta +
           R"(,"logprobs":[],"obfuscation":)" + obfuscation + "}\n\n";
  };
  const std::vector<std::vector<std::string>> responses_variants{
      {R"("b\"c")", "5", R"("q")"},
      {R"("d")", "05", R"("q")"},
      {R"("e")", "-6", R"("q")"},
      {R"("f")", "7.5", R"("q")"},
      {R"("g")", "8", "7"},
      {R"("h\ud800")", "9", R"("q")"},
      {R"("i")", "10", R"("\ud800")"},
      {"\"j\xff\"", "11", R"("q")"},
      {R"("k")", "1e2", R"("q")"},
      {R"("l","delta":"m")", "12", R"("q")"},
      {R"("n")", "13", R"("")"},
      {R"("o")", "14", R"("a","type":"response.refusal.delta")"},
      {R"("p")", "99999999999999999999999", R"("q")"},
      {R"("z\")", "15", R"("q")"},
      {R"("y")", "16", deep},
      {"7", "17", R"("q")"}};
  const std::string open =
      "data: "
      R"({"type":"response.output_item.added","output_index":0,"item":{"type":"message","id":"m"}})"
      "\n\n";
  for (const auto& v : responses_variants) {
    const std::string stream = open + responses_event(R"("a")", "3", R"("xYz")") +
                               responses_event(R"("a2")", "4", R"("x")") +
                               responses_event(v[0], v[1], v[2]) +
                               responses_event(R"("after")", "20", R"("xy")") +
                               "data: {\"type\":\"response.completed\"}\n\n";
    CAPTURE(stream);
    const auto general = responses_kinds(stream, false);
    CHECK(general.size() >= 3);
    CHECK(responses_kinds(stream, true) == general);
  }
  // Deltas of another block than the open one, in a row: ignored, by the template too.
  std::string other = open;
  for (const char* d : {"s1", "s2", "s3"})
    other +=
        "data: "
        R"({"type":"response.reasoning_summary_text.delta","delta":")" +
        std::string(d) + "\"}\n\n";
  other += "data: {\"type\":\"response.completed\"}\n\n";
  CHECK(responses_kinds(other, true) == responses_kinds(other, false));
  CHECK(responses_kinds(other, true) ==
        std::vector<std::string>{"text_start", "text_end", "done:stop"});
  const auto gemini_event = [](const std::string& text, const std::string& usage,
                               bool thought = false) {
    return "data: "
           R"({"candidates":[{"content":{"parts":[{"text":)" +
           text + (thought ? R"(,"thought":true)" : "") +
           R"(}],"role":"model"},"index":0}],)"
           R"("usageMetadata":)" +
           usage + R"(,"modelVersion":"m1","responseId":"r1"})" + "\r\n\r\n";
  };
  const auto counts = [](int out) {
    return R"({"promptTokenCount":5,"candidatesTokenCount":)" + std::to_string(out) +
           R"(,"totalTokenCount":)" + std::to_string(5 + out) + "}";
  };
  const std::vector<std::vector<std::string>> gemini_variants{
      {R"("b\"c")", counts(3)},
      {R"("d")", R"({"promptTokenCount":5,"candidatesTokenCount":2.5})"},
      {R"("e")", R"({"promptTokenCount":-5})"},
      {R"("f")", R"({"\u0070romptTokenCount":6})"},
      {R"("g")", "{}"},
      {R"("h")",
       R"({"promptTokenCount":5,"promptTokensDetails":[{"modality":"TEXT","tokenCount":5}],"totalTokenCount":9})"},
      {R"("i\ud800")", counts(3)},
      {R"("j")", R"({"promptTokenCount":1,"promptTokenCount":2})"},
      {R"("k")", R"({"promptTokenCount":1}},"x":{"y":1)"},
      {R"("l")", R"({"promptTokenCount":1,})"},
      {R"("m")", R"({"promptTokenCount":123456789012345678901})"},
      {R"("n")", R"({"a":)" + deep + "}"},
      {R"("o")", "null"},
      {R"("p")", R"({"promptTokenCount":"5"})"},
      {"7", counts(3)},
      {"\"q\xc3\"", counts(3)},
      {R"("r"}],"role":"model"},"finishReason":"STOP","index":0}],"x":{"s":"t")", counts(3)}};
  const std::string stop =
      "data: " + Json{{"candidates", Json::array({Json{{"finishReason", "STOP"}}})}}.dump() +
      "\n\n";
  for (const bool thought : {false, true}) {
    for (const auto& v : gemini_variants) {
      const std::string stream =
          gemini_event(R"("a")", counts(1), thought) + gemini_event(R"("a2")", counts(2), thought) +
          gemini_event(v[0], v[1], thought) + gemini_event(R"("after")", counts(4), thought) +
          gemini_event(R"("plain")", counts(5)) + stop;
      CAPTURE(stream);
      const auto general = gemini_kinds(stream, false);
      CHECK(general.size() >= 3);
      CHECK(gemini_kinds(stream, true) == general);
    }
  }
}
