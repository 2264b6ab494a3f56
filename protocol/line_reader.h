#pragma once
// Splits a byte stream into protocol lines (protocol.md section 1): LF only, a trailing CR
// stripped, blank lines dropped, a line over the limit reported once and skipped to its LF.
// Pure and synchronous; the server's stdin reader feeds it chunks as they arrive, split
// anywhere. Not thread-safe: one owner.

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace rebound::protocol {

/// What the reader hands out: a complete line (without LF and trailing CR), or the notice that
/// a line exceeded the limit (its bytes are dropped up to and including its LF).
struct LineItem {
  enum class Kind { line, too_long };
  Kind kind;
  std::string text;  // the line for Kind::line; empty for Kind::too_long
};

class LineReader {
 public:
  using Sink = std::function<void(LineItem)>;

  /// `max_line_bytes` is the largest accepted line, not counting its LF and trailing CR.
  explicit LineReader(std::size_t max_line_bytes);

  /// Feeds the next chunk; calls `sink` for every item completed by it, in order.
  void feed(std::string_view bytes, const Sink& sink);

  /// End of input: an unterminated last line is handed out like any other.
  void finish(const Sink& sink);

  std::size_t max_line_bytes() const { return max_; }

 private:
  void emit_line(const Sink& sink);

  std::size_t max_;
  std::string buffer_;
  bool discarding_ = false;  // inside a too-long line, waiting for its LF
};

/// True when the line holds only spaces, tabs and CRs (or nothing).
bool is_blank_line(std::string_view line);

}  // namespace rebound::protocol
