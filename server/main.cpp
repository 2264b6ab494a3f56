// rebound: entry point. Prepares the process (standard descriptors, SIGPIPE, logging), parses
// the command line and hands over to the server. Nothing here writes protocol lines.

#include <fcntl.h>
#include <unistd.h>

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>
#include <csignal>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "server/cli_options.h"
#include "server/server_app.h"

namespace {

// A pipe opened later must never land on fd 0, 1 or 2 (and stdout must not be someone's file).
void ensure_standard_descriptors() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (::fcntl(fd, F_GETFD) == -1) {
      const int null_fd = ::open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
      if (null_fd >= 0 && null_fd != fd) {
        ::dup2(null_fd, fd);
        ::close(null_fd);
      }
    }
  }
}

bool setup_logging(const rebound::server::CliOptions& o) {
  std::shared_ptr<spdlog::logger> logger;
  try {
    if (o.log_file) {
      logger = spdlog::basic_logger_mt("rebound", *o.log_file);
    } else {
      logger = spdlog::stderr_logger_mt("rebound");
    }
  } catch (const spdlog::spdlog_ex& e) {
    std::fprintf(stderr, "rebound: cannot open the log file: %s\n", e.what());
    return false;
  }
  logger->set_pattern("[%Y-%m-%d %H:%M:%S.%e] [%l] %v");
  logger->set_level(spdlog::level::from_str(o.log_level));
  logger->flush_on(spdlog::level::trace);
  spdlog::set_default_logger(logger);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  ensure_standard_descriptors();
  std::signal(SIGPIPE, SIG_IGN);
  std::vector<std::string> args(argv + 1, argv + argc);
  const auto parsed = rebound::server::parse_command_line(args);
  if (!parsed.options) {
    std::fputs(parsed.out.c_str(), stdout);
    std::fputs(parsed.err.c_str(), stderr);
    return parsed.exit_code;
  }
  if (!setup_logging(*parsed.options)) return 1;
  try {
    return rebound::server::run_server(*parsed.options);
  } catch (const std::exception& e) {
    spdlog::critical("cannot run: {}", e.what());
    return 1;
  }
}
