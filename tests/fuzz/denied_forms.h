#pragma once
// Commands that bash runs as `rm -f x`, built from a stream of choices (policy.md 2.4.1): the
// command word written with quotes, escapes, `$'…'` and braces; wrappers with short and long
// options and `--`; shells with options around a `-c` string; `eval`; `env -S`; lists,
// groups, subshells and substitutions around it. Shared by the fuzz target deny_forms and the
// randomized test that runs each built command through real bash.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace rebound::fuzz {

/// Choices taken from bytes; past the end every choice is 0.
class Choices {
 public:
  Choices(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
  std::size_t pick(std::size_t n) { return n == 0 ? 0 : (at_ < size_ ? data_[at_++] : 0) % n; }
  bool done() const { return at_ >= size_; }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t at_ = 0;
};

/// `text` as one single-quoted shell word.
inline std::string single_quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

/// One piece of a command word written so that bash reads it as `piece` (no braces).
inline std::string write_piece(const std::string& piece, Choices& in) {
  if (piece.empty()) return in.pick(2) ? "''" : "\"\"";
  switch (in.pick(8)) {
    case 0:
      return piece;
    case 1:
      return "'" + piece + "'";
    case 2:
      return "\"" + piece + "\"";
    case 3: {
      std::string out;
      for (char c : piece)
        out += std::string("\\") + c;
      return out;
    }
    case 4: {
      std::string out = "$'";
      static const char* kHex = "0123456789abcdef";
      for (char c : piece) {
        const auto u = static_cast<unsigned char>(c);
        out += std::string("\\x") + kHex[u >> 4] + kHex[u & 15];
      }
      return out + "'";
    }
    case 5: {
      std::string out = "$'";
      for (char c : piece) {
        const auto u = static_cast<unsigned char>(c);
        out += "\\" + std::to_string(u >> 6) + std::to_string((u >> 3) & 7) + std::to_string(u & 7);
      }
      return out + "'";
    }
    case 6: {
      std::string out = "$'";
      static const char* kHex = "0123456789ABCDEF";
      for (char c : piece) {
        const auto u = static_cast<unsigned char>(c);
        out += std::string("\\u00") + kHex[u >> 4] + kHex[u & 15];
      }
      return out + "'";
    }
    default:
      return piece + "''";
  }
}

/// The word `rm` as a word bash reads as `rm` (or, with a brace, as `rm` followed by words).
inline std::string write_command_word(Choices& in, bool braces = true) {
  const std::string word = "rm";
  const std::size_t cut = in.pick(3);  // 0, 1 or 2: where the word is split in two pieces
  std::string out = write_piece(word.substr(0, cut), in) + write_piece(word.substr(cut), in);
  switch (braces ? in.pick(5) : 4) {
    case 0:
      return "{" + out + ",}";  // `rm` and an empty word, removed
    case 1:
      return "{" + out + ",-f}";  // `rm -f`
    default:
      return out;
  }
}

/// A command that runs `rm -f x` when bash runs it. `oracle` is false after a choice that a
/// test cannot observe through a fake `rm` early in PATH (`command -p` looks elsewhere).
inline std::string build_rm_command(Choices& in, bool& oracle, int depth = 0) {
  std::string cmd;
  if (depth == 0 && in.pick(4) == 0) {
    cmd = "{" + write_command_word(in, false) + ",-f,x}";
  } else {
    cmd = write_command_word(in) + " -f x";
  }
  const std::size_t layers = depth > 3 ? 0 : in.pick(4);
  bool simple = true;  // a simple command running a program: a wrapper can run it
  for (std::size_t l = 0; l < layers; ++l) {
    static const std::vector<std::string> kWrappers = {"env ",
                                                       "env -i PATH=\"$PATH\" RM_LOG=\"$RM_LOG\" ",
                                                       "env --unset X ",
                                                       "env -u X ",
                                                       "env A=1 ",
                                                       "env -- ",
                                                       "nice ",
                                                       "nice -n 5 ",
                                                       "nice --adjustment 5 ",
                                                       "nice --adjustment=5 ",
                                                       "timeout 5 ",
                                                       "timeout --signal KILL 5 ",
                                                       "timeout -k 1 5 ",
                                                       "timeout --kill-after 1 -- 5 ",
                                                       "stdbuf -oL ",
                                                       "stdbuf --output L ",
                                                       "stdbuf --input=0 ",
                                                       "setsid -w ",
                                                       "setsid --wait ",
                                                       "command ",
                                                       "command -p ",
                                                       "nohup ",
                                                       "time -p ",
                                                       "X=1 ",
                                                       "command -- ",
                                                       "env --chdir . ",
                                                       "env -C . ",
                                                       "exec -a name "};
    std::size_t kind = in.pick(10);
    if (!simple && kind < 3) kind = 3;
    simple = kind < 4;
    switch (kind) {
      case 0:
      case 1:
      case 2: {
        const std::string& w = kWrappers[in.pick(kWrappers.size())];
        if (w == "command -p ") oracle = false;
        if (w == "exec -a name ") {
          cmd = "(" + w + cmd + ")";  // exec ends the shell
          simple = false;
        } else if (w == "X=1 ") {
          cmd = w + cmd;
          simple = false;  // `nice X=1 rm` would run a program named X=1
        } else {
          cmd = w + cmd;
        }
        break;
      }
      case 3: {
        static const std::vector<std::string> kShells = {"bash -c ",
                                                         "bash -e -c ",
                                                         "bash -o errexit -c ",
                                                         "bash +o posix -c ",
                                                         "bash -O extglob -c ",
                                                         "bash +O extglob -c ",
                                                         "bash -ec ",
                                                         "bash -c -- ",
                                                         "bash --norc -c ",
                                                         "bash -xc ",
                                                         "bash -e -o pipefail -c ",
                                                         "bash -x -c "};
        cmd = kShells[in.pick(kShells.size())] + single_quoted(cmd);
        break;
      }
      case 4:
        cmd = (in.pick(2) ? "eval " : "eval -- ") + single_quoted(cmd);
        break;
      case 5:
        cmd = "true && " + cmd;
        break;
      case 6:
        cmd = in.pick(2) ? "( " + cmd + " )" : "{ " + cmd + "; }";
        break;
      case 7:
        cmd = in.pick(2) ? "echo $( " + cmd + " )" : "if true; then " + cmd + "; fi";
        break;
      case 8:
        cmd = "true | " + cmd;
        break;
      default:
        cmd = "for i in 1; do " + cmd + "; done";
        break;
    }
  }
  if (depth == 0 && in.pick(6) == 0) {
    // env -S with a plain string (env's own quoting is not the shell's).
    cmd = in.pick(2) ? "env -S 'rm -f x'" : "env -S rm -f x";
  }
  return cmd;
}

}  // namespace rebound::fuzz
