#pragma once
// The output of a `bash` command as the model and the client see it: the tail of the stream,
// at most kMaxLines lines and kMaxBytes bytes (cut at a line start and a UTF-8 boundary), with
// `truncated` set when anything was cut. Until the limit is first exceeded everything is kept,
// so whoever streams into it can still copy the whole output to a file at that moment. Pure.

#include <cstddef>
#include <string>
#include <string_view>

namespace rebound::session {

class OutputTail {
 public:
  static constexpr std::size_t kMaxBytes = 50 * 1024;
  static constexpr std::size_t kMaxLines = 2000;

  explicit OutputTail(std::size_t max_bytes = kMaxBytes, std::size_t max_lines = kMaxLines)
      : max_bytes_(max_bytes), max_lines_(max_lines) {}

  void append(std::string_view data);
  /// Whether the output so far is over a limit.
  bool over_limit() const { return total_bytes_ > max_bytes_ || total_lines_ > max_lines_; }
  /// Everything received so far, as long as nothing was dropped yet (see above).
  const std::string& buffered() const { return buffer_; }
  /// Whether buffered() still holds the whole output.
  bool complete() const { return dropped_ == 0; }
  std::size_t total_bytes() const { return total_bytes_; }

  /// The text to show, and whether it was cut.
  struct Result {
    std::string text;
    bool truncated = false;
  };
  Result result() const;

 private:
  std::size_t max_bytes_, max_lines_;
  std::string buffer_;
  std::size_t total_bytes_ = 0, total_lines_ = 0, dropped_ = 0;
};

}  // namespace rebound::session
