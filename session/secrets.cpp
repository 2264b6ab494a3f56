#include "session/secrets.h"

#include <algorithm>
#include <string_view>

namespace rebound::session {

Secrets::Secrets(std::vector<std::string> values) {
  for (auto& v : values)
    if (v.size() >= kMinLength) values_.push_back(std::move(v));
  std::sort(values_.begin(), values_.end(), [](const std::string& a, const std::string& b) {
    return a.size() != b.size() ? a.size() > b.size() : a < b;
  });
  values_.erase(std::unique(values_.begin(), values_.end()), values_.end());
}

void Secrets::redact(std::string& text) const {
  static constexpr std::string_view kMark = "[redacted]";
  for (const auto& key : values_) {
    for (std::size_t at = text.find(key); at != std::string::npos;
         at = text.find(key, at + kMark.size()))
      text.replace(at, key.size(), kMark);
  }
}

void Secrets::redact(protocol::Json& value) const {
  if (value.is_string()) {
    redact(value.get_ref<std::string&>());
  } else if (value.is_structured()) {
    for (auto& item : value)
      redact(item);
  }
}

void Secrets::redact(ToolResult& result) const {
  if (values_.empty()) return;
  for (auto& block : result.content)
    if (block.kind == protocol::ContentBlock::Kind::text) redact(block.text);
  if (result.details) redact(*result.details);
}

}  // namespace rebound::session
