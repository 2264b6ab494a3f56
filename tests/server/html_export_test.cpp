// export_html's page, pure parts (sessions.md section 12.2): escaping, Markdown by cmark walked
// as a tree, images, retried attempts and the other entries.

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "export/html_export.h"

using namespace rebound;
using exporter::escape_html;
using exporter::render_markdown;
using protocol::Json;

namespace {

bool has(const std::string& s, const std::string& what) {
  return s.find(what) != std::string::npos;
}

Json message(const std::string& id, Json m) {
  return Json{
      {"type", "message"}, {"id", id}, {"parentId", nullptr}, {"timestamp", "t"}, {"message", m}};
}

}  // namespace

TEST_CASE("escaping: element text and attributes, invalid UTF-8 and NUL") {
  CHECK(escape_html("<a href=\"x\">'&'</a>") == "&lt;a href=\"x\"&gt;'&amp;'&lt;/a&gt;");
  CHECK(escape_html("\"'", true) == "&quot;&#39;");
  CHECK(escape_html(std::string("a\0b", 3)) ==
        "a\xEF\xBF\xBD"
        "b");
  CHECK(escape_html("\xC3\xA9 \xFF \xED\xA0\x80") ==
        "\xC3\xA9 \xEF\xBF\xBD \xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
}

TEST_CASE("Markdown: raw HTML stays text, links and images show their URL, code kept") {
  CHECK(render_markdown("Done. <script>alert(1)</script> **bold** `code <i>x</i>`") ==
        "<p>Done. &lt;script&gt;alert(1)&lt;/script&gt; <strong>bold</strong> <code>code "
        "&lt;i&gt;x&lt;/i&gt;</code></p>");
  CHECK(render_markdown("[t](http://x/?a=1&b=2) ![alt *x*](http://i/p.png)") ==
        "<p>t (http://x/?a=1&amp;b=2) [image: alt <em>x</em>] (http://i/p.png)</p>");
  CHECK(render_markdown("```c++\n<b>\n```") ==
        "<pre><code class=\"language-c++\">&lt;b&gt;\n</code></pre>");
  CHECK(render_markdown("```x\" onclick=1\ny\n```") == "<pre><code>y\n</code></pre>");
  CHECK(render_markdown("<div onclick=\"x\">\nhi\n</div>") ==
        "<p class=\"raw\">&lt;div onclick=\"x\"&gt;\nhi\n&lt;/div&gt;\n</p>");
  CHECK(render_markdown("3. a\n4. b") == "<ol start=\"3\"><li><p>a</p></li><li><p>b</p></li></ol>");
}

TEST_CASE("the page: meta, retried attempts, errors, tool calls and results, images, events") {
  exporter::ExportPage page;
  page.title = "T <x>";
  page.session_id = "sid";
  page.cwd = "/w";
  page.model = "p/m";
  page.exported_at = "2026-12-05T00:00:00.000Z";
  page.version = "9";
  page.entries = {
      Json{{"type", "model_change"}, {"id", "m"}, {"provider", "p"}, {"modelId", "m"}},
      message(
          "u1",
          {{"role", "user"},
           {"content",
            Json::array(
                {Json{{"type", "text"}, {"text", "hi"}},
                 Json{{"type", "image"}, {"mimeType", "image/png"}, {"data", "iVBOR="}},
                 Json{{"type", "image"}, {"mimeType", "image/svg+xml"}, {"data", "PHN2Zz4="}}})}}),
      message("a1", {{"role", "assistant"},
                     {"content", Json::array()},
                     {"stopReason", "error"},
                     {"errorMessage", "503 overloaded"}}),
      message("a2", {{"role", "assistant"},
                     {"content",
                      Json::array({Json{{"type", "toolCall"},
                                        {"id", "c\"1"},
                                        {"name", "bash"},
                                        {"arguments", Json{{"command", "ls <x>"}, {"n", "é"}}}}})},
                     {"stopReason", "toolUse"}}),
      message("r1", {{"role", "toolResult"},
                     {"toolName", "bash"},
                     {"isError", true},
                     {"content", Json::array({Json{{"type", "text"}, {"text", "a"}},
                                              Json{{"type", "text"}, {"text", "<b>"}}})}}),
      message("a3", {{"role", "assistant"},
                     {"content", Json::array({Json{{"type", "text"}, {"text", "part"}}})},
                     {"stopReason", "aborted"},
                     {"errorMessage", "Request was aborted"}}),
      Json{{"type", "label"}, {"id", "l"}, {"targetId", "u1"}, {"label", "hidden"}},
      Json{{"type", "session_info"}, {"id", "s"}, {"name", "N"}},
  };
  const std::string html = exporter::render_html(page);
  CHECK(has(html, "<title>T &lt;x&gt;</title>"));
  CHECK(has(html,
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src "
            "'unsafe-inline'; img-src data:\">"));
  CHECK(has(html, "<dt>Messages</dt><dd>5</dd><dt>Retried attempts</dt><dd>1</dd>"));
  CHECK(has(html, "<div class=\"event\">Model: p/m</div>"));
  CHECK(has(html,
            "<section class=\"msg user\" id=\"e-u1\"><div class=\"role\">User</div><div "
            "class=\"text\">hi</div>"
            "<img alt=\"image\" src=\"data:image/png;base64,iVBOR=\"><div class=\"text\">[image "
            "omitted]</div></section>"));
  CHECK(
      has(html,
          "<section class=\"msg assistant retried\" id=\"e-a1\"><div class=\"role\">Assistant</div>"
          "<div class=\"status\">Attempt failed, retried: 503 overloaded</div></section>"));
  CHECK(has(html,
            "<div class=\"tool-call\" id=\"call-c&quot;1\"><div class=\"tool-name\">bash</div>"
            "<pre class=\"tool-args\">{\n  \"command\": \"ls &lt;x&gt;\",\n  \"n\": "
            "\"é\"\n}</pre></div>"));
  CHECK(has(html,
            "<section class=\"msg tool-result error\" id=\"e-r1\"><div class=\"role\">Tool result: "
            "bash</div>"
            "<pre class=\"text\">a\n&lt;b&gt;</pre></section>"));
  CHECK(has(html, "<section class=\"msg assistant aborted\" id=\"e-a3\">"));
  CHECK(has(html,
            "<div class=\"text\"><p>part</p></div><div class=\"status\">Aborted: Request was "
            "aborted</div>"));
  CHECK_FALSE(has(html, "hidden"));
  CHECK(has(html, "<div class=\"event\">Name: N</div>"));
  CHECK(has(html, "<footer>Exported by Rebound 9</footer>"));

  // The same page when the entries are read one at a time (as the session hands them over),
  // each read once, in order.
  exporter::ExportPage streamed = page;
  streamed.entries.clear();
  streamed.count = page.entries.size();
  std::vector<std::size_t> reads;
  streamed.entry = [&page, &reads](std::size_t i) {
    reads.push_back(i);
    return page.entries[i];
  };
  using K = exporter::PathKind;
  streamed.kinds = {K::other,         K::user,      K::assistant, K::assistant,
                    K::other_message, K::assistant, K::other,     K::other};
  CHECK(exporter::render_html(streamed) == html);
  CHECK(reads == std::vector<std::size_t>{0, 1, 2, 3, 4, 5, 6, 7});
}
