#pragma once
// Small POSIX file helpers of the tools: an owned descriptor, whole and partial reads, writes,
// `mkdir -p`, and a line scanner that streams a file of any size in bounded memory.

#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
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

 private:
  int fd_;
};

/// Reads to the end; false with errno set on an error, or EFBIG past `max` bytes.
bool read_all(int fd, std::string& out, std::size_t max);
/// The first up to `n` bytes at offset 0 without moving the file position (empty for pipes).
std::string read_head(int fd, std::size_t n);
bool write_all(int fd, std::string_view data);
/// Creates the missing parents of `path`; 0, or the errno and the directory that failed.
int make_parent_dirs(const std::string& path, std::string& failed_dir);

/// Streams a file line by line (split at \n; the text after the last \n is the last line,
/// empty when the file ends in \n). Lines over kMaxLine bytes are passed as their first
/// kMaxLine bytes with `oversized` set and their real size in `size`.
class LineScanner {
 public:
  static constexpr std::size_t kMaxLine = 1024 * 1024;
  /// `cancelled` is checked per block, so even a file without line ends (/dev/zero) stops.
  explicit LineScanner(int fd, const std::atomic<bool>* cancelled = nullptr)
      : fd_(fd), cancelled_(cancelled) {}
  /// `line` returns false to stop. False with errno set on a read error.
  bool each_line(const std::function<bool(std::string_view line, std::size_t size)>& line);

 private:
  int fd_;
  const std::atomic<bool>* cancelled_;
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
