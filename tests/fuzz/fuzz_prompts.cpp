// Prompt templates, skills and the HTML export (sessions.md sections 9, 10 and 12): any bytes as
// a template or skill file and as a message naming it, and as assistant Markdown in a page.
// Invariants: frontmatter never loses the body of a file without its closing line; an argument
// is substituted literally (never scanned again); a message that names nothing is unchanged;
// the page never holds a script, an event handler or a URL outside the page, whatever the text.

#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "export/html_export.h"
#include "session/prompt_library.h"
#include "tests/fuzz/split_input.h"

using namespace rebound;

namespace {

// Every `<` of the output starts a real tag (text escapes its own): each tag must be one the
// page uses, with only its attributes; a `src` is a data: URL. No script, handler or link.
bool only_safe_tags(const std::string& html) {
  static const std::set<std::string> tags{
      "!DOCTYPE", "html", "head",    "meta",    "title", "style",      "body", "header", "h1",
      "h2",       "h3",   "h4",      "h5",      "h6",    "dl",         "dt",   "dd",     "main",
      "section",  "div",  "details", "summary", "pre",   "code",       "p",    "em",     "strong",
      "br",       "hr",   "ul",      "ol",      "li",    "blockquote", "img",  "footer"};
  static const std::set<std::string> attributes{
      "class", "id", "alt", "src", "start", "lang", "charset", "http-equiv", "content", "name"};
  for (std::size_t at = html.find('<'); at != std::string::npos; at = html.find('<', at + 1)) {
    const std::size_t end = html.find('>', at);
    if (end == std::string::npos) return false;
    std::string tag = html.substr(at + 1, end - at - 1);
    if (!tag.empty() && tag[0] == '/') tag.erase(0, 1);
    const std::string name = tag.substr(0, tag.find(' '));
    if (!tags.count(name)) return false;
    // Attributes: name="value" pairs (values never hold a raw `"`).
    for (std::size_t pos = tag.find(' '); pos != std::string::npos && pos < tag.size();) {
      const std::size_t eq = tag.find("=\"", pos);
      if (eq == std::string::npos) break;
      const std::string attr = tag.substr(pos + 1, eq - pos - 1);
      const std::size_t close = tag.find('"', eq + 2);
      if (close == std::string::npos || !attributes.count(attr)) return false;
      if (attr == "src" && tag.compare(eq + 2, 5, "data:") != 0) return false;
      pos = close + 1;
    }
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto parts = fuzz::split_at_nul(data, size, 2);
  const std::string file = parts[0];
  const std::string message = parts.size() > 1 ? parts[1] : std::string();

  const session::Frontmatter fm = session::parse_frontmatter(file);
  if (!fm.present && fm.body.size() > file.size()) std::abort();

  // Arguments are substituted literally: a marker argument shows up whole or not at all.
  const auto args = session::split_template_args(message.substr(0, message.find('\n')));
  const std::string body = session::substitute_template_args(fm.body, args);
  (void)body;
  const std::vector<std::string> marker{"$1$@${@:1}"};
  const std::string once = session::substitute_template_args("[$1]", marker);
  if (once != "[$1$@${@:1}]") std::abort();

  session::PromptTemplate t;
  t.name = "t";
  t.body = fm.body;
  session::Skill s;
  s.name = "s";
  s.description = "d";
  s.dir = "/skills/s";
  s.where.path = "/skills/s/SKILL.md";
  session::PromptLibrary library({t}, {s});
  const auto read = [&file](const std::string&) { return std::optional<std::string>(file); };
  const auto expanded = library.expand(message, read);
  const bool names = message.rfind("/t", 0) == 0 || message.rfind("/skill:s", 0) == 0;
  if (expanded && !names) std::abort();

  exporter::ExportPage page;
  page.title = message;
  page.session_id = "id";
  auto m = protocol::Json::object();
  m["role"] = "assistant";
  m["content"] = protocol::Json::array(
      {protocol::Json{{"type", "text"},
                      {"text", protocol::Json(file).dump(
                                   -1, ' ', false, protocol::Json::error_handler_t::replace)}}});
  page.entries.push_back(protocol::Json{
      {"type", "message"}, {"id", "a"}, {"parentId", nullptr}, {"timestamp", "t"}, {"message", m}});
  const std::string markdown = exporter::render_markdown(file);
  const std::string html = exporter::render_html(page);
  if (!only_safe_tags(markdown) || !only_safe_tags(html)) std::abort();
  return 0;
}
