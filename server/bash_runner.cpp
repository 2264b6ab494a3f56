#include "server/bash_runner.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <array>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>

#include "session/output_tail.h"

extern char** environ;

namespace rebound::server {

namespace asio = boost::asio;

namespace {

constexpr auto kReapPoll = std::chrono::milliseconds(20);  // without a pidfd

struct Job : std::enable_shared_from_this<Job> {
  Job(asio::any_io_executor ex, pid_t child, int out_fd, int pid_fd,
      session::ShellRunner::Done on_done)
      : pid(child), pipe(ex, out_fd), reap_timer(ex), done(std::move(on_done)) {
    if (pid_fd >= 0) pidfd.emplace(ex, pid_fd);
  }

  void begin() {
    read();
    wait_exit();
  }

  void read() {
    pipe.async_read_some(
        asio::buffer(buf),
        [self = shared_from_this()](const boost::system::error_code& ec, std::size_t n) {
          if (n > 0) self->take(std::string_view(self->buf.data(), n));
          if (ec) {
            self->eof = true;
            self->maybe_finish();
            return;
          }
          self->read();
        });
  }

  void take(std::string_view data) {
    tail.append(data);
    if (spill_fd >= 0) {
      write_all(spill_fd, data);
    } else if (tail.over_limit() && !spill_failed) {
      open_spill();
    }
  }

  void open_spill() {
    std::error_code ec;
    std::string name =
        (std::filesystem::temp_directory_path(ec) / "rebound-bash-XXXXXX.log").string();
    spill_fd = ::mkostemps(name.data(), 4, O_CLOEXEC);
    if (spill_fd < 0) {
      spill_failed = true;
      spdlog::warn("bash: cannot create a file for the full output: {}", std::strerror(errno));
      return;
    }
    spill_path = name;
    write_all(spill_fd, tail.buffered());  // still everything so far (OutputTail's promise)
  }

  static void write_all(int fd, std::string_view data) {
    while (!data.empty()) {
      const ssize_t n = ::write(fd, data.data(), data.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;
      data.remove_prefix(static_cast<std::size_t>(n));
    }
  }

  void wait_exit() {
    if (pidfd) {
      pidfd->async_wait(asio::posix::stream_descriptor::wait_read,
                        [self = shared_from_this()](const boost::system::error_code& ec) {
                          if (ec == asio::error::operation_aborted) return;
                          self->reap(0);
                        });
      return;
    }
    reap_timer.expires_after(kReapPoll);
    reap_timer.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
      if (ec) return;
      if (!self->reap(WNOHANG)) self->wait_exit();
    });
  }

  bool reap(int flags) {
    int status = 0;
    pid_t r;
    do {
      r = ::waitpid(pid, &status, flags);
    } while (r < 0 && errno == EINTR);
    if (r == 0) return false;
    exited = true;
    if (r == pid && WIFEXITED(status)) exit_code = WEXITSTATUS(status);
    maybe_finish();
    return true;
  }

  void maybe_finish() {
    if (!eof || !exited || finished) return;
    finished = true;
    if (spill_fd >= 0) ::close(spill_fd);
    spill_fd = -1;
    session::ShellResult r;
    auto shown = tail.result();
    r.output = std::move(shown.text);
    r.truncated = shown.truncated;
    if (r.truncated && !spill_path.empty()) r.full_output_path = spill_path;
    r.cancelled = cancelled;
    if (!cancelled) r.exit_code = exit_code;
    if (auto f = std::move(done)) f(std::move(r));
  }

  void kill() {
    if (!exited) ::kill(-pid, SIGKILL);
  }

  // Destroyed without finishing: no completion; kill, close and reap now.
  void discard() {
    done = nullptr;
    if (finished) return;
    kill();
    boost::system::error_code ignored;
    pipe.close(ignored);
    if (pidfd) pidfd->close(ignored);
    reap_timer.cancel();
    if (!exited) {
      int status = 0;
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      exited = true;
    }
    if (spill_fd >= 0) ::close(spill_fd);
    spill_fd = -1;
    finished = true;
  }

  pid_t pid;
  asio::posix::stream_descriptor pipe;
  std::optional<asio::posix::stream_descriptor> pidfd;
  asio::steady_timer reap_timer;
  session::ShellRunner::Done done;
  std::array<char, 65536> buf{};
  session::OutputTail tail;
  int spill_fd = -1;
  bool spill_failed = false;
  std::string spill_path;
  bool eof = false, exited = false, finished = false, cancelled = false;
  std::optional<std::int64_t> exit_code;
};

class JobHandle : public session::ShellJob {
 public:
  explicit JobHandle(std::shared_ptr<Job> job) : job_(std::move(job)) {}
  ~JobHandle() override { job_->discard(); }
  void cancel() override {
    if (job_->finished) return;
    job_->cancelled = true;
    job_->kill();
  }

 private:
  std::shared_ptr<Job> job_;
};

}  // namespace

std::unique_ptr<session::ShellJob> BashRunner::start(const std::string& command, Done done,
                                                     std::string& error) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    error = std::string("Cannot run bash: ") + std::strerror(errno);
    return nullptr;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t defaults;
  sigemptyset(&defaults);
  for (int sig : {SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT})
    sigaddset(&defaults, sig);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setpgroup(&attr, 0);  // its own group, so abort_bash reaches its children
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  std::string bash = "bash", dash_c = "-c", cmd = command;
  char* argv[] = {bash.data(), dash_c.data(), cmd.data(), nullptr};
  pid_t pid = 0;
  const int rc = ::posix_spawnp(&pid, "bash", &actions, &attr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  ::close(fds[1]);
  if (rc != 0) {
    ::close(fds[0]);
    error = std::string("Cannot run bash: ") + std::strerror(rc);
    return nullptr;
  }
  const int pid_fd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  auto job = std::make_shared<Job>(executor_, pid, fds[0], pid_fd, std::move(done));
  job->begin();
  spdlog::debug("bash: started pid {}", pid);
  return std::make_unique<JobHandle>(job);
}

}  // namespace rebound::server
