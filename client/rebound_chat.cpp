// rebound-chat: an interactive terminal client on RpcClient.
//
//   rebound-chat [--server PATH] [-- arguments for rebound]
//
// On a terminal: the transcript scrolls above a status line and a prompt line. Enter sends the
// line (as a follow-up while the agent works), Esc cancels a retry backoff (abort_retry),
// Ctrl-R ends it now (retry_now, when the server has retry control), Esc otherwise
// interrupts a run (abort), Ctrl-C interrupts, Ctrl-D quits. When stdin or stdout is not a
// terminal it reads one prompt per input line and prints plain lines, waiting for each prompt's
// work to end before the next. A line that starts with `:` is one of its own commands:
// `:fork [N]`, `:clone`, `:name TEXT`, `:export [PATH]`, `:help`.

#include <poll.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <deque>
#include <iostream>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "client/chat_text.h"
#include "rebound/rpc_client.h"

namespace {

using Clock = std::chrono::steady_clock;
using rebound::Json;

struct Args {
  std::string server = "rebound";
  std::vector<std::string> server_args;
};

std::optional<Args> parse_args(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--") {
      for (++i; i < argc; ++i)
        a.server_args.push_back(argv[i]);
      break;
    }
    if (arg == "--server" && i + 1 < argc) {
      a.server = argv[++i];
    } else if (arg == "--help" || arg == "-h") {
      std::cout << "usage: rebound-chat [--server PATH] [-- arguments for rebound]\n";
      std::exit(0);
    } else {
      std::cerr << "rebound-chat: unknown argument '" << arg << "'\n"
                << "usage: rebound-chat [--server PATH] [-- arguments for rebound]\n";
      return std::nullopt;
    }
  }
  return a;
}

// Events from the client's reader thread, handed to the main loop through a pipe.
class EventQueue {
 public:
  EventQueue() {
    if (::pipe(fds_) != 0) throw std::runtime_error("pipe failed");
  }
  ~EventQueue() {
    ::close(fds_[0]);
    ::close(fds_[1]);
  }
  void push(const Json& e) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      events_.push_back(e);
    }
    const char b = 1;
    (void)!::write(fds_[1], &b, 1);
  }
  std::deque<Json> take() {
    char buf[256];
    (void)!::read(fds_[0], buf, sizeof buf);
    std::lock_guard<std::mutex> lock(mu_);
    return std::exchange(events_, {});
  }
  int fd() const { return fds_[0]; }

 private:
  int fds_[2];
  std::mutex mu_;
  std::deque<Json> events_;
};

// What the session is doing, from the events.
struct Activity {
  bool streaming = false, compacting = false;
  std::optional<Clock::time_point> retry_deadline;
  std::int64_t retry_attempt = 0, retry_max = 0;
  bool retry_control = false;     // the server answered get_retry_state: ctrl-r retries now
  std::string retry_error_class;  // of the last auto_retry_start, in retry-control mode
};

// The terminal: a scroll region for the transcript, a status line and a prompt line.
class Screen {
 public:
  Screen() {
    ::tcgetattr(STDIN_FILENO, &saved_);
    termios raw = saved_;
    raw.c_lflag &= ~static_cast<tcflag_t>(ICANON | ECHO | ISIG | IEXTEN);
    raw.c_iflag &= ~static_cast<tcflag_t>(IXON | ICRNL);
    raw.c_cc[VMIN] = 1;
    raw.c_cc[VTIME] = 0;
    ::tcsetattr(STDIN_FILENO, TCSANOW, &raw);
    winsize ws{};
    rows_ = (::ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 3) ? ws.ws_row : 24;
    out("\x1b[2J\x1b[1;" + std::to_string(rows_ - 2) +
        "r\x1b[1;1H\x1b"
        "7");
    redraw();
  }
  ~Screen() {
    out("\x1b[r\x1b[" + std::to_string(rows_) + ";1H\r\n");
    ::tcsetattr(STDIN_FILENO, TCSANOW, &saved_);
  }

  /// Text into the transcript (LF becomes CRLF in raw mode).
  void print(const std::string& text) {
    std::string converted;
    for (char c : text) {
      if (c == '\n') converted += '\r';
      converted += c;
    }
    out("\x1b"
        "8" +
        converted +
        "\x1b"
        "7");
    redraw();
  }
  void set_status(std::string status) {
    if (status == status_) return;
    status_ = std::move(status);
    redraw();
  }
  std::string& input() { return input_; }
  void redraw() {
    out("\x1b[" + std::to_string(rows_ - 1) + ";1H\x1b[2K" + status_ + "\x1b[" +
        std::to_string(rows_) + ";1H\x1b[2K> " + input_);
  }

 private:
  static void out(const std::string& s) { (void)!::write(STDOUT_FILENO, s.data(), s.size()); }
  termios saved_{};
  int rows_ = 24;
  std::string status_;
  std::string input_;
};

std::string status_of(const Activity& a) {
  if (a.retry_deadline) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(*a.retry_deadline - Clock::now());
    return rebound::chat::retry_status(a.retry_attempt, a.retry_max, left.count(), a.retry_control);
  }
  if (a.compacting) return rebound::chat::kCompacting;
  if (a.streaming) return rebound::chat::kWorking;
  return {};
}

// Applies an event to the activity and returns the transcript text it adds.
std::string apply(Activity& a, const Json& e) {
  const std::string type = e.value("type", std::string());
  if (type == "agent_start") {
    a.streaming = true;
    a.retry_deadline.reset();
  } else if (type == "agent_end") {
    a.streaming = false;
  } else if (type == "message_update") {
    const Json& ev = e["assistantMessageEvent"];
    if (ev.value("type", std::string()) == "text_delta") return ev.value("delta", std::string());
  } else if (type == "message_start" && e["message"].value("role", std::string()) == "user") {
    const Json& content = e["message"]["content"];
    std::string text = content.empty() ? std::string() : content[0].value("text", std::string());
    return "you: " + text + "\n";
  } else if (type == "message_end" && e["message"].value("role", std::string()) == "custom") {
    const Json& content = e["message"]["content"];
    if (content.is_string()) return rebound::chat::hook_context(content.get<std::string>()) + "\n";
  } else if (type == "extension_ui_request" && e.value("method", std::string()) == "notify") {
    return rebound::chat::notice(e.value("notifyType", std::string()),
                                 e.value("message", std::string())) +
           "\n";
  } else if (type == "extension_error") {
    return rebound::chat::extension_error(e.value("extensionPath", std::string()),
                                          e.value("event", std::string()),
                                          e.value("error", std::string())) +
           "\n";
  } else if (type == "message_end" && e["message"].value("role", std::string()) == "assistant") {
    const Json& m = e["message"];
    if (m.value("stopReason", std::string()) == "error") {
      return "(error: " + m.value("errorMessage", std::string()) + ")\n";
    }
    if (m.value("stopReason", std::string()) == "aborted") return "(interrupted)\n";
    return "\n";
  } else if (type == "auto_retry_start") {
    a.retry_attempt = e.value("attempt", 0);
    a.retry_max = e.value("maxAttempts", 0);
    a.retry_error_class = e.value("errorClass", std::string());
    a.retry_deadline = Clock::now() + std::chrono::milliseconds(e.value("delayMs", 0));
  } else if (type == "auto_retry_end") {
    a.retry_deadline.reset();
    if (!e.value("success", false)) {
      return rebound::chat::retry_failed(e.value("attempt", 0), e.value("finalError", ""),
                                         a.retry_error_class) +
             "\n";
    }
  } else if (type == "auto_compaction_start") {
    a.compacting = true;
  } else if (type == "auto_compaction_end") {
    a.compacting = false;
    if (e.contains("errorMessage")) return "(" + e["errorMessage"].get<std::string>() + ")\n";
  }
  return {};
}

// Turns the typed retry fields on (retry.md section 11); false for a server without them.
bool enable_retry_control(rebound::RpcClient& client) {
  try {
    client.get_retry_state();
    return true;
  } catch (const rebound::RpcError&) {
    return false;
  }
}

// One of rebound-chat's own commands (chat_text.h): what to print, and for :fork N the text to
// put back in the input line. Throws RpcError as the client does.
struct LocalResult {
  std::string print;
  std::optional<std::string> input;
};
LocalResult run_local(rebound::RpcClient& client, const rebound::chat::LocalCommand& c) {
  namespace chat = rebound::chat;
  if (c.word == "fork") {
    const Json listed = client.get_fork_messages();
    std::vector<std::string> texts;
    std::vector<std::string> ids;
    for (const auto& m : listed) {
      texts.push_back(m.value("text", ""));
      ids.push_back(m.value("entryId", ""));
    }
    if (c.arg.empty()) return {chat::fork_list(texts), std::nullopt};
    std::size_t n = 0;
    try {
      n = static_cast<std::size_t>(std::stoul(c.arg));
    } catch (const std::exception&) {
    }
    if (n == 0 || n > ids.size())
      return {"(no message " + c.arg + " to fork before)\n", std::nullopt};
    std::string text = client.fork(ids[n - 1]);
    return {"(forked before message " + c.arg + ": a new session)\n", std::move(text)};
  }
  if (c.word == "clone") {
    client.clone();
    return {"(cloned into a new session)\n", std::nullopt};
  }
  if (c.word == "name") {
    client.set_session_name(c.arg);
    return {"(named: " + c.arg + ")\n", std::nullopt};
  }
  if (c.word == "export") {
    const std::string path =
        client.export_html(c.arg.empty() ? std::nullopt : std::optional<std::string>(c.arg));
    return {"(exported to " + path + ")\n", std::nullopt};
  }
  return {chat::kLocalHelp, std::nullopt};
}

int run_plain(rebound::RpcClient& client) {
  Activity a;
  enable_retry_control(client);  // the error class in failure lines; no keys here
  auto sub = client.on_event([&](const Json& e) {
    const std::string text = apply(a, e);
    if (!text.empty()) std::cout << text << std::flush;
    if (e.value("type", std::string()) == "auto_retry_start") {
      std::cout << status_of(a) << "\n" << std::flush;
    }
  });
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.empty()) continue;
    try {
      if (const auto local = rebound::chat::local_command(line)) {
        const LocalResult r = run_local(client, *local);
        std::cout << r.print << (r.input ? *r.input + "\n" : "") << std::flush;
        continue;
      }
      client.prompt(line);
      client.wait_for_idle(std::chrono::hours(24));
    } catch (const rebound::RpcError& e) {
      std::cerr << "rebound-chat: " << e.what() << "\n";
      if (!client.running()) return 1;
    }
  }
  return 0;
}

int run_terminal(rebound::RpcClient& client) {
  EventQueue queue;
  auto sub = client.on_event([&](const Json& e) { queue.push(e); });
  Screen screen;
  Activity a;
  a.retry_control = enable_retry_control(client);
  auto send = [&](auto&& call) {
    try {
      call();
    } catch (const rebound::RpcError& e) {
      screen.print(std::string("(") + e.what() + ")\n");
    }
  };
  for (;;) {
    pollfd fds[2] = {{STDIN_FILENO, POLLIN, 0}, {queue.fd(), POLLIN, 0}};
    // Tick while a countdown shows.
    const int timeout_ms = a.retry_deadline ? 200 : -1;
    if (::poll(fds, 2, timeout_ms) < 0 && errno != EINTR) return 1;
    if (fds[1].revents & POLLIN) {
      for (const Json& e : queue.take()) {
        const std::string text = apply(a, e);
        if (!text.empty()) screen.print(text);
      }
    }
    if (!client.running()) {
      screen.print("(the server stopped: " + client.stderr_tail() + ")\n");
      return 1;
    }
    if (fds[0].revents & (POLLIN | POLLHUP)) {
      char buf[256];
      const ssize_t n = ::read(STDIN_FILENO, buf, sizeof buf);
      if (n <= 0) return 0;
      for (ssize_t i = 0; i < n; ++i) {
        const unsigned char c = static_cast<unsigned char>(buf[i]);
        if (c == 0x1b) {
          if (i + 1 < n && buf[i + 1] == '[') {  // an escape sequence (arrows…): skipped
            i += 2;
            while (i < n && !(buf[i] >= 0x40 && buf[i] <= 0x7e))
              ++i;
            continue;
          }
          if (a.retry_deadline) {
            send([&] { client.abort_retry(); });
          } else if (a.streaming || a.compacting) {
            send([&] { client.abort(); });
          }
        } else if (c == 0x12) {  // Ctrl-R: retry now, during a countdown
          if (a.retry_deadline && a.retry_control) send([&] { client.retry_now(); });
        } else if (c == 0x03) {  // Ctrl-C
          if (a.streaming || a.compacting || a.retry_deadline) {
            send([&] { client.abort(); });
          } else {
            screen.input().clear();
            screen.redraw();
          }
        } else if (c == 0x04) {  // Ctrl-D
          return 0;
        } else if (c == '\r' || c == '\n') {
          std::string line = std::exchange(screen.input(), {});
          screen.redraw();
          if (line.empty()) continue;
          if (const auto local = rebound::chat::local_command(line)) {
            send([&] {
              LocalResult r = run_local(client, *local);
              screen.print(r.print);
              if (r.input) {
                screen.input() = std::move(*r.input);
                screen.redraw();
              }
            });
            continue;
          }
          const bool busy = a.streaming || a.compacting || a.retry_deadline;
          send([&] {
            if (busy) {
              client.follow_up(line);
              screen.print("(queued: " + line + ")\n");
            } else {
              client.prompt(line);
            }
          });
        } else if (c == 0x7f || c == 0x08) {
          auto& in = screen.input();
          while (!in.empty() && (static_cast<unsigned char>(in.back()) & 0xC0) == 0x80)
            in.pop_back();  // a whole UTF-8 character
          if (!in.empty()) in.pop_back();
          screen.redraw();
        } else if (c >= 0x20) {
          screen.input() += static_cast<char>(c);
          screen.redraw();
        }
      }
    }
    screen.set_status(status_of(a));
  }
}

}  // namespace

int main(int argc, char** argv) {
  const auto args = parse_args(argc, argv);
  if (!args) return 2;
  rebound::RpcClientOptions options;
  options.server_path = args->server;
  options.args = args->server_args;
  try {
    rebound::RpcClient client(options);
    client.get_state();  // fails here, with the server's stderr, if it cannot start
    const bool terminal = ::isatty(STDIN_FILENO) && ::isatty(STDOUT_FILENO);
    const int rc = terminal ? run_terminal(client) : run_plain(client);
    client.stop();
    return rc;
  } catch (const std::exception& e) {
    std::cerr << "rebound-chat: " << e.what() << "\n";
    return 1;
  }
}
