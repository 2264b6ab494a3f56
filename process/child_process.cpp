#include "process/child_process.h"

#include "process/descendants.h"

#include <utility>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <cerrno>
#include <cstring>
#include <deque>
#include <mutex>
#include <set>
#include <vector>

extern char** environ;

namespace rebound::process {

namespace asio = boost::asio;

namespace {

// The pids some ChildProcess waits for (reap_orphans leaves them alone). Any thread.
std::mutex& watched_mutex() {
  static std::mutex m;
  return m;
}
std::set<pid_t>& watched_pids() {
  static std::set<pid_t> pids;
  return pids;
}
void unwatch(pid_t pid) {
  std::lock_guard lock(watched_mutex());
  watched_pids().erase(pid);
}

constexpr auto kReapPoll = std::chrono::milliseconds(20);  // without a pidfd
constexpr int kReapLaterTries = 250;                       // 5 s after a kill

struct Pipe {
  int read = -1, write = -1;
};

bool make_pipe(Pipe& p) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return false;
  p = {fds[0], fds[1]};
  return true;
}

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}
}  // namespace

struct ChildProcess::State : std::enable_shared_from_this<ChildProcess::State> {
  explicit State(asio::any_io_executor ex) : reap_timer(ex) {}

  struct Reader {
    std::optional<asio::posix::stream_descriptor> pipe;
    std::array<char, 65536> buf{};
    Data data;
    Eof eof;
  };

  void read(Reader& r) {
    if (!r.pipe || !r.pipe->is_open()) return;
    r.pipe->async_read_some(
        asio::buffer(r.buf),
        [self = shared_from_this(), &r](const boost::system::error_code& ec, std::size_t n) {
          if (ec == asio::error::operation_aborted || !r.pipe->is_open()) {
            return;
          }
          if (n > 0 && r.data) r.data(std::string_view(r.buf.data(), n));
          if (ec) {
            boost::system::error_code ignored;
            r.pipe->close(ignored);
            // Nothing more comes: the handlers are dropped (they may own this process's owner,
            // whose cycle through them would otherwise never break).
            r.data = nullptr;
            if (auto eof = std::exchange(r.eof, nullptr)) eof();
            return;
          }
          self->read(r);
        });
  }

  // Everything queued goes out in one gathered write (up to 64 pieces): a child that reads more
  // slowly than it is written to costs one write per batch, not one per message.
  void write_next() {
    if (writing || queue.empty() || !input || !input->is_open()) return;
    writing = true;
    constexpr std::size_t kMaxPieces = 64;
    std::vector<asio::const_buffer> pieces;
    for (std::size_t i = 0; i < queue.size() && i < kMaxPieces; ++i)
      pieces.push_back(asio::buffer(queue[i]));
    in_flight = pieces.size();
    asio::async_write(
        *input, pieces,
        [self = shared_from_this()](const boost::system::error_code& ec, std::size_t) {
          self->writing = false;
          if (ec) {
            self->queue.clear();
            self->queued_bytes = 0;
            return;
          }
          for (; self->in_flight > 0 && !self->queue.empty(); --self->in_flight) {
            self->queued_bytes -= self->queue.front().size();
            self->queue.pop_front();
          }
          if (self->queue.empty() && self->closing) {
            self->close_input();
            return;
          }
          self->write_next();
        });
  }

  // Never a blocking wait on the loop (issue 50: one sat in waitpid on a hook still running,
  // and no timer acted again): the pidfd says when to look, WNOHANG looks; a pidfd that
  // reports readiness without a child to reap, or fails, gives way to polling.
  void watch_exit() {
    if (pidfd && !poll_only) {
      pidfd->async_wait(asio::posix::stream_descriptor::wait_read,
                        [self = shared_from_this()](const boost::system::error_code& ec) {
                          if (ec == asio::error::operation_aborted) return;
                          if (self->reap(WNOHANG)) return;
                          self->poll_only = true;
                          self->watch_exit();
                        });
      return;
    }
    reap_timer.expires_after(kReapPoll);
    reap_timer.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
      if (ec) return;
      if (!self->reap(WNOHANG)) self->watch_exit();
    });
  }

  // After the owner is gone: WNOHANG every kReapPoll, `tries` times, then the orphan reaper's.
  void reap_later(int tries) {
    reap_timer.expires_after(kReapPoll);
    reap_timer.async_wait([self = shared_from_this(), tries](const boost::system::error_code&) {
      if (self->reap(WNOHANG)) return;
      if (tries <= 0) {
        unwatch(self->pid);
        return;
      }
      self->reap_later(tries - 1);
    });
  }

  // True once the child was reaped.
  bool reap(int flags) {
    if (reaped) return true;
    int status = 0;
    pid_t r;
    do {
      r = ::waitpid(pid, &status, flags);
    } while (r < 0 && errno == EINTR);
    if (r == 0) return false;
    if (r < 0) status = 0;  // reaped elsewhere (ECHILD): its status is not known
    reaped = true;
    unwatch(pid);
    wait_status = status;
    if (auto f = std::exchange(on_exit, nullptr)) f(status);
    return true;
  }

  void close_input() {
    boost::system::error_code ignored;
    if (input) input->close(ignored);
    queue.clear();
  }

  pid_t pid = -1;
  bool closing = false;  // close stdin once the queued writes are out
  Reader out, err;
  std::optional<asio::posix::stream_descriptor> input;
  std::deque<std::string> queue;
  std::size_t queued_bytes = 0;  // of `queue`
  std::size_t in_flight = 0;     // the first pieces of `queue` being written
  bool writing = false;
  std::optional<asio::posix::stream_descriptor> pidfd;
  asio::steady_timer reap_timer;
  Exit on_exit;
  bool watching = false;
  bool poll_only = false;
  bool reaped = false;
  bool keep_group = false;
  int wait_status = 0;
};

std::unique_ptr<ChildProcess> ChildProcess::spawn(asio::any_io_executor executor,
                                                  const ChildSpec& spec, std::string& error) {
  if (spec.argv.empty()) {
    error = "no program to run";
    return nullptr;
  }
  Pipe in, out, err;
  auto fail = [&](int code) {
    for (int* fd : {&in.read, &in.write, &out.read, &out.write, &err.read, &err.write})
      close_fd(*fd);
    error = std::strerror(code);
    return nullptr;
  };
  if (spec.input == ChildSpec::Input::pipe && !make_pipe(in)) return fail(errno);
  if (spec.output != ChildSpec::Output::null && !make_pipe(out)) return fail(errno);
  if (spec.output == ChildSpec::Output::separate && !make_pipe(err)) return fail(errno);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (in.read >= 0) {
    posix_spawn_file_actions_adddup2(&actions, in.read, 0);
  } else {
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  }
  if (out.write >= 0) {
    posix_spawn_file_actions_adddup2(&actions, out.write, 1);
    posix_spawn_file_actions_adddup2(&actions, err.write >= 0 ? err.write : out.write, 2);
  } else {
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  }
  if (spec.cwd) posix_spawn_file_actions_addchdir_np(&actions, spec.cwd->c_str());
  // The passed descriptors land on 3, 4, …: first copied above that range (so that no source
  // is overwritten before it is moved), closed here after the spawn.
  const int first_free = 3 + static_cast<int>(spec.pass_fds.size());
  std::vector<int> passed;
  for (std::size_t i = 0; i < spec.pass_fds.size(); ++i) {
    const int high = ::fcntl(spec.pass_fds[i], F_DUPFD_CLOEXEC, first_free);
    if (high < 0) {
      const int code = errno;
      for (int fd : passed)
        ::close(fd);
      posix_spawn_file_actions_destroy(&actions);
      return fail(code);
    }
    passed.push_back(high);
    posix_spawn_file_actions_adddup2(&actions, high, 3 + static_cast<int>(i));
  }
  // Only 0, 1 and 2 (and the passed ones) reach the child, whatever a library opened without
  // close-on-exec.
  posix_spawn_file_actions_addclosefrom_np(&actions, first_free);
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
  // A session of its own: it leads its process group and has no controlling terminal.
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  std::vector<std::string> args = spec.argv;
  std::vector<char*> argv;
  for (auto& a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_storage;
  std::vector<char*> envp;
  if (spec.env) {
    env_storage = *spec.env;
    for (auto& e : env_storage)
      envp.push_back(e.data());
    envp.push_back(nullptr);
  }
  pid_t pid = 0;
  int rc = 0;
  {
    // Watched before the reaper can see it exit.
    std::lock_guard lock(watched_mutex());
    rc = ::posix_spawnp(&pid, argv[0], &actions, &attr, argv.data(),
                        spec.env ? envp.data() : environ);
    if (rc == 0) watched_pids().insert(pid);
  }
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  for (int fd : passed)
    ::close(fd);
  close_fd(in.read);
  close_fd(out.write);
  close_fd(err.write);
  if (rc != 0) return fail(rc);

  auto state = std::make_shared<State>(executor);
  state->pid = pid;
  if (out.read >= 0) state->out.pipe.emplace(executor, out.read);
  if (err.read >= 0) state->err.pipe.emplace(executor, err.read);
  if (in.write >= 0) state->input.emplace(executor, in.write);
  const int pid_fd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (pid_fd >= 0) state->pidfd.emplace(executor, pid_fd);
  return std::unique_ptr<ChildProcess>(new ChildProcess(std::move(state)));
}

pid_t ChildProcess::watched_start(const std::function<pid_t()>& start) {
  std::lock_guard lock(watched_mutex());
  const pid_t pid = start();
  if (pid > 0) watched_pids().insert(pid);
  return pid;
}

void ChildProcess::unwatch_pid(pid_t pid) {
  unwatch(pid);
}

bool ChildProcess::is_watched(pid_t pid) {
  std::lock_guard lock(watched_mutex());
  return watched_pids().count(pid) > 0;
}

void ChildProcess::keep_group() {
  state_->keep_group = true;
}

ChildProcess::~ChildProcess() {
  State& s = *state_;
  s.on_exit = nullptr;
  s.out.data = nullptr;
  s.out.eof = nullptr;
  s.err.data = nullptr;
  s.err.eof = nullptr;
  if (!(s.keep_group && s.reaped)) {
    kill_group(SIGKILL);
    if (!s.reaped) ::kill(s.pid, SIGKILL);
  }
  close_output();
  boost::system::error_code ignored;
  if (s.input) s.input->close(ignored);
  if (s.pidfd) s.pidfd->close(ignored);
  s.reap_timer.cancel();
  // Killed just now: usually gone at once; if not, looked at again on the loop for a while,
  // then left to the server's orphan reaper. Never a blocking wait here.
  if (!s.reaped && !s.reap(WNOHANG)) s.reap_later(kReapLaterTries);
}

pid_t ChildProcess::pid() const {
  return state_->pid;
}

void ChildProcess::read_stdout(Data data, Eof eof) {
  state_->out.data = std::move(data);
  state_->out.eof = std::move(eof);
  state_->read(state_->out);
}

void ChildProcess::read_stderr(Data data, Eof eof) {
  state_->err.data = std::move(data);
  state_->err.eof = std::move(eof);
  state_->read(state_->err);
}

std::size_t ChildProcess::stdin_queued() const {
  return state_->queued_bytes;
}

void ChildProcess::write_stdin(std::string data) {
  if (!state_->input || !state_->input->is_open() || state_->closing) return;
  state_->queued_bytes += data.size();
  state_->queue.push_back(std::move(data));
  state_->write_next();
}

void ChildProcess::close_stdin() {
  state_->closing = true;
  if (!state_->writing) state_->close_input();
}

void ChildProcess::wait_exit(Exit exit) {
  state_->on_exit = std::move(exit);
  if (state_->reaped) {
    if (auto f = std::exchange(state_->on_exit, nullptr)) f(state_->wait_status);
    return;
  }
  if (!state_->watching) {
    state_->watching = true;
    state_->watch_exit();
  }
}

bool ChildProcess::exited() const {
  return state_->reaped;
}

bool ChildProcess::kill_group(int signal) {
  // The group id is the child's pid (setsid). Before the child is reaped its pid cannot be
  // reused, and after, the group only exists while something of it is alive.
  return ::kill(-state_->pid, signal) == 0;
}

bool ChildProcess::group_alive() const {
  return group_has_live_member(state_->pid);
}

void ChildProcess::close_output() {
  boost::system::error_code ignored;
  for (auto* r : {&state_->out, &state_->err}) {
    if (r->pipe) r->pipe->close(ignored);
  }
}

}  // namespace rebound::process
