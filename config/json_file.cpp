#include "config/json_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>

#include "protocol/json_line.h"

namespace rebound::config {

namespace fs = std::filesystem;

FileRead read_regular_file_into(const fs::path& path, std::size_t max_bytes, ReadTarget& target) {
  FileRead r;
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    if (errno != ENOENT) {
      r.status = FileReadStatus::failed;
      r.error = std::strerror(errno);
    }
    return r;
  }
  r.status = FileReadStatus::failed;
  auto refuse = [&r](std::string why) {
    r.error = std::move(why);
    r.refused = true;
  };
  const std::string too_large = "is larger than " + size_text(max_bytes);
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    r.error = std::strerror(errno);
  } else if (S_ISDIR(st.st_mode)) {
    refuse("is a directory");
  } else if (!S_ISREG(st.st_mode)) {
    refuse("is not a regular file");
  } else if (static_cast<std::uintmax_t>(st.st_size) > max_bytes) {
    refuse(too_large);
  } else {
    // Read to the end, not to the size seen: the file may grow meanwhile, but never past the
    // limit.
    std::size_t total = 0;
    while (r.error.empty()) {
      const auto [at, room] = target.room(static_cast<std::size_t>(st.st_size));
      if (room == 0) {
        r.status = FileReadStatus::ok;  // the reader has what it wanted
        break;
      }
      const ssize_t n = ::read(fd, at, room);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        r.error = std::strerror(errno);
      } else if (n == 0) {
        r.status = FileReadStatus::ok;
        break;
      } else if (total + static_cast<std::size_t>(n) > max_bytes) {
        refuse(too_large);
      } else {
        total += static_cast<std::size_t>(n);
        target.filled(static_cast<std::size_t>(n));
      }
    }
  }
  ::close(fd);
  return r;
}

FileRead read_regular_file_in_pieces(const fs::path& path, std::size_t max_bytes,
                                     const std::function<bool(std::string_view)>& take) {
  // One buffer, reused: a large file is never held whole here.
  class Pieces final : public ReadTarget {
   public:
    explicit Pieces(const std::function<bool(std::string_view)>& take) : take_(take) {}
    std::pair<char*, std::size_t> room(std::size_t file_size) override {
      if (stop_) return {nullptr, 0};
      if (!buf_) {
        size_ = std::min<std::size_t>(file_size + 1, kReadPieceBytes);
        buf_.reset(new char[size_]);
      }
      return {buf_.get(), size_};
    }
    void filled(std::size_t n) override { stop_ = !take_(std::string_view(buf_.get(), n)); }

   private:
    const std::function<bool(std::string_view)>& take_;
    std::unique_ptr<char[]> buf_;
    std::size_t size_ = 0;
    bool stop_ = false;
  } pieces(take);
  return read_regular_file_into(path, max_bytes, pieces);
}

FileRead read_regular_file(const fs::path& path, std::size_t max_bytes) {
  std::string text;
  FileRead r = read_regular_file_in_pieces(path, max_bytes, [&text](std::string_view piece) {
    text.append(piece);
    return true;
  });
  if (r.status == FileReadStatus::ok) r.text = std::move(text);
  return r;
}

JsonFileRead read_json_file(const fs::path& path) {
  JsonFileRead r;
  const FileRead file = read_regular_file(path);
  if (file.status == FileReadStatus::missing) return r;
  r.status = JsonFileStatus::malformed;
  if (file.status == FileReadStatus::failed) {
    // "cannot be read: it is not a regular file", "cannot be read: Permission denied".
    r.error = std::string("cannot be read: ") + (file.refused ? "it " : "") + file.error;
    return r;
  }
  // Only the kind of error and where: the parser's own message quotes the text near it.
  auto parsed = protocol::parse_json_line(file.text);
  if (!parsed.value) {
    r.error = parsed.what + " at " + protocol::error_position(file.text, parsed.offset);
  } else if (!parsed.value->is_object()) {
    r.error = "expected a JSON object";
  } else {
    r.status = JsonFileStatus::ok;
    r.value = std::move(*parsed.value);
  }
  return r;
}

namespace {

// The file a write to `path` replaces: through a symlink (or a chain of them) its final target,
// so the link stays a link and the file it points to gets the new content.
fs::path write_target(const fs::path& path) {
  fs::path p = path;
  for (int hops = 0; hops < 40; ++hops) {  // the kernel's own limit on a chain
    std::error_code ec;
    if (!fs::is_symlink(fs::symlink_status(p, ec)) || ec) return p;
    const fs::path target = fs::read_symlink(p, ec);
    if (ec) return p;
    p = target.is_absolute() ? target : p.parent_path() / target;
  }
  return p;
}

}  // namespace

std::optional<std::string> write_json_file_atomically(const fs::path& link,
                                                      const protocol::Json& value, fs::perms mode) {
  const fs::path path = write_target(link);
  std::error_code ec;
  if (path.has_parent_path()) fs::create_directories(path.parent_path(), ec);
  if (ec) return "cannot create " + path.parent_path().string() + ": " + ec.message();
  const std::string text =
      value.dump(2, ' ', false, nlohmann::detail::error_handler_t::replace) + "\n";
  const fs::path tmp = path.string() + ".tmp-" + std::to_string(::getpid());
  const int fd =
      ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, static_cast<mode_t>(mode));
  if (fd < 0) return "cannot write " + tmp.string() + ": " + std::strerror(errno);
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const std::string err = std::strerror(errno);
      ::close(fd);
      ::unlink(tmp.c_str());
      return "cannot write " + tmp.string() + ": " + err;
    }
    done += static_cast<std::size_t>(n);
  }
  ::fsync(fd);
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string err = std::strerror(errno);
    ::unlink(tmp.c_str());
    return "cannot replace " + path.string() + ": " + err;
  }
  return std::nullopt;
}

protocol::Json settings_object(const std::filesystem::path& path) {
  JsonFileRead r = read_json_file(path);
  return r.status == JsonFileStatus::ok && r.value.is_object() ? r.value : protocol::Json::object();
}

protocol::Json settings_member(const protocol::Json& settings, const char* key) {
  const auto it = settings.find(key);
  return it == settings.end() ? protocol::Json() : *it;
}

}  // namespace rebound::config
