#pragma once
// The built-in file tools (tools.md section 4): read, write, edit, ls, grep and find. Each call
// checks, resolves and then does its file work on a worker thread (Offload), so a long search
// never holds up the event loop; the result comes back through the scheduler. write and edit
// wait for earlier write calls on the same file (WriteQueue). The bash tool lives in the
// server, which owns child processes.
//
// The run_* functions are the tools' work itself, callable from tests without a loop.

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include <optional>

#include "protocol/json.h"
#include "session/scheduler.h"
#include "session/tool.h"

namespace rebound::tools {

/// Runs work off the event loop (a thread pool in the server, inline in tests).
class Offload {
 public:
  virtual ~Offload() = default;
  virtual void run(std::function<void()> work) = 0;
};

/// Marks the moment a write call starts writing its file: from then on an abort waits for the
/// write to finish (tools.md section 7).
using WriteBegins = std::function<void()>;

session::ToolResult run_read(const protocol::Json& args, const session::ToolContext& context,
                             const std::atomic<bool>& cancelled);
/// read's text result for a file whose whole text is `text` (an editor's buffer, acp.md section
/// 7.4): the same selection, truncation and notes as run_read on a file holding it.
session::ToolResult read_text(const protocol::Json& args, std::string_view text);
session::ToolResult run_write(const protocol::Json& args, const session::ToolContext& context,
                              const std::atomic<bool>& cancelled, const WriteBegins& begins);
session::ToolResult run_edit(const protocol::Json& args, const session::ToolContext& context,
                             const std::atomic<bool>& cancelled, const WriteBegins& begins);
session::ToolResult run_ls(const protocol::Json& args, const session::ToolContext& context,
                           const std::atomic<bool>& cancelled);
session::ToolResult run_grep(const protocol::Json& args, const session::ToolContext& context,
                             const std::atomic<bool>& cancelled);
/// The most time one grep call spends searching: 30 s (tens of gigabytes of plain text on this
/// machine; a catastrophic pattern stops there).
inline constexpr std::chrono::milliseconds kGrepBudget{30000};
/// grep with another budget (run_grep's is kGrepBudget).
session::ToolResult run_grep_within(const protocol::Json& args, const session::ToolContext& context,
                                    const std::atomic<bool>& cancelled,
                                    std::chrono::milliseconds budget);
session::ToolResult run_find(const protocol::Json& args, const session::ToolContext& context,
                             const std::atomic<bool>& cancelled);

/// Edit's argument preparation (section 4.3): `edits` given as JSON text is parsed, a legacy
/// top-level oldText/newText pair becomes one more edit.
void prepare_edit_arguments(protocol::Json& args);

class WriteQueue;

/// Makes the file tools; the write and edit tools of one factory share a per-file queue.
/// `scheduler` and `offload` must outlive the tools and every call they start.
class FileTools {
 public:
  FileTools(session::Scheduler& scheduler, Offload& offload);
  ~FileTools();
  /// The file tool `name` (read, write, edit, ls, grep, find); nullptr for any other name.
  std::shared_ptr<session::Tool> make(std::string_view name);

  /// A workspace file's text read the way edit reads it (regular files only, a non-blocking
  /// open, at most kMaxEditBytes, a larger file refused unread) on a worker thread. `done` runs
  /// on the loop with the text, or none and the errno. For front ends that show a file around
  /// a tool call (ACP's diffs).
  using FileRead = std::function<void(std::optional<std::string> text, int error)>;
  void read_file(std::string path, FileRead done);
  /// Replaces an existing regular file's content, in that file's write queue (after the write
  /// and edit calls before it), on a worker thread. `done` runs on the loop with 0 or the errno.
  void write_file(std::string path, std::string content, std::function<void(int error)> done);

 private:
  session::Scheduler& scheduler_;
  Offload& offload_;
  std::shared_ptr<WriteQueue> queue_;
};

}  // namespace rebound::tools
