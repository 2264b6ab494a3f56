#pragma once
// Appends JSON lines to a file, each with a single write (the --script-log file). Failures are
// logged once, never thrown. Event loop only.

#include <string>

#include "protocol/json.h"

namespace rebound::server {

class JsonlAppender {
 public:
  explicit JsonlAppender(const std::string& path);
  ~JsonlAppender();
  JsonlAppender(const JsonlAppender&) = delete;
  JsonlAppender& operator=(const JsonlAppender&) = delete;

  bool ok() const { return fd_ >= 0; }
  void append(const protocol::Json& line);

 private:
  std::string path_;
  int fd_ = -1;
  bool warned_ = false;
};

}  // namespace rebound::server
