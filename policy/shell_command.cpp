// A recursive-descent reading of bash's grammar, as far as policy.md section 2.4 needs it: each
// simple command becomes a part with its words as written and as bash would read them; compound
// commands, substitutions, here-documents and `sh -c`/`eval` strings are looked into; anything
// else stops the analysis as not understood.
#include "policy/shell_command.h"
#include "policy/shell_parser.h"

#include <algorithm>

namespace rebound::policy {

using shell_parse::NotUnderstood;
using shell_parse::Parser;
using shell_parse::scan_wrapper;
using shell_parse::Shared;
using shell_parse::WrapperScan;

ShellAnalysis analyse_shell(std::string_view command, const std::string& home) {
  ShellAnalysis out;
  Shared shared{home, out.parts, {}, true, 0};
  try {
    Parser parser(command, 0, shared);
    parser.parse_all();
  } catch (const NotUnderstood& e) {
    out.understood = false;
    out.problem = e.why;
  }
  std::stable_sort(out.parts.begin(), out.parts.end(),
                   [](const ShellPart& a, const ShellPart& b) { return a.start < b.start; });
  return out;
}

std::string part_text(const ShellPart& part, std::size_t from) {
  std::string out;
  for (std::size_t k = from; k < part.tokens.size(); ++k) {
    const ShellToken& t = part.tokens[k];
    if (k > from && t.space_before) out += ' ';
    out += t.word.raw;
  }
  return out;
}

std::size_t command_word(const ShellPart& part, std::size_t from) {
  for (std::size_t k = from; k < part.tokens.size(); ++k)
    if (part.tokens[k].kind == ShellToken::Kind::word) return k;
  return part.tokens.size();
}

std::size_t wrapped_command(const ShellPart& part, std::size_t at, bool* unknown_option) {
  const WrapperScan scan = scan_wrapper(part, at);
  if (unknown_option && scan.unknown_option) *unknown_option = true;
  return scan.split_string ? 0 : scan.next;
}

std::string decoded_text(const ShellPart& part, std::size_t from) {
  std::string out;
  for (std::size_t k = from; k < part.tokens.size(); ++k) {
    if (k > from) out += ' ';
    const ShellWord& w = part.tokens[k].word;
    out += w.opaque || part.test_form ? w.raw : w.value;
  }
  return out;
}

}  // namespace rebound::policy
