// The file tools on the event loop: each call's work runs through Offload and its result comes
// back through the scheduler; write and edit wait for the previous write call on their file.

#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <deque>
#include <map>
#include <mutex>

#include "tools/builtin_tools.h"
#include "tools/definitions.h"
#include "tools/file_io.h"
#include "tools/paths.h"

namespace rebound::tools {

using protocol::Json;
using session::ToolResult;

/// Per-file order of write calls (tools.md section 6). Event loop only.
class WriteQueue {
 public:
  using Begin = std::function<void(bool waited)>;
  /// Runs `begin` now (posted) or when the calls before it on `key` are released.
  std::uint64_t enqueue(const std::string& key, Begin begin) {
    const std::uint64_t ticket = ++next_;
    auto& q = files_[key];
    q.push_back({ticket, std::move(begin)});
    if (q.size() == 1) start_front(key, false);
    return ticket;
  }
  /// The call `ticket` is over (finished, or abandoned while waiting).
  void release(const std::string& key, std::uint64_t ticket) {
    auto it = files_.find(key);
    if (it == files_.end()) return;
    auto& q = it->second;
    const bool was_front = !q.empty() && q.front().ticket == ticket;
    for (auto e = q.begin(); e != q.end(); ++e) {
      if (e->ticket == ticket) {
        q.erase(e);
        break;
      }
    }
    if (q.empty()) {
      files_.erase(it);
    } else if (was_front) {
      start_front(key, true);
    }
  }

 private:
  struct Entry {
    std::uint64_t ticket;
    Begin begin;
  };
  void start_front(const std::string& key, bool waited) {
    auto begin = std::move(files_[key].front().begin);
    if (begin) begin(waited);
  }
  std::map<std::string, std::deque<Entry>> files_;
  std::uint64_t next_ = 0;
};

namespace {

// 0, or why `content` could not replace the regular file `path` (a FIFO never blocks: the
// non-blocking open fails without a reader, and anything but a regular file is refused).
int replace_regular_file(const std::string& path, const std::string& content) {
  UniqueFd fd(open_for_tool_write(path, false));
  if (!fd) return errno;
  if (!write_all(fd.get(), content)) return errno ? errno : EIO;
  return 0;
}

std::string queue_key_of(const std::string& abs) {
  char real[PATH_MAX];
  return ::realpath(abs.c_str(), real) ? std::string(real) : abs;
}

}  // namespace

namespace {

// A file tool's work, run on a worker thread; `begins` marks the start of a file write.
using Work = ToolResult (*)(const Json& args, const session::ToolContext& context,
                            const std::atomic<bool>& cancelled, const WriteBegins& begins);

// The file tools, one entry each: the name (its definition and traits are in definitions.cpp),
// whether its calls wait in the file's write queue, its argument preparation and its work.
struct FileToolEntry {
  std::string_view name;
  bool writes;
  void (*prepare)(Json& args);  // none: the arguments as sent
  Work work;
};

// A tool that writes no file: its work without the write mark.
template <ToolResult (*Run)(const Json&, const session::ToolContext&, const std::atomic<bool>&)>
ToolResult reading(const Json& args, const session::ToolContext& context,
                   const std::atomic<bool>& cancelled, const WriteBegins&) {
  return Run(args, context, cancelled);
}

constexpr FileToolEntry kFileTools[] = {
    {"read", false, nullptr, reading<run_read>},      {"write", true, nullptr, run_write},
    {"edit", true, prepare_edit_arguments, run_edit}, {"ls", false, nullptr, reading<run_ls>},
    {"grep", false, nullptr, reading<run_grep>},      {"find", false, nullptr, reading<run_find>},
};

// What a call shares between the loop and its worker.
struct CallState {
  std::mutex mutex;
  std::atomic<bool> cancelled{false};
  bool writing = false;   // the file write has begun (abort then waits for it)
  bool finished = false;  // loop only: done was called or dropped
  session::Tool::Done done;
  std::string queue_key;
  std::uint64_t ticket = 0;
  std::weak_ptr<WriteQueue> queue;
};

void finish(const std::shared_ptr<CallState>& state, ToolResult result) {
  if (state->finished) return;
  state->finished = true;
  if (auto q = state->queue.lock(); q && state->ticket) q->release(state->queue_key, state->ticket);
  if (auto done = std::move(state->done)) done(std::move(result));
}

class CallHandle : public session::ToolCall {
 public:
  CallHandle(std::shared_ptr<CallState> state, session::Scheduler& scheduler)
      : state_(std::move(state)), scheduler_(scheduler) {}
  ~CallHandle() override {
    state_->cancelled = true;
    state_->done = nullptr;  // stopped without a completion; its file turn is given up
    finish(state_, ToolResult{});
  }
  void cancel() override {
    if (state_->finished) return;
    state_->cancelled = true;
    bool writing;
    {
      std::lock_guard lock(state_->mutex);
      writing = state_->writing;
    }
    if (writing) return;  // the worker finishes the write, then reports the abort
    auto state = state_;
    scheduler_.post([state] { finish(state, ToolResult::error("Operation aborted")); });
  }

 private:
  std::shared_ptr<CallState> state_;
  session::Scheduler& scheduler_;
};

class FileTool : public session::Tool {
 public:
  FileTool(const FileToolEntry& entry, session::Scheduler& scheduler, Offload& offload,
           std::shared_ptr<WriteQueue> queue)
      : entry_(entry),
        definition_(builtin_definition(entry.name)),
        scheduler_(scheduler),
        offload_(offload),
        queue_(std::move(queue)) {}

  const session::ToolDefinition& definition() const override { return definition_; }

  void prepare_arguments(Json& args) const override {
    if (entry_.prepare) entry_.prepare(args);
  }

  std::unique_ptr<session::ToolCall> start(const Json& args, const session::ToolContext& context,
                                           Progress, Done done) override {
    auto state = std::make_shared<CallState>();
    state->done = std::move(done);
    auto handle = std::make_unique<CallHandle>(state, scheduler_);
    if (entry_.writes) {
      // The file's identity is taken now, when the batch starts.
      const std::string abs = resolve_path(args.value("path", ""), context.cwd);
      state->queue_key = queue_key_of(abs);
      state->queue = queue_;
      auto weak = std::weak_ptr<CallState>(state);
      state->ticket = queue_->enqueue(state->queue_key, [this, weak, args, context](bool waited) {
        auto s = weak.lock();
        if (!s || s->finished) return;
        scheduler_.post([this, s, args, context, waited] {
          if (s->finished) return;
          if (waited && context.skip_for_steering && context.skip_for_steering()) {
            finish(s, ToolResult::error("Skipped due to queued user message."));
            return;
          }
          run(s, args, context);
        });
      });
    } else {
      scheduler_.post([this, state, args, context] {
        if (!state->finished) run(state, args, context);
      });
    }
    return handle;
  }

 private:
  void run(const std::shared_ptr<CallState>& state, const Json& args,
           const session::ToolContext& context) {
    const Work work = entry_.work;
    session::Scheduler& scheduler = scheduler_;
    session::ToolContext ctx = context;
    ctx.skip_for_steering = nullptr;  // the loop's; never touched off the loop
    offload_.run([state, args, ctx, work, &scheduler] {
      WriteBegins begins = [&state] {
        std::lock_guard lock(state->mutex);
        state->writing = true;
      };
      ToolResult result = work(args, ctx, state->cancelled, begins);
      if (state->cancelled) result = ToolResult::error("Operation aborted");
      scheduler.post(
          [state, result = std::move(result)]() mutable { finish(state, std::move(result)); });
    });
  }

  const FileToolEntry& entry_;
  session::ToolDefinition definition_;
  session::Scheduler& scheduler_;
  Offload& offload_;
  std::shared_ptr<WriteQueue> queue_;
};

}  // namespace

void FileTools::read_file(std::string path, FileRead done) {
  session::Scheduler& scheduler = scheduler_;
  offload_.run([&scheduler, path = std::move(path), done = std::move(done)]() mutable {
    std::string text;
    const int error = read_regular_file(path, text, kMaxEditBytes);
    scheduler.post([done = std::move(done), text = std::move(text), error]() mutable {
      if (error) {
        done(std::nullopt, error);
      } else {
        done(std::move(text), 0);
      }
    });
  });
}

void FileTools::write_file(std::string path, std::string content,
                           std::function<void(int error)> done) {
  const std::string key = queue_key_of(path);
  auto ticket = std::make_shared<std::uint64_t>(0);
  std::weak_ptr<WriteQueue> queue = queue_;
  session::Scheduler& scheduler = scheduler_;
  Offload& offload = offload_;
  *ticket =
      queue_->enqueue(key, [&scheduler, &offload, queue, key, ticket, path = std::move(path),
                            content = std::move(content), done = std::move(done)](bool) mutable {
        offload.run([&scheduler, queue, key, ticket, path = std::move(path),
                     content = std::move(content), done = std::move(done)]() mutable {
          const int error = replace_regular_file(path, content);
          scheduler.post([queue, key, ticket, done = std::move(done), error] {
            if (auto q = queue.lock()) q->release(key, *ticket);
            done(error);
          });
        });
      });
}

FileTools::FileTools(session::Scheduler& scheduler, Offload& offload)
    : scheduler_(scheduler), offload_(offload), queue_(std::make_shared<WriteQueue>()) {}

FileTools::~FileTools() = default;

std::shared_ptr<session::Tool> FileTools::make(std::string_view name) {
  for (const auto& entry : kFileTools) {
    if (entry.name == name) return std::make_shared<FileTool>(entry, scheduler_, offload_, queue_);
  }
  return nullptr;
}

}  // namespace rebound::tools
