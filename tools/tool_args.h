#pragma once
// Reading a checked call's arguments and building results: shared by the file tools.

#include <cstdint>
#include <string>
#include <vector>

#include "protocol/json.h"
#include "session/tool.h"

namespace rebound::tools {

/// A result of one text block, no details.
session::ToolResult text_result(std::string text);

/// A counting argument (offset, limit, context) cut toward zero and saturated to int64;
/// `fallback` when absent.
std::int64_t count_arg(const protocol::Json& args, const char* key, std::int64_t fallback);

/// A string argument, or `fallback` when absent (or not a string).
std::string string_arg(const protocol::Json& args, const char* key, const char* fallback = "");
/// Whether `args` has `key` holding a string.
bool has_string(const protocol::Json& args, const char* key);

/// The text followed by "\n\n[notice. notice]" when there are notices, with `details` set when
/// it holds anything (grep, find and ls).
session::ToolResult listing_result(const std::string& text, const std::vector<std::string>& notices,
                                   protocol::Json details);

}  // namespace rebound::tools
