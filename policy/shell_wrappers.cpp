// The wrappers' options (policy.md 2.4 form c and 2.4.1): which words of a part a wrapper
// (`env`, `timeout`, `nice`, …) takes as its own, and where the command it wraps begins.
#include <algorithm>
#include <array>

#include "policy/shell_parser.h"

namespace rebound::policy::shell_parse {

bool word_at(const ShellPart& part, std::size_t k) {
  return k < part.tokens.size() && part.tokens[k].kind == ShellToken::Kind::word;
}

// The next word token after `k`, or tokens.size().
std::size_t next_word(const ShellPart& part, std::size_t k) {
  for (++k; k < part.tokens.size(); ++k)
    if (part.tokens[k].kind == ShellToken::Kind::word) return k;
  return part.tokens.size();
}

namespace {

// What each wrapper accepts (policy.md 2.4 form c and 2.4.1): short options that take a value
// (joined or the next word), short flags, long options that take a value (`--x V`, `--x=V`),
// long flags; `any_dash`: every word starting with `-` is an option.
struct WrapperOptions {
  std::string_view name;
  std::string_view short_value;
  std::string_view short_flags;
  std::initializer_list<std::string_view> long_value;
  std::initializer_list<std::string_view> long_flags;
  bool any_dash = false;
};

const WrapperOptions* wrapper_options(std::string_view name) {
  static const std::array<WrapperOptions, 10> kWrappers = {{
      {"env", "uCS", "i0v", {"--unset", "--chdir", "--split-string"}, {}, true},
      {"command", "", "pvV", {}, {}, false},
      {"builtin", "", "", {}, {}, false},
      {"nohup", "", "", {}, {}, false},
      {"exec", "a", "cl", {}, {}, false},
      {"nice", "n", "", {"--adjustment"}, {}, false},
      {"time", "", "p", {}, {}, false},
      {"timeout", "sk", "v", {"--signal", "--kill-after"}, {}, true},
      {"stdbuf", "ioe", "", {"--input", "--output", "--error"}, {}, false},
      {"setsid", "", "cfw", {}, {"--ctty", "--fork", "--wait"}, false},
  }};
  for (const auto& w : kWrappers)
    if (w.name == name) return &w;
  return nullptr;
}

bool is_in(std::string_view v, std::initializer_list<std::string_view> list) {
  return std::find(list.begin(), list.end(), v) != list.end();
}

}  // namespace

WrapperScan scan_wrapper(const ShellPart& part, std::size_t at) {
  WrapperScan out;
  if (!word_at(part, at) || part.tokens[at].word.opaque) return out;
  const WrapperOptions* spec = wrapper_options(part.tokens[at].word.value);
  if (!spec) return out;
  const std::size_t n = part.tokens.size();
  auto value = [&](std::size_t k) -> const std::string& { return part.tokens[k].word.value; };
  std::size_t k = next_word(part, at);
  const bool env = spec->name == "env";
  const auto is_assignment_word = [&](std::size_t k) {
    // NAME=value, the value possibly opaque (`PATH="$PATH"`)
    const std::string& raw = part.tokens[k].word.raw;
    std::size_t j = 0;
    while (j < raw.size() && (j == 0 ? is_name_start(raw[j]) : is_name_char(raw[j])))
      ++j;
    return j > 0 && j < raw.size() && raw[j] == '=';
  };
  while (k < n) {
    if (env && is_assignment_word(k)) {
      k = next_word(part, k);
      continue;
    }
    if (part.tokens[k].word.opaque) break;
    const std::string& v = value(k);
    if (v == "--") {
      k = next_word(part, k);
      break;
    }
    if (env && v == "-") {  // the same as -i
      k = next_word(part, k);
      continue;
    }
    if (v.size() > 2 && v[0] == '-' && v[1] == '-') {
      const std::size_t eq = v.find('=');
      const std::string_view option = std::string_view(v).substr(0, eq);
      if (is_in(option, spec->long_value)) {
        std::optional<std::string> argument;
        if (eq != std::string::npos) {
          argument = v.substr(eq + 1);
          k = next_word(part, k);
        } else {
          k = next_word(part, k);
          if (k < n) {
            argument = part.tokens[k].word.opaque ? part.tokens[k].word.raw : value(k);
            k = next_word(part, k);
          }
        }
        if (option == "--split-string" && argument) {
          out.split_string = argument;
          out.next = k;
          return out;
        }
        continue;
      }
      if (!is_in(option, spec->long_flags) && !spec->any_dash) out.unknown_option = true;
      k = next_word(part, k);
      continue;
    }
    if (v.size() > 1 && v[0] == '-') {
      const bool numeric =
          spec->name == "nice" && v.find_first_not_of("0123456789", 1) == std::string::npos;
      std::size_t skip = 1;  // words this option takes
      for (std::size_t j = 1; j < v.size() && !numeric; ++j) {
        if (spec->short_value.find(v[j]) != std::string_view::npos) {
          std::optional<std::string> argument;
          if (j + 1 < v.size()) {
            argument = v.substr(j + 1);
          } else {
            const std::size_t arg = next_word(part, k);
            if (arg < n) argument = value(arg);
            skip = 2;
          }
          if (env && v[j] == 'S' && argument) {
            out.split_string = argument;
            k = next_word(part, k);
            if (skip == 2 && k < n) k = next_word(part, k);
            out.next = k;
            return out;
          }
          break;
        }
        if (spec->short_flags.find(v[j]) == std::string_view::npos && !spec->any_dash)
          out.unknown_option = true;
        if (spec->name == "command" && (v[j] == 'v' || v[j] == 'V'))
          return out;  // `command -v NAME` describes NAME, runs nothing
      }
      k = next_word(part, k);
      if (skip == 2 && k < n) k = next_word(part, k);
      continue;
    }
    break;
  }
  if (spec->name == "timeout" && k < n) k = next_word(part, k);  // the duration
  out.next = k < n ? k : 0;
  return out;
}

}  // namespace rebound::policy::shell_parse
