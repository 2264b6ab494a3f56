#include "session/retry_policy.h"

#include <cctype>
#include <cstdlib>
#include <ctime>
#include <regex>
#include <string>

namespace rebound::session {

namespace {

using std::regex;
using std::regex_constants::icase;

const regex& retryable_pattern() {
  static const regex r(
      "overloaded|rate.?limit|usage.?limit|too many requests|429|500|502|503|504|"
      "service.?unavailable|server.?error|internal.?error|connection.?error|fetch failed|"
      "retry delay",
      icase);
  return r;
}

const regex& overflow_pattern() {
  static const regex r(
      "prompt is too long|exceeds the context window|input token count.*exceeds the maximum|"
      "maximum prompt length is \\d+|reduce the length of the messages|"
      "maximum context length is \\d+ tokens|exceeds the limit of \\d+|"
      "exceeds the available context size|greater than the context length|"
      "context[_ ]length[_ ]exceeded|too many tokens|token limit exceeded|"
      "input is too long for requested model|context window exceeds limit|"
      "exceeded model token limit|too large for model with \\d+ maximum context length|"
      "model_context_window_exceeded|request_too_large|^4(00|13)\\s*(status code)?\\s*\\(no "
      "body\\)",
      icase);
  return r;
}

const regex& rate_limit_pattern() {
  static const regex r("rate.?limit|too many requests", icase);
  return r;
}

// libstdc++'s regex matcher recurses per character, so a long provider message would overflow
// the stack. Matching looks at the first 4 KiB and the last 256 bytes (where providers append
// " retry-after-ms=<n>"), which bounds the depth whatever arrives.
constexpr std::size_t kHead = 4096;
constexpr std::size_t kTail = 256;

std::string bounded(std::string_view text) {
  if (text.size() <= kHead + kTail) return std::string(text);
  std::string out(text.substr(0, kHead));
  out += '\n';
  out.append(text.substr(text.size() - kTail));
  return out;
}

bool search(std::string_view text, const regex& r) {
  const std::string window = bounded(text);
  return std::regex_search(window, r);
}

// "Wed, 21 Oct 2015 07:28:00 GMT" → epoch ms.
std::optional<std::int64_t> parse_imf_fixdate(const std::string& s) {
  std::tm tm{};
  static const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                  "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  char wday[4] = {}, mon[4] = {};
  int day, year, h, m, sec;
  if (std::sscanf(s.c_str(), "%3s, %d %3s %d %d:%d:%d GMT", wday, &day, mon, &year, &h, &m, &sec) !=
      7) {
    return std::nullopt;
  }
  int month = -1;
  for (int i = 0; i < 12; ++i) {
    if (std::string_view(mon) == kMonths[i]) month = i;
  }
  if (month < 0) return std::nullopt;
  tm.tm_year = year - 1900;
  tm.tm_mon = month;
  tm.tm_mday = day;
  tm.tm_hour = h;
  tm.tm_min = m;
  tm.tm_sec = sec;
  return static_cast<std::int64_t>(::timegm(&tm)) * 1000;
}

std::int64_t not_negative(std::int64_t v) {
  return v < 0 ? 0 : v;
}

// Hint numbers come from servers: parse without exceptions and saturate instead of overflowing.
std::int64_t saturating_int(const std::string& digits) {
  std::int64_t v = 0;
  for (char c : digits) {
    if (v > (kMaxSafeInteger - (c - '0')) / 10) return kMaxSafeInteger;
    v = v * 10 + (c - '0');
  }
  return v;
}

std::int64_t saturating_ms(double ms) {
  if (!(ms > 0)) return 0;
  if (ms >= static_cast<double>(kMaxSafeInteger)) return kMaxSafeInteger;
  return static_cast<std::int64_t>(ms);
}

double decimal(const std::string& text) {
  return std::strtod(text.c_str(), nullptr);
}

}  // namespace

bool is_context_overflow(const protocol::AgentMessage& m, std::int64_t context_window) {
  if (!m.is_assistant()) return false;
  if (m.stop_reason == protocol::StopReason::error) {
    if (!m.error_message) return false;
    return search(*m.error_message, overflow_pattern()) &&
           !search(*m.error_message, rate_limit_pattern());
  }
  if (m.stop_reason == protocol::StopReason::stop && context_window > 0) {
    return m.usage.input + m.usage.cache_read > context_window;
  }
  return false;
}

bool is_retryable(const protocol::AgentMessage& m, std::int64_t context_window) {
  if (!m.is_assistant() || m.stop_reason != protocol::StopReason::error) return false;
  if (!m.error_message || m.error_message->empty()) return false;
  if (is_context_overflow(m, context_window)) return false;
  return search(*m.error_message, retryable_pattern());
}

bool is_usage_limit(std::string_view error_message) {
  static const regex r("usage.?limit|usage_limit_reached|limit_reached", icase);
  return search(error_message, r);
}

std::int64_t backoff_delay_ms(std::int64_t base_delay_ms, std::int64_t attempt) {
  if (base_delay_ms <= 0) return 0;
  std::int64_t delay = base_delay_ms > kMaxSafeInteger ? kMaxSafeInteger : base_delay_ms;
  for (std::int64_t i = 1; i < attempt; ++i) {
    if (delay > kMaxSafeInteger / 2) return kMaxSafeInteger;
    delay *= 2;
  }
  return delay;
}

std::optional<std::int64_t> parse_retry_hint_ms(std::string_view text, std::int64_t now_ms) {
  const std::string s = bounded(text);
  std::smatch m;
  static const regex after_ms("retry-after-ms\\s*[:=]\\s*(\\d+)", icase);
  static const regex after_s("retry-after\\s*[:=]\\s*(\\d+(?:\\.\\d+)?)(?![\\d.])", icase);
  static const regex after_date(
      "retry-after\\s*[:=]\\s*([A-Za-z]{3}, \\d{1,2} [A-Za-z]{3} \\d{4} \\d{2}:\\d{2}:\\d{2} GMT)",
      icase);
  static const regex reset_ms("x-ratelimit-reset-ms\\s*[:=]\\s*(\\d+)", icase);
  static const regex reset_s("x-ratelimit-reset\\s*[:=]\\s*(\\d+(?:\\.\\d+)?)", icase);
  if (std::regex_search(s, m, after_ms)) return saturating_int(m[1].str());
  if (std::regex_search(s, m, after_s)) return saturating_ms(decimal(m[1].str()) * 1000);
  if (std::regex_search(s, m, after_date)) {
    if (auto at = parse_imf_fixdate(m[1].str())) return not_negative(*at - now_ms);
  }
  if (std::regex_search(s, m, reset_ms)) {
    const std::int64_t n = saturating_int(m[1].str());
    return n > 1000000000000LL ? not_negative(n - now_ms) : n;
  }
  if (std::regex_search(s, m, reset_s)) {
    const double n = decimal(m[1].str());
    return n > 1e9 ? not_negative(saturating_ms(n * 1000) - now_ms) : saturating_ms(n * 1000);
  }
  return std::nullopt;
}

}  // namespace rebound::session
