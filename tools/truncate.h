#pragma once
// Truncation of tool output (tools.md section 3.1): at most 2000 lines and 50KB, whichever
// comes first; head (read, grep, find, ls) keeps whole lines from the start, tail (bash) whole
// lines from the end. Also the size format of the notices. Pure.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <optional>
#include <vector>

#include "protocol/json.h"
#include "protocol/messages.h"

namespace rebound::tools {

inline constexpr std::size_t kMaxLines = 2000;
inline constexpr std::size_t kMaxBytes = 50 * 1024;
/// JavaScript's largest safe integer: the line limit of grep, find and ls, as pi writes it.
inline constexpr std::int64_t kNoLineLimit = 9007199254740991;

struct Truncation {
  std::string content;  // the kept text
  bool truncated = false;
  enum class By { none, lines, bytes } by = By::none;
  std::size_t total_lines = 0, total_bytes = 0;
  std::size_t output_lines = 0, output_bytes = 0;
  bool last_line_partial = false;
  bool first_line_exceeds_limit = false;
  std::int64_t max_lines = kMaxLines;
  std::size_t max_bytes = kMaxBytes;

  /// The truncation object of section 3.1, keys in its order.
  protocol::Json to_json() const;
};

Truncation truncate_head(std::string_view text, std::int64_t max_lines = kMaxLines,
                         std::size_t max_bytes = kMaxBytes);
Truncation truncate_tail(std::string_view text, std::int64_t max_lines = kMaxLines,
                         std::size_t max_bytes = kMaxBytes);

/// The longest prefix of `text` of at most `max` bytes that ends on a UTF-8 character boundary.
std::string_view utf8_prefix(std::string_view text, std::size_t max);

/// `<n>B`, `<x>KB`, `<x>MB` with one decimal rounded half up.
std::string format_size(std::size_t bytes);

/// A peer's tool result (mcp.md section 6, extensions.md section 4.5): head truncation over its
/// text blocks joined with `\n`. Within the limits `content` is left alone and nothing is
/// returned; over them it becomes one text block of the kept lines and a notice, then the
/// non-text blocks in their order, and the truncation object is returned. A first line over
/// the byte limit keeps its first 50KB (an answer cannot be re-read with an offset).
std::optional<protocol::Json> truncate_result_head(std::vector<protocol::ContentBlock>& content);

}  // namespace rebound::tools
