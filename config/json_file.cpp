#include "config/json_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "protocol/json_line.h"

namespace rebound::config {

namespace fs = std::filesystem;

std::optional<std::string> read_text_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream buf;
  buf << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return buf.str();
}

JsonFileRead read_json_file(const fs::path& path) {
  JsonFileRead r;
  const auto text = read_text_file(path);
  if (!text) {
    std::error_code ec;
    if (!fs::exists(path, ec)) return r;
    r.status = JsonFileStatus::malformed;
    r.error = "cannot be read";
    return r;
  }
  auto parsed = protocol::parse_json_line(*text);
  if (!parsed.value) {
    r.status = JsonFileStatus::malformed;
    r.error = parsed.error;
  } else if (!parsed.value->is_object()) {
    r.status = JsonFileStatus::malformed;
    r.error = "expected a JSON object";
  } else {
    r.status = JsonFileStatus::ok;
    r.value = std::move(*parsed.value);
  }
  return r;
}

std::optional<std::string> write_json_file_atomically(const fs::path& path,
                                                      const protocol::Json& value, fs::perms mode) {
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

}  // namespace rebound::config
