#include "sandbox/sandbox_spawn.h"

#include <fcntl.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <filesystem>

#include "process/child_process.h"

namespace rebound::sandbox {

namespace {

constexpr std::size_t kKeptOutput = 4096;

class SandboxedChild : public tools::WatchedProcess {
 public:
  SandboxedChild(std::unique_ptr<process::ChildProcess> child, int status_read)
      : child_(std::move(child)), status_read_(status_read) {}
  ~SandboxedChild() override {
    if (status_read_ >= 0) ::close(status_read_);
  }

  void read_output(std::function<void(std::string_view)> data, std::function<void()> eof) override {
    child_->read_stdout(
        [this, data = std::move(data)](std::string_view chunk) {
          tail_.append(chunk);
          if (tail_.size() > 2 * kKeptOutput) tail_.erase(0, tail_.size() - kKeptOutput);
          data(chunk);
        },
        std::move(eof));
  }
  void wait_exit(std::function<void(int)> exited) override {
    child_->wait_exit([this, exited = std::move(exited)](int status) {
      read_status();
      exited(status);
    });
  }
  void kill_group(int signal) override {
    killed_ = true;
    child_->kill_group(signal);
  }
  void close_output() override { child_->close_output(); }
  void keep_group() override { child_->keep_group(); }
  std::optional<std::string> failure() const override {
    // Ran: bubblewrap wrote the command's exit code. Killed by us: not a failure to start.
    if (saw_exit_code_ || killed_) return std::nullopt;
    std::string last = tail_;
    while (!last.empty() && (last.back() == '\n' || last.back() == '\r'))
      last.pop_back();
    const std::size_t nl = last.rfind('\n');
    return "Sandbox failed to start: " + (nl == std::string::npos ? last : last.substr(nl + 1));
  }

 private:
  // bubblewrap has exited: what it wrote on the status descriptor is all there.
  void read_status() {
    if (status_read_ < 0) return;
    ::fcntl(status_read_, F_SETFL, ::fcntl(status_read_, F_GETFL) | O_NONBLOCK);
    std::string text;
    char buf[1024];
    for (;;) {
      const ssize_t n = ::read(status_read_, buf, sizeof buf);
      if (n > 0 && text.size() < 65536) {
        text.append(buf, static_cast<std::size_t>(n));
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      break;
    }
    ::close(status_read_);
    status_read_ = -1;
    saw_exit_code_ = text.find("\"exit-code\"") != std::string::npos;
  }

  std::unique_ptr<process::ChildProcess> child_;
  int status_read_;
  std::string tail_;
  bool killed_ = false, saw_exit_code_ = false;
};

}  // namespace

tools::ShellSpawner::Spawn sandboxed_spawn(boost::asio::any_io_executor executor,
                                           std::shared_ptr<Sandbox> sandbox) {
  return [executor, sandbox](const std::vector<std::string>& argv, const std::string& cwd,
                             std::string& error) -> std::unique_ptr<tools::WatchedProcess> {
    auto launched = sandbox->launch(argv, cwd);
    if (!launched) {
      error = launched.error().message;
      return nullptr;
    }
    Launch& l = *launched;
    process::ChildSpec spec;
    spec.argv = l.argv;
    spec.env = l.env;
    if (!cwd.empty()) spec.cwd = cwd;
    spec.pass_fds = {l.seccomp_fd, l.status_write, l.args_fd};
    auto child = process::ChildProcess::spawn(executor, spec, error);
    close_launch_fds(l, child != nullptr);
    if (!child) return nullptr;
    spdlog::debug("bash: started pid {} in the sandbox", child->pid());
    return std::make_unique<SandboxedChild>(std::move(child), l.status_read);
  };
}

namespace {

// One spelling per directory: `/a/b/`, `/a/./b` and `/a/b` are one workspace.
std::string workspace_key(const std::string& dir) {
  std::string key = std::filesystem::path(dir).lexically_normal().string();
  while (key.size() > 1 && key.back() == '/')
    key.pop_back();
  return key;
}

}  // namespace

std::shared_ptr<Sandbox> WorkspaceSandboxes::find(const std::string& workspace) const {
  const auto it = entries_.find(workspace_key(workspace));
  return it == entries_.end() ? nullptr : it->second.box;
}

std::shared_ptr<void> WorkspaceSandboxes::attach(const std::string& workspace,
                                                 std::shared_ptr<Sandbox> box) {
  const std::string key = workspace_key(workspace);
  Entry& e = entries_[key];
  const bool sandboxed = box != nullptr;
  if (sandboxed) {
    if (!e.box) e.box = std::move(box);
    ++e.sandboxed;
  } else {
    ++e.bare;
  }
  auto self = shared_from_this();
  return std::shared_ptr<void>(nullptr, [self, key, sandboxed](void*) {
    const auto it = self->entries_.find(key);
    if (it == self->entries_.end()) return;
    Entry& entry = it->second;
    if (sandboxed && --entry.sandboxed == 0) entry.box.reset();
    if (!sandboxed) --entry.bare;
    if (entry.sandboxed == 0 && entry.bare == 0) self->entries_.erase(it);
  });
}

tools::ShellSpawner::Spawn WorkspaceSandboxes::spawn() {
  std::weak_ptr<WorkspaceSandboxes> weak = weak_from_this();
  return [weak](const std::vector<std::string>& argv, const std::string& cwd,
                std::string& error) -> std::unique_ptr<tools::WatchedProcess> {
    auto self = weak.lock();
    const std::string key = workspace_key(cwd);
    const auto it = self ? self->entries_.find(key) : decltype(self->entries_)::iterator{};
    if (!self || it == self->entries_.end()) {
      error = "Sandbox unavailable: no session works in " + key;
      return nullptr;
    }
    if (it->second.box) return sandboxed_spawn(self->executor_, it->second.box)(argv, cwd, error);
    return self->plain_(argv, cwd, error);
  };
}

}  // namespace rebound::sandbox
