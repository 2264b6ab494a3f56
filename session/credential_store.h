#pragma once
// The credential store as the retry policy sees it (retry.md section 4 step 6): a synchronous,
// in-memory call that blocks the credential a session last used and says whether another one of
// that provider is free. Called on the event loop.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace rebound::session {

/// Whether an API key holds a control character: sent in a header, a CR or LF would start a
/// header of the key's choosing, so such a key is never sent (net/http_provider.h).
inline bool has_control_characters(std::string_view key) {
  for (const char ch : key) {
    const auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c == 0x7F) return true;
  }
  return false;
}

class CredentialStore {
 public:
  virtual ~CredentialStore() = default;
  /// Blocks the credential `session_id` last used for `provider` for `retry_after_ms` (default
  /// 60000); true iff another credential of that provider is not blocked.
  virtual bool mark_usage_limit_reached(const std::string& provider, const std::string& session_id,
                                        std::optional<std::int64_t> retry_after_ms) = 0;
};

}  // namespace rebound::session
