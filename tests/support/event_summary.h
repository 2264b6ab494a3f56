#pragma once
// Renders events as short strings for sequence assertions, e.g. "message_end:assistant:error",
// "agent_end:willRetry=true", "auto_retry_start:1/3:2000:503 overloaded",
// "auto_retry_end:false:1:Retry cancelled", "update:text_delta".

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

}  // namespace rebound::testing
