#pragma once
// The texts rebound-chat shows (retry.md section 9; hooks' texts, notices and errors of
// extensions.md), as pure functions so they are tested without a terminal.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rebound::chat {

inline constexpr const char* kWorking = "Working… (esc to interrupt)";
inline constexpr const char* kCompacting = "Compacting the context… (esc to interrupt)";

/// Whole seconds for a delay: round(ms / 1000), never negative.
inline std::int64_t rounded_seconds(std::int64_t ms) {
  return ms <= 0 ? 0 : (ms + 500) / 1000;
}

/// `Retrying (<attempt>/<maxAttempts>) in <round(remaining/1000)>s… (esc to cancel)`; with a
/// server that has `retry_now` (retry.md section 17) the hint also names ctrl-r.
inline std::string retry_status(std::int64_t attempt, std::int64_t max_attempts,
                                std::int64_t remaining_ms, bool can_retry_now = false) {
  return "Retrying (" + std::to_string(attempt) + "/" + std::to_string(max_attempts) + ") in " +
         std::to_string(rounded_seconds(remaining_ms)) + "s… (esc to cancel" +
         (can_retry_now ? ", ctrl-r to retry now)" : ")");
}

/// `Retry failed after <attempt> attempts: <finalError>` exactly (retry.md section 9), then the
/// error class of the last retried failure when the server reports it: `… <finalError>
/// (overloaded)`.
inline std::string retry_failed(std::int64_t attempt, const std::string& final_error,
                                const std::string& error_class = {}) {
  return "Retry failed after " + std::to_string(attempt) + " attempts: " + final_error +
         (error_class.empty() ? "" : " (" + error_class + ")");
}

/// A hook's text for the model (a custom message, extensions.md section 3.9): `[hook] <text>`.
inline std::string hook_context(const std::string& text) {
  return "[hook] " + text;
}

/// A notice (`notify`, section 6.1): `[<notifyType>] <message>`, `info` when none is given.
inline std::string notice(const std::string& notify_type, const std::string& message) {
  return "[" + (notify_type.empty() ? std::string("info") : notify_type) + "] " + message;
}

/// An extension_error (section 7.3): `[extension error] <extensionPath> (<event>): <error>`.
inline std::string extension_error(const std::string& path, const std::string& event,
                                   const std::string& error) {
  return "[extension error] " + path + " (" + event + "): " + error;
}

/// A line that starts with `:` is one of rebound-chat's own commands (a `/` line is a prompt:
/// templates, skills and extension commands are the server's): `:fork [N]`, `:clone`,
/// `:name TEXT`, `:export [PATH]`, `:help`. `word` is the command, `arg` the rest, trimmed.
struct LocalCommand {
  std::string word;
  std::string arg;
};
inline std::optional<LocalCommand> local_command(const std::string& line) {
  if (line.size() < 2 || line[0] != ':' || line[1] == ' ') return std::nullopt;
  const auto space = line.find(' ');
  LocalCommand c{line.substr(1, space == std::string::npos ? std::string::npos : space - 1), ""};
  if (space != std::string::npos) {
    const auto b = line.find_first_not_of(' ', space);
    const auto e = line.find_last_not_of(' ');
    if (b != std::string::npos) c.arg = line.substr(b, e - b + 1);
  }
  return c;
}

inline constexpr const char* kLocalHelp =
    ":fork lists the messages to fork before; :fork N forks before message N and puts its text "
    "back in the input line\n:clone copies the conversation into a new session\n:name TEXT names "
    "the session\n:export [PATH] writes the conversation as an HTML page\n";

/// The fork list: `  1  <first line of the text, 60 characters at most>` per message.
inline std::string fork_list(const std::vector<std::string>& texts) {
  if (texts.empty()) return "(nothing to fork from yet)\n";
  std::string out;
  for (std::size_t i = 0; i < texts.size(); ++i) {
    std::string first = texts[i].substr(0, texts[i].find('\n'));
    if (first.size() > 60) first = first.substr(0, 57) + "...";
    out += "  " + std::to_string(i + 1) + "  " + first + "\n";
  }
  return out;
}

}  // namespace rebound::chat
