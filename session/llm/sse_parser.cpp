#include "session/llm/sse_parser.h"

#include <cstring>

#include "session/size_text.h"

namespace rebound::session::llm {

namespace {

// The first CR or LF at or after `from` (npos when none): two vectorised searches instead of
// find_first_of's per-byte test against a set.
std::size_t line_end(std::string_view bytes, std::size_t from) {
  const char* begin = bytes.data() + from;
  const std::size_t size = bytes.size() - from;
  const void* lf = std::memchr(begin, '\n', size);
  const std::size_t lf_at =
      lf ? static_cast<std::size_t>(static_cast<const char*>(lf) - begin) : size;
  const void* cr = std::memchr(begin, '\r', lf_at);
  if (cr) return from + static_cast<std::size_t>(static_cast<const char*>(cr) - begin);
  return lf ? from + lf_at : std::string_view::npos;
}

}  // namespace

void SseParser::fail(const char* what, std::size_t limit) {
  if (!error_.empty()) return;
  error_ = std::string(what) + " " + size_text(limit);
  std::string().swap(pending_);
  std::string().swap(data_);
  std::string().swap(stray_);
  has_data_ = false;
}

void SseParser::feed(std::string_view bytes, const Sink& sink) {
  if (!error_.empty()) return;
  if (!started_) {
    pending_.append(bytes);
    if (pending_.size() < 3 &&
        std::string_view("\xEF\xBB\xBF").substr(0, pending_.size()) == pending_) {
      return;  // might still become a BOM
    }
    started_ = true;
    if (pending_.rfind("\xEF\xBB\xBF", 0) == 0) pending_.erase(0, 3);
    std::string first = std::move(pending_);
    pending_.clear();
    feed(first, sink);
    return;
  }
  std::size_t i = 0;
  if (skip_lf_ && !bytes.empty()) {
    skip_lf_ = false;
    if (bytes[0] == '\n') i = 1;
  }
  while (i < bytes.size()) {
    const std::size_t end = line_end(bytes, i);
    if (end == std::string_view::npos) {
      if (pending_.size() + (bytes.size() - i) > max_line_) {
        return fail("an SSE line longer than", max_line_);
      }
      pending_.append(bytes.substr(i));
      return;
    }
    if (pending_.size() + (end - i) > max_line_) return fail("an SSE line longer than", max_line_);
    if (pending_.empty()) {
      line(bytes.substr(i, end - i), sink);
    } else {
      pending_.append(bytes.substr(i, end - i));
      std::string whole = std::move(pending_);
      pending_.clear();
      line(whole, sink);
    }
    if (!error_.empty()) return;
    i = end + 1;
    if (bytes[end] == '\r') {
      if (i < bytes.size()) {
        if (bytes[i] == '\n') ++i;
      } else {
        skip_lf_ = true;
      }
    }
  }
}

void SseParser::finish(const Sink& sink) {
  if (!error_.empty()) return;
  if (!started_ && !pending_.empty()) {
    started_ = true;
    std::string rest = std::move(pending_);
    pending_.clear();
    feed(rest, sink);
  }
  if (!pending_.empty()) {
    std::string rest = std::move(pending_);
    pending_.clear();
    line(rest, sink);
  }
  if (error_.empty()) dispatch(sink);
}

void SseParser::line(std::string_view text, const Sink& sink) {
  if (text.empty()) {
    dispatch(sink);
    return;
  }
  if (text[0] == ':') return;  // comment
  std::string_view field = text, value;
  if (const auto colon = text.find(':'); colon != std::string_view::npos) {
    field = text.substr(0, colon);
    value = text.substr(colon + 1);
    if (!value.empty() && value[0] == ' ') value.remove_prefix(1);
  }
  if (field == "data") {
    if (data_.size() + value.size() + 1 > max_event_)
      return fail("an SSE event larger than", max_event_);
    data_.append(value);
    data_.push_back('\n');
    has_data_ = true;
  } else if (field == "event") {
    event_.assign(value);
  } else if (field == "id") {
    if (value.find('\0') == std::string_view::npos) id_ = std::string(value);
  } else if (keep_stray_ && field != "retry") {
    if (stray_.size() + text.size() + 1 > max_event_)
      return fail("an SSE event larger than", max_event_);
    stray_.append(text);
    stray_.push_back('\n');
  }
  // "retry" and unknown fields are otherwise ignored.
}

void SseParser::dispatch(const Sink& sink) {
  if (!stray_.empty()) {
    SseEvent stray;
    stray.event.clear();
    stray.data = std::move(stray_);
    stray.stray = true;
    stray_.clear();
    sink(stray);
  }
  if (has_data_) {
    current_.event = event_.empty() ? std::string_view("message") : std::string_view(event_);
    current_.data.swap(data_);
    current_.data.pop_back();  // the LF after the last data line
    current_.id = id_;
    sink(current_);
  }
  event_.clear();
  data_.clear();  // the previous event's buffer, kept with its capacity
  has_data_ = false;
}

}  // namespace rebound::session::llm
