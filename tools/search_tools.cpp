// The work of grep and find (tools.md sections 4.5, 4.6): the built-in walker, PCRE2, nothing
// external run.

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "protocol/json_line.h"
#include "tools/builtin_tools.h"
#include "tools/file_io.h"
#include "tools/glob.h"
#include "tools/mapped_file.h"
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

// A file's bytes: mapped when large (a file that shrinks meanwhile is never fatal), read into
// `buffer` otherwise.
class FileBytes {
 public:
  // `no_follow`: a file the walk listed as no symlink, so not followed if it became one since.
  bool open(const std::string& path, std::string& buffer, const OpenFile& open_file,
            bool no_follow) {
    UniqueFd fd(open_with(open_file, path,
                          O_RDONLY | O_CLOEXEC | O_NONBLOCK | (no_follow ? O_NOFOLLOW : 0)));
    if (!fd) return false;
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
    const auto size = static_cast<std::size_t>(st.st_size);
    if (size >= kMmapFrom) {
      if (!map_.map(fd.get(), size)) return false;
      data_ = map_.data();
      return true;
    }
    if (!read_all(fd.get(), buffer, kMmapFrom * 4)) return false;
    data_ = buffer;
    return true;
  }
  std::string_view data() const { return data_; }

 private:
  MappedFile map_;
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

// The buffer search runs over windows of lines whose size follows how long a call takes, so
// that no single PCRE2 call (which nothing interrupts) runs long: abort, shutdown and the
// search's budget are checked between calls.
constexpr std::size_t kFirstWindow = 256;
constexpr std::size_t kMaxWindow = 4 * 1024 * 1024;
constexpr auto kSlowCall = std::chrono::milliseconds(10);
constexpr auto kFastCall = std::chrono::milliseconds(1);

// What one file gave: each match's lines as shown (with its context lines, joined by \n), in
// file order, and why its search stopped early.
struct FileHits {
  struct Match {
    std::string shown;
    bool cut = false;  // a line of it was cut to 500 characters
  };
  std::vector<Match> matches;
  std::size_t bytes = 0;
  std::optional<std::string> complex_at;      // "<rel>:<line>"
  std::optional<std::string> over_budget_at;  // "<rel>:<line>"
};

using Clock = std::chrono::steady_clock;

// What stops every search of one grep call: abort, shutdown, the budget, and `enough` (the
// merged output is complete: later files are not needed).
struct GrepStops {
  GrepStops(const std::atomic<bool>& cancelled_, Clock::time_point deadline_,
            const OpenFile& open_file_)
      : cancelled(cancelled_), deadline(deadline_), open_file(open_file_) {}
  const std::atomic<bool>& cancelled;
  Clock::time_point deadline;
  const OpenFile& open_file;  // how every file is opened (ToolContext::open_file)
  std::atomic<bool> enough{false};
  bool any() const {
    return cancelled.load(std::memory_order_relaxed) || enough.load(std::memory_order_relaxed);
  }
};

// One searching thread's state: its own Matcher and window size. Searches one file at a time.
struct FileSearch {
  FileSearch(std::shared_ptr<const Regex> regex, std::int64_t limit_, std::int64_t context_,
             const GrepStops& stops_)
      : matcher(std::move(regex)), limit(limit_), context(context_), stops(stops_) {}

  Matcher matcher;
  std::int64_t limit;
  std::int64_t context;
  const GrepStops& stops;
  std::size_t window = kFirstWindow;
  std::string buffer;  // the bytes of a small file
  FileHits* hits = nullptr;
  bool cut = false;  // a line of the match being shown was cut

  // A file alone never gives more than the whole output may hold.
  bool full() const {
    return static_cast<std::int64_t>(hits->matches.size()) >= limit || hits->bytes > kMaxBytes;
  }

  FileHits search_file(const std::string& file, std::string_view rel, bool no_follow) {
    FileHits found;
    FileBytes bytes;
    if (bytes.open(file, buffer, stops.open_file, no_follow)) {
      hits = &found;
      search(rel, bytes.data());
      hits = nullptr;
    }
    return found;
  }

  // The whole-buffer search from `pos` over the window of lines that ends at `end`; `at` is
  // where a line may match.
  Matcher::Result search_window(std::string_view data, std::size_t pos, std::size_t& at,
                                std::size_t& end) {
    end = data.size();
    if (data.size() - pos > window) {
      const void* nl = std::memchr(data.data() + pos + window, '\n', data.size() - pos - window);
      if (nl) end = static_cast<std::size_t>(static_cast<const char*>(nl) - data.data()) + 1;
    }
    const auto started = Clock::now();
    const auto r = matcher.search(data.substr(0, end), pos, at);
    const auto took = Clock::now() - started;
    if (took > kSlowCall) {
      window = std::max<std::size_t>(window / 8, 1);
    } else if (took < kFastCall) {
      window = std::min(window * 2, kMaxWindow);
    }
    return r;
  }

  // Whether the budget is spent; notes where ("<rel>:<line>", the line `pos` is on).
  bool out_of_time(std::string_view rel, std::string_view data, std::size_t counted_to,
                   std::size_t line_no, std::size_t pos) {
    if (Clock::now() < stops.deadline) return false;
    line_no +=
        static_cast<std::size_t>(std::count(data.begin() + static_cast<std::ptrdiff_t>(counted_to),
                                            data.begin() + static_cast<std::ptrdiff_t>(pos), '\n'));
    hits->over_budget_at = std::string(rel) + ":" + std::to_string(line_no);
    return true;
  }

  void emit(std::string& out, std::string_view rel, std::size_t line_no, char sep,
            std::string_view text) {
    if (!out.empty()) out += '\n';
    out.append(rel);
    out += sep;
    out += std::to_string(line_no);
    out += sep;
    out += ' ';
    out += shown_line(text, cut);
  }

  void search(std::string_view rel, std::string_view data) {
    if (std::memchr(data.data(), '\0', data.size())) return;  // binary
    std::size_t pos = 0, counted_to = 0, line_no = 1;
    bool per_line = false;  // after the whole-buffer search gave up: one line at a time
    while (pos <= data.size() && !full()) {
      if (stops.any()) return;
      if (out_of_time(rel, data, counted_to, line_no, pos)) return;
      std::size_t at = pos;
      if (!per_line) {
        std::size_t window_end = 0;
        const auto r = search_window(data, pos, at, window_end);
        if (r == Matcher::Result::no_match) {
          if (window_end >= data.size()) return;
          pos = window_end;
          continue;
        }
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
        hits->complex_at = std::string(rel) + ":" + std::to_string(line_no);
        return;
      }
      if (alone == Matcher::Result::match) {
        std::string shown;
        cut = false;
        if (context > 0)
          emit_with_context(shown, rel, data, l, line_no);
        else
          emit(shown, rel, line_no, ':', text);
        hits->bytes += shown.size() + 1;
        hits->matches.push_back({std::move(shown), cut});
      }
      if (l.end >= data.size()) return;
      pos = l.end + 1;
    }
  }

  void emit_with_context(std::string& out, std::string_view rel, std::string_view data, LineSpan l,
                         std::size_t line_no) {
    std::vector<LineSpan> before;
    LineSpan cur = l;
    for (std::int64_t k = 0; k < context && cur.start > 0; ++k) {
      cur = line_around(data, cur.start - 1);
      before.push_back(cur);
    }
    for (std::size_t k = before.size(); k > 0; --k)
      emit(out, rel, line_no - k, '-', matched_text(data, before[k - 1]));
    emit(out, rel, line_no, ':', matched_text(data, l));
    cur = l;
    for (std::int64_t k = 1; k <= context && cur.end < data.size(); ++k) {
      cur = line_around(data, cur.end + 1);
      if (cur.start == data.size()) break;  // after the final \n
      emit(out, rel, line_no + static_cast<std::size_t>(k), '-', matched_text(data, cur));
    }
  }
};

// The output of one grep call: the files' matches joined in walk order until the match limit
// or the byte limit, and the first reason (in walk order) a search stopped.
struct GrepOutput {
  explicit GrepOutput(std::int64_t limit_) : limit(limit_) {}
  std::int64_t limit;
  std::int64_t matches = 0;
  bool lines_cut = false;
  std::string out;
  std::optional<std::string> complex_at;
  std::optional<std::string> over_budget_at;

  bool full() const { return matches >= limit || out.size() > kMaxBytes; }
  bool stopped() const { return full() || complex_at || over_budget_at; }

  void take(FileHits& hits) {
    if (stopped()) return;
    for (auto& m : hits.matches) {
      if (full()) break;
      if (!out.empty()) out += '\n';
      out += m.shown;
      lines_cut = lines_cut || m.cut;
      ++matches;
    }
    if (hits.complex_at) complex_at = std::move(hits.complex_at);
    if (hits.over_budget_at) over_budget_at = std::move(hits.over_budget_at);
  }
};

// A tree's files are searched in batches by helper threads (one per core, at most four):
// while they search one batch the calling thread walks the next, then helps finish the first
// and joins its results in walk order before handing over the next. So output, limits and
// early stops are those of a search file after file, and what runs ahead of the join is two
// batches. Batches start small (a match limit reached in the first files ends the call at
// once) and grow.
constexpr std::size_t kFirstBatch = 16;
constexpr std::size_t kMaxBatch = 256;
constexpr unsigned kMaxSearchThreads = 4;

class TreeSearch {
 public:
  TreeSearch(std::shared_ptr<const Regex> regex, std::int64_t limit, std::int64_t context,
             GrepStops& stops, GrepOutput& output)
      : regex_(regex),
        limit_(limit),
        context_(context),
        stops_(stops),
        output_(output),
        own_(regex, limit, context, stops) {
    const unsigned helpers =
        std::min(std::max(1u, std::thread::hardware_concurrency()), kMaxSearchThreads);
    for (unsigned i = 0; i < helpers; ++i) {
      try {
        helpers_.emplace_back([this] { help(); });
      } catch (const std::system_error&) {
        break;  // no thread to be had: fewer helpers (the calling thread searches too)
      }
    }
  }
  ~TreeSearch() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      quit_ = true;
    }
    wake_.notify_all();
    for (auto& t : helpers_)
      t.join();
  }
  TreeSearch(const TreeSearch&) = delete;
  TreeSearch& operator=(const TreeSearch&) = delete;

  /// Queues a file; a full batch is handed over (after the one before is joined). False once
  /// no more files are needed.
  bool add(std::string abs, std::string_view rel, bool link) {
    filling_.push_back({std::move(abs), std::string(rel), link});
    if (filling_.size() >= batch_size_) {
      hand_over();
      batch_size_ = std::min(batch_size_ * 2, kMaxBatch);
    }
    return !output_.stopped() && !stops_.cancelled.load(std::memory_order_relaxed);
  }
  /// Searches and joins what is queued.
  void finish() {
    hand_over();
    join();
  }

 private:
  struct File {
    std::string abs, rel;
    bool link = false;  // a symlink when the walk listed it (followed, as before)
  };

  void work(FileSearch& search) {
    for (;;) {
      const std::size_t i = next_.fetch_add(1, std::memory_order_relaxed);
      if (i >= searching_.size()) return;
      if (stops_.any()) continue;  // claimed and left empty: the join stops before it
      results_[i] = search.search_file(searching_[i].abs, searching_[i].rel, !searching_[i].link);
    }
  }

  // The batch being searched: the calling thread helps, waits for the helpers, joins.
  void join() {
    if (searching_.empty()) return;
    work(own_);
    {
      std::unique_lock<std::mutex> lock(mutex_);
      done_.wait(lock, [this] { return finished_ == helpers_.size(); });
      if (failed_) std::rethrow_exception(std::exchange(failed_, nullptr));
    }
    for (auto& hits : results_) {
      output_.take(hits);
      if (output_.stopped()) break;
    }
    if (output_.stopped()) stops_.enough.store(true, std::memory_order_relaxed);
    searching_.clear();
    results_.clear();
  }

  void hand_over() {
    join();
    if (filling_.empty() || output_.stopped()) return;
    searching_.swap(filling_);
    filling_.clear();
    results_.assign(searching_.size(), FileHits{});
    next_.store(0, std::memory_order_relaxed);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ++round_;
      finished_ = 0;
    }
    wake_.notify_all();
  }

  void help() {
    FileSearch search(regex_, limit_, context_, stops_);
    std::uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [&] { return quit_ || round_ != seen; });
        if (quit_) return;
        seen = round_;
      }
      std::exception_ptr failed;
      try {
        work(search);
      } catch (...) {
        failed = std::current_exception();  // rethrown by the calling thread, as if its own
        stops_.enough.store(true, std::memory_order_relaxed);
      }
      {
        std::lock_guard<std::mutex> lock(mutex_);
        if (failed && !failed_) failed_ = failed;
        ++finished_;
      }
      done_.notify_one();
    }
  }

  std::shared_ptr<const Regex> regex_;
  std::int64_t limit_, context_;
  GrepStops& stops_;
  GrepOutput& output_;
  FileSearch own_;
  std::size_t batch_size_ = kFirstBatch;
  std::vector<File> filling_;      // the calling thread's, as it walks
  std::vector<File> searching_;    // read by the helpers during a round, changed between rounds
  std::vector<FileHits> results_;  // results_[i] by whoever claimed i
  std::atomic<std::size_t> next_{0};
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  std::uint64_t round_ = 0;
  std::size_t finished_ = 0;  // helpers done with this round
  bool quit_ = false;
  std::exception_ptr failed_;  // what a helper's search threw
  std::vector<std::thread> helpers_;
};

std::string base_name(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

ToolResult run_grep(const Json& args, const session::ToolContext& context,
                    const std::atomic<bool>& cancelled) {
  return run_grep_within(args, context, cancelled, kGrepBudget);
}

ToolResult run_grep_within(const Json& args, const session::ToolContext& context,
                           const std::atomic<bool>& cancelled, std::chrono::milliseconds budget) {
  const std::string abs = resolve_path(string_arg(args, "path", "."), context.cwd);
  struct stat st {};
  if (::stat(abs.c_str(), &st) != 0) return ToolResult::error("Path not found: " + abs);
  Regex::Options options;
  options.ignore_case = args.value("ignoreCase", false);
  options.literal = args.value("literal", false);
  auto compiled = Regex::compile(string_arg(args, "pattern", ""), options);
  if (!compiled)
    return ToolResult::error("Invalid regular expression: " + compiled.error().message);
  std::shared_ptr<const Regex> regex = std::move(*compiled);
  std::optional<PathGlob> glob;
  std::optional<Matcher> glob_matcher;
  if (args.contains("glob") && args["glob"].is_string()) {
    auto read = PathGlob::compile(args["glob"].get<std::string>());
    if (!read) return ToolResult::error("Invalid glob: " + read.error().message);
    glob = std::move(*read);
    glob_matcher.emplace(glob->regex());
  }
  const std::int64_t limit = std::max<std::int64_t>(1, count_arg(args, "limit", 100));
  const std::int64_t context_lines = std::max<std::int64_t>(0, count_arg(args, "context", 0));
  GrepStops stops(cancelled, Clock::now() + budget, context.open_file);
  GrepOutput run(limit);
  if (S_ISDIR(st.st_mode)) {
    TreeSearch tree(regex, limit, context_lines, stops, run);
    walk(
        abs,
        [&](const WalkEntry& e) {
          if (e.is_dir) return true;
          if (glob && !glob->matches(e.rel, *glob_matcher)) return true;
          return tree.add(std::string(e.abs), e.rel, e.is_link);
        },
        cancelled, context.hidden, context.open_file);
    tree.finish();
  } else {
    FileSearch search(regex, limit, context_lines, stops);
    FileHits hits = search.search_file(abs, base_name(abs), false);
    run.take(hits);
  }
  if (cancelled) return ToolResult::error("Operation aborted");
  if (run.complex_at)
    return ToolResult::error("Regular expression too complex (match limit exceeded in " +
                             *run.complex_at + ")");
  if (run.over_budget_at)
    return ToolResult::error(
        "Search stopped: it ran past its " +
        (budget.count() % 1000 == 0 ? std::to_string(budget.count() / 1000) + " s"
                                    : std::to_string(budget.count()) + " ms") +
        " budget (in " + *run.over_budget_at + "). Refine the pattern or the path");
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
  auto glob = PathGlob::compile(string_arg(args, "pattern", ""));
  if (!glob) return ToolResult::error("Invalid glob: " + glob.error().message);
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
      cancelled, context.hidden, context.open_file);
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
