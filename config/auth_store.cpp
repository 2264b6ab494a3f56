#include "config/auth_store.h"

#include <spdlog/spdlog.h>

#include "config/json_file.h"
#include "protocol/json_access.h"

namespace rebound::config {

std::uint32_t fnv1a_32(const std::string& text) {
  std::uint32_t hash = 2166136261u;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 16777619u;
  }
  return hash;
}

AuthStore::AuthStore(const std::filesystem::path& auth_file, Clock clock)
    : clock_(std::move(clock)) {
  JsonFileRead r = read_json_file(auth_file);
  if (r.status == JsonFileStatus::malformed) {
    spdlog::warn("auth file {} is malformed ({}); no stored credentials are used",
                 auth_file.string(), r.error);
    return;
  }
  if (r.status != JsonFileStatus::ok) return;
  for (auto it = r.value.begin(); it != r.value.end(); ++it) {
    std::vector<protocol::Json> entries;
    if (it->is_array()) {
      entries.assign(it->begin(), it->end());
    } else {
      entries.push_back(*it);
    }
    for (std::size_t i = 0; i < entries.size(); ++i) {
      const auto& e = entries[i];
      if (protocol::get_string(e, "type") == "api_key" && !protocol::get_string(e, "key").empty()) {
        std::string key = protocol::get_string(e, "key");
        // Kept, so that a request with it fails naming auth.json instead of silently using
        // another source; the provider never sends it (net/http_provider.h).
        if (session::has_control_characters(key)) {
          spdlog::warn(
              "auth file: credential {} of provider '{}' contains control characters; "
              "requests with it fail until it is fixed",
              i, it.key());
        }
        keys_[it.key()].push_back(std::move(key));
      } else {
        spdlog::warn("auth file: credential {} of provider '{}' is not an api_key entry; skipped",
                     i, it.key());
      }
    }
  }
}

const std::vector<std::string>& AuthStore::keys(const std::string& provider) const {
  static const std::vector<std::string> none;
  const auto it = keys_.find(provider);
  return it == keys_.end() ? none : it->second;
}

bool AuthStore::blocked(const std::string& provider, std::size_t index) const {
  const auto it = blocked_until_.find({provider, index});
  return it != blocked_until_.end() && it->second > clock_();
}

std::optional<std::size_t> AuthStore::current_index(const std::string& provider,
                                                    const std::string& session_id) const {
  const auto& k = keys(provider);
  if (k.empty()) return std::nullopt;
  const std::size_t start = fnv1a_32(session_id) % k.size();
  for (std::size_t step = 0; step < k.size(); ++step) {
    const std::size_t i = (start + step) % k.size();
    if (!blocked(provider, i)) return i;
  }
  return start;
}

std::vector<std::string> AuthStore::all_keys() const {
  std::vector<std::string> out;
  for (const auto& [provider, keys] : keys_)
    out.insert(out.end(), keys.begin(), keys.end());
  return out;
}

std::optional<std::string> AuthStore::resolve_key(const std::string& provider,
                                                  const std::string& session_id) const {
  const auto index = current_index(provider, session_id);
  if (!index) return std::nullopt;
  return keys(provider)[*index];
}

bool AuthStore::mark_usage_limit_reached(const std::string& provider, const std::string& session_id,
                                         std::optional<std::int64_t> retry_after_ms) {
  const auto index = current_index(provider, session_id);
  if (!index) return false;
  blocked_until_[{provider, *index}] = clock_() + retry_after_ms.value_or(kDefaultBlockMs);
  const auto& k = keys(provider);
  for (std::size_t i = 0; i < k.size(); ++i) {
    if (!blocked(provider, i)) return true;
  }
  return false;
}

}  // namespace rebound::config
