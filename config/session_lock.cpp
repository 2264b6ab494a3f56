#include "config/session_lock.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/file.h>
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
    if (fd >= 0) ::close(fd);  // closing the last descriptor releases the flock
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
  } else if (::flock(held->fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK)
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
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && ::flock(fd, LOCK_EX | LOCK_NB) != 0)
    elsewhere = errno == EWOULDBLOCK;
  ::close(fd);  // releases the trial lock
  return elsewhere;
}

}  // namespace rebound::config
