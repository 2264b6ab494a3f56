#pragma once
// Stored credentials from auth.json (runtime.md section 3): one or several API keys per
// provider, the per-session order (starting at FNV-1a-32(session id) mod n), and the in-memory
// blocking of markUsageLimitReached. Keys are never logged. Event loop only; time is injected.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "session/credential_store.h"

namespace rebound::config {

std::uint32_t fnv1a_32(const std::string& text);

class AuthStore : public session::CredentialStore {
 public:
  using Clock = std::function<std::int64_t()>;  // milliseconds, monotonic

  /// Reads `auth_file` (missing: no credentials; malformed: reported on stderr, none).
  AuthStore(const std::filesystem::path& auth_file, Clock clock);

  /// The keys stored for a provider, in file order.
  const std::vector<std::string>& keys(const std::string& provider) const;
  /// Every key stored, of every provider.
  std::vector<std::string> all_keys() const;

  /// The key this session uses now: the first in its order that is not blocked (all blocked:
  /// the first in order); nullopt when the provider has none.
  std::optional<std::string> resolve_key(const std::string& provider,
                                         const std::string& session_id) const;

  bool mark_usage_limit_reached(const std::string& provider, const std::string& session_id,
                                std::optional<std::int64_t> retry_after_ms) override;

  static constexpr std::int64_t kDefaultBlockMs = 60000;

 private:
  std::optional<std::size_t> current_index(const std::string& provider,
                                           const std::string& session_id) const;
  bool blocked(const std::string& provider, std::size_t index) const;

  Clock clock_;
  std::map<std::string, std::vector<std::string>> keys_;
  std::map<std::pair<std::string, std::size_t>, std::int64_t> blocked_until_;
};

}  // namespace rebound::config
