#include "session/retry_control.h"

#include "protocol/name_table.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "session/retry_policy.h"
#include "session/settings.h"

namespace rebound::session {

using protocol::Json;

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool has(const std::string& text, std::string_view part) {
  return text.find(part) != std::string::npos;
}

// `a.?b` of section 12: `a`, at most one character of any kind, then `b`.
bool has_gap(const std::string& text, std::string_view a, std::string_view b) {
  for (std::size_t pos = text.find(a); pos != std::string::npos; pos = text.find(a, pos + 1)) {
    const std::size_t after = pos + a.size();
    if (text.compare(after, b.size(), b) == 0) return true;
    if (after < text.size() && text.compare(after + 1, b.size(), b) == 0) return true;
  }
  return false;
}

std::int64_t saturating_add(std::int64_t a, std::int64_t b) {
  return a > kMaxSafeInteger - b ? kMaxSafeInteger : a + b;
}

}  // namespace

namespace {

constexpr protocol::Named<ErrorClass> kErrorClassNames[] = {
    {ErrorClass::usage_limit, "usage_limit"}, {ErrorClass::rate_limit, "rate_limit"},
    {ErrorClass::overloaded, "overloaded"},   {ErrorClass::timeout, "timeout"},
    {ErrorClass::network, "network"},         {ErrorClass::server_error, "server_error"},
    {ErrorClass::unknown, "unknown"}};
constexpr protocol::Named<DelaySource> kDelaySourceNames[] = {
    {DelaySource::backoff, "backoff"},
    {DelaySource::retry_after, "retry-after"},
    {DelaySource::credential_switch, "credential-switch"}};

}  // namespace

std::string_view to_string(ErrorClass c) {
  return protocol::name_of(c, kErrorClassNames);
}

std::string_view to_string(DelaySource s) {
  return protocol::name_of(s, kDelaySourceNames);
}

std::optional<int> leading_http_status(std::string_view text) {
  if (text.size() < 3) return std::nullopt;
  for (int i = 0; i < 3; ++i)
    if (!std::isdigit(static_cast<unsigned char>(text[i]))) return std::nullopt;
  if (text.size() > 3 && text[3] != ' ') return std::nullopt;
  const int n = (text[0] - '0') * 100 + (text[1] - '0') * 10 + (text[2] - '0');
  if (n < 100 || n > 599) return std::nullopt;
  return n;
}

ErrorInfo classify_retryable_error(std::string_view text) {
  ErrorInfo info;
  info.http_status = leading_http_status(text);
  const std::string t = lower(text);
  const int status = info.http_status.value_or(0);
  // The patterns of section 12 (matched case-insensitively on the lowered text).
  if (has_gap(t, "usage", "limit") || has(t, "limit_reached")) {
    info.error_class = ErrorClass::usage_limit;
  } else if (status == 429 || has_gap(t, "rate", "limit") || has(t, "too many requests")) {
    info.error_class = ErrorClass::rate_limit;
  } else if (status == 529 || has(t, "overloaded")) {
    info.error_class = ErrorClass::overloaded;
  } else if (status == 504 || has(t, "timeout") || has(t, "time out") || has(t, "timedout") ||
             has(t, "timed out") || has(t, "no response within") || has(t, "no data for")) {
    info.error_class = ErrorClass::timeout;
  } else if (has_gap(t, "connection", "error") || has(t, "fetch failed")) {
    info.error_class = ErrorClass::network;
  } else if ((status >= 500 && status <= 599) || has_gap(t, "service", "unavailable") ||
             has_gap(t, "server", "error") || has_gap(t, "internal", "error")) {
    info.error_class = ErrorClass::server_error;
  }
  return info;
}

Json ErrorInfo::to_json(std::string_view message) const {
  Json j{{"message", message}, {"errorClass", to_string(error_class)}};
  if (http_status) j["httpStatus"] = *http_status;
  return j;
}

bool RetryPolicyValues::any() const {
  return max_retries || base_delay_ms || max_delay_ms || jitter || honor_retry_after ||
         max_server_delay_ms || deadline_ms;
}

EffectivePolicy effective_policy(const RetrySettings& settings, const RetryPolicyValues& v) {
  EffectivePolicy p;
  p.max_retries = v.max_retries.value_or(settings.max_retries);
  p.base_delay_ms = v.base_delay_ms.value_or(settings.base_delay_ms);
  p.max_delay_ms = v.max_delay_ms;
  p.jitter = v.jitter.value_or(0);
  p.honor_retry_after = v.honor_retry_after.value_or(false);
  p.max_server_delay_ms = v.max_server_delay_ms;
  p.deadline_ms = v.deadline_ms;
  p.from_session = v.any();
  return p;
}

Json EffectivePolicy::to_json() const {
  Json j{{"maxRetries", max_retries}, {"baseDelayMs", base_delay_ms}};
  if (max_delay_ms) j["maxDelayMs"] = *max_delay_ms;
  // Written as JSON writes it: 0 and 1 without a fraction.
  if (jitter == std::floor(jitter)) {
    j["jitter"] = static_cast<std::int64_t>(jitter);
  } else {
    j["jitter"] = jitter;
  }
  j["honorRetryAfter"] = honor_retry_after;
  if (max_server_delay_ms) j["maxServerDelayMs"] = *max_server_delay_ms;
  if (deadline_ms) j["deadlineMs"] = *deadline_ms;
  j["source"] = from_session ? "session" : "settings";
  return j;
}

std::optional<Error> apply_retry_policy_command(const Json& command, RetryPolicyValues& values) {
  RetryPolicyValues next = values;
  if (command.contains("reset")) {
    if (!command["reset"].is_boolean()) return field_error("reset", "boolean");
    if (command["reset"].get<bool>()) next = RetryPolicyValues{};
  }
  // An integer in [0, max]: a JSON number with an integral value.
  auto integer = [&](const char* key, std::int64_t max,
                     std::optional<std::int64_t>& slot) -> std::optional<Error> {
    if (!command.contains(key)) return std::nullopt;
    const Json& v = command[key];
    const Error bad = field_error(key, "integer 0.." + std::to_string(max) + " or null");
    if (v.is_null()) {
      slot.reset();
      return std::nullopt;
    }
    if (!v.is_number()) return bad;
    const double d = v.get<double>();
    if (d != std::floor(d) || d < 0 || d > static_cast<double>(max)) return bad;
    slot = static_cast<std::int64_t>(d);
    return std::nullopt;
  };
  if (auto e = integer("maxRetries", 100, next.max_retries)) return e;
  if (auto e = integer("baseDelayMs", 3600000, next.base_delay_ms)) return e;
  if (auto e = integer("maxDelayMs", 3600000, next.max_delay_ms)) return e;
  if (command.contains("jitter")) {
    const Json& v = command["jitter"];
    if (v.is_null()) {
      next.jitter.reset();
    } else if (!v.is_number() || v.get<double>() < 0 || v.get<double>() > 1) {
      return field_error("jitter", "number 0..1 or null");
    } else {
      next.jitter = v.get<double>();
    }
  }
  if (command.contains("honorRetryAfter")) {
    const Json& v = command["honorRetryAfter"];
    if (v.is_null()) {
      next.honor_retry_after.reset();
    } else if (!v.is_boolean()) {
      return field_error("honorRetryAfter", "boolean or null");
    } else {
      next.honor_retry_after = v.get<bool>();
    }
  }
  if (auto e = integer("maxServerDelayMs", 86400000, next.max_server_delay_ms)) return e;
  if (auto e = integer("deadlineMs", 86400000, next.deadline_ms)) return e;
  values = next;
  return std::nullopt;
}

std::uint64_t SplitMix64::next() {
  state_ += 0x9E3779B97F4A7C15ULL;
  std::uint64_t z = state_;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

DelayDecision decide_delay(const EffectivePolicy& policy, std::int64_t attempt, std::int64_t now,
                           std::int64_t chain_started_at, bool credential_switch,
                           std::optional<std::int64_t> hint, SplitMix64& rng) {
  DelayDecision d;
  d.chain_started_at = chain_started_at;
  // Steps 2 and 3: the capped backoff, shortened by jitter.
  std::int64_t capped = backoff_delay_ms(policy.base_delay_ms, attempt);
  if (policy.max_delay_ms) capped = std::min(capped, *policy.max_delay_ms);
  d.delay_ms = capped;
  if (policy.jitter > 0) {
    const double u = rng.unit();
    d.delay_ms = capped - static_cast<std::int64_t>(
                              std::floor(static_cast<double>(capped) * policy.jitter * u));
  }
  if (credential_switch) {
    // Step 4: a credential switch wins over every hint and over maxServerDelayMs.
    d.delay_ms = 0;
    d.source = DelaySource::credential_switch;
  } else if (policy.honor_retry_after && hint) {
    // Step 5.
    const std::int64_t h = std::clamp<std::int64_t>(*hint, 0, kMaxSafeInteger);
    if (policy.max_server_delay_ms && h > *policy.max_server_delay_ms) {
      d.end = DelayDecision::End::server_delay_too_long;
      return d;
    }
    if (h > d.delay_ms) {
      d.delay_ms = h;
      d.source = DelaySource::retry_after;
    }
  }
  // Step 6.
  d.next_attempt_at = saturating_add(now, d.delay_ms);
  if (policy.deadline_ms &&
      d.next_attempt_at > saturating_add(chain_started_at, *policy.deadline_ms)) {
    d.end = DelayDecision::End::deadline;
  }
  return d;
}

std::string stop_failure_class(const protocol::AgentMessage& failed, std::int64_t context_window) {
  const std::string text = failed.error_message.value_or("");
  if (is_retryable(failed, context_window))
    return std::string(to_string(classify_retryable_error(text).error_class));
  const auto status = leading_http_status(text);
  if (status == 401 || status == 403) return "authentication_failed";
  if (status && *status >= 400 && *status < 500) return "invalid_request";
  return "unknown";
}

}  // namespace rebound::session
