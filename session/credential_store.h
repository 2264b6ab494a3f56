#pragma once
// The credential store as the retry policy sees it (retry.md section 4 step 6): a synchronous,
// in-memory call that blocks the credential a session last used and says whether another one of
// that provider is free. Called on the event loop.

#include <cstdint>
#include <optional>
#include <string>

namespace rebound::session {

class CredentialStore {
 public:
  virtual ~CredentialStore() = default;
  /// Blocks the credential `session_id` last used for `provider` for `retry_after_ms` (default
  /// 60000); true iff another credential of that provider is not blocked.
  virtual bool mark_usage_limit_reached(const std::string& provider, const std::string& session_id,
                                        std::optional<std::int64_t> retry_after_ms) = 0;
};

}  // namespace rebound::session
