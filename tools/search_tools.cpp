// The work of grep and find (tools.md sections 4.5, 4.6): the built-in walker, PCRE2, nothing
// external run.

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <optional>

#include "protocol/json_line.h"
#include "tools/builtin_tools.h"
#include "tools/file_io.h"
#include "tools/glob.h"
#include "tools/paths.h"
#include "tools/regex.h"
#include "tools/tool_args.h"
#include "tools/truncate.h"
#include "tools/walker.h"

namespace rebound::tools {

using protocol::ContentBlock;
using protocol::Json;
using session::ToolResult;

namespace {

constexpr std::size_t kMaxShownChars = 500;
constexpr std::size_t kMmapFrom = 256 * 1024;

// A file's bytes: mapped when large, read into `buffer` otherwise.
class FileBytes {
 public:
  bool open(const std::string& path, std::string& buffer) {
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
    if (!fd) return false;
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
    const auto size = static_cast<std::size_t>(st.st_size);
    if (size >= kMmapFrom) {
      void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd.get(), 0);
      if (p == MAP_FAILED) return false;
      map_ = p;
      map_size_ = size;
      data_ = std::string_view(static_cast<const char*>(p), size);
      return true;
    }
    if (!read_all(fd.get(), buffer, kMmapFrom * 4)) return false;
    data_ = buffer;
    return true;
  }
  ~FileBytes() {
    if (map_) ::munmap(map_, map_size_);
  }
  std::string_view data() const { return data_; }

 private:
  void* map_ = nullptr;
  std::size_t map_size_ = 0;
  std::string_view data_;
};

// The line as shown: CRs dropped, invalid UTF-8 replaced, cut to 500 code points.
std::string shown_line(std::string_view raw, bool& cut) {
  std::string s;
  s.reserve(raw.size());
  for (char c : raw)
    if (c != '\r') s += c;
  if (std::any_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) >= 0x80; }))
    s = protocol::replace_invalid_utf8(s);
  std::size_t points = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) continue;
    if (points == kMaxShownChars) {
      s.resize(i);
      s += "... [truncated]";
      cut = true;
      return s;
    }
    ++points;
  }
  return s;
}

struct LineSpan {
  std::size_t start, end;  // [start, end) without the \n
};

LineSpan line_around(std::string_view data, std::size_t pos) {
  std::size_t start = pos;
  while (start > 0 && data[start - 1] != '\n')
    --start;
  const void* nl = std::memchr(data.data() + pos, '\n', data.size() - pos);
  const std::size_t end =
      nl ? static_cast<std::size_t>(static_cast<const char*>(nl) - data.data()) : data.size();
  return {start, end};
}

std::string_view matched_text(std::string_view data, LineSpan l) {
  std::string_view line = data.substr(l.start, l.end - l.start);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

struct GrepRun {
  Matcher matcher;
  std::int64_t limit;
  std::int64_t context;
  std::int64_t matches = 0;
  bool lines_cut = false;
  std::string out;
  std::optional<std::string> complex_at;  // "<rel>:<line>"
  const std::atomic<bool>& cancelled;

  bool full() const { return matches >= limit || out.size() > kMaxBytes; }

  void emit(std::string_view rel, std::size_t line_no, char sep, std::string_view text) {
    if (!out.empty()) out += '\n';
    out.append(rel);
    out += sep;
    out += std::to_string(line_no);
    out += sep;
    out += ' ';
    out += shown_line(text, lines_cut);
  }

  void search(std::string_view rel, std::string_view data) {
    if (std::memchr(data.data(), '\0', data.size())) return;  // binary
    std::size_t pos = 0, counted_to = 0, line_no = 1;
    bool per_line = false;  // after the whole-buffer search gave up: one line at a time
    while (pos <= data.size() && !full()) {
      std::size_t at = pos;
      if (!per_line) {
        const auto r = matcher.search(data, pos, at);
        if (r == Matcher::Result::no_match) return;
        if (r == Matcher::Result::too_complex) {
          per_line = true;
          at = pos;
        }
      }
      const LineSpan l = line_around(data, at);
      line_no += static_cast<std::size_t>(
          std::count(data.begin() + static_cast<std::ptrdiff_t>(counted_to),
                     data.begin() + static_cast<std::ptrdiff_t>(l.start), '\n'));
      counted_to = l.start;
      // The empty "line" after a final \n is not a line of the file.
      if (l.start == data.size() && (data.empty() || data.back() == '\n')) return;
      const std::string_view text = matched_text(data, l);
      std::size_t ignored = 0;
      const auto alone = matcher.search(text, 0, ignored);
      if (alone == Matcher::Result::too_complex) {
        complex_at = std::string(rel) + ":" + std::to_string(line_no);
        return;
      }
      if (alone == Matcher::Result::match) {
        ++matches;
        if (context > 0)
          emit_with_context(rel, data, l, line_no);
        else
          emit(rel, line_no, ':', text);
      }
      if (l.end >= data.size()) return;
      pos = l.end + 1;
      if (cancelled.load(std::memory_order_relaxed)) return;
    }
  }

  void emit_with_context(std::string_view rel, std::string_view data, LineSpan l,
                         std::size_t line_no) {
    std::vector<LineSpan> before;
    LineSpan cur = l;
    for (std::int64_t k = 0; k < context && cur.start > 0; ++k) {
      cur = line_around(data, cur.start - 1);
      before.push_back(cur);
    }
    for (std::size_t k = before.size(); k > 0; --k)
      emit(rel, line_no - k, '-', matched_text(data, before[k - 1]));
    emit(rel, line_no, ':', matched_text(data, l));
    cur = l;
    for (std::int64_t k = 1; k <= context && cur.end < data.size(); ++k) {
      cur = line_around(data, cur.end + 1);
      if (cur.start == data.size()) break;  // after the final \n
      emit(rel, line_no + static_cast<std::size_t>(k), '-', matched_text(data, cur));
    }
  }
};

std::string base_name(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

ToolResult run_grep(const Json& args, const session::ToolContext& context,
                    const std::atomic<bool>& cancelled) {
  const std::string abs = resolve_path(string_arg(args, "path", "."), context.cwd);
  struct stat st {};
  if (::stat(abs.c_str(), &st) != 0) return ToolResult::error("Path not found: " + abs);
  std::string error;
  Regex::Options options;
  options.ignore_case = args.value("ignoreCase", false);
  options.literal = args.value("literal", false);
  auto regex = Regex::compile(string_arg(args, "pattern", ""), options, error);
  if (!regex) return ToolResult::error("Invalid regular expression: " + error);
  std::optional<PathGlob> glob;
  std::optional<Matcher> glob_matcher;
  if (args.contains("glob") && args["glob"].is_string()) {
    glob = PathGlob::compile(args["glob"].get<std::string>(), error);
    if (!glob) return ToolResult::error("Invalid glob: " + error);
    glob_matcher.emplace(glob->regex());
  }
  GrepRun run{Matcher(regex),
              std::max<std::int64_t>(1, count_arg(args, "limit", 100)),
              std::max<std::int64_t>(0, count_arg(args, "context", 0)),
              0,
              false,
              {},
              {},
              cancelled};
  std::string buffer;
  auto search_file = [&](const std::string& file, std::string_view rel) {
    FileBytes bytes;
    if (bytes.open(file, buffer)) run.search(rel, bytes.data());
  };
  if (S_ISDIR(st.st_mode)) {
    walk(
        abs,
        [&](const WalkEntry& e) {
          if (e.is_dir) return true;
          if (glob && !glob->matches(e.rel, *glob_matcher)) return true;
          search_file(std::string(e.abs), e.rel);
          return !run.full() && !run.complex_at;
        },
        cancelled);
  } else {
    search_file(abs, base_name(abs));
  }
  if (cancelled) return ToolResult::error("Operation aborted");
  if (run.complex_at)
    return ToolResult::error("Regular expression too complex (match limit exceeded in " +
                             *run.complex_at + ")");
  if (run.matches == 0) return text_result("No matches found");
  Truncation t = truncate_head(run.out, kNoLineLimit);
  std::vector<std::string> notices;
  Json details = Json::object();
  if (run.matches >= run.limit) {
    notices.push_back(std::to_string(run.limit) + " matches limit reached. Use limit=" +
                      std::to_string(run.limit * 2) + " for more, or refine pattern");
    details["matchLimitReached"] = run.limit;
  }
  if (t.truncated) {
    notices.push_back(format_size(kMaxBytes) + " limit reached");
    details["truncation"] = t.to_json();
  }
  if (run.lines_cut) {
    notices.push_back("Some lines truncated to 500 chars. Use read tool to see full lines");
    details["linesTruncated"] = true;
  }
  return listing_result(t.content, notices, std::move(details));
}

ToolResult run_find(const Json& args, const session::ToolContext& context,
                    const std::atomic<bool>& cancelled) {
  const std::string abs = resolve_path(string_arg(args, "path", "."), context.cwd);
  struct stat st {};
  if (::stat(abs.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return ToolResult::error("Path not found: " + abs);
  std::string error;
  auto glob = PathGlob::compile(string_arg(args, "pattern", ""), error);
  if (!glob) return ToolResult::error("Invalid glob: " + error);
  Matcher matcher(glob->regex());
  const std::int64_t limit = std::max<std::int64_t>(1, count_arg(args, "limit", 1000));
  std::int64_t count = 0;
  std::string out;
  walk(
      abs,
      [&](const WalkEntry& e) {
        if (!glob->matches(e.rel, matcher)) return true;
        if (!out.empty()) out += '\n';
        out.append(e.rel);
        if (e.is_dir) out += '/';
        ++count;
        return count < limit && out.size() <= kMaxBytes;
      },
      cancelled);
  if (cancelled) return ToolResult::error("Operation aborted");
  if (count == 0) return text_result("No files found matching pattern");
  Truncation t = truncate_head(out, kNoLineLimit);
  std::vector<std::string> notices;
  Json details = Json::object();
  if (count >= limit) {
    notices.push_back(std::to_string(limit) + " results limit reached. Use limit=" +
                      std::to_string(limit * 2) + " for more, or refine pattern");
    details["resultLimitReached"] = limit;
  }
  if (t.truncated) {
    notices.push_back(format_size(kMaxBytes) + " limit reached");
    details["truncation"] = t.to_json();
  }
  return listing_result(t.content, notices, std::move(details));
}

}  // namespace rebound::tools
