// rebound: entry point. Prepares the process (standard descriptors, SIGPIPE, logging), parses
// the command line and hands over to the server. Nothing here writes protocol lines.

#include <fcntl.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "process/descendants.h"
#include "process/stop_signals.h"
#include "server/app/cli_options.h"
#include "server/app/server_app.h"

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

// A log file opened close-on-exec (spdlog's file sink is not), so no bash command or tool
// inherits it. Appends whole formatted lines.
class LogFileSink : public spdlog::sinks::base_sink<std::mutex> {
 public:
  explicit LogFileSink(int fd) : fd_(fd) {}
  ~LogFileSink() override { ::close(fd_); }

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    spdlog::memory_buf_t line;
    formatter_->format(msg, line);
    std::size_t done = 0;
    while (done < line.size()) {
      const ssize_t n = ::write(fd_, line.data() + done, line.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;  // nowhere left to report it
      done += static_cast<std::size_t>(n);
    }
  }
  void flush_() override {}

 private:
  int fd_;
};

bool setup_logging(const rebound::server::CliOptions& o) {
  std::shared_ptr<spdlog::logger> logger;
  try {
    if (o.log_file) {
      const int fd = ::open(o.log_file->c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
      if (fd < 0) {
        std::fprintf(stderr, "rebound: cannot open the log file %s: %s\n", o.log_file->c_str(),
                     std::strerror(errno));
        return false;
      }
      logger = std::make_shared<spdlog::logger>("rebound", std::make_shared<LogFileSink>(fd));
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

// --api-key's value is wiped from the argument memory once it is copied: /proc/PID/cmdline is
// readable by every process of the machine.
void wipe_api_key_arguments(int argc, char** argv) {
  const std::string_view flag = "--api-key";
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--") return;
    if (arg == flag && i + 1 < argc) {
      std::memset(argv[i + 1], 0, std::strlen(argv[i + 1]));
      ++i;
    } else if (arg.size() > flag.size() && arg.substr(0, flag.size() + 1) == "--api-key=") {
      std::memset(argv[i] + flag.size() + 1, 0, arg.size() - flag.size() - 1);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  // Not dumpable: another process of the same user cannot open /proc/PID/fd (the protocol's
  // pipes), environ (the key variables), mem or attach a debugger; a root one still can.
  ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
#if defined(__SANITIZE_ADDRESS__)
  // LeakSanitizer's exit check attaches to the process's threads with ptrace, which a
  // non-dumpable process refuses to an ordinary user: dumpable again for that last step only
  // (an atexit handler registered after the sanitizer's runs before it).
  std::atexit([] { ::prctl(PR_SET_DUMPABLE, 1, 0, 0, 0); });
#endif
  // Every process a command starts stays our descendant, whatever session it leaves for, so
  // the server can end them all at exit (tools.md section 4.4).
  rebound::process::become_child_subreaper();
  // First: from here to exit no SIGTERM, SIGINT or SIGHUP ends the process by its default
  // action (one that comes during start-up is handled once the event loop runs).
  rebound::process::install_stop_signal_handlers();
  ensure_standard_descriptors();
  rebound::process::open_stop_signal_pipe();
  std::signal(SIGPIPE, SIG_IGN);
  std::vector<std::string> args(argv + 1, argv + argc);
  wipe_api_key_arguments(argc, argv);
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
