#include "net/url.h"

#include <cctype>

namespace rebound::net {

std::optional<Url> parse_url(std::string_view url) {
  Url u;
  std::string_view rest;
  if (url.rfind("https://", 0) == 0) {
    u.tls = true;
    rest = url.substr(8);
  } else if (url.rfind("http://", 0) == 0) {
    rest = url.substr(7);
  } else {
    return std::nullopt;
  }
  const auto slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  u.target = slash == std::string_view::npos ? "/" : std::string(rest.substr(slash));
  if (authority.empty()) return std::nullopt;
  if (authority.front() == '[') {  // [::1]:8080
    const auto close = authority.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    u.host = std::string(authority.substr(1, close - 1));
    authority.remove_prefix(close + 1);
    if (!authority.empty() && authority.front() == ':') u.port = authority.substr(1);
  } else {
    const auto colon = authority.rfind(':');
    u.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) u.port = authority.substr(colon + 1);
  }
  if (u.port.empty()) u.port = u.tls ? "443" : "80";
  if (u.host.empty()) return std::nullopt;
  return u;
}

ProxyConfig ProxyConfig::from_environment(
    const std::function<std::optional<std::string>(const std::string&)>& getenv) {
  ProxyConfig c;
  auto value = [&](const char* upper, const char* low) {
    auto v = getenv(upper);
    return v ? v : getenv(low);
  };
  if (auto proxy = value("HTTPS_PROXY", "https_proxy")) {
    std::string url = *proxy;
    if (url.find("://") == std::string::npos) url = "http://" + url;
    c.https_proxy = parse_url(url);
  }
  if (auto list = value("NO_PROXY", "no_proxy")) {
    std::size_t start = 0;
    while (start <= list->size()) {
      const auto comma = list->find(',', start);
      std::string item = list->substr(start, comma - start);
      item.erase(0, item.find_first_not_of(" \t"));
      item.erase(item.find_last_not_of(" \t") + 1);
      if (const auto colon = item.rfind(':'); colon != std::string::npos && item.front() != '[') {
        item.erase(colon);  // ports are not compared
      }
      if (!item.empty()) c.no_proxy.push_back(ascii_lower(item));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  return c;
}

bool ProxyConfig::bypass(const std::string& host) const {
  const std::string h = ascii_lower(host);
  for (const auto& rule : no_proxy) {
    if (rule == "*") return true;
    const std::string suffix = rule.front() == '.' ? rule : "." + rule;
    const std::string bare = rule.front() == '.' ? rule.substr(1) : rule;
    if (h == bare) return true;
    if (h.size() > suffix.size() &&
        h.compare(h.size() - suffix.size(), suffix.size(), suffix) == 0) {
      return true;
    }
  }
  return false;
}

std::string ascii_lower(std::string s) {
  for (auto& c : s)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace rebound::net
