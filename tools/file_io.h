#pragma once
// Small POSIX file helpers of the tools: an owned descriptor, whole and partial reads, writes,
// `mkdir -p`, and a line scanner that streams a file of any size in bounded memory.

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rebound::tools {

/// The largest file edit reads (it holds the file, its normalised form and the result).
inline constexpr std::size_t kMaxEditBytes = 256 * 1024 * 1024;

class UniqueFd {
 public:
  explicit UniqueFd(int fd = -1) : fd_(fd) {}
  ~UniqueFd() {
    if (fd_ >= 0) ::close(fd_);
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

/// The most `read` takes from a source that is not a regular file of known size (a FIFO, a
/// character device such as /dev/zero, a /proc or /sys file such as /proc/self/pagemap): 16 MiB.
inline constexpr std::size_t kMaxUnsizedRead = 16 * 1024 * 1024;

/// Whether the open file `st` is one of this process's own standard streams (stdin, stdout,
/// stderr: the protocol's pipes), which a tool must never read or write.
bool is_own_std_stream(const struct stat& st);

/// How a tool opens an absolute path (`write`: for writing, its last component not followed):
/// the sandbox's roots give one that opens beneath them (policy.md section 8.9); empty: open(2).
/// -1 with errno set on failure.
using OpenFile = std::function<int(const std::string& abs, int flags, unsigned mode, bool write)>;
int open_with(const OpenFile& open_file, const std::string& abs, int flags, unsigned mode = 0,
              bool write = false);

/// Opens `path` for a tool's write the way no file type can block or hijack it: non-blocking,
/// regular files only (EINVAL otherwise, a FIFO without a reader is ENXIO), never one of the
/// server's own standard streams (EPERM), created with mode 0666 when `create`, truncated only
/// once all of that is checked. -1 with errno set on failure.
int open_for_tool_write(const std::string& path, bool create, const OpenFile& open_file = {});

/// Reads `path` whole the way edit does: opened non-blocking, a regular file (EISDIR, EINVAL
/// otherwise) that is not one of the server's standard streams (EPERM), at most `max` bytes
/// (EFBIG, a larger file refused unread). 0, or the errno.
int read_regular_file(const std::string& path, std::string& out, std::size_t max,
                      const OpenFile& open_file = {});

/// Reads to the end; false with errno set on an error, or EFBIG past `max` bytes.
bool read_all(int fd, std::string& out, std::size_t max);
/// The first up to `n` bytes at offset 0 without moving the file position (empty for pipes).
std::string read_head(int fd, std::size_t n);
bool write_all(int fd, std::string_view data);
/// Creates the missing parents of `path`; 0, or the errno and the directory that failed. With
/// an opener, each is made by mkdirat(2) in its parent as the opener opens that for writing
/// (O_DIRECTORY: the place to create in, policy.md section 8.9).
int make_parent_dirs(const std::string& path, std::string& failed_dir,
                     const OpenFile& open_file = {});

/// Streams a file line by line (split at \n; the text after the last \n is the last line,
/// empty when the file ends in \n). Lines over kMaxLine bytes are passed as their first
/// kMaxLine bytes with `oversized` set and their real size in `size`.
class LineScanner {
 public:
  static constexpr std::size_t kMaxLine = 1024 * 1024;
  /// `cancelled` is checked per block, so even a file without line ends (/dev/zero) stops.
  /// At most `max_bytes` are read; limit_reached() tells whether that stopped the scan.
  explicit LineScanner(int fd, const std::atomic<bool>* cancelled = nullptr,
                       std::size_t max_bytes = static_cast<std::size_t>(-1))
      : fd_(fd), cancelled_(cancelled), max_bytes_(max_bytes) {}
  /// `line` returns false to stop. False with errno set on a read error.
  bool each_line(const std::function<bool(std::string_view line, std::size_t size)>& line);
  bool limit_reached() const { return limit_reached_; }

 private:
  int fd_;
  const std::atomic<bool>* cancelled_;
  std::size_t max_bytes_;
  bool limit_reached_ = false;
};

/// "" or "\n\n[notice. notice]".
/// The image type read recognises from a file's first 12 bytes (jpeg, png, gif, webp), or null.
const char* image_type(std::string_view head);

std::string notices_suffix(const std::vector<std::string>& notices);

/// Whether `path` is a regular file that starts like an image (image_type): opened
/// non-blocking and checked for its type first, so a FIFO or a device never blocks the caller
/// and only 12 bytes are read.
bool is_regular_image_file(const std::string& path);

}  // namespace rebound::tools
