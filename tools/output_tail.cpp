#include "tools/output_tail.h"

#include <algorithm>

#include "protocol/json_line.h"

namespace rebound::tools {

void OutputTail::append(std::string_view data) {
  total_bytes_ += data.size();
  total_newlines_ += static_cast<std::size_t>(std::count(data.begin(), data.end(), '\n'));
  buffer_.append(data);
  if (buffer_.size() > limits_.keep_all) {
    // Keep a window from a line start (never inside a UTF-8 sequence).
    std::size_t cut = buffer_.size() - limits_.window;
    const std::size_t nl = buffer_.find('\n', cut);
    if (nl != std::string::npos && nl + 1 < buffer_.size()) cut = nl + 1;
    dropped_ += cut;
    buffer_.erase(0, cut);
  }
}

OutputTail::Shown OutputTail::shown() const {
  std::string_view text = buffer_;
  // A trailing newline does not start another line.
  const bool ends_with_lf = !text.empty() && text.back() == '\n';
  const std::size_t lines =
      static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')) + (ends_with_lf ? 0 : 1);
  bool truncated = dropped_ > 0;
  std::size_t start = 0;
  if (text.size() > limits_.max_bytes) {
    start = text.size() - limits_.max_bytes;
    truncated = true;
  }
  if (lines > limits_.max_lines) {
    // Skip to the first of the last max_lines lines.
    std::size_t to_skip = lines - limits_.max_lines;
    std::size_t pos = 0;
    while (to_skip > 0) {
      pos = text.find('\n', pos) + 1;
      --to_skip;
    }
    start = std::max(start, pos);
    truncated = true;
  }
  if (start > 0 && truncated) {
    // Begin at a line start when the byte cut fell inside a line, if that leaves something.
    if (text[start - 1] != '\n') {
      const std::size_t next = text.find('\n', start);
      if (next != std::string_view::npos && next + 1 < text.size()) start = next + 1;
    }
    // Never start inside a UTF-8 sequence.
    while (start < text.size() && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80)
      ++start;
  }
  return {std::string(text.substr(start)), truncated};
}

Truncation OutputTail::truncation() const {
  std::string text = protocol::replace_invalid_utf8(buffer_);
  Truncation t =
      truncate_tail(text, static_cast<std::int64_t>(limits_.max_lines), limits_.max_bytes);
  if (dropped_ > 0) {
    // The window is not the whole output: the totals are.
    t.truncated = true;
    if (t.by == Truncation::By::none) t.by = Truncation::By::bytes;
    t.total_lines = total_newlines_ + 1;
    t.total_bytes = text.size() + dropped_;
  }
  return t;
}

std::size_t OutputTail::last_line_size() const {
  const std::size_t nl = buffer_.rfind('\n');
  return nl == std::string::npos ? buffer_.size() + dropped_ : buffer_.size() - nl - 1;
}

}  // namespace rebound::tools
