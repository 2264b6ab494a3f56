#pragma once
// Renders events as short strings for sequence assertions, e.g. "message_end:assistant:error",
// "agent_end:willRetry=true", "auto_retry_start:1/3:2000:503 overloaded",
// "auto_retry_end:false:1:Retry cancelled", "update:text_delta",
// "auto_compaction_start:overflow", "auto_compaction_end:aborted=false:willRetry=true".

#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "protocol/json.h"

namespace doctest {
template <>
struct StringMaker<std::vector<std::string>> {
  static String convert(const std::vector<std::string>& v) {
    std::string out = "[";
    for (const auto& s : v)
      out += "\n  " + s;
    return (out + " ]").c_str();
  }
};
}  // namespace doctest

namespace rebound::testing {

inline std::string summarize(const protocol::Json& e) {
  const std::string type = e.value("type", std::string("?"));
  if (type == "message_start" || type == "message_end" || type == "turn_end") {
    const auto& m = e["message"];
    std::string s = type + ":" + m.value("role", std::string());
    if (m["role"] == "assistant") s += ":" + m.value("stopReason", std::string());
    return s;
  }
  if (type == "message_update")
    return "update:" + e["assistantMessageEvent"]["type"].get<std::string>();
  if (type == "agent_end")
    return type + ":willRetry=" + (e["willRetry"].get<bool>() ? "true" : "false");
  if (type == "auto_retry_start") {
    return type + ":" + std::to_string(e["attempt"].get<long>()) + "/" +
           std::to_string(e["maxAttempts"].get<long>()) + ":" +
           std::to_string(e["delayMs"].get<long>()) + ":" + e["errorMessage"].get<std::string>();
  }
  if (type == "auto_retry_end") {
    std::string s = type + ":" + (e["success"].get<bool>() ? "true" : "false") + ":" +
                    std::to_string(e["attempt"].get<long>());
    if (e.contains("finalError")) s += ":" + e["finalError"].get<std::string>();
    return s;
  }
  if (type == "auto_compaction_start") return type + ":" + e["reason"].get<std::string>();
  if (type == "auto_compaction_end") {
    std::string s = type + ":aborted=" + (e["aborted"].get<bool>() ? "true" : "false") +
                    ":willRetry=" + (e["willRetry"].get<bool>() ? "true" : "false");
    if (e.contains("errorMessage")) s += ":" + e["errorMessage"].get<std::string>();
    return s;
  }
  if (type == "response") {
    return "response:" + e.value("command", std::string()) +
           (e.value("success", false) ? "" : ":error");
  }
  return type;
}

inline std::vector<std::string> summarize(const std::vector<protocol::Json>& events) {
  std::vector<std::string> out;
  for (const auto& e : events)
    out.push_back(summarize(e));
  return out;
}

using Summary = std::vector<std::string>;

inline Summary concat(std::initializer_list<Summary> parts) {
  Summary out;
  for (const auto& p : parts)
    out.insert(out.end(), p.begin(), p.end());
  return out;
}

/// A prompt's first run that ends in an error (without its agent_end).
inline const Summary& failed_first_run() {
  static const Summary s{"agent_start",
                         "turn_start",
                         "message_start:user",
                         "message_end:user",
                         "message_start:assistant:error",
                         "message_end:assistant:error",
                         "turn_end:assistant:error"};
  return s;
}

/// A retried (continued) run that ends in an error (without its agent_end).
inline const Summary& failed_continuation() {
  static const Summary s{"agent_start", "turn_start", "message_start:assistant:error",
                         "message_end:assistant:error", "turn_end:assistant:error"};
  return s;
}

/// Only the auto_retry_start / auto_retry_end events, summarized.
inline Summary retry_events(const std::vector<protocol::Json>& events) {
  Summary out;
  for (const auto& e : events) {
    if (e["type"] == "auto_retry_start" || e["type"] == "auto_retry_end") {
      out.push_back(summarize(e));
    }
  }
  return out;
}

}  // namespace rebound::testing
