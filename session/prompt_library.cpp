#include "session/prompt_library.h"

#include <algorithm>

#include <cstdint>

#include "session/session_tree.h"

namespace rebound::session {

using protocol::Json;

namespace {

std::string normalise_newlines(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\r') {
      out += '\n';
      if (i + 1 < text.size() && text[i + 1] == '\n') ++i;
    } else {
      out += text[i];
    }
  }
  return out;
}

std::string_view trim_blanks(std::string_view s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string_view::npos) return {};
  const auto e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

std::string unquote(std::string_view v) {
  if (v.size() >= 2 && v.front() == '\'' && v.back() == '\'') {
    std::string out;
    const std::string_view inner = v.substr(1, v.size() - 2);
    for (std::size_t i = 0; i < inner.size(); ++i) {
      out += inner[i];
      if (inner[i] == '\'' && i + 1 < inner.size() && inner[i + 1] == '\'') ++i;
    }
    return out;
  }
  if (v.size() >= 2 && v.front() == '"' && v.back() == '"') {
    std::string out;
    const std::string_view inner = v.substr(1, v.size() - 2);
    for (std::size_t i = 0; i < inner.size(); ++i) {
      if (inner[i] != '\\' || i + 1 == inner.size()) {
        out += inner[i];
        continue;
      }
      const char n = inner[++i];
      out += n == 'n' ? '\n' : n == 't' ? '\t' : n;
    }
    return out;
  }
  return std::string(v);
}

// The number of bytes of the first `count` code points of UTF-8 `s` (all of it when shorter).
std::size_t code_point_prefix(std::string_view s, std::size_t count) {
  std::size_t at = 0;
  for (std::size_t n = 0; at < s.size() && n < count; ++n) {
    ++at;
    while (at < s.size() && (static_cast<unsigned char>(s[at]) & 0xC0) == 0x80)
      ++at;
  }
  return at;
}

std::string join(const std::vector<std::string>& args, std::size_t from, std::size_t count) {
  std::string out;
  for (std::size_t i = from; i < args.size() && i - from < count; ++i) {
    if (i > from) out += ' ';
    out += args[i];
  }
  return out;
}

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

// Reads decimal digits at `s[at]`; the value (saturated) and the position after them.
std::pair<std::size_t, std::size_t> read_number(std::string_view s, std::size_t at) {
  std::size_t value = 0;
  while (at < s.size() && is_digit(s[at])) {
    value = value > 100000000 ? value : value * 10 + static_cast<std::size_t>(s[at] - '0');
    ++at;
  }
  return {value, at};
}

// `/<prefix><name>` at the start of `text`, the name ended by the end, a space or a line feed:
// the name and the position of what ends it.
std::optional<std::pair<std::string, std::size_t>> command_name(std::string_view text,
                                                                std::string_view prefix) {
  if (text.size() < 1 + prefix.size() || text[0] != '/' || text.substr(1, prefix.size()) != prefix)
    return std::nullopt;
  const std::size_t start = 1 + prefix.size();
  std::size_t end = text.find_first_of(" \n", start);
  if (end == std::string_view::npos) end = text.size();
  if (end == start) return std::nullopt;
  return std::make_pair(std::string(text.substr(start, end - start)), end);
}

Json source_info(const PromptSource& w) {
  Json j = Json::object();
  j["path"] = w.path;
  j["source"] = w.source;
  j["scope"] = w.scope;
  j["origin"] = "top-level";
  j["baseDir"] = w.base_dir;
  return j;
}

}  // namespace

Frontmatter parse_frontmatter(std::string_view raw) {
  Frontmatter fm;
  std::string text = normalise_newlines(raw);
  const auto first_end = text.find('\n');
  if (first_end == std::string::npos ||
      trim_blanks(std::string_view(text).substr(0, first_end)) != "---" ||
      text.compare(0, 3, "---") != 0) {
    fm.body = std::move(text);
    return fm;
  }
  std::size_t pos = first_end + 1;
  std::vector<std::string_view> lines;
  std::optional<std::size_t> body_at;
  const std::string_view view(text);
  while (pos <= view.size()) {
    auto lf = view.find('\n', pos);
    const bool last = lf == std::string_view::npos;
    const std::string_view line = view.substr(pos, (last ? view.size() : lf) - pos);
    if (trim_blanks(line) == "---" && line.substr(0, 3) == "---") {
      body_at = last ? view.size() : lf + 1;
      break;
    }
    lines.push_back(line);
    if (last) break;
    pos = lf + 1;
  }
  if (!body_at) {  // no closing line: all of it is body
    fm.body = std::move(text);
    return fm;
  }
  fm.present = true;
  for (std::string_view line : lines) {
    if (line.empty() || line[0] == ' ' || line[0] == '\t' || line[0] == '#') continue;
    const auto colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string key(trim_blanks(line.substr(0, colon)));
    if (key.empty()) continue;
    fm.values[key] = unquote(trim_blanks(line.substr(colon + 1)));
  }
  fm.body = text.substr(*body_at);
  return fm;
}

std::string template_description(const Frontmatter& fm) {
  if (auto it = fm.values.find("description"); it != fm.values.end() && !it->second.empty())
    return it->second;
  std::string_view body(fm.body);
  while (!body.empty()) {
    const auto lf = body.find('\n');
    const std::string_view line = trim_blanks(body.substr(0, lf));
    if (!line.empty()) {
      const std::size_t cut = code_point_prefix(line, 60);
      if (cut == line.size()) return std::string(line);
      return std::string(line.substr(0, cut)) + "...";
    }
    if (lf == std::string_view::npos) break;
    body.remove_prefix(lf + 1);
  }
  return "";
}

std::vector<std::string> split_template_args(std::string_view line) {
  std::vector<std::string> out;
  std::string current;
  bool started = false;
  char quote = 0;
  for (char c : line) {
    if (quote) {
      if (c == quote) {
        quote = 0;
      } else {
        current += c;
      }
    } else if (c == '"' || c == '\'') {
      quote = c;
      started = true;
    } else if (c == ' ' || c == '\t') {
      if (started) out.push_back(std::move(current));
      current.clear();
      started = false;
    } else {
      current += c;
      started = true;
    }
  }
  if (started) out.push_back(std::move(current));
  return out;
}

constexpr std::size_t kMinExpansionLimit = 1024 * 1024;

std::string substitute_template_args(std::string_view body, const std::vector<std::string>& args,
                                     std::size_t max_bytes) {
  std::string out;
  out.reserve(std::min(body.size(), max_bytes));
  const std::size_t all = args.size();
  for (std::size_t i = 0; i < body.size() && out.size() <= max_bytes;) {
    if (body[i] != '$') {
      out += body[i++];
      continue;
    }
    const std::string_view rest = body.substr(i);
    if (rest.substr(0, 10) == "$ARGUMENTS") {
      out += join(args, 0, all);
      i += 10;
    } else if (rest.substr(0, 2) == "$@") {
      out += join(args, 0, all);
      i += 2;
    } else if (rest.size() > 1 && is_digit(rest[1])) {
      const auto [n, end] = read_number(body, i + 1);
      if (n >= 1 && n <= all) out += args[n - 1];
      i = end;
    } else if (rest.substr(0, 4) == "${@:" && rest.size() > 4 && is_digit(rest[4])) {
      auto [n, at] = read_number(body, i + 4);
      std::size_t count = all;
      bool ok = true;
      if (at < body.size() && body[at] == ':') {
        if (at + 1 < body.size() && is_digit(body[at + 1])) {
          std::tie(count, at) = read_number(body, at + 1);
        } else {
          ok = false;
        }
      }
      if (!ok || at >= body.size() || body[at] != '}') {
        out += body[i++];
        continue;
      }
      const std::size_t from = n == 0 ? 0 : n - 1;
      out += join(args, from, count);
      i = at + 1;
    } else {
      out += body[i++];
    }
  }
  return out;
}

std::string xml_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::optional<std::string> PromptLibrary::expand(std::string_view text, const ReadText& read,
                                                 std::string* warning) const {
  if (auto skill = command_name(text, "skill:")) {
    for (const Skill& s : skills_) {
      if (s.name != skill->first) continue;
      const auto file = read ? read(s.where.path) : std::nullopt;
      if (!file) {
        if (warning) *warning = "cannot read the skill file " + s.where.path;
        return std::nullopt;
      }
      std::string out = "<skill name=\"" + xml_escape(s.name) + "\" location=\"" +
                        xml_escape(s.where.path) + "\">\nReferences are relative to " + s.dir +
                        ".\n\n" + trim_unicode_space(parse_frontmatter(*file).body) + "\n</skill>";
      const std::string rest =
          skill->second < text.size() ? trim_unicode_space(text.substr(skill->second + 1)) : "";
      if (!rest.empty()) out += "\n\n" + rest;
      return out;
    }
    return std::nullopt;
  }
  const auto name = command_name(text, "");
  if (!name) return std::nullopt;
  for (const PromptTemplate& t : templates_) {
    if (t.name != name->first) continue;
    const std::size_t end = name->second;
    const auto lf = text.find('\n', end);
    std::string_view first_line;
    if (end < text.size() && text[end] == ' ')
      first_line = text.substr(end + 1, lf == std::string_view::npos ? text.npos : lf - end - 1);
    // Bounded (issue 50: a 100 KB template of `$ARGUMENTS` became a 50 MB message): at most
    // four times what the template and the typed text hold together, or 1 MiB.
    const std::size_t limit =
        std::max<std::size_t>(kMinExpansionLimit, 4 * (t.body.size() + text.size()));
    std::string out = substitute_template_args(t.body, split_template_args(first_line), limit);
    if (out.size() > limit) {
      if (warning)
        *warning =
            "the template /" + t.name + " expands to more than " + std::to_string(limit) + " bytes";
      return std::nullopt;
    }
    if (lf != std::string_view::npos) out += text.substr(lf);
    return out;
  }
  return std::nullopt;
}

std::string PromptLibrary::skills_block() const {
  std::string xml;
  for (const Skill& s : skills_) {
    if (s.hidden) continue;
    xml += "  <skill>\n    <name>" + xml_escape(s.name) + "</name>\n    <description>" +
           xml_escape(s.description) + "</description>\n    <location>" + xml_escape(s.where.path) +
           "</location>\n  </skill>\n";
  }
  if (xml.empty()) return "";
  return "\n\n# Skills\n\nSkills hold instructions for particular tasks. When a task matches a "
         "skill's description, use the read tool to read its file first and follow it. Resolve "
         "relative paths in a skill file against the folder that holds "
         "it.\n\n<available_skills>\n" +
         xml + "</available_skills>";
}

std::vector<Json> PromptLibrary::command_entries() const {
  std::vector<Json> out;
  for (const PromptTemplate& t : templates_) {
    Json j = Json::object();
    j["name"] = t.name;
    j["description"] = t.description;
    j["source"] = "prompt";
    j["sourceInfo"] = source_info(t.where);
    out.push_back(std::move(j));
  }
  for (const Skill& s : skills_) {
    Json j = Json::object();
    j["name"] = "skill:" + s.name;
    j["description"] = s.description;
    j["source"] = "skill";
    j["sourceInfo"] = source_info(s.where);
    out.push_back(std::move(j));
  }
  return out;
}

std::vector<Json> PromptLibrary::acp_commands() const {
  std::vector<Json> out;
  for (const PromptTemplate& t : templates_) {
    Json j = Json::object();
    j["name"] = t.name;
    j["description"] = t.description;
    if (!t.argument_hint.empty()) j["input"] = Json{{"hint", t.argument_hint}};
    out.push_back(std::move(j));
  }
  for (const Skill& s : skills_) {
    Json j = Json::object();
    j["name"] = "skill:" + s.name;
    j["description"] = s.description;
    out.push_back(std::move(j));
  }
  return out;
}

}  // namespace rebound::session
