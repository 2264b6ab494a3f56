#include "tests/support/subprocess.h"

#include "tests/support/temp_dir.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <thread>
#include <utility>

extern char** environ;

namespace rebound::testing {

namespace {

using Clock = std::chrono::steady_clock;

std::vector<std::string> build_env(const SubprocessOptions& o) {
  std::map<std::string, std::string> vars;
  for (char** e = environ; *e; ++e) {
    std::string_view kv(*e);
    const auto eq = kv.find('=');
    if (eq != std::string_view::npos) vars[std::string(kv.substr(0, eq))] = kv.substr(eq + 1);
  }
  for (const auto& name : o.unset_env)
    vars.erase(name);
  for (const auto& [k, v] : o.env)
    vars[k] = v;
  std::vector<std::string> out;
  for (const auto& [k, v] : vars)
    out.push_back(k + "=" + v);
  return out;
}

}  // namespace

Subprocess::Subprocess(std::vector<std::string> argv, SubprocessOptions options) {
  argv.insert(argv.begin(), options.launcher.begin(), options.launcher.end());
  // A child that exits while we still write to its stdin must give us EPIPE, not kill the test.
  ::signal(SIGPIPE, SIG_IGN);
  int in[2], out[2];
  if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0) {
    throw std::runtime_error("pipe failed");
  }
  char tmpl[] = "/tmp/rebound-stderr-XXXXXX";
  const int err_fd = ::mkstemp(tmpl);
  if (err_fd < 0) throw std::runtime_error("mkstemp failed");
  stderr_path_ = tmpl;

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (options.close_stdin_at_start) {
    posix_spawn_file_actions_addclose(&actions, 0);
  } else if (options.stdin_file) {
    posix_spawn_file_actions_addopen(&actions, 0, options.stdin_file->c_str(), O_RDONLY, 0);
  } else {
    posix_spawn_file_actions_adddup2(&actions, in[0], 0);
  }
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err_fd, 2);
  if (options.cwd) posix_spawn_file_actions_addchdir_np(&actions, options.cwd->c_str());
  // Nothing of the test process (other children's pipes, log files) leaks into the child.
  posix_spawn_file_actions_addclosefrom_np(&actions, 3);

  std::vector<char*> args;
  for (auto& a : argv)
    args.push_back(a.data());
  args.push_back(nullptr);
  auto env_strings = build_env(options);
  std::vector<char*> env;
  for (auto& e : env_strings)
    env.push_back(e.data());
  env.push_back(nullptr);

  // The child starts as a shell would start it: every signal at its default disposition (the
  // test process ignores SIGPIPE, which exec would otherwise pass on), none blocked.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t all, none;
  sigfillset(&all);
  sigemptyset(&none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  const int rc = ::posix_spawn(&pid_, args[0], &actions, &attr, args.data(), env.data());
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&actions);
  ::close(in[0]);
  ::close(out[1]);
  ::close(err_fd);
  if (rc != 0) {
    ::close(in[1]);
    ::close(out[0]);
    throw std::runtime_error(std::string("posix_spawn failed: ") + std::strerror(rc));
  }
  capture_ = options.capture_stdout;
  stdin_fd_ = in[1];
  stdout_fd_ = out[0];
}

Subprocess::~Subprocess() {
  close_stdin();
  close_stdout();
  if (!status_) {
    ::kill(pid_, SIGKILL);
    int st;
    ::waitpid(pid_, &st, 0);
  }
  std::error_code ec;
  std::filesystem::remove(stderr_path_, ec);
}

bool Subprocess::write(std::string_view bytes) {
  while (!bytes.empty() && stdin_fd_ >= 0) {
    const ssize_t n = ::write(stdin_fd_, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return bytes.empty();
}

void Subprocess::close_stdin() {
  if (stdin_fd_ >= 0) ::close(std::exchange(stdin_fd_, -1));
}

void Subprocess::close_stdout() {
  if (stdout_fd_ >= 0) ::close(std::exchange(stdout_fd_, -1));
}

std::optional<std::string> Subprocess::read_line(std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (true) {
    // Searched from where the last search stopped: a line of megabytes arrives in many reads.
    if (const auto lf = buffer_.find('\n', scanned_); lf != std::string::npos) {
      std::string line = buffer_.substr(0, lf);
      buffer_.erase(0, lf + 1);
      scanned_ = 0;
      capture(line);
      return line;
    }
    scanned_ = buffer_.size();
    if (eof_ || stdout_fd_ < 0) return std::nullopt;
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return std::nullopt;
    pollfd p{stdout_fd_, POLLIN, 0};
    const int rc = ::poll(&p, 1, static_cast<int>(left));
    if (rc < 0 && errno == EINTR) continue;
    if (rc <= 0) continue;
    char buf[65536];
    const ssize_t n = ::read(stdout_fd_, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      eof_ = true;
      continue;
    }
    buffer_.append(buf, static_cast<std::size_t>(n));
  }
}

std::vector<std::string> Subprocess::read_all_lines(std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  std::vector<std::string> lines;
  while (auto line = read_line(
             std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()))) {
    lines.push_back(std::move(*line));
  }
  if (eof_ && !buffer_.empty()) {
    lines.push_back(buffer_);  // an unterminated tail is kept so a test can see it
    buffer_.clear();
    scanned_ = 0;
  }
  return lines;
}

std::optional<int> Subprocess::wait(std::chrono::milliseconds timeout) {
  if (status_) return status_;
  const auto deadline = Clock::now() + timeout;
  while (true) {
    int st = 0;
    rusage usage{};
    const pid_t r = ::wait4(pid_, &st, WNOHANG, &usage);
    if (r == pid_) {
      status_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
      const auto seconds = [](const timeval& t) { return t.tv_sec + t.tv_usec / 1e6; };
      cpu_ = std::pair(seconds(usage.ru_utime), seconds(usage.ru_stime));
      return status_;
    }
    if (Clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(1ms);  // polling a child's exit, not pacing the test
  }
}

void Subprocess::send_signal(int signo) {
  ::kill(pid_, signo);
}

std::string Subprocess::stderr_text() const {
  return read_file(stderr_path_);
}

void Subprocess::capture(const std::string& line) {
  const char* dir = std::getenv("REBOUND_CAPTURE_DIR");
  if (!capture_ || !dir || !*dir) return;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  std::ofstream(std::filesystem::path(dir) / (std::to_string(pid_) + ".jsonl"),
                std::ios::app | std::ios::binary)
      << line << '\n';
}

}  // namespace rebound::testing
