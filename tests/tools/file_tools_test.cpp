// Golden results of read, write, edit and ls (tools.md sections 3 and 4), run directly on
// fixture trees in a temporary directory.

#include <doctest/doctest.h>
#include <sys/stat.h>

#include <atomic>
#include <string>

#include "protocol/json.h"
#include "session/tool_arguments.h"
#include "tests/support/temp_dir.h"
#include "tests/tools/tool_test_support.h"
#include "tools/builtin_tools.h"
#include "tools/definitions.h"
#include "tools/truncate.h"

using rebound::protocol::Json;
using rebound::session::ToolContext;
using rebound::session::ToolResult;
using rebound::testing::context_in;
using rebound::testing::kNotCancelled;
using rebound::testing::TempDir;
using rebound::testing::text_of;
namespace tools = rebound::tools;

namespace {

std::string numbered(int from, int to, const std::string& prefix = "line ") {
  std::string s;
  for (int i = from; i <= to; ++i)
    s += prefix + std::to_string(i) + (i < to ? "\n" : "");
  return s;
}

}  // namespace

TEST_CASE("truncation: head and tail by lines and bytes, sizes") {
  CHECK(tools::format_size(1023) == "1023B");
  CHECK(tools::format_size(1280) == "1.3KB");
  CHECK(tools::format_size(51200) == "50.0KB");
  CHECK(tools::format_size(60000) == "58.6KB");
  CHECK(tools::format_size(3 * 1048576 + 104858) == "3.1MB");
  auto t = tools::truncate_head("a\nb\nc", 2);
  CHECK(t.content == "a\nb");
  CHECK(t.by == tools::Truncation::By::lines);
  CHECK(t.total_lines == 3);
  auto tail = tools::truncate_tail("a\nb\nc\n", 2);
  CHECK(tail.content == "c\n");
  CHECK(tail.output_lines == 2);
  // A last line over the byte limit keeps its end, from a character start.
  std::string big = "x" + std::string(60000, 'y') + "\xC3\xA9";
  auto partial = tools::truncate_tail(big);
  CHECK(partial.last_line_partial);
  CHECK(partial.content.size() <= tools::kMaxBytes);
  CHECK(partial.content.substr(partial.content.size() - 2) == "\xC3\xA9");
  // A cut inside the two-byte character moves forward to the next character start.
  std::string multi = std::string(10, 'a');
  for (int i = 0; i < 30000; ++i)
    multi += "\xC3\xA9";  // 60,000 bytes of é after 10 ASCII bytes
  auto cut = tools::truncate_tail(multi);
  CHECK(cut.content.size() == 51200);
  CHECK((static_cast<unsigned char>(cut.content[0]) & 0xC0) != 0x80);
  CHECK(tools::truncate_tail(multi + "x").content.size() == 51199);
}

TEST_CASE("read: a small file, offset and limit, beyond the end, missing, directory") {
  TempDir dir;
  dir.write("small.txt", "alpha\nbeta\ngamma\n");
  std::string rows;
  for (int i = 1; i <= 20; ++i)
    rows += "row " + std::to_string(i) + "\n";
  dir.write("rows.txt", rows);
  const auto c = context_in(dir);
  auto r = tools::run_read(Json{{"path", "small.txt"}}, c, kNotCancelled);
  CHECK(text_of(r) == "alpha\nbeta\ngamma\n");
  CHECK(!r.details);
  CHECK(!r.is_error);
  r = tools::run_read(Json{{"path", "rows.txt"}, {"offset", 5}, {"limit", 3}}, c, kNotCancelled);
  CHECK(text_of(r) == "row 5\nrow 6\nrow 7\n\n[14 more lines in file. Use offset=8 to continue.]");
  r = tools::run_read(Json{{"path", "small.txt"}, {"offset", 4}}, c, kNotCancelled);
  CHECK(text_of(r) == "");
  r = tools::run_read(Json{{"path", "small.txt"}, {"offset", 5}}, c, kNotCancelled);
  CHECK(r.is_error);
  CHECK(text_of(r) == "Offset 5 is beyond end of file (4 lines total)");
  CHECK(*r.details == Json::object());
  r = tools::run_read(Json{{"path", "small.txt"}, {"offset", 99.7}}, c, kNotCancelled);
  CHECK(text_of(r) == "Offset 99 is beyond end of file (4 lines total)");
  r = tools::run_read(Json{{"path", "missing.txt"}}, c, kNotCancelled);
  CHECK(text_of(r) == "ENOENT: no such file or directory, access '" +
                          (dir.path() / "missing.txt").string() + "'");
  std::filesystem::create_directory(dir.path() / "sub");
  r = tools::run_read(Json{{"path", "sub"}}, c, kNotCancelled);
  CHECK(text_of(r) == "EISDIR: illegal operation on a directory, read");
  r = tools::run_read(Json{{"path", "@small.txt"}, {"offset", -3}, {"limit", 0}}, c, kNotCancelled);
  CHECK(text_of(r) == "alpha\nbeta\ngamma\n");
}

TEST_CASE("read: a 5000-line file stops at 2000 lines, then pages on") {
  TempDir dir;
  dir.write("big.txt", numbered(1, 5000) + "\n");
  const auto c = context_in(dir);
  auto r = tools::run_read(Json{{"path", "big.txt"}}, c, kNotCancelled);
  CHECK(text_of(r) ==
        numbered(1, 2000) + "\n\n[Showing lines 1-2000 of 5001. Use offset=2001 to continue.]");
  const Json& t = (*r.details)["truncation"];
  CHECK(t.dump() == Json{{"content", numbered(1, 2000)},
                         {"truncated", true},
                         {"truncatedBy", "lines"},
                         {"totalLines", 5001},
                         {"totalBytes", 48893},
                         {"outputLines", 2000},
                         {"outputBytes", 18892},
                         {"lastLinePartial", false},
                         {"firstLineExceedsLimit", false},
                         {"maxLines", 2000},
                         {"maxBytes", 51200}}
                        .dump());
  r = tools::run_read(Json{{"path", "big.txt"}, {"offset", 4990}}, c, kNotCancelled);
  CHECK(text_of(r) == numbered(4990, 5000) + "\n");
  r = tools::run_read(Json{{"path", "big.txt"}, {"offset", 2001}, {"limit", 10}}, c, kNotCancelled);
  CHECK(text_of(r) ==
        numbered(2001, 2010) + "\n\n[2991 more lines in file. Use offset=2011 to continue.]");
}

TEST_CASE("read: the byte limit, and a first line over 50KB") {
  TempDir dir;
  std::string wide;
  for (int i = 1; i <= 100; ++i)
    wide += std::string(1000, 'a' + i % 26) + "\n";
  dir.write("wide.txt", wide);
  dir.write("one.txt", std::string(60000, 'x') + "\nshort\n");
  const auto c = context_in(dir);
  auto r = tools::run_read(Json{{"path", "wide.txt"}}, c, kNotCancelled);
  const std::string text = text_of(r);
  CHECK(text.find("\n\n[Showing lines 1-51 of 101 (50.0KB limit). Use offset=52 to continue.]") !=
        std::string::npos);
  CHECK((*r.details)["truncation"]["truncatedBy"] == "bytes");
  CHECK((*r.details)["truncation"]["outputBytes"] == 51 * 1001 - 1);
  r = tools::run_read(Json{{"path", "one.txt"}}, c, kNotCancelled);
  CHECK(text_of(r) ==
        "[Line 1 is 58.6KB, exceeds 50.0KB limit. Use bash: sed -n '1p' one.txt | head -c 51200]");
  CHECK((*r.details)["truncation"]["firstLineExceedsLimit"] == true);
  CHECK((*r.details)["truncation"]["content"] == "");
  r = tools::run_read(Json{{"path", "one.txt"}, {"offset", 2}}, c, kNotCancelled);
  CHECK(text_of(r) == "short\n");
}

TEST_CASE("read: invalid UTF-8 becomes U+FFFD, images by signature") {
  TempDir dir;
  dir.write("bad.txt", "caf\xC3(\n");
  dir.write("pic.dat", std::string("\x89PNG\r\n\x1A\n", 8) + "rest");
  const auto c = context_in(dir);
  CHECK(text_of(tools::run_read(Json{{"path", "bad.txt"}}, c, kNotCancelled)) ==
        "caf\xEF\xBF\xBD(\n");
  auto r = tools::run_read(Json{{"path", "pic.dat"}}, c, kNotCancelled);
  REQUIRE(r.content.size() == 2);
  CHECK(r.content[0].text == "Read image file [image/png]");
  CHECK(r.content[1].mime_type == "image/png");
  CHECK(r.content[1].text == "iVBORw0KGgpyZXN0");
  auto no_images = c;
  no_images.model_images = false;
  r = tools::run_read(Json{{"path", "pic.dat"}}, no_images, kNotCancelled);
  CHECK(r.content[0].text ==
        "Read image file [image/png]\n[Current model does not support images. The image will be "
        "omitted from this request.]");
}

TEST_CASE("write: parents created, bytes counted in UTF-8, errors in Node's style") {
  TempDir dir;
  const auto c = context_in(dir);
  auto r = tools::run_write(Json{{"path", "sub/dir/new.txt"}, {"content", "hello\nworld\n"}}, c,
                            kNotCancelled, nullptr);
  CHECK(text_of(r) == "Successfully wrote 12 bytes to sub/dir/new.txt");
  CHECK(dir.read("sub/dir/new.txt") == "hello\nworld\n");
  r = tools::run_write(Json{{"path", "h.txt"}, {"content", "h\xC3\xA9llo"}}, c, kNotCancelled,
                       nullptr);
  CHECK(text_of(r) == "Successfully wrote 6 bytes to h.txt");
  dir.write("file", "x");
  r = tools::run_write(Json{{"path", "file/inner.txt"}, {"content", ""}}, c, kNotCancelled,
                       nullptr);
  CHECK(r.is_error);
  CHECK(text_of(r) ==
        "EEXIST: file already exists, mkdir '" + (dir.path() / "file").string() + "'");
  if (::geteuid() != 0) {
    ::chmod(dir.path().c_str(), 0500);
    r = tools::run_write(Json{{"path", "no.txt"}, {"content", ""}}, c, kNotCancelled, nullptr);
    CHECK(text_of(r) ==
          "EACCES: permission denied, open '" + (dir.path() / "no.txt").string() + "'");
    ::chmod(dir.path().c_str(), 0700);
  }
}

TEST_CASE("edit: one replacement and its diff") {
  TempDir dir;
  dir.write("e.txt", "x = 1\ny = 2\nz = 3\n");
  auto r =
      tools::run_edit(Json{{"path", "e.txt"},
                           {"edits", Json::array({{{"oldText", "y = 2"}, {"newText", "y = 20"}}})}},
                      context_in(dir), kNotCancelled, nullptr);
  CHECK(text_of(r) == "Successfully replaced 1 block(s) in e.txt.");
  CHECK(r.details->dump() ==
        R"({"diff":" 1 x = 1\n-2 y = 2\n+2 y = 20\n 3 z = 3","firstChangedLine":2})");
  CHECK(dir.read("e.txt") == "x = 1\ny = 20\nz = 3\n");
}

TEST_CASE("edit: CRLF and BOM are kept") {
  TempDir dir;
  dir.write("w.txt", "\xEF\xBB\xBFone\r\ntwo\r\nthree\r\n");
  auto r = tools::run_edit(
      Json{{"path", "w.txt"},
           {"edits", Json::array({{{"oldText", "two\nthree"}, {"newText", "2\n3"}}})}},
      context_in(dir), kNotCancelled, nullptr);
  CHECK(!r.is_error);
  CHECK(dir.read("w.txt") == "\xEF\xBB\xBFone\r\n2\r\n3\r\n");
  CHECK((*r.details)["diff"] == " 1 one\n-2 two\n-3 three\n+2 2\n+3 3");
}

TEST_CASE("edit: the errors in their order, the file untouched") {
  TempDir dir;
  dir.write("dup.txt", "foo\nbar\nfoo\n");
  const auto c = context_in(dir);
  auto edit = [&](Json edits) {
    return text_of(
        tools::run_edit(Json{{"path", "dup.txt"}, {"edits", edits}}, c, kNotCancelled, nullptr));
  };
  CHECK(edit(Json::array({{{"oldText", "foo"}, {"newText", "baz"}}})) ==
        "Found 2 occurrences of the text in dup.txt. The text must be unique. Please provide more "
        "context to make it unique.");
  CHECK(edit(Json::array({{{"oldText", "nope"}, {"newText", "x"}}})) ==
        "Could not find the exact text in dup.txt. The old text must match exactly including all "
        "whitespace and newlines.");
  CHECK(edit(Json::array({{{"oldText", ""}, {"newText", "x"}}})) ==
        "oldText must not be empty in dup.txt.");
  CHECK(edit(Json::array(
            {{{"oldText", "bar"}, {"newText", "b"}}, {{"oldText", ""}, {"newText", "x"}}})) ==
        "edits[1].oldText must not be empty in dup.txt.");
  CHECK(edit(Json::array(
            {{{"oldText", "bar"}, {"newText", "b"}}, {{"oldText", "zzz"}, {"newText", "x"}}})) ==
        "Could not find edits[1] in dup.txt. The oldText must match exactly including all "
        "whitespace and newlines.");
  CHECK(edit(Json::array(
            {{{"oldText", "foo"}, {"newText", "b"}}, {{"oldText", "bar"}, {"newText", "x"}}})) ==
        "Found 2 occurrences of edits[0] in dup.txt. Each oldText must be unique. Please provide "
        "more context to make it unique.");
  CHECK(edit(Json::array({{{"oldText", "bar\nfoo"}, {"newText", "b"}},
                          {{"oldText", "foo\nbar"}, {"newText", "x"}}})) ==
        "edits[1] and edits[0] overlap in dup.txt. Merge them into one edit or target disjoint "
        "regions.");
  CHECK(edit(Json::array({{{"oldText", "bar"}, {"newText", "bar"}}})) ==
        "No changes made to dup.txt. The replacement produced identical content. This might "
        "indicate an issue with special characters or the text not existing as expected.");
  CHECK(edit(Json::array()) ==
        "Edit tool input is invalid. edits must contain at least one replacement.");
  CHECK(dir.read("dup.txt") == "foo\nbar\nfoo\n");
  CHECK(text_of(tools::run_edit(
            Json{{"path", "none.txt"},
                 {"edits", Json::array({{{"oldText", "a"}, {"newText", "b"}}})}},
            c, kNotCancelled, nullptr)) == "Could not edit file: none.txt. Error code: ENOENT.");
}

TEST_CASE("edit: a fuzzy match changes only the matched region") {
  TempDir dir;
  dir.write("q.txt", "say \xE2\x80\x9Chi\xE2\x80\x9D   \nkeep \xE2\x80\x98this\xE2\x80\x99\n");
  auto r = tools::run_edit(
      Json{{"path", "q.txt"},
           {"edits", Json::array({{{"oldText", "say \"hi\""}, {"newText", "say \"yo\""}}})}},
      context_in(dir), kNotCancelled, nullptr);
  CHECK(!r.is_error);
  CHECK(dir.read("q.txt") == "say \"yo\"\nkeep \xE2\x80\x98this\xE2\x80\x99\n");
}

TEST_CASE("edit: argument preparation of edits as text and the legacy pair") {
  Json args{{"path", "a"},
            {"edits", R"([{"oldText":"x","newText":"y"}])"},
            {"oldText", "p"},
            {"newText", "q"}};
  tools::prepare_edit_arguments(args);
  CHECK(args.dump() ==
        R"({"path":"a","edits":[{"oldText":"x","newText":"y"},{"oldText":"p","newText":"q"}]})");
}

TEST_CASE("ls: sorted case-insensitively, directories marked, limits") {
  TempDir dir;
  dir.write("b.txt", "");
  dir.write("A.txt", "");
  dir.write(".hidden", "");
  dir.write("sub/x", "");
  const auto c = context_in(dir);
  auto r = rebound::tools::run_ls(Json::object(), c, kNotCancelled);
  CHECK(text_of(r) == ".hidden\nA.txt\nb.txt\nsub/");
  CHECK(!r.details);
  r = tools::run_ls(Json{{"limit", 2}}, c, kNotCancelled);
  CHECK(text_of(r) == ".hidden\nA.txt\n\n[2 entries limit reached. Use limit=4 for more]");
  CHECK(r.details->dump() == R"({"entryLimitReached":2})");
  CHECK(text_of(tools::run_ls(Json{{"path", "nope"}}, c, kNotCancelled)) ==
        "Path not found: " + (dir.path() / "nope").string());
  CHECK(text_of(tools::run_ls(Json{{"path", "b.txt"}}, c, kNotCancelled)) ==
        "Not a directory: " + (dir.path() / "b.txt").string());
  // A dangling symlink cannot be examined and is left out; a link to a directory is marked.
  std::filesystem::create_symlink(dir.path() / "missing", dir.path() / "dangling");
  std::filesystem::create_directory_symlink(dir.path() / "sub", dir.path() / "link");
  CHECK(text_of(tools::run_ls(Json::object(), c, kNotCancelled)) ==
        ".hidden\nA.txt\nb.txt\nlink/\nsub/");
  std::filesystem::create_directory(dir.path() / "empty");
  CHECK(text_of(tools::run_ls(Json{{"path", "empty"}}, c, kNotCancelled)) == "(empty directory)");
}

TEST_CASE("arguments: coercions, the failure text, null as absent") {
  const auto& read = tools::builtin_definition("read");
  Json args;
  auto problem =
      rebound::session::check_tool_arguments(read, Json{{"offset", 1}}, args, Json{{"offset", 1}});
  REQUIRE(problem);
  CHECK(*problem ==
        "Validation failed for tool \"read\":\n  - path: must have required properties path\n\n"
        "Received arguments:\n{\n  \"offset\": 1\n}");
  CHECK(!rebound::session::check_tool_arguments(
      read, Json{{"path", 12}, {"offset", "5"}, {"limit", nullptr}}, args, Json()));
  CHECK(args.dump() == R"({"path":"12","offset":5})");
  const auto& edit = tools::builtin_definition("edit");
  Json bad{{"path", "a"}, {"edits", Json::array({{{"oldText", 1}}, "x"})}, {"extra", true}};
  problem = rebound::session::check_tool_arguments(edit, bad, args, bad);
  REQUIRE(problem);
  CHECK(problem->substr(0, problem->find("\n\nReceived")) ==
        "Validation failed for tool \"edit\":\n"
        "  - edits.0.newText: must have required properties newText\n"
        "  - edits.1: must be object\n"
        "  - root: must not have additional properties");
  const auto& grep = tools::builtin_definition("grep");
  CHECK(!rebound::session::check_tool_arguments(
      grep, Json{{"pattern", "x"}, {"ignoreCase", "true"}}, args, Json()));
  CHECK(args["ignoreCase"] == true);
}

TEST_CASE("definitions: key order and the system prompt's base text") {
  CHECK(
      tools::builtin_definition("ls").parameters.dump() ==
      R"json({"type":"object","properties":{"path":{"type":"string","description":"Directory to list (default: the working directory)"},"limit":{"type":"number","description":"Largest number of entries (default: 500)"}}})json");
  CHECK(tools::split_tool_list(" read, ,grep,read ,") == std::vector<std::string>{"read", "grep"});
  const std::string base = tools::default_base_prompt({"read", "bash", "grep"});
  CHECK(base.find("- grep: Search file contents (respects .gitignore)\n") != std::string::npos);
  CHECK(base.find("- Prefer the grep, find and ls tools to bash for exploring files: they are "
                  "faster and respect .gitignore.\n") != std::string::npos);
  CHECK(base.find("Use bash for file operations") == std::string::npos);
  CHECK(tools::default_base_prompt({}).find(
            "Available tools:\n(none)\n\nGuidelines:\n- Be concise.") != std::string::npos);
  CHECK(tools::assemble_system_prompt("B", {{"/w/AGENTS.md", "Haiku.\n"}}, "2026-11-30", "/w") ==
        "B\n\n# Project Context\n\nProject-specific instructions and guidelines:\n\n## "
        "/w/AGENTS.md\n\nHaiku.\n\n\n\nCurrent date: 2026-11-30\nCurrent working directory: /w");
}

TEST_CASE("read_text (an editor's buffer) gives what run_read gives on a file holding the text") {
  TempDir dir;
  const auto c = context_in(dir);
  std::string long_lines;
  for (int i = 0; i < 2500; ++i)
    long_lines += "line " + std::to_string(i) + "\n";
  const std::vector<std::string> texts = {"",
                                          "one line",
                                          "alpha\nbeta\ngamma\n",
                                          "no final newline\nsecond",
                                          "caf\xc3\xa9 \xff bad byte\n",
                                          long_lines,
                                          std::string(60000, 'x') + "\nshort\n"};
  const std::vector<Json> args = {
      Json::object(),      Json{{"offset", 2}},    Json{{"offset", 2}, {"limit", 1}},
      Json{{"offset", 9}}, Json{{"offset", 2001}}, Json{{"limit", 0}, {"offset", -3}}};
  for (std::size_t t = 0; t < texts.size(); ++t) {
    dir.write("buffer.txt", texts[t]);
    for (Json a : args) {
      a["path"] = "buffer.txt";
      const auto local = tools::run_read(a, c, kNotCancelled);
      const auto buffer = tools::read_text(a, texts[t]);
      CAPTURE(t);
      CAPTURE(a.dump());
      CHECK(text_of(buffer) == text_of(local));
      CHECK(buffer.is_error == local.is_error);
      CHECK(buffer.details == local.details);
    }
  }
}
