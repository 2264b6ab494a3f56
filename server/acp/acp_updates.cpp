#include "server/acp/acp_updates.h"

#include <cmath>
#include <iterator>
#include <random>

#include "tools/definitions.h"
#include "tools/file_io.h"
#include "tools/paths.h"
#include "tools/tool_args.h"

namespace rebound::server::acp {

using tools::has_string;
using tools::string_arg;

namespace {

// The first `max` code points of the first line of `text`.
std::string first_line_cut(const std::string& text, std::size_t max) {
  const std::string line = text.substr(0, text.find('\n'));
  std::size_t points = 0, i = 0;
  for (; i < line.size(); ++i) {
    if ((static_cast<unsigned char>(line[i]) & 0xC0) != 0x80) {
      if (points == max) break;
      ++points;
    }
  }
  return line.substr(0, i);
}

Json path_location(const std::string& abs) {
  Json location = Json::object();
  location["path"] = abs;
  return location;
}

}  // namespace

ToolCallInfo tool_call_info(std::string_view name, const Json& args, const std::string& cwd) {
  ToolCallInfo info;
  info.locations = nullptr;
  const tools::ToolTraits* traits = tools::builtin_traits(name);
  if (!traits) {
    info.kind = "other";
    info.title = std::string(name);
    return info;
  }
  using Title = tools::ToolTraits::Title;
  info.kind = std::string(tools::kind_name(traits->kind));
  const std::string path = string_arg(args, "path");
  auto abs = [&](const std::string& p) { return tools::resolve_path(p, cwd); };
  switch (traits->title) {
    case Title::verb_path: {
      info.title = std::string(traits->verb) + " " + path;
      info.path = abs(path);
      info.edits_file = traits->edits_file;
      Json location = path_location(info.path);
      if (const auto it = args.find("offset");
          !traits->edits_file && it != args.end() && it->is_number()) {
        // tools.md section 4.1: fractions cut toward zero, 0 or negative means the first line.
        const double offset = std::trunc(it->get<double>());
        const double line = offset < 1 ? 1 : offset;
        if (line <= 4294967295.0) location["line"] = static_cast<std::int64_t>(line);
      }
      info.locations = Json::array({location});
      break;
    }
    case Title::command_line:
      info.title = first_line_cut(string_arg(args, "command"), 200);
      break;
    case Title::pattern_in_path:
      info.title = std::string(name) + " " + string_arg(args, "pattern");
      if (has_string(args, "path")) {
        info.title += " in " + path;
        info.locations = Json::array({path_location(abs(path))});
      }
      break;
    case Title::listing: {
      const std::string shown = has_string(args, "path") ? path : ".";
      info.title = std::string(name) + " " + shown;
      info.locations = Json::array({path_location(abs(shown))});
      break;
    }
  }
  return info;
}

std::string result_text(const session::ToolResult& result) {
  std::string out;
  bool first = true;
  for (const auto& block : result.content) {
    if (block.kind != protocol::ContentBlock::Kind::text) continue;
    if (!first) out += '\n';
    out += block.text;
    first = false;
  }
  return out;
}

bool has_text(const session::ToolResult& result) {
  for (const auto& block : result.content) {
    if (block.kind == protocol::ContentBlock::Kind::text) return true;
  }
  return false;
}

Json text_content(std::string text) {
  Json content = Json::object();
  content["type"] = "text";
  content["text"] = std::move(text);
  return content;
}

Json image_content(const protocol::ContentBlock& image) {
  Json content = Json::object();
  content["type"] = "image";
  content["data"] = image.text;
  content["mimeType"] = image.mime_type;
  return content;
}

Json content_entry(Json block) {
  Json entry = Json::object();
  entry["type"] = "content";
  entry["content"] = std::move(block);
  return entry;
}

Json content_of(const session::ToolResult& result) {
  Json content = Json::array({content_entry(text_content(result_text(result)))});
  for (const auto& block : result.content) {
    if (block.kind == protocol::ContentBlock::Kind::image)
      content.push_back(content_entry(image_content(block)));
  }
  return content;
}

Json diff_content(const std::string& path, const std::optional<std::string>& old_text,
                  const std::string& new_text) {
  Json diff = Json::object();
  diff["type"] = "diff";
  diff["path"] = path;
  diff["oldText"] = old_text ? Json(*old_text) : Json(nullptr);
  diff["newText"] = new_text;
  return diff;
}

session::Result<session::UserInput> prompt_input(const Json& blocks) {
  if (!blocks.is_array())
    return session::failure(std::string("Invalid params: prompt: expected array"));
  session::UserInput input;
  std::vector<std::string> pieces;
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    const Json& block = blocks[i];
    const std::string where = "prompt[" + std::to_string(i) + "]";
    if (!block.is_object())
      return session::failure("Invalid params: " + where + ": expected object");
    const std::string type = string_arg(block, "type");
    if (!has_string(block, "type"))
      return session::failure("Invalid params: " + where + ".type: expected string");
    if (type == "text") {
      if (!has_string(block, "text"))
        return session::failure("Invalid params: " + where + ".text: expected string");
      pieces.push_back(string_arg(block, "text"));
    } else if (type == "resource_link") {
      if (!has_string(block, "uri"))
        return session::failure("Invalid params: " + where + ".uri: expected string");
      pieces.push_back("@" + string_arg(block, "uri"));
    } else if (type == "image") {
      if (!has_string(block, "data"))
        return session::failure("Invalid params: " + where + ".data: expected string");
      if (!has_string(block, "mimeType"))
        return session::failure("Invalid params: " + where + ".mimeType: expected string");
      input.images.push_back({string_arg(block, "data"), string_arg(block, "mimeType")});
    } else if (type == "resource") {
      const auto it = block.find("resource");
      if (it == block.end() || !it->is_object())
        return session::failure("Invalid params: " + where + ".resource: expected object");
      const Json& resource = *it;
      if (has_string(resource, "text")) {
        pieces.push_back("<context uri=\"" + string_arg(resource, "uri") + "\">\n" +
                         string_arg(resource, "text") + "\n</context>");
      } else if (has_string(resource, "blob") &&
                 string_arg(resource, "mimeType").rfind("image/", 0) == 0) {
        input.images.push_back({string_arg(resource, "blob"), string_arg(resource, "mimeType")});
      } else {
        return session::failure(std::string("Invalid params: unsupported content block: resource"));
      }
    } else {
      return session::failure("Invalid params: unsupported content block: " + type);
    }
  }
  if (pieces.empty() && input.images.empty())
    return session::failure(
        std::string("Invalid params: prompt: expected at least one text or image block"));
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    if (i > 0) input.text += '\n';
    input.text += pieces[i];
  }
  return input;
}

std::string retry_notice_title(std::int64_t attempt, std::int64_t max_attempts,
                               std::int64_t delay_ms) {
  std::string delay = delay_ms < 1000 ? std::to_string(delay_ms) + " ms"
                                      : std::to_string(static_cast<std::int64_t>(
                                            std::llround(static_cast<double>(delay_ms) / 1000.0))) +
                                            "s";
  return "Retrying (" + std::to_string(attempt) + "/" + std::to_string(max_attempts) + ") in " +
         delay;
}

std::string recovered_notice_title(std::int64_t attempt) {
  return "Recovered after " + std::to_string(attempt) + (attempt == 1 ? " retry" : " retries");
}

TurnEnding turn_ending(bool cancelled, std::optional<protocol::StopReason> last, bool error) {
  using protocol::StopReason;
  if (cancelled || last == StopReason::aborted) return {"cancelled", "cancelled"};
  if (error || last == StopReason::error) return {"end_turn", "error"};
  if (last == StopReason::length) return {"max_tokens", "length"};
  return {"end_turn", "stop"};
}

std::string random_hex_id() {
  static thread_local std::mt19937_64 generator{(std::uint64_t{std::random_device{}()} << 32) ^
                                                std::random_device{}()};
  static constexpr char kHex[] = "0123456789abcdef";
  std::uint64_t bits = generator();
  std::string id(16, '0');
  for (auto& c : id) {
    c = kHex[bits & 0xF];
    bits >>= 4;
  }
  return id;
}

}  // namespace rebound::server::acp
