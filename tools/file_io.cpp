#include "tools/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace rebound::tools {

bool is_own_std_stream(const struct stat& st) {
  for (int fd = 0; fd <= 2; ++fd) {
    struct stat own {};
    if (::fstat(fd, &own) == 0 && own.st_dev == st.st_dev && own.st_ino == st.st_ino) return true;
  }
  return false;
}

int open_with(const OpenFile& open_file, const std::string& abs, int flags, unsigned mode,
              bool write) {
  if (open_file) return open_file(abs, flags, mode, write);
  return ::open(abs.c_str(), flags, static_cast<mode_t>(mode));
}

int open_for_tool_write(const std::string& path, bool create, const OpenFile& open_file) {
  const int flags = O_WRONLY | O_CLOEXEC | O_NONBLOCK | (create ? O_CREAT : 0);
  UniqueFd fd(open_with(open_file, path, flags, 0666, true));
  if (!fd) return -1;
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return -1;
  if (is_own_std_stream(st)) {
    errno = EPERM;
    return -1;
  }
  if (!S_ISREG(st.st_mode)) {
    errno = EINVAL;
    return -1;
  }
  if (::ftruncate(fd.get(), 0) != 0) return -1;
  // Writes to a regular file never wait on a reader; the flag only mattered for the open.
  ::fcntl(fd.get(), F_SETFL, ::fcntl(fd.get(), F_GETFL) & ~O_NONBLOCK);
  return fd.release();
}

int read_regular_file(const std::string& path, std::string& out, std::size_t max,
                      const OpenFile& open_file) {
  UniqueFd fd(open_with(open_file, path, O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (!fd) return errno;
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return errno;
  if (S_ISDIR(st.st_mode)) return EISDIR;
  if (is_own_std_stream(st)) return EPERM;
  if (!S_ISREG(st.st_mode)) return EINVAL;
  if (!read_all(fd.get(), out, max)) return errno ? errno : EFBIG;
  return 0;
}

bool read_all(int fd, std::string& out, std::size_t max) {
  out.clear();
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    // A file already over the bound is refused without reading any of it (a 2 GB file in the
    // workspace costs nothing).
    if (static_cast<std::size_t>(st.st_size) > max) {
      errno = EFBIG;
      return false;
    }
    out.reserve(static_cast<std::size_t>(st.st_size));
  }
  char buf[65536];
  while (true) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) return true;
    if (out.size() + static_cast<std::size_t>(n) > max) {
      errno = EFBIG;
      return false;
    }
    out.append(buf, static_cast<std::size_t>(n));
  }
}

std::string read_head(int fd, std::size_t n) {
  std::string out(n, '\0');
  const ssize_t got = ::pread(fd, out.data(), n, 0);
  out.resize(got > 0 ? static_cast<std::size_t>(got) : 0);
  return out;
}

bool write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

int make_parent_dirs(const std::string& path, std::string& failed_dir, const OpenFile& open_file) {
  const std::size_t slash = path.rfind('/');
  if (slash == std::string::npos || slash == 0) return 0;
  const std::string dir = path.substr(0, slash);
  struct stat st {};
  if (::stat(dir.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return 0;
    failed_dir = dir;
    return EEXIST;
  }
  if (const int err = make_parent_dirs(dir, failed_dir, open_file)) return err;
  int made = 0;
  if (!open_file) {
    made = ::mkdir(dir.c_str(), 0777);
  } else {
    // Made inside its parent as the opener opens it (beneath the root that holds it).
    const std::size_t up = dir.rfind('/');
    UniqueFd parent(open_with(open_file, up == 0 ? "/" : dir.substr(0, up),
                              O_PATH | O_DIRECTORY | O_CLOEXEC, 0, true));
    made = parent ? ::mkdirat(parent.get(), dir.c_str() + up + 1, 0777) : -1;
  }
  if (made != 0 && errno != EEXIST) {
    failed_dir = dir;
    return errno;
  }
  return 0;
}

bool LineScanner::each_line(const std::function<bool(std::string_view, std::size_t)>& line) {
  std::string carry;           // the start of the current line
  std::size_t carry_size = 0;  // its real size (more than carry.size() once oversized)
  std::vector<char> buf(1 << 20);
  std::size_t budget = max_bytes_;
  while (true) {
    if (cancelled_ && cancelled_->load(std::memory_order_relaxed)) return true;
    if (budget == 0) {
      limit_reached_ = true;
      break;
    }
    const ssize_t n = ::read(fd_, buf.data(), std::min(buf.size(), budget));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;  // nothing more now
    if (n < 0) return false;
    if (n == 0) break;
    budget -= static_cast<std::size_t>(n);
    std::string_view data(buf.data(), static_cast<std::size_t>(n));
    while (!data.empty()) {
      const void* nl = std::memchr(data.data(), '\n', data.size());
      const std::size_t len =
          nl ? static_cast<std::size_t>(static_cast<const char*>(nl) - data.data()) : data.size();
      const std::string_view piece = data.substr(0, len);
      if (nl && carry_size == 0) {
        // The whole line is in the buffer: no copy.
        if (len > kMaxLine) {
          if (!line(piece.substr(0, kMaxLine), len)) return true;
        } else if (!line(piece, len)) {
          return true;
        }
      } else {
        if (carry.size() < kMaxLine) carry.append(piece.substr(0, kMaxLine - carry.size()));
        carry_size += len;
        if (nl) {
          if (!line(carry, carry_size)) return true;
          carry.clear();
          carry_size = 0;
        }
      }
      if (!nl) break;
      data.remove_prefix(len + 1);
    }
  }
  line(carry, carry_size);
  return true;
}

const char* image_type(std::string_view head) {
  auto u = [&](std::size_t i) { return static_cast<unsigned char>(head[i]); };
  if (head.size() >= 3 && u(0) == 0xFF && u(1) == 0xD8 && u(2) == 0xFF) return "image/jpeg";
  if (head.size() >= 8 && head.substr(0, 8) == std::string_view("\x89PNG\r\n\x1A\n", 8))
    return "image/png";
  if (head.size() >= 6 && (head.substr(0, 6) == "GIF87a" || head.substr(0, 6) == "GIF89a"))
    return "image/gif";
  if (head.size() >= 12 && head.substr(0, 4) == "RIFF" && head.substr(8, 4) == "WEBP")
    return "image/webp";
  return nullptr;
}

std::string notices_suffix(const std::vector<std::string>& notices) {
  if (notices.empty()) return "";
  std::string s = "\n\n[";
  for (std::size_t i = 0; i < notices.size(); ++i) {
    if (i > 0) s += ". ";
    s += notices[i];
  }
  return s + "]";
}

bool is_regular_image_file(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (!fd) return false;
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
  return image_type(read_head(fd.get(), 12)) != nullptr;
}

}  // namespace rebound::tools
