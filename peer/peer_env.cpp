#include <sys/wait.h>

#include <algorithm>

#include "peer/peer_process.h"

namespace rebound::peer {

std::string expand_variables(std::string_view text, const Getenv& getenv,
                             std::optional<std::string>& missing) {
  std::string out;
  std::size_t i = 0;
  while (i < text.size()) {
    const std::size_t open = text.find("${", i);
    const std::size_t close = open == std::string_view::npos ? open : text.find('}', open + 2);
    if (open == std::string_view::npos || close == std::string_view::npos) {
      out.append(text.substr(i));
      break;
    }
    out.append(text.substr(i, open - i));
    const std::string_view inner = text.substr(open + 2, close - open - 2);
    const std::size_t dash = inner.find(":-");
    const std::string name(inner.substr(0, dash));
    const std::optional<std::string> value = getenv(name);
    if (value && !value->empty()) {
      out += *value;
    } else if (dash != std::string_view::npos) {
      out.append(inner.substr(dash + 2));
    } else if (!missing) {
      missing = name;
    }
    i = close + 1;
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> child_environment(
    const Getenv& getenv, const std::vector<std::pair<std::string, std::string>>& extra) {
  static const char* const kPassed[] = {"HOME", "LOGNAME", "PATH",     "SHELL",  "TERM", "USER",
                                        "LANG", "LC_ALL",  "LC_CTYPE", "TMPDIR", "TZ"};
  std::vector<std::pair<std::string, std::string>> out;
  for (const char* name : kPassed) {
    if (auto value = getenv(name)) out.emplace_back(name, std::move(*value));
  }
  for (const auto& entry : extra) {
    const auto same =
        std::find_if(out.begin(), out.end(), [&](const auto& p) { return p.first == entry.first; });
    if (same != out.end()) {
      same->second = entry.second;
    } else {
      out.push_back(entry);
    }
  }
  return out;
}

std::string exit_text(int status) {
  if (WIFSIGNALED(status)) return "Killed by signal " + std::to_string(WTERMSIG(status));
  return "Exited with code " + std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : status);
}

}  // namespace rebound::peer
