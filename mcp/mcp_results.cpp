#include "mcp/mcp_results.h"

#include <vector>

#include "tools/tool_args.h"
#include "tools/truncate.h"

namespace rebound::mcp {

using protocol::ContentBlock;
using protocol::Json;
using tools::has_string;
using tools::string_arg;

namespace {

// One MCP content block as Rebound content, or the reason it is malformed.
std::variant<ContentBlock, std::string> convert_block(const Json& block) {
  if (!block.is_object() || !has_string(block, "type"))
    return std::string("a content block has no type");
  const std::string type = string_arg(block, "type");
  if (type == "text") {
    if (!has_string(block, "text")) return std::string("a text block has no text");
    return ContentBlock::make_text(string_arg(block, "text"));
  }
  if (type == "image") {
    if (!has_string(block, "data") || !has_string(block, "mimeType"))
      return std::string("an image block needs data and mimeType");
    return ContentBlock::make_image(string_arg(block, "data"), string_arg(block, "mimeType"));
  }
  if (type == "audio") {
    return ContentBlock::make_text("[Audio: " + string_arg(block, "mimeType") + ", " +
                                   std::to_string(base64_decoded_size(string_arg(block, "data"))) +
                                   " bytes]");
  }
  if (type == "resource_link") {
    std::string text =
        "[Resource link: " + string_arg(block, "name") + "] " + string_arg(block, "uri");
    if (has_string(block, "description")) text += "\n" + string_arg(block, "description");
    return ContentBlock::make_text(std::move(text));
  }
  if (type == "resource") {
    const auto resource = block.find("resource");
    if (resource == block.end() || !resource->is_object())
      return std::string("a resource block has no resource");
    const std::string uri = string_arg(*resource, "uri");
    if (has_string(*resource, "text"))
      return ContentBlock::make_text("[Resource: " + uri + "]\n" + string_arg(*resource, "text"));
    const std::string mime = string_arg(*resource, "mimeType");
    const std::string blob = string_arg(*resource, "blob");
    if (mime.rfind("image/", 0) == 0 && has_string(*resource, "blob"))
      return ContentBlock::make_image(blob, mime);
    return ContentBlock::make_text("[Resource: " + uri + "] " +
                                   (mime.empty() ? std::string("application/octet-stream") : mime) +
                                   ", " + std::to_string(base64_decoded_size(blob)) + " bytes");
  }
  return ContentBlock::make_text("[Unsupported content: " + type + "]");
}

}  // namespace

std::size_t base64_decoded_size(const std::string& data) {
  // Every 4 characters are 3 bytes; padding and line breaks carry none.
  std::size_t chars = 0;
  for (const char c : data) {
    if (c != '=' && c != '\n' && c != '\r' && c != ' ') ++chars;
  }
  return chars * 3 / 4;
}

session::Result<session::ToolResult> convert_call_result(const Json& result,
                                                         const std::string& server,
                                                         const std::string& tool) {
  if (!result.is_object()) return session::failure(std::string("the result is not an object"));
  session::ToolResult out;
  const auto content = result.find("content");
  if (content != result.end() && !content->is_null() && !content->is_array())
    return session::failure(std::string("content is not an array"));
  if (content != result.end() && content->is_array()) {
    for (const auto& block : *content) {
      auto converted = convert_block(block);
      if (auto* reason = std::get_if<std::string>(&converted)) return session::failure(*reason);
      out.content.push_back(std::move(std::get<ContentBlock>(converted)));
    }
  }
  if (const auto error = result.find("isError"); error != result.end()) {
    if (!error->is_boolean()) return session::failure(std::string("isError is not a boolean"));
    out.is_error = error->get<bool>();
  }
  Json details = Json::object();
  details["server"] = server;
  details["tool"] = tool;
  const auto structured = result.find("structuredContent");
  const bool has_structured = structured != result.end() && !structured->is_null() &&
                              !(structured->is_object() && structured->empty());
  if (has_structured) {
    details["structuredContent"] = *structured;
    if (out.content.empty()) out.content.push_back(ContentBlock::make_text(structured->dump()));
  }
  if (out.content.empty()) out.content.push_back(ContentBlock::make_text("(no output)"));

  // Head truncation over the texts joined with \n (section 6).
  if (auto truncation = tools::truncate_result_head(out.content))
    details["truncation"] = std::move(*truncation);
  out.details = std::move(details);
  return out;
}

}  // namespace rebound::mcp
