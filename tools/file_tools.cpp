// The work of read, write, edit and ls (tools.md sections 4.1–4.3 and 4.7).

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <optional>
#include <vector>

#include "protocol/json_line.h"
#include "tools/builtin_tools.h"
#include "tools/edit_core.h"
#include "tools/file_io.h"
#include "tools/paths.h"
#include "tools/tool_args.h"
#include "tools/truncate.h"

namespace rebound::tools {

using protocol::ContentBlock;
using protocol::Json;
using session::ToolResult;

namespace {

constexpr std::size_t kMaxImageBase64 = 4718592;  // 4.5 MiB

bool path_exists(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0;
}

// replace(all) helper
std::string replace_all(std::string s, std::string_view from, std::string_view to) {
  for (std::size_t pos = s.find(from); pos != std::string::npos;
       pos = s.find(from, pos + to.size()))
    s.replace(pos, from.size(), to);
  return s;
}

// read's fallbacks for macOS screenshot names (section 3).
std::string existing_variant(const std::string& abs) {
  if (path_exists(abs)) return abs;
  const std::string nnbsp = "\xE2\x80\xAF";
  const std::string am_pm =
      replace_all(replace_all(abs, " AM.", nnbsp + "AM."), " PM.", nnbsp + "PM.");
  if (am_pm != abs && path_exists(am_pm)) return am_pm;
  const std::string curly = replace_all(abs, "'", "\xE2\x80\x99");
  if (curly != abs && path_exists(curly)) return curly;
  return abs;
}

std::string base64(std::string_view data) {
  static const char* kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((data.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 2 < data.size(); i += 3) {
    const unsigned v = static_cast<unsigned char>(data[i]) << 16 |
                       static_cast<unsigned char>(data[i + 1]) << 8 |
                       static_cast<unsigned char>(data[i + 2]);
    out += kAlphabet[v >> 18];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += kAlphabet[v & 63];
  }
  if (i < data.size()) {
    unsigned v = static_cast<unsigned char>(data[i]) << 16;
    if (i + 1 < data.size()) v |= static_cast<unsigned char>(data[i + 1]) << 8;
    out += kAlphabet[v >> 18];
    out += kAlphabet[(v >> 12) & 63];
    out += i + 1 < data.size() ? kAlphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

// The server's protocol pipes are never a tool's file.
std::string own_stream_error(std::string_view operation, const std::string& abs) {
  return "EPERM: operation not permitted (the server's own standard stream), " +
         std::string(operation) + " '" + abs + "'";
}

std::string write_open_error(int err, const std::string& abs) {
  if (err == EPERM) return own_stream_error("open", abs);
  if (err == EINVAL || err == ENXIO)
    return errno_name(err) + ": not a regular file, open '" + abs + "'";
  return fs_error(err, "open", abs);
}

ToolResult read_image(int fd, const struct stat& st, const char* mime, bool model_images) {
  std::string text = std::string("Read image file [") + mime + "]";
  const std::size_t encoded = (static_cast<std::size_t>(st.st_size) + 2) / 3 * 4;
  std::optional<std::string> data;
  if (encoded >= kMaxImageBase64) {
    text += "\n[Image omitted: could not be resized below the inline image size limit.]";
  } else {
    std::string raw;
    if (!read_all(fd, raw, kMaxImageBase64)) return ToolResult::error(fs_error(errno, "read", ""));
    data = base64(raw);
  }
  if (!model_images && data)
    text +=
        "\n[Current model does not support images. The image will be omitted from this request.]";
  ToolResult r = text_result(std::move(text));
  if (data) r.content.push_back(ContentBlock::make_image(std::move(*data), mime));
  return r;
}

// Head truncation of the selected lines as they stream past (section 3.1), keeping at most
// what can be shown.
struct HeadSelection {
  std::string kept;
  std::size_t kept_lines = 0, kept_bytes = 0;
  std::size_t lines = 0, bytes = 0;  // of the whole selection
  std::size_t first_line_bytes = 0;
  bool stopped = false;
  Truncation::By by = Truncation::By::none;

  void add(std::string_view raw, std::size_t raw_size) {
    const bool oversized = raw_size > raw.size();
    std::string fixed;
    std::string_view line = raw;
    if (!oversized && std::any_of(raw.begin(), raw.end(),
                                  [](char c) { return static_cast<unsigned char>(c) >= 0x80; })) {
      fixed = protocol::replace_invalid_utf8(raw);
      line = fixed;
    }
    const std::size_t size = oversized ? raw_size : line.size();
    if (lines == 0) first_line_bytes = size;
    const std::size_t add = size + (lines > 0 ? 1 : 0);
    ++lines;
    bytes += add;
    if (stopped) return;
    if (kept_lines >= kMaxLines) {
      stopped = true;
      by = Truncation::By::lines;
      return;
    }
    if (oversized || kept_bytes + add > kMaxBytes) {
      stopped = true;
      by = Truncation::By::bytes;
      return;
    }
    if (kept_lines > 0) kept += '\n';
    kept.append(line);
    kept_bytes += add;
    ++kept_lines;
  }
};

}  // namespace

using LineVisitor = std::function<bool(std::string_view line, std::size_t size)>;

// read's text path (section 4.1) over the lines `each_line` produces: the offset/limit
// selection, head truncation and the continuation notes.
static ToolResult read_lines(const Json& args, const std::string& given,
                             const std::function<bool(const LineVisitor&)>& each_line,
                             const std::atomic<bool>& cancelled) {
  std::int64_t offset = count_arg(args, "offset", 1);
  if (offset < 1) offset = 1;
  std::int64_t limit = count_arg(args, "limit", 0);
  const bool limited = limit > 0;

  HeadSelection sel;
  std::int64_t line_no = 0;
  const bool ok = each_line([&](std::string_view line, std::size_t size) {
    ++line_no;
    if (line_no >= offset && (!limited || line_no < offset + limit)) sel.add(line, size);
    return !cancelled.load(std::memory_order_relaxed);
  });
  if (!ok) return ToolResult::error("read failed");  // the caller reports the cause
  if (cancelled) return ToolResult::error("Operation aborted");
  const std::int64_t total = line_no;
  if (offset > total) {
    return ToolResult::error("Offset " + std::to_string(offset) + " is beyond end of file (" +
                             std::to_string(total) + " lines total)");
  }
  const bool truncated = sel.stopped;
  std::string text;
  if (!truncated) {
    text = sel.kept;
    const std::int64_t last = offset + static_cast<std::int64_t>(sel.lines) - 1;
    if (limited && last < total) {
      text += "\n\n[" + std::to_string(total - last) +
              " more lines in file. Use offset=" + std::to_string(last + 1) + " to continue.]";
    }
    return text_result(std::move(text));
  }
  Truncation t;
  t.truncated = true;
  t.by = sel.by;
  t.total_lines = sel.lines;
  t.total_bytes = sel.bytes;
  const std::int64_t a = offset;
  const std::int64_t b = offset + static_cast<std::int64_t>(sel.kept_lines) - 1;
  if (sel.kept_lines == 0 && sel.by == Truncation::By::bytes) {
    t.first_line_exceeds_limit = true;
    text = "[Line " + std::to_string(a) + " is " + format_size(sel.first_line_bytes) +
           ", exceeds " + format_size(kMaxBytes) + " limit. Use bash: sed -n '" +
           std::to_string(a) + "p' " + given + " | head -c " + std::to_string(kMaxBytes) + "]";
  } else {
    t.content = sel.kept;
    t.output_lines = sel.kept_lines;
    t.output_bytes = sel.kept_bytes;
    text = sel.kept + "\n\n[Showing lines " + std::to_string(a) + "-" + std::to_string(b) + " of " +
           std::to_string(total) +
           (sel.by == Truncation::By::bytes ? " (" + format_size(kMaxBytes) + " limit)" : "") +
           ". Use offset=" + std::to_string(b + 1) + " to continue.]";
  }
  ToolResult r = text_result(std::move(text));
  r.details = Json{{"truncation", t.to_json()}};
  return r;
}

ToolResult run_read(const Json& args, const session::ToolContext& context,
                    const std::atomic<bool>& cancelled) {
  const std::string given = string_arg(args, "path");
  const std::string abs = existing_variant(resolve_path(given, context.cwd));
  if (::access(abs.c_str(), R_OK) != 0) return ToolResult::error(fs_error(errno, "access", abs));
  UniqueFd fd(open_with(context.open_file, abs, O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (!fd) return ToolResult::error(fs_error(errno, "open", abs));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return ToolResult::error(fs_error(errno, "read", ""));
  if (S_ISDIR(st.st_mode)) return ToolResult::error(fs_error(EISDIR, "read", ""));
  if (is_own_std_stream(st)) return ToolResult::error(own_stream_error("open", abs));
  // The descriptor stays non-blocking: a FIFO or device with nothing to read ends the text
  // there instead of holding a worker thread (and the shutdown that joins it) forever. What is
  // not a regular file of known size (/dev/zero, /proc/self/pagemap) is read up to a bound.
  const bool sized = S_ISREG(st.st_mode) && st.st_size > 0;

  if (sized) {
    if (const char* mime = image_type(read_head(fd.get(), 12)))
      return read_image(fd.get(), st, mime, context.model_images);
  }

  LineScanner scanner(
      fd.get(), &cancelled,
      sized ? static_cast<std::size_t>(st.st_size) + kMaxUnsizedRead : kMaxUnsizedRead);
  int read_errno = 0;
  ToolResult r = read_lines(
      args, given,
      [&](const LineVisitor& visit) {
        if (scanner.each_line(visit)) return true;
        read_errno = errno;
        return false;
      },
      cancelled);
  if (read_errno != 0) return ToolResult::error(fs_error(read_errno, "read", ""));
  if (scanner.limit_reached() && !r.content.empty() &&
      r.content.front().kind == ContentBlock::Kind::text)
    r.content.front().text += "\n\n[Stopped reading after " + format_size(kMaxUnsizedRead) + ": " +
                              abs + " is not a regular file of known size]";
  return r;
}

ToolResult read_text(const Json& args, std::string_view text) {
  static const std::atomic<bool> never{false};
  return read_lines(
      args, string_arg(args, "path"),
      [&](const LineVisitor& visit) {
        // Every LF ends a line; what follows the last one is a line too (empty after a final
        // LF), as the scanner counts them.
        std::size_t start = 0;
        while (true) {
          const std::size_t end = text.find('\n', start);
          const std::string_view line = text.substr(
              start, end == std::string_view::npos ? std::string_view::npos : end - start);
          if (!visit(line, line.size())) return true;
          if (end == std::string_view::npos) return true;
          start = end + 1;
        }
      },
      never);
}

ToolResult run_write(const Json& args, const session::ToolContext& context,
                     const std::atomic<bool>& cancelled, const WriteBegins& begins) {
  const std::string given = string_arg(args, "path");
  const std::string content = string_arg(args, "content");
  const std::string abs = resolve_path(given, context.cwd);
  if (cancelled) return ToolResult::error("Operation aborted");
  std::string failed_dir;
  if (const int err = make_parent_dirs(abs, failed_dir, context.open_file))
    return ToolResult::error(fs_error(err, "mkdir", failed_dir));
  if (begins) begins();
  UniqueFd fd(open_for_tool_write(abs, true, context.open_file));
  if (!fd) return ToolResult::error(write_open_error(errno, abs));
  if (!write_all(fd.get(), content)) return ToolResult::error(fs_error(errno, "write", abs));
  return text_result("Successfully wrote " + std::to_string(content.size()) + " bytes to " + given);
}

void prepare_edit_arguments(Json& args) {
  if (!args.is_object()) return;
  if (args.contains("edits") && args["edits"].is_string()) {
    Json parsed = Json::parse(args["edits"].get<std::string>(), nullptr, false);
    if (!parsed.is_discarded() && parsed.is_array()) args["edits"] = std::move(parsed);
  }
  if (args.contains("oldText") && args.contains("newText") && args["oldText"].is_string() &&
      args["newText"].is_string()) {
    if (!args.contains("edits") || args["edits"].is_null()) args["edits"] = Json::array();
    if (args["edits"].is_array()) {
      args["edits"].push_back(Json{{"oldText", args["oldText"]}, {"newText", args["newText"]}});
      args.erase("oldText");
      args.erase("newText");
    }
  }
}

ToolResult run_edit(const Json& args, const session::ToolContext& context,
                    const std::atomic<bool>& cancelled, const WriteBegins& begins) {
  const std::string given = string_arg(args, "path");
  const std::string abs = resolve_path(given, context.cwd);
  std::vector<TextEdit> edits;
  for (const auto& e : args.value("edits", Json::array()))
    edits.push_back({e.value("oldText", ""), e.value("newText", "")});
  if (edits.empty())
    return ToolResult::error(
        "Edit tool input is invalid. edits must contain at least one replacement.");
  auto could_not = [&](int err) {
    return ToolResult::error("Could not edit file: " + given + ". Error code: " + errno_name(err) +
                             ".");
  };
  if (::access(abs.c_str(), R_OK | W_OK) != 0) return could_not(errno);
  std::string original;
  if (const int err = read_regular_file(abs, original, kMaxEditBytes, context.open_file))
    return could_not(err);
  EditOutcome outcome = apply_edits(original, edits, given);
  if (outcome.error) return ToolResult::error(std::move(*outcome.error));
  if (cancelled) return ToolResult::error("Operation aborted");
  if (begins) begins();
  UniqueFd fd(open_for_tool_write(abs, false, context.open_file));
  if (!fd) return could_not(errno);
  if (!write_all(fd.get(), outcome.content)) return could_not(errno);
  ToolResult r = text_result("Successfully replaced " + std::to_string(edits.size()) +
                             " block(s) in " + given + ".");
  r.details = Json{{"diff", outcome.diff}, {"firstChangedLine", outcome.first_changed_line}};
  return r;
}

ToolResult run_ls(const Json& args, const session::ToolContext& context,
                  const std::atomic<bool>& cancelled) {
  const std::string abs = resolve_path(string_arg(args, "path", "."), context.cwd);
  const std::int64_t limit = std::max<std::int64_t>(1, count_arg(args, "limit", 500));
  struct stat st {};
  if (::stat(abs.c_str(), &st) != 0) return ToolResult::error("Path not found: " + abs);
  if (!S_ISDIR(st.st_mode)) return ToolResult::error("Not a directory: " + abs);
  DIR* d = nullptr;
  if (const int dir_fd =
          open_with(context.open_file, abs, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK);
      dir_fd >= 0) {
    d = ::fdopendir(dir_fd);
    if (!d) ::close(dir_fd);
  }
  if (!d) return ToolResult::error("Cannot read directory: " + fs_error(errno, "scandir", abs));
  std::vector<std::string> names;
  while (dirent* e = ::readdir(d)) {
    const std::string_view n = e->d_name;
    if (n == "." || n == "..") continue;
    if (context.hidden) {
      const std::string child = abs == "/" ? "/" + std::string(n) : abs + "/" + std::string(n);
      struct stat cst {};
      const bool dir = ::lstat(child.c_str(), &cst) == 0 && S_ISDIR(cst.st_mode);
      if (context.hidden(child, dir)) continue;
    }
    names.emplace_back(n);
  }
  ::closedir(d);
  auto lower = [](std::string s) {
    for (auto& c : s)
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    return s;
  };
  std::sort(names.begin(), names.end(), [&](const std::string& a, const std::string& b) {
    const std::string la = lower(a), lb = lower(b);
    return la != lb ? la < lb : a < b;
  });
  std::string out;
  std::int64_t count = 0;
  bool limit_reached = false;
  for (const auto& name : names) {
    if (cancelled) return ToolResult::error("Operation aborted");
    if (count >= limit) {
      limit_reached = true;
      break;
    }
    struct stat es {};
    const std::string full = abs + (abs == "/" ? "" : "/") + name;
    if (::stat(full.c_str(), &es) != 0) continue;  // cannot be examined (a dangling link)
    if (count > 0) out += '\n';
    out += name;
    if (S_ISDIR(es.st_mode)) out += '/';
    ++count;
  }
  if (count == 0) return text_result("(empty directory)");
  Truncation t = truncate_head(out, kNoLineLimit);
  std::string text = t.content;
  std::vector<std::string> notices;
  Json details = Json::object();
  if (limit_reached) {
    notices.push_back(std::to_string(limit) + " entries limit reached. Use limit=" +
                      std::to_string(limit * 2) + " for more");
    details["entryLimitReached"] = limit;
  }
  if (t.truncated) {
    notices.push_back(format_size(kMaxBytes) + " limit reached");
    details["truncation"] = t.to_json();
  }
  return listing_result(text, notices, std::move(details));
}

}  // namespace rebound::tools
