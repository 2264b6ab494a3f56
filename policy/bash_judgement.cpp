#include "policy/bash_judgement.h"

#include <glob.h>

#include <algorithm>
#include <array>

#include "policy/dir_index.h"
#include "policy/policy.h"
#include "policy/shell_command.h"

namespace rebound::policy {

namespace {

using Kind = ShellToken::Kind;

// One form of a part (section 2.4: a, b, c): its first token.
std::vector<std::size_t> forms_of(const ShellPart& part) {
  std::vector<std::size_t> out{0};
  std::size_t first = 0;
  while (first < part.tokens.size() && part.tokens[first].kind == Kind::assignment)
    ++first;
  if (first != 0 && first < part.tokens.size()) out.push_back(first);
  std::size_t k = command_word(part);
  if (k != first && k < part.tokens.size()) out.push_back(k);
  while (k < part.tokens.size()) {
    const std::size_t inner = wrapped_command(part, k);
    if (inner == 0) break;
    out.push_back(inner);
    k = inner;
  }
  return out;
}

// The form's text with each opaque word as a wildcard.
TextGlob opaque_glob(const ShellPart& part, std::size_t from) {
  TextGlob g;
  for (std::size_t k = from; k < part.tokens.size(); ++k) {
    const ShellToken& t = part.tokens[k];
    if (k > from && t.space_before) g.push_back(' ');
    if (t.word.opaque && t.kind != Kind::redirect_op) {
      if (g.empty() || g.back() != kStar) g.push_back(kStar);
      continue;
    }
    for (char c : t.word.raw)
      g.push_back(static_cast<unsigned char>(c));
  }
  return g;
}

bool any_opaque(const ShellPart& part) {
  for (const auto& t : part.tokens)
    if (t.word.opaque && t.kind != Kind::redirect_op) return true;
  return false;
}

std::string base_name(const std::string& s) {
  const std::size_t slash = s.rfind('/');
  return slash == std::string::npos ? s : s.substr(slash + 1);
}

// A command that runs a command built at run time.
bool runs_built_command(const ShellPart& part, const std::vector<std::size_t>& forms) {
  static constexpr std::array<std::string_view, 7> kRunners = {"sudo",  "doas",     "su",   "xargs",
                                                               "watch", "parallel", "flock"};
  for (std::size_t from : forms) {
    const std::size_t c = command_word(part, from);
    if (c >= part.tokens.size() || part.tokens[c].word.opaque) continue;
    const std::string name = base_name(part.tokens[c].word.value);
    for (auto r : kRunners)
      if (name == r) return true;
    if (name == "find") {
      for (std::size_t k = c + 1; k < part.tokens.size(); ++k) {
        const auto& v = part.tokens[k].word.value;
        if (v == "-exec" || v == "-execdir" || v == "-ok" || v == "-okdir") return true;
      }
    }
  }
  return false;
}

std::string escape_glob(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '*' || c == '?' || c == '[' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

// The absolute paths a word names from `dir` (a glob expanded against the file system).
std::vector<std::string> word_paths(const ShellWord& w, std::string_view value,
                                    std::string_view pattern, const std::string& dir,
                                    const std::string& home) {
  std::vector<std::string> out;
  if (w.glob) {
    std::string pat(pattern);
    if (pat.empty() || pat.front() != '/') pat = escape_glob(dir) + "/" + pat;
    glob_t g{};
    if (::glob(pat.c_str(), 0, nullptr, &g) == 0) {
      for (std::size_t i = 0; i < g.gl_pathc; ++i)
        out.push_back(join_path("/", g.gl_pathv[i], home));
    }
    ::globfree(&g);
    if (!out.empty()) return out;
  }
  out.push_back(join_path(dir, value, home));
  return out;
}

struct PathHit {
  bool denied = false;
  const Rule* ask = nullptr;
};

// The directory a part's relative paths start from, its real path and its listing, read at
// most once per judgement and directory, when a path word needs its real path.
struct PartDir {
  std::string dir, real_dir;
  const DirIndex* index = nullptr;
  bool fetched = false;
  std::shared_ptr<const DirListing> listing;

  const DirListing* names() {
    if (!fetched && index) listing = index->listing(dir);
    fetched = true;
    return listing.get();
  }
};

void check_path(const std::string& lexical, RuleTool kind, const BashRules& rules, PartDir& at,
                PathHit& hit) {
  std::string real;
  bool have_real = false;
  for (const auto& r : rules.rules) {
    if (r.kind != kind || !r.specifier || r.behavior == Behavior::allow) continue;
    bool m = path_matches(r.path, lexical, rules.home, rules.workspace);
    if (!m) {
      if (!have_real) {
        real = real_path_below(lexical, at.dir, at.real_dir, at.names());
        have_real = true;
      }
      m = real != lexical && path_matches(r.path, real, rules.home, rules.workspace);
    }
    if (!m) continue;
    if (r.behavior == Behavior::deny)
      hit.denied = true;
    else if (!hit.ask)
      hit.ask = &r;
  }
}

// The paths a part names (read rules) and writes by redirection (edit rules).
PathHit part_paths(const ShellPart& part, const BashRules& rules, PartDir& at) {
  PathHit hit;
  std::string dir = rules.workspace;
  for (const auto& cd : part.cd_path)
    dir = join_path(dir, cd, rules.home);
  if (at.dir != dir) {  // another directory than the part before
    at = PartDir{};
    at.dir = dir;
    at.index = rules.dir_index;
    at.real_dir = !rules.real_workspace ? real_path(dir)
                  : dir == rules.workspace
                      ? *rules.real_workspace
                      : real_path_below(dir, rules.workspace, *rules.real_workspace);
  }
  const std::size_t c = command_word(part);
  for (std::size_t k = 0; k < part.tokens.size(); ++k) {
    const ShellToken& t = part.tokens[k];
    if (t.word.opaque) continue;
    if (t.kind == Kind::redirect_target) {
      const std::string& op = part.tokens[k - 1].word.value;
      const bool input = op == "<" || op == "<>";
      bool output =
          op == ">" || op == ">>" || op == ">|" || op == "<>" || op == "&>" || op == "&>>";
      if (op == ">&" && t.word.value != "-" &&
          t.word.value.find_first_not_of("0123456789") != std::string::npos)
        output = true;
      if (t.word.value == "/dev/null") output = false;
      if (input && rules.read_paths)
        for (const auto& p : word_paths(t.word, t.word.value, t.word.pattern, dir, rules.home))
          check_path(p, RuleTool::read, rules, at, hit);
      if (output && rules.edit_paths)
        for (const auto& p : word_paths(t.word, t.word.value, t.word.pattern, dir, rules.home))
          check_path(p, RuleTool::edit, rules, at, hit);
      continue;
    }
    if (!rules.read_paths) continue;
    const bool assignment = t.kind == Kind::assignment;
    if (!assignment && (t.kind != Kind::word || k <= c)) continue;
    std::string_view value = t.word.value, pattern = t.word.pattern;
    const std::size_t eq = value.find('=');
    const bool named =
        assignment || (value.substr(0, 2) == "--" && eq != std::string_view::npos) ||
        (eq != std::string_view::npos && eq > 0 &&
         value.find_first_not_of(
             "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_") == eq);
    if (!assignment)
      for (const auto& p : word_paths(t.word, value, pattern, dir, rules.home))
        check_path(p, RuleTool::read, rules, at, hit);
    if (named) {
      const std::size_t peq = pattern.find('=');
      for (const auto& p : word_paths(t.word, value.substr(eq + 1),
                                      peq == std::string_view::npos ? "" : pattern.substr(peq + 1),
                                      dir, rules.home))
        check_path(p, RuleTool::read, rules, at, hit);
    }
  }
  return hit;
}

bool matches_any(const Rule& r, const std::vector<std::string>& texts) {
  for (const auto& text : texts)
    for (const auto& g : r.command)
      if (glob_matches(g, text)) return true;
  return false;
}

}  // namespace

BashJudgement judge_bash_command(std::string_view command, const BashRules& rules) {
  BashJudgement j;
  ShellAnalysis analysis = analyse_shell(command, rules.home);
  j.understood = analysis.understood;
  if (!analysis.understood) {
    // Only a deny rule on the whole text still decides (section 2.4).
    std::string whole(command);
    while (!whole.empty() && (whole.back() == ' ' || whole.back() == '\n' || whole.back() == '\t'))
      whole.pop_back();
    const std::size_t lead = whole.find_first_not_of(" \t\n");
    whole = lead == std::string::npos ? std::string() : whole.substr(lead);
    for (const auto& r : rules.rules)
      if (r.behavior == Behavior::deny && r.kind == RuleTool::bash && r.specifier &&
          matches_any(r, {whole}))
        j.denied = true;
    return j;
  }
  PartDir at;
  for (const ShellPart& part : analysis.parts) {
    const bool runs = part.test_form || command_word(part) < part.tokens.size();
    const std::vector<std::size_t> forms = forms_of(part);
    // Deny and ask rules match every form as written and decoded (policy.md 2.4.1 form d);
    // allow rules only the first, as written.
    std::vector<std::string> texts;
    for (std::size_t f : forms)
      texts.push_back(part_text(part, f));
    for (std::size_t f : forms) {
      std::string decoded = decoded_text(part, f);
      if (std::find(texts.begin(), texts.end(), decoded) == texts.end())
        texts.push_back(std::move(decoded));
    }
    PathHit paths;
    if (rules.read_paths || rules.edit_paths) paths = part_paths(part, rules, at);
    bool denied = paths.denied;
    const Rule* ask = paths.ask;
    for (const auto& r : rules.rules) {
      if (r.kind != RuleTool::bash || !r.specifier || r.behavior == Behavior::allow) continue;
      if (!matches_any(r, texts)) continue;
      if (r.behavior == Behavior::deny)
        denied = true;
      else if (!ask)
        ask = &r;
    }
    if (denied) {
      j.denied = true;
      continue;
    }
    if (ask && !j.ask_rule) j.ask_rule = ask;
    if (!runs) continue;
    ++j.part_count;
    bool uncertain = part.uncertain || (rules.read_paths && !part.cwd_known);
    if (rules.patterns && !uncertain) {
      uncertain = runs_built_command(part, forms);
      if (!uncertain && any_opaque(part)) {
        for (std::size_t f : forms) {
          const TextGlob g = opaque_glob(part, f);
          for (const auto& r : rules.rules) {
            if (r.kind != RuleTool::bash || !r.specifier || r.behavior == Behavior::allow) continue;
            for (const auto& pattern : r.command)
              uncertain = uncertain || globs_intersect(g, pattern);
          }
        }
      }
    }
    if (uncertain) {
      j.uncertain = true;
      j.asking.push_back(texts.front());
    }
    bool allowed = false;
    for (const auto& r : rules.rules)
      if (r.kind == RuleTool::bash && r.specifier && r.behavior == Behavior::allow &&
          matches_any(r, {texts.front()}))
        allowed = true;
    if (!allowed || uncertain) j.unallowed.push_back(texts.front());
  }
  return j;
}

}  // namespace rebound::policy
