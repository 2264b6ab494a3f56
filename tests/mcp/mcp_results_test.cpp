// MCP call results as tool results (mcp.md section 6).

#include <doctest/doctest.h>

#include "mcp/mcp_results.h"

using namespace rebound;
using protocol::Json;

namespace {

session::ToolResult convert(const std::string& json) {
  auto r = mcp::convert_call_result(Json::parse(json), "srv", "echo");
  REQUIRE(r.ok());
  return std::move(r.value());
}

std::vector<std::string> texts(const session::ToolResult& r) {
  std::vector<std::string> out;
  for (const auto& b : r.content)
    out.push_back(b.kind == protocol::ContentBlock::Kind::image ? "image:" + b.mime_type : b.text);
  return out;
}

}  // namespace

TEST_CASE("mcp results: every content kind, block by block") {
  const auto r = convert(
      R"j({"content":[{"type":"text","text":"hi","annotations":{"audience":["user"]}},
          {"type":"image","data":"AAAA","mimeType":"image/png"},
          {"type":"audio","data":"AAAAAA==","mimeType":"audio/wav"},
          {"type":"resource_link","uri":"file:///a","name":"a","description":"the a"},
          {"type":"resource","resource":{"uri":"file:///b","text":"bee"}},
          {"type":"resource","resource":{"uri":"file:///c.png","blob":"AAAA","mimeType":"image/png"}},
          {"type":"resource","resource":{"uri":"file:///d","blob":"AAAAAAAA"}},
          {"type":"hologram"}]})j");
  CHECK(texts(r) ==
        std::vector<std::string>{"hi", "image:image/png", "[Audio: audio/wav, 4 bytes]",
                                 "[Resource link: a] file:///a\nthe a",
                                 "[Resource: file:///b]\nbee", "image:image/png",
                                 "[Resource: file:///d] application/octet-stream, 6 bytes",
                                 "[Unsupported content: hologram]"});
  CHECK_FALSE(r.is_error);
  CHECK(r.details == Json::parse(R"j({"server":"srv","tool":"echo"})j"));
}

TEST_CASE("mcp results: structuredContent, no output, isError") {
  auto r = convert(R"j({"content":[],"structuredContent":{"sum":3}})j");
  CHECK(texts(r) == std::vector<std::string>{R"j({"sum":3})j"});
  CHECK(r.details ==
        Json::parse(R"j({"server":"srv","tool":"echo","structuredContent":{"sum":3}})j"));
  r = convert(R"j({"content":[{"type":"text","text":"3"}],"structuredContent":{"sum":3}})j");
  CHECK(texts(r) == std::vector<std::string>{"3"});
  CHECK(r.details->contains("structuredContent"));
  CHECK(texts(convert("{}")) == std::vector<std::string>{"(no output)"});
  r = convert(R"j({"content":[{"type":"text","text":"Access denied"}],"isError":true})j");
  CHECK(r.is_error);
  CHECK(texts(r) == std::vector<std::string>{"Access denied"});
}

TEST_CASE("mcp results: what is not a CallToolResult is said so") {
  const auto reason = [](const char* json) {
    auto r = mcp::convert_call_result(Json::parse(json), "s", "t");
    return !r.ok() ? r.error().message : "valid";
  };
  CHECK(reason("[]") == "the result is not an object");
  CHECK(reason(R"j({"content":"x"})j") == "content is not an array");
  CHECK(reason(R"j({"content":[{"text":"x"}]})j") == "a content block has no type");
  CHECK(reason(R"j({"content":[{"type":"text"}]})j") == "a text block has no text");
  CHECK(reason(R"j({"isError":"yes"})j") == "isError is not a boolean");
}

TEST_CASE("mcp results: head truncation by lines, by bytes, and a first line over the limit") {
  std::string lines;
  for (int i = 1; i <= 2500; ++i)
    lines += "line " + std::to_string(i) + (i < 2500 ? "\n" : "");
  auto r = convert(
      Json{{"content",
            Json::array({Json{{"type", "text"}, {"text", lines}},
                         Json{{"type", "image"}, {"data", "AA=="}, {"mimeType", "image/gif"}}})}}
          .dump());
  REQUIRE(r.content.size() == 2);
  CHECK(r.content[0].text.rfind("line 1\n", 0) == 0);
  CHECK(r.content[0].text.find("line 2000\n\n[Showing lines 1-2000 of 2500.]") !=
        std::string::npos);
  CHECK(r.content[1].mime_type == "image/gif");
  CHECK((*r.details)["truncation"]["truncatedBy"] == "lines");

  r = convert(
      Json{{"content", Json::array({Json{{"type", "text"}, {"text", std::string(30000, 'a')}},
                                    Json{{"type", "text"}, {"text", std::string(30000, 'b')}}})}}
          .dump());
  REQUIRE(r.content.size() == 1);
  CHECK(r.content[0].text ==
        std::string(30000, 'a') + "\n\n[Showing lines 1-1 of 2 (50.0KB limit).]");

  std::string wide;
  for (int i = 0; i < 30000; ++i)
    wide += "\xc3\xa9";  // 60,000 bytes in one line
  r = convert(Json{{"content", Json::array({Json{{"type", "text"}, {"text", wide}}})}}.dump());
  const std::string kept = wide.substr(0, 51200);
  CHECK(r.content[0].text == kept + "\n\n[Showing the first 50.0KB of line 1 (58.6KB).]");
  CHECK((*r.details)["truncation"]["firstLineExceedsLimit"] == true);
}
