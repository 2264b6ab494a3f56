#include "tools/glob.h"

namespace rebound::tools {

namespace {

void literal_char(std::string& out, char c) {
  if (std::string_view("\\^$.|?*+()[]{}/#- ").find(c) != std::string_view::npos) out += '\\';
  out += c;
}

// Appends the class starting at glob[i] == '['; returns the index after it, or npos when the
// class is not closed (the '[' is then literal).
std::size_t append_class(std::string_view glob, std::size_t i, std::string& out) {
  std::size_t j = i + 1;
  std::string cls = "(?!/)[";
  if (j < glob.size() && (glob[j] == '!' || glob[j] == '^')) {
    cls += '^';
    ++j;
  }
  bool first = true;
  for (; j < glob.size(); ++j) {
    const char c = glob[j];
    if (c == ']' && !first) {
      out += cls + "]";
      return j + 1;
    }
    first = false;
    if (c == '\\' && j + 1 < glob.size()) {
      ++j;
      cls += '\\';
      cls += glob[j];
    } else if (c == '\\' || c == '[' || c == ']' || c == '^') {
      cls += '\\';
      cls += c;
    } else {
      cls += c;
    }
  }
  return std::string_view::npos;
}

}  // namespace

std::string glob_to_regex(std::string_view glob, bool braces) {
  std::string out = "\\A(?:";
  int depth = 0;  // open braces
  for (std::size_t i = 0; i < glob.size(); ++i) {
    const char c = glob[i];
    if (c == '*') {
      if (i + 1 < glob.size() && glob[i + 1] == '*') {
        const bool at_start = i == 0 || glob[i - 1] == '/';
        std::size_t j = i;
        while (j < glob.size() && glob[j] == '*')
          ++j;
        if (at_start && j < glob.size() && glob[j] == '/') {
          out += "(?:.*/)?";  // `**/`: any directories, none included
          i = j;              // the '/' is consumed
        } else if (at_start && j == glob.size()) {
          out += ".*";
          i = j - 1;
        } else {
          out += "[^/]*";  // `**` inside a name is a plain `*`
          i = j - 1;
        }
      } else {
        out += "[^/]*";
      }
    } else if (c == '?') {
      out += "[^/]";
    } else if (c == '[') {
      const std::size_t next = append_class(glob, i, out);
      if (next == std::string_view::npos) {
        out += "\\[";
      } else {
        i = next - 1;
      }
    } else if (c == '\\') {
      if (i + 1 < glob.size())
        literal_char(out, glob[++i]);
      else
        out += "\\\\";
    } else if (braces && c == '{') {
      out += "(?:";
      ++depth;
    } else if (braces && c == '}' && depth > 0) {
      out += ")";
      --depth;
    } else if (braces && c == ',' && depth > 0) {
      out += "|";
    } else {
      literal_char(out, c);
    }
  }
  while (depth-- > 0)
    out += ")";
  out += ")\\z";
  return out;
}

session::Result<PathGlob> PathGlob::compile(std::string_view glob) {
  PathGlob g;
  std::string pattern(glob);
  if (pattern.find('/') == std::string::npos) {
    g.base_name_ = true;
  } else if (pattern.rfind("**/", 0) != 0) {
    if (pattern.front() == '/')
      pattern.erase(0, 1);
    else
      pattern = "**/" + pattern;
  }
  auto regex = Regex::compile(glob_to_regex(pattern, true), {false, false, false});
  if (!regex) return regex.error();
  g.regex_ = std::move(*regex);
  return g;
}

bool PathGlob::matches(std::string_view rel_path, Matcher& matcher) const {
  if (base_name_) {
    const std::size_t slash = rel_path.rfind('/');
    if (slash != std::string_view::npos) rel_path.remove_prefix(slash + 1);
  }
  return matcher.matches(rel_path);
}

std::vector<IgnoreRule> parse_ignore_file(std::string_view text) {
  std::vector<IgnoreRule> rules;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) nl = text.size();
    std::string line(text.substr(start, nl - start));
    start = nl + 1;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    // Trailing blanks are dropped unless escaped.
    while (!line.empty() && line.back() == ' ' &&
           !(line.size() >= 2 && line[line.size() - 2] == '\\'))
      line.pop_back();
    if (line.empty() || line.front() == '#') continue;
    IgnoreRule rule;
    if (line.front() == '!') {
      rule.negate = true;
      line.erase(0, 1);
    } else if (line.rfind("\\!", 0) == 0 || line.rfind("\\#", 0) == 0) {
      line.erase(0, 1);
    }
    if (!line.empty() && line.back() == '/') {
      rule.dir_only = true;
      while (!line.empty() && line.back() == '/')
        line.pop_back();
    }
    if (line.empty()) continue;
    // A slash at the start or in the middle anchors the pattern to the file's directory.
    if (line.find('/') != std::string::npos) {
      if (line.front() == '/') line.erase(0, 1);
    } else {
      line = "**/" + line;
    }
    if (auto regex = Regex::compile(glob_to_regex(line, false), {false, false, false})) {
      rule.regex = std::move(*regex);
      rules.push_back(std::move(rule));
    }
  }
  return rules;
}

}  // namespace rebound::tools
