#pragma once
// The output of a shell command as the model and the client see it (tools.md sections 3.1 and
// 4.4): the stream is kept whole up to `keep_all` bytes, then as a window of its last `window`
// bytes starting at a line, with the totals of all of it. Two views of the same tail: the
// `bash` command's (its last max_lines lines and max_bytes bytes from a line start, `truncated`
// when anything was cut) and the bash tool's (section 3.1's tail truncation with its notices'
// figures). Until the window first drops bytes everything is kept, so whoever streams into it
// can still copy the whole output to a file at the moment it first goes over a limit. The
// limits are tools/truncate.h's. Pure.

#include <cstddef>
#include <string>
#include <string_view>

#include "tools/truncate.h"

namespace rebound::tools {

class OutputTail {
 public:
  struct Limits {
    std::size_t max_bytes = kMaxBytes;
    std::size_t max_lines = kMaxLines;
    std::size_t keep_all = 1024 * 1024;  // kept whole up to here...
    std::size_t window = 512 * 1024;     // ...then this much of the end (enough for either view)
  };

  OutputTail() : OutputTail(Limits{}) {}
  explicit OutputTail(Limits limits) : limits_(limits) {}

  void append(std::string_view data);

  /// The `bash` command's rule: more bytes than max_bytes or more line ends than max_lines.
  bool over_limit() const {
    return total_bytes_ > limits_.max_bytes || total_newlines_ > limits_.max_lines;
  }
  /// The bash tool's rule (pi's count: the text after the last line end is a line too).
  bool over_tool_limit() const {
    return total_bytes_ > limits_.max_bytes || total_newlines_ + 1 > limits_.max_lines;
  }
  /// Everything received so far, as long as nothing was dropped yet (see above).
  const std::string& buffered() const { return buffer_; }
  /// Whether buffered() still holds the whole output.
  bool complete() const { return dropped_ == 0; }
  std::size_t total_bytes() const { return total_bytes_; }

  /// The `bash` command's view: the text to show, and whether it was cut.
  struct Shown {
    std::string text;
    bool truncated = false;
  };
  Shown shown() const;
  /// The bash tool's view: truncate_tail of the output (invalid UTF-8 replaced), its totals
  /// those of the whole output when the window dropped its head.
  Truncation truncation() const;
  /// The size of the output's last line, all of it (also what the window dropped).
  std::size_t last_line_size() const;

 private:
  Limits limits_;
  std::string buffer_;
  std::size_t total_bytes_ = 0, total_newlines_ = 0, dropped_ = 0;
};

}  // namespace rebound::tools
