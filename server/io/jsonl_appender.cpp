#include "server/io/jsonl_appender.h"

#include <fcntl.h>
#include <unistd.h>

#include <spdlog/spdlog.h>
#include <cerrno>
#include <cstring>

#include "protocol/json_line.h"

namespace rebound::server {

JsonlAppender::JsonlAppender(const std::string& path)
    : path_(path), fd_(::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644)) {}

JsonlAppender::~JsonlAppender() {
  if (fd_ >= 0) ::close(fd_);
}

void JsonlAppender::append(const protocol::Json& line) {
  if (fd_ < 0) return;
  const std::string text = protocol::to_line(line);
  ssize_t n;
  do {
    n = ::write(fd_, text.data(), text.size());
  } while (n < 0 && errno == EINTR);
  if (n != static_cast<ssize_t>(text.size()) && !warned_) {
    warned_ = true;
    spdlog::warn("could not append to {}: {}", path_, n < 0 ? std::strerror(errno) : "short write");
  }
}

}  // namespace rebound::server
