#include "tools/tool_args.h"

#include <cmath>

#include "tools/file_io.h"

namespace rebound::tools {

session::ToolResult text_result(std::string text) {
  session::ToolResult r;
  r.content.push_back(protocol::ContentBlock::make_text(std::move(text)));
  return r;
}

std::int64_t count_arg(const protocol::Json& args, const char* key, std::int64_t fallback) {
  if (!args.contains(key) || !args[key].is_number()) return fallback;
  const double v = args[key].get<double>();
  if (!(v > -9.2e18)) return INT64_MIN;  // also -inf
  if (!(v < 9.2e18)) return INT64_MAX;   // also +inf
  return static_cast<std::int64_t>(std::trunc(v));
}

std::string string_arg(const protocol::Json& args, const char* key, const char* fallback) {
  if (args.contains(key) && args[key].is_string()) return args[key].get<std::string>();
  return fallback;
}

bool has_string(const protocol::Json& args, const char* key) {
  const auto it = args.find(key);
  return it != args.end() && it->is_string();
}

session::ToolResult listing_result(const std::string& text, const std::vector<std::string>& notices,
                                   protocol::Json details) {
  session::ToolResult r = text_result(text + notices_suffix(notices));
  if (!details.empty()) r.details = std::move(details);
  return r;
}

}  // namespace rebound::tools
