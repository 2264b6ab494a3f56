#include "protocol/line_reader.h"

namespace rebound::protocol {

LineReader::LineReader(std::size_t max_line_bytes) : max_(max_line_bytes) {}

bool is_blank_line(std::string_view line) {
  return line.find_first_not_of(" \t\r") == std::string_view::npos;
}

void LineReader::emit_line(const Sink& sink) {
  if (!buffer_.empty() && buffer_.back() == '\r') buffer_.pop_back();
  if (buffer_.size() > max_) {
    sink(LineItem{LineItem::Kind::too_long, {}});
  } else if (!is_blank_line(buffer_)) {
    sink(LineItem{LineItem::Kind::line, std::move(buffer_)});
  }
  buffer_.clear();
}

void LineReader::feed(std::string_view bytes, const Sink& sink) {
  while (!bytes.empty()) {
    const auto lf = bytes.find('\n');
    const auto piece = bytes.substr(0, lf);
    if (discarding_) {
      if (lf != std::string_view::npos) discarding_ = false;
    } else {
      buffer_.append(piece);
      if (lf != std::string_view::npos) {
        emit_line(sink);
      } else if (buffer_.size() > max_ + 1) {
        // One byte of slack: a CR at the limit may still be stripped when the LF comes.
        buffer_.clear();
        buffer_.shrink_to_fit();
        discarding_ = true;
        sink(LineItem{LineItem::Kind::too_long, {}});
      }
    }
    if (lf == std::string_view::npos) break;
    bytes.remove_prefix(lf + 1);
  }
}

void LineReader::finish(const Sink& sink) {
  if (discarding_) {
    discarding_ = false;
    return;
  }
  if (!buffer_.empty()) emit_line(sink);
}

}  // namespace rebound::protocol
