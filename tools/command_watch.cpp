#include "tools/command_watch.h"
#include "session/tool_spool.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <random>
#include <set>
#include <utility>

#include "tools/file_io.h"

namespace rebound::tools {

namespace {
// How long output is still read after the shell exited (tools.md section 4.4).
constexpr auto kAfterExitGrace = std::chrono::milliseconds(100);

std::string random_hex16() {
  std::random_device rd;
  std::uniform_int_distribution<unsigned> d(0, 15);
  std::string s;
  for (int i = 0; i < 16; ++i)
    s += "0123456789abcdef"[d(rd)];
  return s;
}
}  // namespace

void Lingering::kill_all() {
  auto watches = std::move(watches_);
  watches_.clear();
  for (const auto& w : watches) {
    if (!w->child_) continue;
    w->child_->kill_group(SIGKILL);
    w->child_->close_output();
    w->child_.reset();  // reaped long ago; nothing of it is watched any more
  }
}

CommandWatch::CommandWatch(session::Scheduler& scheduler, std::unique_ptr<WatchedProcess> child,
                           std::shared_ptr<Lingering> lingering, Handlers handlers)
    : child_(std::move(child)),
      grace_(scheduler.make_timer()),
      lingering_(lingering),
      handlers_(std::move(handlers)) {}

std::shared_ptr<CommandWatch> CommandWatch::start(session::Scheduler& scheduler,
                                                  std::unique_ptr<WatchedProcess> child,
                                                  std::shared_ptr<Lingering> lingering,
                                                  Handlers handlers) {
  auto w = std::make_shared<CommandWatch>(scheduler, std::move(child), std::move(lingering),
                                          std::move(handlers));
  w->begin();
  return w;
}

void CommandWatch::begin() {
  auto self = shared_from_this();
  child_->read_output(
      [self](std::string_view data) {
        // After completion: a background process's output, read and dropped.
        if (!self->finished_ && self->handlers_.output) self->handlers_.output(data);
      },
      [self] {
        self->eof_ = true;
        self->maybe_finish();
        self->leave_lingering();
      });
  child_->wait_exit([self](int status) {
    self->exited_ = true;
    self->status_ = status;
    if (!self->eof_) {
      self->grace_->start(kAfterExitGrace, [self] {
        self->grace_over_ = true;
        self->maybe_finish();
      });
    }
    self->maybe_finish();
  });
}

void CommandWatch::maybe_finish() {
  if (finished_ || !exited_ || !(eof_ || grace_over_)) return;
  finished_ = true;
  grace_->cancel();
  child_->keep_group();  // its background processes live on (tools.md section 4.4)
  auto complete = std::move(handlers_.complete);
  handlers_ = {};
  if (complete) complete(status_);
}

void CommandWatch::leave_lingering() {
  if (!finished_) return;
  if (auto l = lingering_.lock()) l->watches_.erase(shared_from_this());
}

void CommandWatch::kill() {
  if (child_) child_->kill_group(SIGKILL);
}

void CommandWatch::release() {
  if (finished_) {
    if (!eof_) {
      if (auto l = lingering_.lock()) l->watches_.insert(shared_from_this());
    }
    return;
  }
  handlers_ = {};
  finished_ = true;
  grace_->cancel();
  child_.reset();  // kills the group and reaps the child
}

ShellSpawner::ShellSpawner(session::Scheduler& scheduler, Spawn spawn)
    : scheduler_(scheduler), spawn_(std::move(spawn)) {}

ShellSpawner::~ShellSpawner() {
  kill_background();
}

std::shared_ptr<CommandWatch> ShellSpawner::start(const std::vector<std::string>& argv,
                                                  const std::string& cwd,
                                                  CommandWatch::Handlers handlers,
                                                  std::string& error) {
  auto child = spawn_(argv, cwd, error);
  if (!child) return nullptr;
  return CommandWatch::start(scheduler_, std::move(child), lingering_, std::move(handlers));
}

namespace {

struct OwnFiles {
  std::mutex mutex;
  std::set<std::pair<unsigned long, unsigned long>> ids;
};

OwnFiles& own_files() {
  static OwnFiles files;
  return files;
}

}  // namespace

bool is_own_output_file(unsigned long device, unsigned long inode) {
  OwnFiles& f = own_files();
  const std::lock_guard<std::mutex> lock(f.mutex);
  return f.ids.count({device, inode}) != 0;
}

bool OutputFile::open(std::string_view so_far) {
  const char* tmp = std::getenv("TMPDIR");
  std::string dir = tmp && *tmp ? tmp : "/tmp";
  while (dir.size() > 1 && dir.back() == '/')
    dir.pop_back();
  for (int attempt = 0; attempt < 5 && fd_ < 0; ++attempt) {
    const std::string name = dir + "/rebound-bash-" + random_hex16() + ".log";
    fd_ = ::open(name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd_ >= 0) path_ = name;
  }
  remember();
  if (fd_ < 0) {
    failed_ = true;
    spdlog::warn("bash: cannot create a file for the full output in {}: {}", dir,
                 std::strerror(errno));
    return false;
  }
  write(so_far);
  return true;
}

void OutputFile::remember() {
  if (struct stat st{}; fd_ >= 0 && ::fstat(fd_, &st) == 0) {
    OwnFiles& f = own_files();
    const std::lock_guard<std::mutex> lock(f.mutex);
    f.ids.insert({static_cast<unsigned long>(st.st_dev), static_cast<unsigned long>(st.st_ino)});
  }
}

bool OutputFile::open_spool(const std::string& dir, const std::string& path) {
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    spdlog::warn("bash: cannot create the spool folder {}: {}", dir, std::strerror(errno));
    return false;
  }
  // Replaced, not appended to: a name a stopped run left (its result is on file by now).
  ::unlink(path.c_str());
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd_ < 0) {
    spdlog::warn("bash: cannot create the spool file {}: {}", path, std::strerror(errno));
    return false;
  }
  path_ = path;
  limit_ = session::kSpoolMaxBytes;
  remember();
  return true;
}

void OutputFile::write(std::string_view data) {
  if (fd_ < 0) return;
  if (limit_ != 0) {
    const std::uint64_t room = written_ < limit_ ? limit_ - written_ : 0;
    if (data.size() > room) {
      data = data.substr(0, static_cast<std::size_t>(room));
      cut_ = true;
    }
    written_ += data.size();
  }
  if (!data.empty()) tools::write_all(fd_, data);
}

void OutputFile::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

}  // namespace rebound::tools
