#include "tools/bash_tool.h"

#include <fcntl.h>
#include <signal.h>
#include <string.h>  // sigabbrev_np
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>

#include "session/tool_spool.h"
#include "tools/command_watch.h"
#include "tools/definitions.h"
#include "tools/output_tail.h"
#include "tools/truncate.h"

namespace rebound::tools {

using protocol::ContentBlock;
using protocol::Json;
using session::ToolResult;

namespace {
constexpr auto kUpdateInterval = std::chrono::milliseconds(100);

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

// The notice after cut output (tools.md section 4.4); a spool file that reached its limit says
// so (amendments A4).
std::string truncation_notice(const Truncation& t, std::size_t last_line_size,
                              const std::string& path, bool cut) {
  const std::string full = "Full output: " + path + (cut ? " (full output cut at 256 MiB)" : "");
  const std::size_t n = t.total_lines;
  if (t.last_line_partial) {
    return "\n\n[Showing last " + format_size(t.output_bytes) + " of line " + std::to_string(n) +
           " (line is " + format_size(last_line_size) + "). " + full + "]";
  }
  return "\n\n[Showing lines " + std::to_string(n - t.output_lines + 1) + "-" + std::to_string(n) +
         " of " + std::to_string(n) +
         (t.by == Truncation::By::bytes ? " (" + format_size(kMaxBytes) + " limit)" : "") + ". " +
         full + "]";
}

}  // namespace

namespace {

// One bash tool call: the output seen so far (OutputTail, bounded), throttled progress, the
// timeout, the full-output file, and the result of section 4.4. Time is the Scheduler's.
struct BashCall : std::enable_shared_from_this<BashCall> {
  BashCall(session::Scheduler& s, Json timeout_value, session::Tool::Progress p,
           session::Tool::Done d)
      : scheduler(s),
        timeout_value(std::move(timeout_value)),
        throttle(s.make_timer()),
        deadline(s.make_timer()),
        progress(std::move(p)),
        done(std::move(d)) {}

  void begin(double timeout_seconds) {
    auto self = shared_from_this();
    scheduler.post([self] {
      if (!self->finished && self->progress) self->progress(ToolResult{});
    });
    if (timeout_seconds > 0) {
      const double ms = std::min(timeout_seconds, 3.0e9) * 1000.0;
      deadline->start(std::chrono::milliseconds(static_cast<std::int64_t>(std::ceil(ms))), [self] {
        if (self->finished) return;
        self->timed_out = true;
        self->watch->kill();
      });
    }
  }

  void take(std::string_view data) {
    tail.append(data);
    if (file.is_open()) {
      file.write(data);
    } else if (!file.failed() && tail.over_tool_limit()) {
      file.open(tail.buffered());  // everything so far (nothing was dropped yet)
    }
    output_since_update = true;
    if (!throttling) send_update();
  }

  // At most one update per kUpdateInterval: the first output at once, then what came during
  // the interval when it ends.
  void send_update() {
    if (!progress) return;
    output_since_update = false;
    const Truncation t = tail.truncation();
    ToolResult partial;
    partial.content.push_back(ContentBlock::make_text(t.content));
    partial.details = t.truncated ? details(t) : Json::object();
    progress(std::move(partial));
    throttling = true;
    std::weak_ptr<BashCall> weak = weak_from_this();
    throttle->start(kUpdateInterval, [weak] {
      auto self = weak.lock();
      if (!self) return;
      self->throttling = false;
      if (!self->finished && self->output_since_update) self->send_update();
    });
  }

  Json details(const Truncation& t) const {
    return Json{{"truncation", t.to_json()}, {"fullOutputPath", file.path()}};
  }

  void complete(int status) {
    if (output_since_update) send_update();  // the last update: output since the previous one
    finished = true;
    throttle->cancel();
    deadline->cancel();
    file.close();
    if (!aborted && !timed_out && watch)
      if (auto failure = watch->failure()) {
        if (auto f = std::move(done)) f(ToolResult::error(*failure));
        return;
      }
    if (auto f = std::move(done)) f(result(status));
  }

  ToolResult result(int status) const {
    const Truncation t = tail.truncation();
    std::string text = t.content;
    if (t.truncated) text += truncation_notice(t, tail.last_line_size(), file.path(), file.cut());
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

  session::Scheduler& scheduler;
  Json timeout_value;
  std::unique_ptr<session::Timer> throttle, deadline;
  session::Tool::Progress progress;
  session::Tool::Done done;
  std::shared_ptr<CommandWatch> watch;
  OutputFile file;
  OutputTail tail;
  bool finished = false, aborted = false, timed_out = false;
  bool output_since_update = false, throttling = false;
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
      call_->throttle->cancel();
      call_->deadline->cancel();
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

BashTool::BashTool(session::Scheduler& scheduler, ShellSpawner::Spawn spawn,
                   BashToolOptions options)
    : options_(std::move(options)), spawner_(scheduler, std::move(spawn)) {}

BashTool::~BashTool() = default;

const session::ToolDefinition& BashTool::definition() const {
  return tools::builtin_definition("bash");
}

std::optional<session::Tool::SpooledOutput> BashTool::spooled_output(
    const std::string& spool_file) const {
  const int fd = ::open(spool_file.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) return std::nullopt;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return std::nullopt;
  }
  // Through the same bounded tail as a running call: memory stays at its window.
  OutputTail tail;
  std::string buffer(64 * 1024, '\0');
  for (ssize_t n; (n = ::read(fd, buffer.data(), buffer.size())) != 0;) {
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    tail.append(std::string_view(buffer.data(), static_cast<std::size_t>(n)));
  }
  ::close(fd);
  const Truncation t = tail.truncation();
  SpooledOutput out;
  out.text = t.content;
  if (t.truncated) {
    const bool cut = static_cast<std::uint64_t>(st.st_size) >= session::kSpoolMaxBytes;
    out.text += truncation_notice(t, tail.last_line_size(), spool_file, cut);
    out.keep_file = true;
  }
  return out;
}

void BashTool::kill_background() {
  spawner_.kill_background();
}

std::unique_ptr<session::ToolCall> BashTool::start(const Json& args,
                                                   const session::ToolContext& context,
                                                   Progress progress, Done done) {
  auto fail = [&](std::string text) -> std::unique_ptr<session::ToolCall> {
    spawner_.scheduler().post(
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
  double timeout = 0;
  Json timeout_value;
  if (args.contains("timeout") && args["timeout"].is_number()) {
    timeout = args["timeout"].get<double>();
    timeout_value = args["timeout"];
  }
  auto call = std::make_shared<BashCall>(spawner_.scheduler(), timeout_value, std::move(progress),
                                         std::move(done));
  call->begin(timeout);  // first: its empty update is queued before any output can be read
  // With a session file, the output is spooled beside it from the first byte (runtime.md 8).
  if (!context.spool_dir.empty())
    call->file.open_spool(context.spool_dir,
                          session::spool_path(context.spool_dir, context.tool_call_id));
  std::string why;
  call->watch = spawner_.start({shell, "-c", command}, context.cwd, forward_to(call), why);
  if (!call->watch) {
    // The completion went into the call: it comes back for the failure's result (calling the
    // moved-from one threw bad_function_call out of the event loop and ended the server).
    done = std::move(call->done);
    call->done = nullptr;
    call->progress = nullptr;  // its queued empty update is not sent
    call->finished = true;
    call->deadline->cancel();
    // A sandbox's refusal is the whole result (policy.md section 8.10).
    if (why.rfind("Sandbox ", 0) == 0) return fail(why);
    return fail("Cannot run " + shell + ": " + why);
  }
  return std::make_unique<BashCallHandle>(call);
}

}  // namespace rebound::tools
