#include "sandbox/sandbox.h"

#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include <spdlog/spdlog.h>

#include "process/child_process.h"
#include "sandbox/bwrap_args.h"
#include "sandbox/file_roots.h"
#include "sandbox/seccomp_program.h"

extern char** environ;

namespace rebound::sandbox {

namespace {

std::string real(const std::string& path) {
  char buf[PATH_MAX];
  return ::realpath(path.c_str(), buf) ? std::string(buf) : std::string();
}

bool at_or_below(const std::string& path, const std::string& dir) {
  return path == dir || (path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 &&
                         (dir == "/" || path[dir.size()] == '/'));
}

// Runs `argv` with `pass` as descriptors 3…, its output (both streams) captured, for at most
// `timeout`; returns the wait status (-1 when it could not start or was killed at the timeout).
int run_captured(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                 const std::vector<int>& pass, std::string& output,
                 std::chrono::milliseconds timeout) {
  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) return -1;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_adddup2(&actions, out[1], 2);
  const int first_free = 3 + static_cast<int>(pass.size());
  std::vector<int> high;
  for (std::size_t i = 0; i < pass.size(); ++i) {
    high.push_back(::fcntl(pass[i], F_DUPFD_CLOEXEC, first_free));
    posix_spawn_file_actions_adddup2(&actions, high.back(), 3 + static_cast<int>(i));
  }
  posix_spawn_file_actions_addclosefrom_np(&actions, first_free);
  std::vector<std::string> args = argv, envs = env;
  std::vector<char*> av, ev;
  for (auto& a : args)
    av.push_back(a.data());
  av.push_back(nullptr);
  for (auto& e : envs)
    ev.push_back(e.data());
  ev.push_back(nullptr);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID);
  pid_t pid = 0;
  int rc = 0;
  // Watched, so that the server's orphan reaper never takes it (its status decides the check).
  process::ChildProcess::watched_start([&] {
    rc = ::posix_spawn(&pid, av[0], &actions, &attr, av.data(), ev.data());
    return rc == 0 ? pid : -1;
  });
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  for (int fd : high)
    ::close(fd);
  ::close(out[1]);
  if (rc != 0) {
    ::close(out[0]);
    output = std::string("cannot run ") + argv[0] + ": " + std::strerror(rc);
    return -1;
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  char buf[4096];
  bool killed = false;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      ::kill(-pid, SIGKILL);
      killed = true;
      break;
    }
    pollfd p{out[0], POLLIN, 0};
    const int n = ::poll(&p, 1, static_cast<int>(left.count()));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) continue;
    const ssize_t got = ::read(out[0], buf, sizeof buf);
    if (got > 0) {
      if (output.size() < (1u << 16)) output.append(buf, static_cast<std::size_t>(got));
      continue;
    }
    if (got < 0 && errno == EINTR) continue;
    break;
  }
  ::close(out[0]);
  int status = 0;
  pid_t r;
  while ((r = ::waitpid(pid, &status, 0)) < 0 && errno == EINTR) {
  }
  process::ChildProcess::unwatch_pid(pid);
  if (r != pid) return -1;  // not ours to judge: the check fails closed
  return killed ? -1 : status;
}

std::string first_line(const std::string& s) {
  return s.substr(0, s.find('\n'));
}

std::string last_line(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r'))
    s.pop_back();
  const std::size_t nl = s.rfind('\n');
  return nl == std::string::npos ? s : s.substr(nl + 1);
}

// "bubblewrap 0.8.0" at least 0.8.0.
bool recent_enough(const std::string& version) {
  int major = 0, minor = 0, patch = 0;
  if (std::sscanf(version.c_str(), "%d.%d.%d", &major, &minor, &patch) < 2) return false;
  return major > 0 || minor >= 8;
}

// `name` looked up in the absolute directories of `path` (a PATH value), as execvp would: the
// first regular, executable file; empty if absent.
std::string find_on_path(const std::string& name, const std::string& path) {
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    const std::string dir = path.substr(start, end - start);
    start = end + 1;
    if (dir.empty() || dir.front() != '/') continue;  // only absolute directories
    const std::string candidate = dir + "/" + name;
    struct stat st {};
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
        ::access(candidate.c_str(), X_OK) == 0)
      return candidate;
  }
  return {};
}

int memfd_with(const std::string& bytes) {
  const int fd = ::memfd_create("rebound-seccomp", MFD_CLOEXEC);
  if (fd < 0) return -1;
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ::close(fd);
      return -1;
    }
    done += static_cast<std::size_t>(n);
  }
  ::lseek(fd, 0, SEEK_SET);
  return fd;
}

}  // namespace

void close_launch_fds(Launch& l, bool keep_status_read) {
  for (int* fd : {&l.seccomp_fd, &l.status_write, &l.args_fd}) {
    if (*fd >= 0) ::close(*fd);
    *fd = -1;
  }
  if (!keep_status_read && l.status_read >= 0) {
    ::close(l.status_read);
    l.status_read = -1;
  }
}

std::vector<std::string> sandbox_environment(
    const std::vector<std::string>& env, const std::vector<std::string>& key_variables,
    const std::vector<std::pair<std::string, std::string>>& extra) {
  static const std::array<const char*, 9> kSecret = {
      "KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH", "COOKIE", "SESSION"};
  std::vector<std::string> out;
  for (const auto& entry : env) {
    const std::size_t eq = entry.find('=');
    if (eq == std::string::npos) continue;
    std::string upper = entry.substr(0, eq);
    for (char& c : upper)
      if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    bool secret = upper.rfind("REBOUND_", 0) == 0 || upper == "TMPDIR";
    for (const char* s : kSecret)
      secret = secret || upper.find(s) != std::string::npos;
    for (const auto& k : key_variables)
      secret = secret || (k.size() == eq && entry.compare(0, eq, k) == 0);
    if (!secret) out.push_back(entry);
  }
  out.emplace_back("TMPDIR=/tmp");
  out.emplace_back("REBOUND_SANDBOX=1");
  for (const auto& [name, value] : extra) {
    const std::string prefix = name + "=";
    std::erase_if(out, [&](const std::string& e) { return e.rfind(prefix, 0) == 0; });
    out.push_back(prefix + value);
  }
  return out;
}

Sandbox::Sandbox(SandboxConfig config, std::vector<std::string> env)
    : config_(std::move(config)), env_(std::move(env)) {
  workspace_ = real(config_.workspace);
  if (workspace_.empty()) workspace_ = config_.workspace;
  std::vector<std::string> denied;
  for (const auto& p : config_.deny_read) {
    const std::string r = real(p);
    denied.push_back(r.empty() ? p : r);
  }
  denied_ = std::make_shared<DeniedFiles>(std::move(denied));
}

Sandbox::~Sandbox() {
  if (started_ && check_.valid()) check_.wait();
}

void Sandbox::start_check() {
  if (started_) return;
  started_ = true;
  check_ = std::async(std::launch::async, [this] {
             SandboxCheck c = run_check();
             if (!c.problem.empty())
               spdlog::warn("sandbox unavailable: {}; bash calls will fail", c.problem);
             return c;
           }).share();
}

bool Sandbox::check_done() const {
  return started_ && check_.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
}

const SandboxCheck& Sandbox::checked() {
  start_check();
  return check_.get();
}

SandboxCheck Sandbox::run_check() const {
  SandboxCheck c;
  // 1. The platform.
  utsname u{};
  ::uname(&u);
  const std::string os = u.sysname, arch = u.machine;
  if (os != "Linux" || (arch != "x86_64" && arch != "aarch64")) {
    c.problem = "unsupported platform " + os + "/" + arch;
    return c;
  }
  // 2. bubblewrap.
  std::string bwrap;
  if (config_.bwrap_path) {
    struct stat st {};
    if (::stat(config_.bwrap_path->c_str(), &st) != 0) {
      c.problem = "bubblewrap not found at " + *config_.bwrap_path;
      return c;
    }
    if (!S_ISREG(st.st_mode) || ::access(config_.bwrap_path->c_str(), X_OK) != 0) {
      c.problem = *config_.bwrap_path + " is not executable";
      return c;
    }
    bwrap = *config_.bwrap_path;
  } else {
    const char* path = std::getenv("PATH");
    bwrap = find_on_path("bwrap", path ? path : "");
    if (bwrap.empty()) {
      c.problem = "bubblewrap (bwrap) not found on PATH";
      return c;
    }
  }
  c.bwrap = real(bwrap);
  // 3. Not where a command could replace it.
  std::vector<std::string> writable{workspace_};
  for (const auto& r : config_.writable_roots)
    writable.push_back(real(r).empty() ? r : real(r));
  for (const auto& w : writable)
    if (at_or_below(c.bwrap, w)) {
      c.problem = "bubblewrap at " + c.bwrap + " lies inside a writable path";
      return c;
    }
  // 4. Its version.
  std::string out;
  const int status =
      run_captured({c.bwrap, "--version"}, env_, {}, out, std::chrono::milliseconds(5000));
  const std::string line = first_line(out);
  if (status != 0 || line.rfind("bubblewrap ", 0) != 0 || !recent_enough(line.substr(11))) {
    c.problem = c.bwrap + " is not bubblewrap 0.8.0 or later (it printed: " + line + ")";
    return c;
  }
  c.version = line.substr(11);
  // 5. The seccomp program.
  auto program = build_seccomp_program();
  if (!program) {
    c.problem = "cannot build the seccomp filter: " + program.error().message;
    return c;
  }
  c.bpf = program->bpf;
  // 6. A trial sandbox with the real options on an empty scratch workspace.
  std::error_code ec;
  char scratch_template[] = "/var/tmp/rebound-sandbox-check-XXXXXX";
  const char* scratch = ::mkdtemp(scratch_template);
  if (!scratch) {
    c.problem =
        std::string("bubblewrap cannot create the sandbox: mkdtemp: ") + std::strerror(errno);
    return c;
  }
  auto trial = build(c, scratch, {"/bin/sh", "-c", "echo $$"}, scratch);
  std::string trial_out;
  int trial_status = -1;
  if (Launch* l = trial ? &*trial : nullptr) {
    trial_status = run_captured(l->argv, l->env, {l->seccomp_fd, l->status_write, l->args_fd},
                                trial_out, std::chrono::milliseconds(10000));
    close_launch_fds(*l, false);
  }
  std::filesystem::remove_all(scratch, ec);
  const std::string printed = last_line(trial_out);
  if (trial_status != 0 || (printed != "1" && printed != "2")) {
    c.problem = "bubblewrap cannot create the sandbox: " + printed;
    return c;
  }
  // 7. The workspace.
  if (const std::string why = workspace_problem(config_, workspace_); !why.empty()) {
    c.problem = "the workspace " + workspace_ + " cannot be sandboxed: " + why;
    return c;
  }
  return c;
}

session::Result<Launch> Sandbox::build(const SandboxCheck& c, const std::string& workspace,
                                       const std::vector<std::string>& command,
                                       const std::string& cwd) const {
  Launch l;
  l.seccomp_fd = memfd_with(c.bpf);
  if (l.seccomp_fd < 0)
    return session::failure(std::string("Sandbox failed to start: memfd_create: ") +
                            std::strerror(errno));
  int status[2];
  if (::pipe2(status, O_CLOEXEC) != 0) {
    close_launch_fds(l, false);
    return session::failure(std::string("Sandbox failed to start: pipe: ") + std::strerror(errno));
  }
  l.status_read = status[0];
  l.status_write = status[1];
  // Denied files moved or linked inside the writable roots by earlier commands are hidden where
  // they are now (amendment A18).
  denied_->refresh();
  std::vector<std::string> roots{workspace};
  for (const auto& p : config_.writable_roots)
    if (const std::string r = real(p); !r.empty()) roots.push_back(r);
  const auto moved = denied_->moved(roots);
  if (!moved) {
    close_launch_fds(l, false);
    return session::failure(std::string("Sandbox: too many files to check for moved denied files"));
  }
  auto options = bwrap_options(config_, workspace, *moved);
  if (!options) {
    close_launch_fds(l, false);
    return options.error();
  }
  std::string packed;
  for (const auto& o : *options) {
    packed += o;
    packed += '\0';
  }
  l.args_fd = memfd_with(packed);
  if (l.args_fd < 0) {
    close_launch_fds(l, false);
    return session::failure(std::string("Sandbox failed to start: memfd_create: ") +
                            std::strerror(errno));
  }
  l.argv = {c.bwrap, "--args",  "5", "--seccomp", "3", "--json-status-fd",
            "4",     "--chdir", cwd, "--"};
  l.argv.insert(l.argv.end(), command.begin(), command.end());
  l.env = env_;
  return l;
}

session::Result<Launch> Sandbox::launch(const std::vector<std::string>& command,
                                        const std::string& cwd) {
  const SandboxCheck& c = checked();
  if (!c.problem.empty()) return session::failure("Sandbox unavailable: " + c.problem);
  return build(c, workspace_, command, cwd.empty() ? workspace_ : cwd);
}

session::Result<Launch> Sandbox::launch_server(std::vector<std::string> argv,
                                               const std::string& cwd, std::vector<std::string> env,
                                               const std::string& path) {
  const SandboxCheck& c = checked();
  if (!c.problem.empty()) return session::failure("Sandbox unavailable: " + c.problem);
  if (argv.empty()) return session::failure(std::string("No such file or directory"));
  if (argv[0].find('/') == std::string::npos) {
    std::string found = find_on_path(argv[0], path);
    if (found.empty()) return session::failure(std::string("No such file or directory"));
    argv[0] = std::move(found);
  } else if (argv[0].front() != '/') {
    argv[0] = std::filesystem::path(cwd + "/" + argv[0]).lexically_normal().string();
  }
  // What the server is started from must be there inside: its program, its directory, the
  // absolute paths it is given (scripts, data).
  const FileRoots roots(config_);
  std::vector<std::string> needed{argv[0], cwd};
  for (std::size_t i = 1; i < argv.size(); ++i) {
    struct stat st {};
    if (!argv[i].empty() && argv[i].front() == '/' && ::lstat(argv[i].c_str(), &st) == 0)
      needed.push_back(argv[i]);
  }
  for (const auto& p : needed) {
    const std::string abs = std::filesystem::path(p).lexically_normal().string();
    if (roots.check(abs, false))
      return session::failure(
          "Sandbox: " + abs +
          " is not visible inside the sandbox; add it to sandbox.readOnlyPaths");
  }
  auto launched = build(c, workspace_, argv, cwd.empty() ? workspace_ : cwd);
  if (launched) {
    Launch* l = &*launched;
    std::erase_if(env, [](const std::string& v) { return v.rfind("TMPDIR=", 0) == 0; });
    env.emplace_back("TMPDIR=/tmp");
    l->env = std::move(env);
  }
  return launched;
}

}  // namespace rebound::sandbox
