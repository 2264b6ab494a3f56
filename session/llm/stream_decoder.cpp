#include "session/llm/stream_decoder.h"

#include <utility>

#include <algorithm>

#include "protocol/json_access.h"
#include "protocol/json_line.h"
#include "protocol/json_scan.h"
#include "session/llm/secret_text.h"
#include "session/llm/usage_cost.h"

namespace rebound::session::llm {

using protocol::get_int;
using protocol::get_object;
using protocol::get_string;
using protocol::get_value;
using protocol::Json;
using protocol::StopReason;
using Kind = StreamEvent::Kind;

namespace {

StreamEvent event(Kind kind, std::string text = {}) {
  StreamEvent e;
  e.kind = kind;
  e.text = std::move(text);
  return e;
}

std::string error_text(const Json& error) {
  if (!error.is_object()) return error.is_string() ? error.get<std::string>() : error.dump();
  std::string type = get_string(error, "type");
  if (type.empty()) type = get_string(error, "code");
  const std::string message = get_string(error, "message");
  if (type.empty()) return message.empty() ? error.dump() : message;
  return message.empty() ? type : type + ": " + message;
}

}  // namespace

std::int64_t StreamDecoder::count(const Json& j, const char* key) {
  return std::max<std::int64_t>(0, get_int(j, key));
}

void StreamDecoder::on_end(const Emit& emit) {
  if (finished_) return;
  if (end_error_) {
    fail(*end_error_, emit);
  } else if (stop_reason_) {
    complete(*stop_reason_, emit);
  } else {
    fail(kIncomplete, emit);
  }
}

void StreamDecoder::open(Block kind, const Emit& emit, const std::string& id,
                         const std::string& name) {
  close(emit);
  if (finished_) return;  // the closed block's arguments ended the answer
  block_ = kind;
  if (kind == Block::text) emit(event(Kind::text_start));
  if (kind == Block::thinking) emit(event(Kind::thinking_start));
  if (kind == Block::tool) {
    StreamEvent e = event(Kind::toolcall_start);
    e.tool_id = id;
    e.tool_name = name;
    tool_arguments_.clear();
    emit(std::move(e));
  }
}

void StreamDecoder::close(const Emit& emit, std::string signature) {
  switch (block_) {
    case Block::none:
      return;
    case Block::text: {
      StreamEvent e = event(Kind::text_end);
      e.signature = std::move(signature);
      emit(std::move(e));
      break;
    }
    case Block::thinking: {
      StreamEvent e = event(Kind::thinking_end);
      e.signature = std::move(signature);
      e.redacted = std::exchange(redacted_, false);
      emit(std::move(e));
      break;
    }
    case Block::tool: {
      // Arguments that are not a JSON object become {} (the tool reports what is missing);
      // arguments nested too deep to handle end the answer like a malformed event.
      auto parsed = protocol::parse_provider_json(tool_arguments_.empty() ? "{}" : tool_arguments_);
      if (!parsed.value && parsed.what != protocol::kInvalidJson) {
        block_ = Block::none;
        fail("connection error: malformed tool call arguments in the stream: " + parsed.what, emit);
        return;
      }
      StreamEvent e = event(Kind::toolcall_end);
      e.signature = std::move(signature);
      if (parsed.value && parsed.value->is_object()) {
        e.arguments = std::move(*parsed.value);
      } else {
        e.arguments = Json::object();
      }
      emit(std::move(e));
      break;
    }
  }
  block_ = Block::none;
}

void StreamDecoder::delta(const std::string& text, const Emit& emit) {
  if (text.empty()) return;
  if (block_ == Block::tool) {
    tool_arguments_ += text;
    emit(event(Kind::toolcall_delta, text));
  } else if (block_ == Block::thinking) {
    emit(event(Kind::thinking_delta, text));
  } else if (block_ == Block::text) {
    emit(event(Kind::text_delta, text));
  }
}

void StreamDecoder::usage_changed(const Emit& emit) {
  apply_cost(usage_, model_);
  StreamEvent e = event(Kind::usage);
  e.usage = usage_;
  emit(std::move(e));
}

void StreamDecoder::complete(StopReason reason, const Emit& emit) {
  if (finished_) return;
  close(emit);
  if (finished_) return;
  finished_ = true;
  StreamEvent e = event(Kind::done);
  e.stop_reason = reason;
  e.response_id = response_id_;
  emit(std::move(e));
}

void StreamDecoder::fail(const std::string& message, const Emit& emit) {
  if (finished_) return;
  if (block_ != Block::tool) close(emit);
  block_ = Block::none;
  finished_ = true;
  StreamEvent e = event(Kind::error, message);
  e.response_id = response_id_;
  emit(std::move(e));
}

std::optional<Json> StreamDecoder::parse_data(const std::string& data, const Emit& emit) {
  auto parsed = protocol::parse_provider_json(data);
  if (!parsed.value || !parsed.value->is_object()) {
    fail("connection error: malformed event in the stream: " +
             cut_without_secret(data, kMalformedEventExcerpt, secret_),
         emit);
    return std::nullopt;
  }
  return std::move(parsed.value);
}

// Both open their block even for an empty string (a first chunk's `"content":""` opens the
// text block), as they always did.
void OpenAiStreamDecoder::reasoning_delta(const std::string& text, const Emit& emit) {
  if (block_ != Block::thinking) open(Block::thinking, emit);
  delta(text, emit);
}

void OpenAiStreamDecoder::content_delta(const std::string& text, const Emit& emit) {
  if (block_ != Block::text) open(Block::text, emit);
  delta(text, emit);
}

void OpenAiStreamDecoder::finish(const std::string& reason, const Emit& emit) {
  if (reason == "length") {
    stop_reason_ = StopReason::length;
  } else if (reason == "tool_calls" || reason == "function_call") {
    stop_reason_ = StopReason::tool_use;
  } else if (reason == "content_filter") {
    fail("finish_reason: content_filter", emit);
  } else {
    stop_reason_ = StopReason::stop;
  }
}

bool OpenAiStreamDecoder::fast_event(const std::string& data, const Emit& emit) {
  namespace scan = protocol::json_scan;
  using Span = std::optional<std::string_view>;
  const auto F = scan::kFirst;
  static const scan::Paths paths{{},
                                 {"error"},
                                 {"usage"},
                                 {"choices"},
                                 {"choices", F},
                                 {"choices", F, "delta"},
                                 {"choices", F, "finish_reason"},
                                 {"choices", F, "delta", "reasoning_content"},
                                 {"choices", F, "delta", "reasoning"},
                                 {"choices", F, "delta", "content"},
                                 {"choices", F, "delta", "tool_calls"}};
  // The template of the previous plain content chunk.
  std::string_view content_value;
  if (template_.match(data, &content_value)) {
    if (auto content = scan::decode_string(content_value)) {
      content_delta(*content, emit);
      return true;
    }
  }
  template_.clear();
  Span v[11];
  if (!scan::scan(data, paths, v)) return false;  // invalid (the general path reports it)
  const Span &root = v[0], &error = v[1], &usage = v[2], &choices = v[3], &choice = v[4],
             &delta_value = v[5], &finish_value = v[6], &tool_calls = v[10];
  const Span* texts = v + 7;  // reasoning_content, reasoning, content: the general path's order
  if (!scan::is_object(*root)) return false;
  // An error or usage (once per answer at most) takes the general path; some servers send
  // "usage":null in every chunk. The captures hold the last value of a repeated key, which is
  // the one the general parser keeps.
  if ((error && !scan::is_null(*error)) || (usage && scan::is_object(*usage))) return false;
  // A capture counts only inside its parent's value (a repeated key replaced the parent).
  const auto inside = [](const Span& inner, const Span& outer) {
    return inner && outer && scan::within(*inner, *outer);
  };
  if (!choices || !scan::is_array(*choices)) return true;  // nothing to do, as below
  if (!inside(choice, choices) || !scan::is_object(*choice)) return true;
  const bool has_delta = inside(delta_value, choice) && scan::is_object(*delta_value);
  if (has_delta && inside(tool_calls, delta_value)) return false;
  // Decode everything before emitting anything, so a fallback never follows half an event.
  std::optional<std::string> parts[3];
  for (int i = 0; i < 3 && has_delta; ++i) {
    if (!inside(texts[i], delta_value) || !scan::is_string(*texts[i])) continue;
    parts[i] = scan::decode_string(*texts[i]);
    if (!parts[i]) return false;
  }
  std::optional<std::string> reason;
  if (inside(finish_value, choice) && scan::is_string(*finish_value)) {
    reason = scan::decode_string(*finish_value);
    if (!reason) return false;
  }
  if (parts[2] && !parts[0] && !parts[1] && !reason) {
    // A plain content chunk: the next ones are likely the same around another string.
    template_.build(data, {{*texts[2], scan::Template::Kind::string}});
  }
  if (parts[0]) reasoning_delta(*parts[0], emit);
  if (parts[1]) reasoning_delta(*parts[1], emit);
  if (parts[2]) content_delta(*parts[2], emit);
  if (reason) finish(*reason, emit);
  return true;
}

void OpenAiStreamDecoder::on_event(const SseEvent& sse, const Emit& emit) {
  if (finished_) return;
  if (sse.data == "[DONE]") {
    on_end(emit);
    return;
  }
  if (fast_path_ && fast_event(sse.data, emit)) return;
  const auto j = parse_data(sse.data, emit);
  if (!j) return;
  if (j->contains("error") && !get_value(*j, "error").is_null()) {
    fail(error_text((*j)["error"]), emit);
    return;
  }
  if (const Json& u = get_value(*j, "usage"); u.is_object()) {
    const std::int64_t cached = count(get_object(u, "prompt_tokens_details"), "cached_tokens");
    usage_.input = std::max<std::int64_t>(0, count(u, "prompt_tokens") - cached);
    usage_.cache_read = cached;
    usage_.output = count(u, "completion_tokens");
    usage_changed(emit);
  }
  const auto choices = j->find("choices");
  if (choices == j->end() || !choices->is_array() || choices->empty()) return;
  const Json& choice = (*choices)[0];
  if (!choice.is_object()) return;
  if (const auto d = choice.find("delta"); d != choice.end() && d->is_object()) {
    for (const char* key : {"reasoning_content", "reasoning"}) {
      if (const auto r = d->find(key); r != d->end() && r->is_string())
        reasoning_delta(r->get<std::string>(), emit);
    }
    if (const auto c = d->find("content"); c != d->end() && c->is_string())
      content_delta(c->get<std::string>(), emit);
    if (const auto calls = d->find("tool_calls"); calls != d->end() && calls->is_array()) {
      for (const auto& call : *calls) {
        const long index = static_cast<long>(get_int(call, "index"));
        const Json& fn = get_object(call, "function");
        if (block_ != Block::tool || tool_index_ != index) {
          open(Block::tool, emit, get_string(call, "id"), get_string(fn, "name"));
          tool_index_ = index;
        }
        if (fn.contains("arguments") && fn["arguments"].is_string()) {
          delta(fn["arguments"].get<std::string>(), emit);
        }
      }
    }
  }
  if (const auto f = choice.find("finish_reason"); f != choice.end() && f->is_string())
    finish(f->get<std::string>(), emit);
}

void AnthropicStreamDecoder::on_event(const SseEvent& sse, const Emit& emit) {
  if (finished_) return;
  const auto j = parse_data(sse.data, emit);
  if (!j) return;
  const std::string type = get_string(*j, "type", sse.event);
  if (type == "message_start") {
    const Json& usage = get_object(get_object(*j, "message"), "usage");
    usage_.input = count(usage, "input_tokens");
    usage_.cache_read = count(usage, "cache_read_input_tokens");
    usage_.cache_write = count(usage, "cache_creation_input_tokens");
    usage_.output = count(usage, "output_tokens");
    usage_changed(emit);
  } else if (type == "content_block_start") {
    const Json& block = get_object(*j, "content_block");
    const std::string kind = get_string(block, "type");
    if (kind == "text") {
      open(Block::text, emit);
      delta(get_string(block, "text"), emit);
    } else if (kind == "thinking") {
      open(Block::thinking, emit);
      signature_.clear();
      delta(get_string(block, "thinking"), emit);
      signature_ = get_string(block, "signature");
    } else if (kind == "redacted_thinking") {
      // pi's form of a redacted block: a placeholder text, the data as its signature, sent
      // back as it came (amendments A21).
      open(Block::thinking, emit);
      delta("[Reasoning redacted]", emit);
      signature_ = get_string(block, "data");
      redacted_ = true;
    } else if (kind == "tool_use") {
      open(Block::tool, emit, get_string(block, "id"), get_string(block, "name"));
    }
  } else if (type == "content_block_delta") {
    // A redacted block has no deltas: anything sent for it would change its placeholder text or
    // the data that goes back (found by fuzz_anthropic).
    if (redacted_) return;
    const Json& d = get_object(*j, "delta");
    const std::string kind = get_string(d, "type");
    if (kind == "text_delta") delta(get_string(d, "text"), emit);
    if (kind == "thinking_delta") delta(get_string(d, "thinking"), emit);
    if (kind == "input_json_delta") delta(get_string(d, "partial_json"), emit);
    // A signature arrives after the thinking it signs (amendments A21).
    if (kind == "signature_delta" && block_ == Block::thinking)
      signature_ += get_string(d, "signature");
  } else if (type == "content_block_stop") {
    close(emit, block_ == Block::thinking ? std::exchange(signature_, {}) : std::string());
  } else if (type == "message_delta") {
    const Json& d = get_object(*j, "delta");
    if (const auto r = d.find("stop_reason"); r != d.end() && r->is_string()) {
      const std::string reason = *r;
      if (reason == "max_tokens") {
        stop_reason_ = StopReason::length;
      } else if (reason == "tool_use") {
        stop_reason_ = StopReason::tool_use;
      } else if (reason == "refusal") {
        fail("stop_reason: refusal", emit);
        return;
      } else {
        stop_reason_ = StopReason::stop;
      }
    }
    if (const auto u = j->find("usage"); u != j->end() && u->is_object()) {
      if (u->contains("output_tokens")) usage_.output = count(*u, "output_tokens");
      if (u->contains("input_tokens")) usage_.input = count(*u, "input_tokens");
      usage_changed(emit);
    }
  } else if (type == "message_stop") {
    on_end(emit);
  } else if (type == "error") {
    fail(error_text(get_value(*j, "error")), emit);
  }
  // ping and unknown events are ignored.
}

}  // namespace rebound::session::llm
