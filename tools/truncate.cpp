#include "tools/truncate.h"

#include <cstdio>
#include <vector>

namespace rebound::tools {

namespace {

// The lines of `text` split at every \n (views into it).
std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  std::size_t start = 0;
  while (true) {
    const std::size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) {
      lines.push_back(text.substr(start));
      return lines;
    }
    lines.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
}

Truncation untouched(std::string_view text, std::size_t lines, std::int64_t max_lines,
                     std::size_t max_bytes) {
  Truncation t;
  t.content = std::string(text);
  t.total_lines = t.output_lines = lines;
  t.total_bytes = t.output_bytes = text.size();
  t.max_lines = max_lines;
  t.max_bytes = max_bytes;
  return t;
}

// The totals and limits of a text that is over a limit; the kept part is filled in by the caller.
Truncation cut(std::string_view text, std::size_t lines, std::int64_t max_lines,
               std::size_t max_bytes) {
  Truncation t;
  t.truncated = true;
  t.total_lines = lines;
  t.total_bytes = text.size();
  t.max_lines = max_lines;
  t.max_bytes = max_bytes;
  return t;
}

}  // namespace

protocol::Json Truncation::to_json() const {
  protocol::Json j = protocol::Json::object();
  j["content"] = content;
  j["truncated"] = truncated;
  j["truncatedBy"] = by == By::lines   ? protocol::Json("lines")
                     : by == By::bytes ? protocol::Json("bytes")
                                       : protocol::Json(nullptr);
  j["totalLines"] = total_lines;
  j["totalBytes"] = total_bytes;
  j["outputLines"] = output_lines;
  j["outputBytes"] = output_bytes;
  j["lastLinePartial"] = last_line_partial;
  j["firstLineExceedsLimit"] = first_line_exceeds_limit;
  j["maxLines"] = max_lines;
  j["maxBytes"] = max_bytes;
  return j;
}

Truncation truncate_head(std::string_view text, std::int64_t max_lines, std::size_t max_bytes) {
  const auto lines = split_lines(text);
  const auto limit = static_cast<std::size_t>(max_lines);
  if (lines.size() <= limit && text.size() <= max_bytes)
    return untouched(text, lines.size(), max_lines, max_bytes);
  Truncation t = cut(text, lines.size(), max_lines, max_bytes);
  if (lines.front().size() > max_bytes) {
    t.by = Truncation::By::bytes;
    t.first_line_exceeds_limit = true;
    return t;
  }
  std::size_t bytes = 0, kept = 0;
  t.by = Truncation::By::lines;
  for (; kept < lines.size() && kept < limit; ++kept) {
    const std::size_t add = lines[kept].size() + (kept > 0 ? 1 : 0);
    if (bytes + add > max_bytes) {
      t.by = Truncation::By::bytes;
      break;
    }
    bytes += add;
  }
  // The kept lines are a prefix of the text: the first `bytes` bytes.
  t.content = std::string(text.substr(0, bytes));
  t.output_lines = kept;
  t.output_bytes = bytes;
  return t;
}

Truncation truncate_tail(std::string_view text, std::int64_t max_lines, std::size_t max_bytes) {
  const auto lines = split_lines(text);
  const auto limit = static_cast<std::size_t>(max_lines);
  if (lines.size() <= limit && text.size() <= max_bytes)
    return untouched(text, lines.size(), max_lines, max_bytes);
  Truncation t = cut(text, lines.size(), max_lines, max_bytes);
  t.by = Truncation::By::lines;
  std::size_t bytes = 0, kept = 0;
  for (std::size_t i = lines.size(); i > 0 && kept < limit; --i) {
    const std::string_view line = lines[i - 1];
    const std::size_t add = line.size() + (kept > 0 ? 1 : 0);
    if (bytes + add > max_bytes) {
      t.by = Truncation::By::bytes;
      if (kept == 0) {
        // The last line alone is too long: its last max_bytes bytes, from a character start.
        std::size_t start = line.size() - max_bytes;
        while (start < line.size() && (static_cast<unsigned char>(line[start]) & 0xC0) == 0x80)
          ++start;
        t.content = std::string(line.substr(start));
        t.output_lines = 1;
        t.output_bytes = t.content.size();
        t.last_line_partial = true;
        return t;
      }
      break;
    }
    bytes += add;
    ++kept;
  }
  t.content = std::string(text.substr(text.size() - bytes));
  t.output_lines = kept;
  t.output_bytes = bytes;
  return t;
}

std::string_view utf8_prefix(std::string_view text, std::size_t max) {
  if (text.size() <= max) return text;
  std::size_t end = max;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80)
    --end;
  return text.substr(0, end);
}

std::string format_size(std::size_t bytes) {
  if (bytes < 1024) return std::to_string(bytes) + "B";
  const bool mb = bytes >= 1024 * 1024;
  const std::size_t unit = mb ? 1024 * 1024 : 1024;
  // One decimal, half up: tenths = round(bytes * 10 / unit).
  const unsigned long long tenths = (static_cast<unsigned long long>(bytes) * 10 * 2 + unit) /
                                    (2 * static_cast<unsigned long long>(unit));
  char buf[64];
  std::snprintf(buf, sizeof buf, "%llu.%llu%s", tenths / 10, tenths % 10, mb ? "MB" : "KB");
  return buf;
}

std::optional<protocol::Json> truncate_result_head(std::vector<protocol::ContentBlock>& content) {
  using protocol::ContentBlock;
  std::string joined;
  bool first = true;
  for (const auto& block : content) {
    if (block.kind != ContentBlock::Kind::text) continue;
    if (!first) joined += '\n';
    joined += block.text;
    first = false;
  }
  Truncation t = truncate_head(joined);
  if (!t.truncated) return std::nullopt;
  std::string text;
  if (t.first_line_exceeds_limit) {
    const std::string line = joined.substr(0, joined.find('\n'));
    t.content = std::string(utf8_prefix(line, kMaxBytes));
    t.output_lines = 1;
    t.output_bytes = t.content.size();
    text = t.content + "\n\n[Showing the first " + format_size(kMaxBytes) + " of line 1 (" +
           format_size(line.size()) + ").]";
  } else {
    text = t.content + "\n\n[Showing lines 1-" + std::to_string(t.output_lines) + " of " +
           std::to_string(t.total_lines) +
           (t.by == Truncation::By::bytes ? " (" + format_size(kMaxBytes) + " limit).]" : ".]");
  }
  std::vector<ContentBlock> kept{ContentBlock::make_text(std::move(text))};
  for (auto& block : content)
    if (block.kind != ContentBlock::Kind::text) kept.push_back(std::move(block));
  content = std::move(kept);
  return t.to_json();
}

}  // namespace rebound::tools
