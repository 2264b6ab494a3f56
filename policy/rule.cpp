#include "policy/rule.h"

#include <fnmatch.h>
#include <sys/stat.h>

#include <algorithm>
#include <array>

namespace rebound::policy {

namespace {

bool is_blank(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_blank(s.front()))
    s.remove_prefix(1);
  while (!s.empty() && is_blank(s.back()))
    s.remove_suffix(1);
  return s;
}

// `\*` a literal star, `*` the wildcard; every other character itself.
TextGlob compile_glob(std::string_view s) {
  TextGlob g;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size() && s[i + 1] == '*') {
      g.push_back('*');
      ++i;
    } else if (s[i] == '*') {
      if (g.empty() || g.back() != kStar) g.push_back(kStar);
    } else {
      g.push_back(static_cast<unsigned char>(s[i]));
    }
  }
  return g;
}

std::optional<std::string> bash_specifier_error(std::string_view spec) {
  const std::size_t colon = spec.find(":*");
  if (colon != std::string_view::npos && colon + 2 != spec.size())
    return "':*' must end the specifier";
  char quote = 0;
  for (std::size_t i = 0; i < spec.size(); ++i) {
    const char c = spec[i];
    if (quote) {
      if (c == quote)
        quote = 0;
      else if (c == '\\' && quote == '"')
        ++i;
      continue;
    }
    if (c == '\\') {
      ++i;
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == ';' || c == '|' || c == '&' || c == '\n') {
      return "bash specifiers match one simple command; write one rule per command";
    }
  }
  return std::nullopt;
}

std::vector<TextGlob> compile_bash(std::string_view spec) {
  if (spec.size() >= 2 && spec.substr(spec.size() - 2) == ":*") {
    const std::string base(spec.substr(0, spec.size() - 2));
    return {compile_glob(base), compile_glob(base + " *")};
  }
  TextGlob g = compile_glob(spec);
  const auto stars = std::count(g.begin(), g.end(), kStar);
  if (stars == 1 && g.size() >= 2 && g.back() == kStar && g[g.size() - 2] == ' ') {
    TextGlob bare(g.begin(), g.end() - 2);
    return {bare, g};
  }
  return {g};
}

std::variant<PathPattern, std::string> compile_path(std::string_view spec) {
  PathPattern p;
  std::string_view rest = spec;
  if (rest.substr(0, 2) == "//") {
    p.anchor = PathPattern::Anchor::absolute;
    rest.remove_prefix(2);
  } else if (rest == "~" || rest.substr(0, 2) == "~/") {
    p.anchor = PathPattern::Anchor::home;
    rest.remove_prefix(std::min<std::size_t>(2, rest.size()));
  } else if (rest.substr(0, 2) == "./") {
    rest.remove_prefix(2);
  } else if (!rest.empty() && rest.front() == '/') {
    rest.remove_prefix(1);
  } else if (rest.find('/') == std::string_view::npos || rest.find('/') == rest.size() - 1) {
    p.anchor = PathPattern::Anchor::anywhere;
  }
  if (!rest.empty() && rest.back() == '/') {
    p.directory_only = true;
    rest.remove_suffix(1);
  }
  if (!spec.empty() && spec.front() == '!')
    return std::string("negated patterns (!) are not supported");
  std::size_t from = 0;
  while (from <= rest.size() && !rest.empty()) {
    std::size_t slash = rest.find('/', from);
    if (slash == std::string_view::npos) slash = rest.size();
    const std::string_view seg = rest.substr(from, slash - from);
    if (seg == "..") return std::string("use //absolute paths for places outside the workspace");
    if (!seg.empty() && seg != ".") {
      if (seg.front() == '!') return std::string("negated patterns (!) are not supported");
      p.segments.emplace_back(seg);
    }
    from = slash + 1;
    if (slash == rest.size()) break;
  }
  return p;
}

// `**` any number of segments (none included), else fnmatch per segment.
bool segments_match(const std::vector<std::string>& pat, std::size_t pi,
                    const std::vector<std::string_view>& path, std::size_t si) {
  while (pi < pat.size()) {
    if (pat[pi] == "**") {
      for (std::size_t k = si; k <= path.size(); ++k)
        if (segments_match(pat, pi + 1, path, k)) return true;
      return false;
    }
    if (si >= path.size()) return false;
    if (pat[pi].find_first_of("*?[\\") == std::string::npos) {
      if (pat[pi] != path[si]) return false;  // a literal segment
    } else {
      const std::string name(path[si]);
      if (::fnmatch(pat[pi].c_str(), name.c_str(), 0) != 0) return false;
    }
    ++pi;
    ++si;
  }
  return si == path.size();
}

std::vector<std::string_view> split_path(std::string_view p) {
  std::vector<std::string_view> out;
  std::size_t from = 0;
  while (from < p.size()) {
    std::size_t slash = p.find('/', from);
    if (slash == std::string_view::npos) slash = p.size();
    if (slash > from) out.push_back(p.substr(from, slash - from));
    from = slash + 1;
  }
  return out;
}

bool is_directory(std::string_view path) {
  struct stat st {};
  return ::stat(std::string(path).c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

}  // namespace

std::string_view behavior_name(Behavior b) {
  switch (b) {
    case Behavior::allow:
      return "allow";
    case Behavior::ask:
      return "ask";
    case Behavior::deny:
      return "deny";
  }
  return "allow";
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

std::string mcp_name_part(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-';
    if (!ok) c = '_';
  }
  return out;
}

bool glob_matches(const TextGlob& g, std::string_view text) {
  std::size_t gi = 0, ti = 0, star = std::string_view::npos, mark = 0;
  while (ti < text.size()) {
    if (gi < g.size() && g[gi] != kStar && g[gi] == static_cast<unsigned char>(text[ti])) {
      ++gi;
      ++ti;
    } else if (gi < g.size() && g[gi] == kStar) {
      star = gi++;
      mark = ti;
    } else if (star != std::string_view::npos) {
      gi = star + 1;
      ti = ++mark;
    } else {
      return false;
    }
  }
  while (gi < g.size() && g[gi] == kStar)
    ++gi;
  return gi == g.size();
}

bool globs_intersect(const TextGlob& a, const TextGlob& b) {
  // reach[i][j]: the prefixes a[..i) and b[..j) can produce one same string.
  const std::size_t n = a.size(), m = b.size();
  std::vector<char> reach((n + 1) * (m + 1), 0);
  auto at = [&](std::size_t i, std::size_t j) -> char& { return reach[i * (m + 1) + j]; };
  at(0, 0) = 1;
  for (std::size_t i = 0; i <= n; ++i) {
    for (std::size_t j = 0; j <= m; ++j) {
      if (!at(i, j)) continue;
      if (i < n && a[i] == kStar) at(i + 1, j) = 1;  // the star produces nothing more
      if (j < m && b[j] == kStar) at(i, j + 1) = 1;
      if (i < n && j < m) {
        if (a[i] == kStar && b[j] == kStar) {
          at(i + 1, j + 1) = 1;
        } else if (a[i] == kStar) {
          at(i, j + 1) = 1;  // a's star takes b's character
        } else if (b[j] == kStar) {
          at(i + 1, j) = 1;
        } else if (a[i] == b[j]) {
          at(i + 1, j + 1) = 1;
        }
      }
    }
  }
  return at(n, m) != 0;
}

bool is_foreign_tool(std::string_view name) {
  static constexpr std::array<std::string_view, 12> kForeign = {
      "webfetch",  "websearch",  "notebookedit", "notebookread", "task",  "agent",
      "todowrite", "bashoutput", "killshell",    "exitplanmode", "skill", "slashcommand"};
  const std::string l = lower(name);
  return std::find(kForeign.begin(), kForeign.end(), l) != kForeign.end();
}

session::Result<Rule> parse_rule(std::string_view text, Behavior behavior,
                                 const RuleSyntax& syntax) {
  Rule rule;
  rule.behavior = behavior;
  const std::string_view t = trim(text);
  rule.text = std::string(t);
  const std::size_t open = t.find('(');
  const std::size_t close = t.find(')');
  std::string_view name = t;
  if (open == std::string_view::npos) {
    if (close != std::string_view::npos)
      return session::failure(std::string("unbalanced parentheses"));
  } else {
    name = t.substr(0, open);
    if (t.back() != ')') {
      return session::failure(
          std::string(t.rfind(')') != std::string_view::npos && t.rfind(')') > open
                          ? "text after the closing parenthesis"
                          : "unbalanced parentheses"));
    }
    rule.specifier = std::string(t.substr(open + 1, t.size() - open - 2));
  }
  name = trim(name);
  if (name.empty()) return session::failure(std::string("empty tool name"));
  if (rule.specifier && rule.specifier->empty())
    return session::failure(std::string("empty specifier"));
  const std::string l = lower(name);
  if (l == "bash") {
    rule.kind = RuleTool::bash;
  } else if (l == "read") {
    rule.kind = RuleTool::read;
  } else if (l == "edit" || l == "multiedit") {
    rule.kind = RuleTool::edit;
  } else if (l == "write") {
    rule.kind = RuleTool::write;
  } else if (l == "grep") {
    rule.kind = RuleTool::grep;
  } else if (l == "find" || l == "glob") {
    rule.kind = RuleTool::find;
  } else if (l == "ls") {
    rule.kind = RuleTool::ls;
  } else if (l.rfind("mcp__", 0) == 0) {
    if (rule.specifier) return session::failure(std::string(name) + " takes no specifier");
    const std::string_view rest = name.substr(5);
    const std::size_t sep = rest.find("__");
    if (rest.empty()) return session::failure(std::string("empty MCP server name"));
    if (sep == std::string_view::npos) {
      if (rest.find('*') != std::string_view::npos)
        return session::failure(std::string("'*' is allowed only as mcp__<server>__*"));
      rule.kind = RuleTool::mcp_server;
    } else if (rest.substr(sep + 2) == "*") {
      if (rest.substr(0, sep).find('*') != std::string_view::npos || sep == 0)
        return session::failure(std::string("'*' is allowed only as mcp__<server>__*"));
      rule.kind = RuleTool::mcp_server;
    } else {
      if (rest.find('*') != std::string_view::npos)
        return session::failure(std::string("'*' is allowed only as mcp__<server>__*"));
      rule.kind = RuleTool::mcp_tool;
    }
    rule.tool =
        rule.kind == RuleTool::mcp_server
            ? "mcp__" + std::string(sep == std::string_view::npos ? rest : rest.substr(0, sep))
            : std::string(name);
    return rule;
  } else if (is_foreign_tool(name)) {
    rule.kind = RuleTool::foreign;
    rule.tool = std::string(name);
    return rule;
  } else if (syntax.extensions_configured &&
             name.find_first_of(" \t*()") == std::string_view::npos) {
    if (rule.specifier) return session::failure(std::string(name) + " takes no specifier");
    rule.kind = RuleTool::extension;
    rule.tool = std::string(name);
    return rule;
  } else {
    return session::failure("unknown tool " + std::string(name));
  }
  static constexpr std::array<std::string_view, 7> kNames = {"bash", "read", "edit", "write",
                                                             "grep", "find", "ls"};
  rule.tool = std::string(kNames[static_cast<std::size_t>(rule.kind)]);
  if (!rule.specifier) return rule;
  if (rule.kind == RuleTool::bash) {
    if (*rule.specifier == "*") {
      rule.specifier.reset();  // Bash(*) is Bash
      return rule;
    }
    if (auto problem = bash_specifier_error(*rule.specifier)) return session::failure(*problem);
    rule.command = compile_bash(*rule.specifier);
    return rule;
  }
  auto path = compile_path(*rule.specifier);
  if (auto* problem = std::get_if<std::string>(&path)) return session::failure(std::move(*problem));
  rule.path = std::move(std::get<PathPattern>(path));
  return rule;
}

std::vector<std::string> split_rule_list(std::string_view list) {
  std::vector<std::string> out;
  std::string item;
  int depth = 0;
  for (char c : list) {
    if (c == '(') ++depth;
    if (c == ')' && depth > 0) --depth;
    if (depth == 0 && (c == ',' || c == ' ' || c == '\t' || c == '\n')) {
      if (!item.empty()) out.push_back(std::move(item));
      item.clear();
      continue;
    }
    item += c;
  }
  if (!item.empty()) out.push_back(std::move(item));
  return out;
}

void anchor_pattern(PathPattern& pattern, const std::string& home, const std::string& workspace) {
  std::vector<std::string> full;
  const auto add_base = [&full](std::string_view base) {
    for (auto seg : split_path(base))
      full.emplace_back(seg);
  };
  switch (pattern.anchor) {
    case PathPattern::Anchor::absolute:
      break;
    case PathPattern::Anchor::home:
      add_base(home);
      break;
    case PathPattern::Anchor::workspace:
      add_base(workspace);
      break;
    case PathPattern::Anchor::anywhere:
      add_base(workspace);
      full.emplace_back("**");
      break;
  }
  full.insert(full.end(), pattern.segments.begin(), pattern.segments.end());
  pattern.globstar = std::find(full.begin(), full.end(), "**") != full.end();
  pattern.anchored = std::move(full);
  pattern.is_anchored = true;
}

bool path_matches(const PathPattern& given, std::string_view path, const std::string& home,
                  const std::string& workspace) {
  PathPattern local;
  const PathPattern* pattern = &given;
  if (!given.is_anchored) {
    local = given;
    anchor_pattern(local, home, workspace);
    pattern = &local;
  }
  const std::vector<std::string>& full = pattern->anchored;
  const std::vector<std::string_view> segs = split_path(path);
  // The path itself, then each ancestor (a matched directory covers what lies below it).
  // Without `**` only the prefix as long as the pattern can match.
  std::size_t longest = segs.size(), shortest = 0;
  if (!pattern->globstar) {
    if (full.size() > segs.size()) return false;
    longest = shortest = full.size();
  }
  for (std::size_t n = longest + 1; n-- > shortest;) {
    const std::vector<std::string_view> prefix(segs.begin(), segs.begin() + static_cast<long>(n));
    if (!segments_match(full, 0, prefix, 0)) continue;
    if (!pattern->directory_only || n < segs.size()) return true;
    if (is_directory(path)) return true;
  }
  return false;
}

}  // namespace rebound::policy
