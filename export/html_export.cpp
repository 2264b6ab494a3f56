#include "export/html_export.h"
#include "protocol/json_line.h"

#include <cmark.h>

#include <cstdint>
#include <memory>

namespace rebound::exporter {

using protocol::Json;

namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";

// The length of the well-formed UTF-8 sequence at `s[i]` (not NUL), or 0.
std::size_t valid_sequence(std::string_view s, std::size_t i) {
  const auto b = static_cast<unsigned char>(s[i]);
  if (b == 0) return 0;
  if (b < 0x80) return 1;
  std::size_t len = 0;
  std::uint32_t c = 0;
  if ((b & 0xE0) == 0xC0) {
    len = 2;
    c = b & 0x1F;
  } else if ((b & 0xF0) == 0xE0) {
    len = 3;
    c = b & 0x0F;
  } else if ((b & 0xF8) == 0xF0) {
    len = 4;
    c = b & 0x07;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  for (std::size_t k = 1; k < len; ++k) {
    const auto n = static_cast<unsigned char>(s[i + k]);
    if ((n & 0xC0) != 0x80) return 0;
    c = (c << 6) | (n & 0x3F);
  }
  const std::uint32_t min = len == 2 ? 0x80 : len == 3 ? 0x800 : 0x10000;
  if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) return 0;
  return len;
}

std::string attr(std::string_view text) {
  return escape_html(text, true);
}

const std::string& text_of(const Json& j, const char* key) {
  static const std::string kNone;
  if (!j.is_object()) return kNone;
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get_ref<const std::string&>() : kNone;
}

const Json& member(const Json& j, const char* key) {
  static const Json kNull;
  if (!j.is_object()) return kNull;
  const auto it = j.find(key);
  return it == j.end() ? kNull : *it;
}

bool is_base64(std::string_view s) {
  for (char c : s) {
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                    c == '+' || c == '/' || c == '=';
    if (!ok) return false;
  }
  return true;
}

std::string image_html(const Json& block) {
  const std::string& mime = text_of(block, "mimeType");
  const std::string& data = text_of(block, "data");
  const bool known =
      mime == "image/png" || mime == "image/jpeg" || mime == "image/gif" || mime == "image/webp";
  if (!known || !is_base64(data)) return "<div class=\"text\">[image omitted]</div>";
  return "<img alt=\"image\" src=\"data:" + mime + ";base64," + data + "\">";
}

// A code fence's language when it is one word of [A-Za-z0-9_+-].
std::string fence_language(const char* info) {
  std::string word;
  for (const char* p = info ? info : ""; *p && *p != ' ' && *p != '\t'; ++p)
    word += *p;
  if (word.empty()) return "";
  for (char c : word) {
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '+' || c == '-';
    if (!ok) return "";
  }
  return word;
}

void render_node(cmark_node* node, cmark_event_type ev, std::string& out) {
  const bool enter = ev == CMARK_EVENT_ENTER;
  const char* literal = cmark_node_get_literal(node);
  const std::string_view lit = literal ? literal : "";
  switch (cmark_node_get_type(node)) {
    case CMARK_NODE_BLOCK_QUOTE:
      out += enter ? "<blockquote>" : "</blockquote>";
      break;
    case CMARK_NODE_LIST: {
      const bool ordered = cmark_node_get_list_type(node) == CMARK_ORDERED_LIST;
      if (!enter) {
        out += ordered ? "</ol>" : "</ul>";
      } else if (ordered && cmark_node_get_list_start(node) != 1) {
        out += "<ol start=\"" + std::to_string(cmark_node_get_list_start(node)) + "\">";
      } else {
        out += ordered ? "<ol>" : "<ul>";
      }
      break;
    }
    case CMARK_NODE_ITEM:
      out += enter ? "<li>" : "</li>";
      break;
    case CMARK_NODE_CODE_BLOCK: {
      const std::string lang = fence_language(cmark_node_get_fence_info(node));
      out += lang.empty() ? "<pre><code>" : "<pre><code class=\"language-" + lang + "\">";
      out += escape_html(lit);
      out += "</code></pre>";
      break;
    }
    case CMARK_NODE_HTML_BLOCK:  // shown as typed
      out += "<p class=\"raw\">" + escape_html(lit) + "</p>";
      break;
    case CMARK_NODE_PARAGRAPH:
      out += enter ? "<p>" : "</p>";
      break;
    case CMARK_NODE_HEADING: {
      const std::string level = std::to_string(cmark_node_get_heading_level(node));
      out += (enter ? "<h" : "</h") + level + ">";
      break;
    }
    case CMARK_NODE_THEMATIC_BREAK:
      out += "<hr>";
      break;
    case CMARK_NODE_TEXT:
    case CMARK_NODE_HTML_INLINE:
      out += escape_html(lit);
      break;
    case CMARK_NODE_SOFTBREAK:
      out += "\n";
      break;
    case CMARK_NODE_LINEBREAK:
      out += "<br>";
      break;
    case CMARK_NODE_CODE:
      out += "<code>" + escape_html(lit) + "</code>";
      break;
    case CMARK_NODE_EMPH:
      out += enter ? "<em>" : "</em>";
      break;
    case CMARK_NODE_STRONG:
      out += enter ? "<strong>" : "</strong>";
      break;
    case CMARK_NODE_LINK: {
      // Its text, then its URL: nothing leaves the page.
      if (!enter) {
        const char* url = cmark_node_get_url(node);
        if (url && *url) out += " (" + escape_html(url) + ")";
      }
      break;
    }
    case CMARK_NODE_IMAGE: {
      if (enter) {
        out += "[image: ";
      } else {
        const char* url = cmark_node_get_url(node);
        out += "] (" + escape_html(url ? url : "") + ")";
      }
      break;
    }
    default:
      break;  // the document, custom nodes
  }
}

struct CmarkDeleter {
  void operator()(cmark_node* n) const { cmark_node_free(n); }
  void operator()(cmark_iter* i) const { cmark_iter_free(i); }
};

std::string pretty_json(const Json& value) {
  return value.dump(2, ' ', false, Json::error_handler_t::replace);
}

std::string event_div(const std::string& text) {
  return "<div class=\"event\">" + escape_html(text) + "</div>\n";
}

// `f` for each block of the message's content (a string content is one text block).
template <typename F>
void for_each_block(const Json& message, F f) {
  const Json& content = member(message, "content");
  if (content.is_string()) {
    f(Json{{"type", "text"}, {"text", content}});
  } else if (content.is_array()) {
    for (const Json& block : content)
      f(block);
  }
}

std::string section_start(const std::string& classes, const Json& entry, const std::string& role) {
  return "<section class=\"msg " + classes + "\" id=\"e-" + attr(text_of(entry, "id")) +
         "\"><div class=\"role\">" + escape_html(role) + "</div>";
}

struct Counts {
  std::size_t messages = 0;
  std::size_t retried = 0;
};

// Whether the path's entry `i` (an assistant message that ended in error) was retried: another
// assistant message follows before the next user message.
bool retried_at(const std::vector<PathKind>& kinds, std::size_t i) {
  for (std::size_t k = i + 1; k < kinds.size(); ++k) {
    if (kinds[k] == PathKind::user) return false;
    if (kinds[k] == PathKind::assistant) return true;
  }
  return false;
}

PathKind path_kind(const Json& entry) {
  if (text_of(entry, "type") != "message") return PathKind::other;
  const std::string& role = text_of(member(entry, "message"), "role");
  return role == "user"        ? PathKind::user
         : role == "assistant" ? PathKind::assistant
                               : PathKind::other_message;
}

std::string assistant_html(const Json& entry, bool retried) {
  const Json& m = member(entry, "message");
  const std::string& stop = text_of(m, "stopReason");
  std::string classes = "assistant";
  std::string status;
  const std::string& error = text_of(m, "errorMessage");
  if (retried) {
    classes += " retried";
    status = "Attempt failed, retried: " + error;
  } else if (stop == "error") {
    classes += " error";
    status = "Error: " + error;
  } else if (stop == "aborted") {
    classes += " aborted";
    status = "Aborted: " + error;
  }
  std::string out = section_start(classes, entry, "Assistant");
  for_each_block(m, [&out](const Json& block) {
    const std::string& type = text_of(block, "type");
    if (type == "text") {
      out += "<div class=\"text\">" + render_markdown(text_of(block, "text")) + "</div>";
    } else if (type == "thinking") {
      out += "<details class=\"thinking\"><summary>Thinking</summary><div class=\"text\">" +
             render_markdown(text_of(block, "thinking")) + "</div></details>";
    } else if (type == "toolCall") {
      out += "<div class=\"tool-call\" id=\"call-" + attr(text_of(block, "id")) +
             "\"><div class=\"tool-name\">" + escape_html(text_of(block, "name")) +
             "</div><pre class=\"tool-args\">" +
             escape_html(pretty_json(member(block, "arguments"))) + "</pre></div>";
    }
  });
  if (!status.empty()) out += "<div class=\"status\">" + escape_html(status) + "</div>";
  return out + "</section>\n";
}

std::string plain_blocks_html(const Json& message) {
  std::string out;
  for_each_block(message, [&out](const Json& block) {
    const std::string& type = text_of(block, "type");
    if (type == "text")
      out += "<div class=\"text\">" + escape_html(text_of(block, "text")) + "</div>";
    if (type == "image") out += image_html(block);
  });
  return out;
}

std::string message_html(const Json& entry, bool retried) {
  const Json& m = member(entry, "message");
  const std::string& role = text_of(m, "role");
  if (role == "user") {
    return section_start("user", entry, "User") + plain_blocks_html(m) + "</section>\n";
  }
  if (role == "assistant") return assistant_html(entry, retried);
  if (role == "toolResult") {
    const bool error = member(m, "isError").is_boolean() && member(m, "isError").get<bool>();
    std::string text, images;
    bool first = true;
    for_each_block(m, [&](const Json& block) {
      const std::string& type = text_of(block, "type");
      if (type == "text") {
        if (!first) text += "\n";
        text += text_of(block, "text");
        first = false;
      } else if (type == "image") {
        images += image_html(block);
      }
    });
    return section_start(error ? "tool-result error" : "tool-result", entry,
                         "Tool result: " + text_of(m, "toolName")) +
           "<pre class=\"text\">" + escape_html(text) + "</pre>" + images + "</section>\n";
  }
  if (role == "bashExecution") {
    const Json& code = member(m, "exitCode");
    const bool cancelled =
        member(m, "cancelled").is_boolean() && member(m, "cancelled").get<bool>();
    const std::string status = cancelled                  ? "Cancelled"
                               : code.is_number_integer() ? "Exit code " + code.dump()
                                                          : "Exit code ?";
    return section_start("bash", entry, "Shell") + "<pre class=\"command\">$ " +
           escape_html(text_of(m, "command")) + "</pre><pre class=\"text\">" +
           escape_html(text_of(m, "output")) + "</pre><div class=\"status\">" + status +
           "</div></section>\n";
  }
  if (role == "compactionSummary" || role == "branchSummary") {
    const bool branch = role == "branchSummary";
    return section_start(branch ? "branch-summary" : "compaction", entry,
                         branch ? "Branch summary" : "Compaction summary") +
           "<div class=\"text\">" + escape_html(text_of(m, "summary")) + "</div></section>\n";
  }
  if (role == "custom") {
    return section_start("custom", entry, text_of(m, "customType")) + plain_blocks_html(m) +
           "</section>\n";
  }
  return "";
}

constexpr const char* kStyle = R"(
body{font:15px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;background:#f6f7f9;color:#1d2330}
header.session{background:#1d2330;color:#f6f7f9;padding:20px 28px}
header h1{margin:0 0 10px;font-size:22px;word-break:break-word}
dl.meta{display:grid;grid-template-columns:max-content 1fr;gap:2px 16px;margin:0;font-size:13px}
dl.meta dt{color:#9aa3b5}dl.meta dd{margin:0;word-break:break-all}
main{max-width:960px;margin:0 auto;padding:20px}
.msg{background:#fff;border:1px solid #dde1e8;border-radius:8px;margin:12px 0;padding:12px 16px}
.msg .role{font-size:12px;font-weight:600;text-transform:uppercase;letter-spacing:.04em;color:#5b6477;margin-bottom:6px}
.user{border-left:4px solid #3a6ff7}.assistant{border-left:4px solid #20a36a}
.tool-result,.bash{border-left:4px solid #8a93a6;background:#fbfbfc}
.tool-result.error,.assistant.error{border-left-color:#d64545}
.assistant.retried{border-left-color:#e59a1a;opacity:.85}.assistant.aborted{border-left-color:#8a93a6}
.compaction,.branch-summary,.custom{border-left:4px solid #8e5bd6}
.user .text,.custom .text,.compaction .text,.branch-summary .text,pre{white-space:pre-wrap;word-break:break-word}
pre{background:#f0f2f5;border-radius:6px;padding:8px 10px;overflow-x:auto;font:13px/1.45 ui-monospace,Menlo,Consolas,monospace;margin:6px 0}
code{font:13px ui-monospace,Menlo,Consolas,monospace;background:#f0f2f5;padding:1px 4px;border-radius:4px}
pre code{background:none;padding:0}
.raw{white-space:pre-wrap;font-family:ui-monospace,Menlo,Consolas,monospace}
.tool-call{border:1px dashed #c3c9d4;border-radius:6px;padding:6px 10px;margin:8px 0}
.tool-name{font-weight:600;font-family:ui-monospace,Menlo,Consolas,monospace}
details.thinking{color:#5b6477;margin:6px 0}details.thinking summary{cursor:pointer}
.status{margin-top:8px;font-size:13px;font-weight:600;color:#b03a3a}
.event{text-align:center;font-size:12px;color:#5b6477;margin:8px 0}
img{max-width:100%;border-radius:6px;margin:6px 0}
footer{text-align:center;font-size:12px;color:#8a93a6;padding:20px}
)";

}  // namespace

std::string escape_html(std::string_view text, bool attribute) {
  std::string cleaned;
  if (text.find("\xEE\x80\x80") != std::string_view::npos) {
    // A lone surrogate from a client shows as U+FFFD (sessions.md), not as the marker.
    cleaned = std::string(text);
    protocol::replace_surrogate_markers(cleaned);
    text = cleaned;
  }
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t len = valid_sequence(text, i);
    if (len == 0) {
      out += kReplacement;
      ++i;
      continue;
    }
    if (len > 1) {
      out.append(text.substr(i, len));
      i += len;
      continue;
    }
    const char c = text[i++];
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
        out += attribute ? "&quot;" : "\"";
        break;
      case '\'':
        out += attribute ? "&#39;" : "'";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string render_markdown(std::string_view markdown) {
  std::unique_ptr<cmark_node, CmarkDeleter> doc(
      cmark_parse_document(markdown.data(), markdown.size(), CMARK_OPT_DEFAULT));
  std::string out;
  if (!doc) return escape_html(markdown);
  std::unique_ptr<cmark_iter, CmarkDeleter> iter(cmark_iter_new(doc.get()));
  for (cmark_event_type ev; (ev = cmark_iter_next(iter.get())) != CMARK_EVENT_DONE;)
    render_node(cmark_iter_get_node(iter.get()), ev, out);
  return out;
}

std::string render_html(const ExportPage& page) {
  // The entries given whole, or read one at a time.
  const bool given = !page.entry;
  const std::size_t count = given ? page.entries.size() : page.count;
  std::vector<PathKind> own_kinds;
  if (given) {
    for (const Json& e : page.entries)
      own_kinds.push_back(path_kind(e));
  }
  const std::vector<PathKind>& kinds = given ? own_kinds : page.kinds;
  Counts counts;
  std::string body;
  body.reserve(page.size_hint + page.size_hint / 4);  // escaping and markup add a little
  Json read;
  for (std::size_t i = 0; i < count; ++i) {
    if (!given) read = page.entry(i);
    const Json& e = given ? page.entries[i] : read;
    const std::string& type = text_of(e, "type");
    if (type == "message") {
      ++counts.messages;
      const bool retried = i < kinds.size() && kinds[i] == PathKind::assistant &&
                           text_of(member(e, "message"), "stopReason") == "error" &&
                           retried_at(kinds, i);
      if (retried) ++counts.retried;
      body += message_html(e, retried);
    } else if (type == "compaction") {
      body += section_start("compaction", e, "Compaction summary") + "<div class=\"text\">" +
              escape_html(text_of(e, "summary")) + "</div></section>\n";
    } else if (type == "branch_summary") {
      body += section_start("branch-summary", e, "Branch summary") + "<div class=\"text\">" +
              escape_html(text_of(e, "summary")) + "</div></section>\n";
    } else if (type == "custom_message") {
      body += section_start("custom", e, text_of(e, "customType")) + plain_blocks_html(e) +
              "</section>\n";
    } else if (type == "model_change") {
      body += event_div("Model: " + text_of(e, "provider") + "/" + text_of(e, "modelId"));
    } else if (type == "thinking_level_change") {
      body += event_div("Thinking level: " + text_of(e, "thinkingLevel"));
    } else if (type == "session_info") {
      body += event_div("Name: " + text_of(e, "name"));
    }
  }
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src "
      "'unsafe-inline'; img-src data:\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>" +
      escape_html(page.title) + "</title>\n<style>" + kStyle + "</style>\n</head>\n<body>\n";
  out += "<header class=\"session\"><h1>" + escape_html(page.title) + "</h1>\n<dl class=\"meta\">";
  out += "<dt>Session</dt><dd>" + escape_html(page.session_id) + "</dd>";
  out += "<dt>File</dt><dd>" + escape_html(page.session_file.value_or("(in memory)")) + "</dd>";
  out += "<dt>Working directory</dt><dd>" + escape_html(page.cwd) + "</dd>";
  out += "<dt>Model</dt><dd>" + escape_html(page.model) + "</dd>";
  out += "<dt>Messages</dt><dd>" + std::to_string(counts.messages) + "</dd>";
  out += "<dt>Retried attempts</dt><dd>" + std::to_string(counts.retried) + "</dd>";
  out += "<dt>Exported</dt><dd>" + escape_html(page.exported_at) + "</dd></dl></header>\n<main>\n";
  out.reserve(out.size() + body.size() + 256);
  out += body;
  body = {};
  out += "</main>\n<footer>Exported by Rebound " + escape_html(page.version) +
         "</footer>\n</body>\n</html>\n";
  return out;
}

}  // namespace rebound::exporter
