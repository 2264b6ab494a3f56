#include "config/session_lock.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>

namespace rebound::config {

namespace {

struct Held {
  int fd = -1;
  ~Held() {
    if (fd >= 0) ::close(fd);  // the process's record lock goes with it
  }
};

struct Registry {
  std::mutex mutex;
  std::map<std::string, std::weak_ptr<Held>> held;  // by session file path
};

Registry& registry() {
  static Registry r;
  return r;
}

// A write lock on the whole file. A record lock (fcntl), not flock: it belongs to the process,
// so a child forked while Rebound starts a command never holds it, and it is gone the moment the
// process dies (a flock lived on in a child caught between fork and exec).
struct flock write_lock() {
  struct flock l {};
  l.l_type = F_WRLCK;
  l.l_whence = SEEK_SET;
  return l;
}

// The lock file, opened without following a symlink and only when it is a regular file.
int open_lock_file(const std::string& path) {
  const std::string lock = path + ".lock";
  const int fd = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0600);
  if (fd < 0) return -1;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    errno = EINVAL;
    return -1;
  }
  return fd;
}

}  // namespace

std::string session_in_use_text(const std::string& path) {
  return "Session file is in use by another Rebound process: " + path;
}

session::Result<std::shared_ptr<void>> lock_session_file(const std::string& path) {
  Registry& r = registry();
  const std::lock_guard<std::mutex> guard(r.mutex);
  if (auto it = r.held.find(path); it != r.held.end()) {
    if (auto held = it->second.lock()) return std::shared_ptr<void>(held);
  }
  auto held = std::make_shared<Held>();
  held->fd = open_lock_file(path);
  if (held->fd < 0) {
    spdlog::warn("cannot create the lock file {}.lock: {}; the session is used without a lock",
                 path, std::strerror(errno));
  } else if (struct flock whole = write_lock(); ::fcntl(held->fd, F_SETLK, &whole) != 0) {
    if (errno == EACCES || errno == EAGAIN)
      return session::Error{session::ErrorKind::failed, session_in_use_text(path)};
    spdlog::warn("cannot lock {}.lock: {}; the session is used without a lock", path,
                 std::strerror(errno));
  }
  for (auto it = r.held.begin(); it != r.held.end();)  // forget the released ones
    it = it->second.expired() ? r.held.erase(it) : std::next(it);
  r.held[path] = held;
  return std::shared_ptr<void>(held);
}

bool session_file_locked_elsewhere(const std::string& path) {
  {
    Registry& r = registry();
    const std::lock_guard<std::mutex> guard(r.mutex);
    if (auto it = r.held.find(path); it != r.held.end() && !it->second.expired()) return false;
  }
  const std::string lock = path + ".lock";
  const int fd = ::open(lock.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) return false;  // no lock file: nobody holds it
  bool elsewhere = false;
  struct stat st {};
  // F_GETLK only asks: no lock is taken, so closing the descriptor releases nothing of ours.
  if (struct flock probe = write_lock();
      ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && ::fcntl(fd, F_GETLK, &probe) == 0)
    elsewhere = probe.l_type != F_UNLCK;
  ::close(fd);
  return elsewhere;
}

}  // namespace rebound::config
