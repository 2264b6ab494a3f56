#include "tools/bash_tool.h"

#include <signal.h>
#include <string.h>  // sigabbrev_np
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdlib>

#include "protocol/json_line.h"
#include "process/child_process.h"
#include "tools/command_watch.h"
#include "tools/definitions.h"
#include "tools/truncate.h"

namespace rebound::tools {

namespace asio = boost::asio;
using protocol::ContentBlock;
using protocol::Json;
using session::ToolResult;

namespace {
constexpr auto kUpdateInterval = std::chrono::milliseconds(100);
// The raw output kept in memory: all of it up to kKeepAll, then a window of the last kWindow
// bytes (enough for 2000 lines or 50KB of tail, whichever binds).
constexpr std::size_t kKeepAll = 1024 * 1024;
constexpr std::size_t kWindow = 512 * 1024;

bool is_executable_file(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(p.c_str(), X_OK) == 0;
}

std::optional<std::string> on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  if (!path) return std::nullopt;
  std::string_view rest = path;
  while (!rest.empty()) {
    const std::size_t colon = rest.find(':');
    const std::string dir(rest.substr(0, colon));
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (is_executable_file(candidate)) return candidate;
    if (colon == std::string_view::npos) break;
    rest.remove_prefix(colon + 1);
  }
  return std::nullopt;
}

}  // namespace

namespace {

// One bash tool call: the output seen so far (bounded), throttled progress, the timeout, the
// full-output file, and the result of section 4.4.
struct BashCall : std::enable_shared_from_this<BashCall> {
  BashCall(asio::any_io_executor ex, Json timeout_value, session::Tool::Progress p,
           session::Tool::Done d)
      : executor(ex),
        timeout_value(std::move(timeout_value)),
        throttle(ex),
        deadline(ex),
        progress(std::move(p)),
        done(std::move(d)) {}

  void begin(double timeout_seconds) {
    auto self = shared_from_this();
    asio::post(executor, [self] {
      if (!self->finished && self->progress) self->progress(ToolResult{});
    });
    if (timeout_seconds > 0) {
      deadline.expires_after(std::chrono::duration_cast<std::chrono::steady_clock::duration>(
          std::chrono::duration<double>(std::min(timeout_seconds, 3.0e9))));
      deadline.async_wait([self](const boost::system::error_code& ec) {
        if (ec || self->finished) return;
        self->timed_out = true;
        self->watch->kill();
      });
    }
  }

  void take(std::string_view data) {
    total_bytes += data.size();
    total_newlines += static_cast<std::size_t>(std::count(data.begin(), data.end(), '\n'));
    buffer.append(data);
    if (file.is_open()) {
      file.write(data);
    } else if (!file.failed() &&
               (total_bytes > tools::kMaxBytes || total_newlines + 1 > tools::kMaxLines)) {
      file.open(buffer);  // everything so far (nothing was dropped yet)
    }
    if (buffer.size() > kKeepAll) {
      // Keep a window from a line start (never inside a UTF-8 sequence).
      std::size_t cut = buffer.size() - kWindow;
      const std::size_t nl = buffer.find('\n', cut);
      if (nl != std::string::npos && nl + 1 < buffer.size()) cut = nl + 1;
      dropped_bytes += cut;
      buffer.erase(0, cut);
    }
    output_since_update = true;
    schedule_update();
  }

  void schedule_update() {
    if (update_pending) return;
    const auto now = std::chrono::steady_clock::now();
    if (!sent_output_update || now - last_update >= kUpdateInterval) {
      send_update();
      return;
    }
    update_pending = true;
    auto self = shared_from_this();
    throttle.expires_at(last_update + kUpdateInterval);
    throttle.async_wait([self](const boost::system::error_code& ec) {
      self->update_pending = false;
      if (ec || self->finished) return;
      if (self->output_since_update) self->send_update();
    });
  }

  // The tail of what arrived so far, by section 3.1.
  tools::Truncation tail() const {
    std::string text = protocol::replace_invalid_utf8(buffer);
    tools::Truncation t = tools::truncate_tail(text);
    if (dropped_bytes > 0) {
      // The window is not the whole output: the totals are.
      t.truncated = true;
      if (t.by == tools::Truncation::By::none) t.by = tools::Truncation::By::bytes;
      t.total_lines = total_newlines + 1;
      t.total_bytes = text.size() + dropped_bytes;
    }
    return t;
  }

  Json details(const tools::Truncation& t) const {
    return Json{{"truncation", t.to_json()}, {"fullOutputPath", file.path()}};
  }

  void send_update() {
    if (!progress) return;
    sent_output_update = true;
    output_since_update = false;
    last_update = std::chrono::steady_clock::now();
    const tools::Truncation t = tail();
    ToolResult partial;
    partial.content.push_back(ContentBlock::make_text(t.content));
    partial.details = t.truncated ? details(t) : Json::object();
    progress(std::move(partial));
  }

  void complete(int status) {
    if (output_since_update) send_update();  // the last update: output since the previous one
    finished = true;
    throttle.cancel();
    deadline.cancel();
    file.close();
    if (auto f = std::move(done)) f(result(status));
  }

  ToolResult result(int status) const {
    const tools::Truncation t = tail();
    std::string text = t.content;
    if (t.truncated) {
      const std::size_t n = t.total_lines;
      if (t.last_line_partial) {
        text += "\n\n[Showing last " + tools::format_size(t.output_bytes) + " of line " +
                std::to_string(n) + " (line is " + tools::format_size(last_line_size()) +
                "). Full output: " + file.path() + "]";
      } else {
        text += "\n\n[Showing lines " + std::to_string(n - t.output_lines + 1) + "-" +
                std::to_string(n) + " of " + std::to_string(n) +
                (t.by == tools::Truncation::By::bytes
                     ? " (" + tools::format_size(tools::kMaxBytes) + " limit)"
                     : "") +
                ". Full output: " + file.path() + "]";
      }
    }
    std::string ending;
    if (aborted) {
      ending = "Command aborted";
    } else if (timed_out) {
      ending = "Command timed out after " + timeout_value.dump() + " seconds";
    } else if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
      ending = "Command exited with code " + std::to_string(WEXITSTATUS(status));
    } else if (WIFSIGNALED(status)) {
      const char* abbrev = sigabbrev_np(WTERMSIG(status));
      ending = std::string("Command terminated by signal ") +
               (abbrev ? std::string("SIG") + abbrev : std::to_string(WTERMSIG(status)));
    }
    if (ending.empty()) {
      ToolResult r;
      r.content.push_back(ContentBlock::make_text(text.empty() ? "(no output)" : text));
      if (t.truncated) r.details = details(t);
      return r;
    }
    return ToolResult::error(text.empty() ? ending : text + "\n\n" + ending);
  }

  std::size_t last_line_size() const {
    const std::size_t nl = buffer.rfind('\n');
    return nl == std::string::npos ? buffer.size() + dropped_bytes : buffer.size() - nl - 1;
  }

  asio::any_io_executor executor;
  Json timeout_value;
  asio::steady_timer throttle, deadline;
  session::Tool::Progress progress;
  session::Tool::Done done;
  std::shared_ptr<CommandWatch> watch;
  OutputFile file;
  std::string buffer;
  std::size_t total_bytes = 0, total_newlines = 0, dropped_bytes = 0;
  bool finished = false, aborted = false, timed_out = false;
  bool sent_output_update = false, output_since_update = false, update_pending = false;
  std::chrono::steady_clock::time_point last_update{};
};

class BashCallHandle : public session::ToolCall {
 public:
  explicit BashCallHandle(std::shared_ptr<BashCall> call) : call_(std::move(call)) {}
  ~BashCallHandle() override {
    if (!call_->finished) {
      // Stopped without a completion; the watch kills the group and reaps the child.
      call_->done = nullptr;
      call_->progress = nullptr;
      call_->finished = true;
      call_->throttle.cancel();
      call_->deadline.cancel();
      call_->file.close();
    }
    call_->watch->release();
  }
  void cancel() override {
    if (!call_->finished) call_->aborted = true;
    call_->watch->kill();
  }

 private:
  std::shared_ptr<BashCall> call_;
};

// A call that fails before a process exists: its result arrives later on the loop.
class FailedCall : public session::ToolCall {
 public:
  void cancel() override {}
};

}  // namespace

BashToolOptions bash_tool_options_from(const Json& settings) {
  BashToolOptions o;
  auto text = [&](const char* key) -> std::optional<std::string> {
    if (settings.is_object() && settings.contains(key) && settings[key].is_string())
      return settings[key].get<std::string>();
    return std::nullopt;
  };
  o.shell_path = text("shellPath");
  o.command_prefix = text("shellCommandPrefix");
  return o;
}

BashTool::BashTool(asio::any_io_executor executor, BashToolOptions options)
    : executor_(std::move(executor)),
      options_(std::move(options)),
      lingering_(std::make_shared<Lingering>()) {}

BashTool::~BashTool() {
  kill_background();
}

const session::ToolDefinition& BashTool::definition() const {
  return tools::builtin_definition("bash");
}

void BashTool::kill_background() {
  lingering_->kill_all();
}

std::unique_ptr<session::ToolCall> BashTool::start(const Json& args,
                                                   const session::ToolContext& context,
                                                   Progress progress, Done done) {
  auto fail = [&](std::string text) -> std::unique_ptr<session::ToolCall> {
    asio::post(executor_,
               [done = std::move(done), text = std::move(text)] { done(ToolResult::error(text)); });
    return std::make_unique<FailedCall>();
  };
  std::string shell;
  if (options_.shell_path) {
    if (!is_executable_file(*options_.shell_path) &&
        ::access(options_.shell_path->c_str(), F_OK) != 0)
      return fail("Custom shell path not found: " + *options_.shell_path);
    shell = *options_.shell_path;
  } else if (is_executable_file("/bin/bash")) {
    shell = "/bin/bash";
  } else if (auto bash = on_path("bash")) {
    shell = *bash;
  } else {
    shell = "sh";
  }
  struct stat st {};
  if (::stat(context.cwd.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return fail("Working directory does not exist: " + context.cwd +
                "\nCannot execute bash commands.");
  std::string command = args.value("command", "");
  if (options_.command_prefix) command = *options_.command_prefix + "\n" + command;
  ChildSpec spec;
  spec.argv = {shell, "-c", command};
  spec.cwd = context.cwd;
  std::string why;
  auto child = ChildProcess::spawn(executor_, spec, why);
  if (!child) return fail("Cannot run " + shell + ": " + why);
  double timeout = 0;
  Json timeout_value;
  if (args.contains("timeout") && args["timeout"].is_number()) {
    timeout = args["timeout"].get<double>();
    timeout_value = args["timeout"];
  }
  auto call =
      std::make_shared<BashCall>(executor_, timeout_value, std::move(progress), std::move(done));
  call->begin(timeout);  // first: its empty update is queued before any output
  std::weak_ptr<BashCall> weak = call;
  call->watch = CommandWatch::start(executor_, std::move(child), lingering_,
                                    {[weak](std::string_view data) {
                                       if (auto c = weak.lock()) c->take(data);
                                     },
                                     [weak](int status) {
                                       if (auto c = weak.lock()) c->complete(status);
                                     }});
  return std::make_unique<BashCallHandle>(call);
}

}  // namespace rebound::tools
