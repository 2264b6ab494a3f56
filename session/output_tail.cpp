#include "session/output_tail.h"

#include <algorithm>

namespace rebound::session {

void OutputTail::append(std::string_view data) {
  total_bytes_ += data.size();
  total_lines_ += static_cast<std::size_t>(std::count(data.begin(), data.end(), '\n'));
  buffer_.append(data);
  // Keep a bounded window once it is far past the limit; the tail is all that is shown.
  if (buffer_.size() > 4 * max_bytes_) {
    const std::size_t drop = buffer_.size() - 2 * max_bytes_;
    buffer_.erase(0, drop);
    dropped_ += drop;
  }
}

OutputTail::Result OutputTail::result() const {
  std::string_view text = buffer_;
  // A trailing newline does not start another line.
  const bool ends_with_lf = !text.empty() && text.back() == '\n';
  const std::size_t lines =
      static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')) + (ends_with_lf ? 0 : 1);
  bool truncated = dropped_ > 0;
  std::size_t start = 0;
  if (text.size() > max_bytes_) {
    start = text.size() - max_bytes_;
    truncated = true;
  }
  if (lines > max_lines_) {
    // Skip to the first of the last max_lines_ lines.
    std::size_t to_skip = lines - max_lines_;
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
    if (start > 0 && text[start - 1] != '\n') {
      const std::size_t next = text.find('\n', start);
      if (next != std::string_view::npos && next + 1 < text.size()) start = next + 1;
    }
    // Never start inside a UTF-8 sequence.
    while (start < text.size() && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80)
      ++start;
  }
  return {std::string(text.substr(start)), truncated};
}

}  // namespace rebound::session
