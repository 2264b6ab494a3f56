#pragma once
// URLs and proxy settings for the HTTP client: pure parsing, no Boost (kept out of the Beast
// translation unit, which is the slowest file to compile).

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rebound::net {

struct Url {
  bool tls = false;
  std::string host;
  std::string port;    // "443" / "80" when the URL has none
  std::string target;  // path and query, "/" when empty
};

/// Parses http:// and https:// URLs; nullopt for anything else.
std::optional<Url> parse_url(std::string_view url);

/// HTTPS_PROXY / NO_PROXY: https:// requests go through an HTTP CONNECT tunnel unless the host
/// is excluded. NO_PROXY holds comma-separated host names or domain suffixes (".x.org" and
/// "x.org" both match "api.x.org"), or "*" for none.
struct ProxyConfig {
  std::optional<Url> https_proxy;
  std::vector<std::string> no_proxy;
  /// Reads HTTPS_PROXY/https_proxy and NO_PROXY/no_proxy through `getenv`.
  static ProxyConfig from_environment(
      const std::function<std::optional<std::string>(const std::string&)>& getenv);
  bool bypass(const std::string& host) const;
};

/// ASCII lower case (header names, host names).
std::string ascii_lower(std::string s);

}  // namespace rebound::net
