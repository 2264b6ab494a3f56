#pragma once
// The documented rules of the four wire APIs that the strict fake holds every request to
// (providers.md section 7.5), and the error bodies each API answers a violation with. Each
// check_* returns the refusal for the first rule a request breaks; every rule names the
// documentation it comes from (strict_rules.cpp). No I/O: the fake of strict_llm.h serves them
// over HTTP, fuzz_request runs the codecs' requests through them directly.

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "protocol/json.h"

namespace rebound::testing {

/// A request refused as the real API refuses it.
struct Refusal {
  int status = 400;
  std::string body;  // the API's own error body
  std::string message;
};

/// The opaque tokens the fake hands out (thinking signatures, encrypted reasoning, thought
/// signatures), each bound to the model that "made" it: a real service verifies them and
/// refuses one it did not issue to that model.
class Issued {
 public:
  std::string make(const std::string& model);
  bool valid(const std::string& model, const std::string& token) const;

 private:
  std::set<std::pair<std::string, std::string>> tokens_;
  int next_ = 0;
};

// The rules of each API. The Anthropic and Gemini checks need the tokens issued so far.
/// `headers`: the request's, names lower-cased.
std::optional<Refusal> check_anthropic(const std::map<std::string, std::string>& headers,
                                       const protocol::Json& body, const Issued& issued);
std::optional<Refusal> check_chat(const protocol::Json& body);
std::optional<Refusal> check_responses(const protocol::Json& body, const Issued& issued);
std::optional<Refusal> check_gemini(const std::string& model, const protocol::Json& body,
                                    const Issued& issued);

/// Anthropic's prompt cache as the documentation describes it: prefixes written at the
/// `cache_control` breakpoints, a hit looked up at the block boundaries up to 20 blocks before
/// each breakpoint, nothing cached below the model's minimum of 1024 tokens. Tokens are
/// estimated as a quarter of each block's JSON bytes.
class AnthropicCache {
 public:
  struct Usage {
    std::int64_t input = 0, cache_read = 0, cache_write = 0;
  };
  Usage account(const protocol::Json& body);

 private:
  std::set<std::string> cached_;  // model + hash of a prefix
};

/// A string member of a JSON object, or "" (not an object, absent, not a string).
std::string json_string(const protocol::Json& object, const char* key);

/// The APIs' error bodies: Anthropic's {"type":"error","error":{type,message}}, OpenAI's
/// {"error":{message,type,param,code}}, Google's {"error":{code,message,status}}.
Refusal anthropic_error(int status, const std::string& type, const std::string& message);
Refusal openai_error(int status, const std::string& message, const std::string& param,
                     const std::string& code, const std::string& type = "invalid_request_error");
Refusal gemini_error(int status, const std::string& message,
                     const std::string& state = "INVALID_ARGUMENT");

}  // namespace rebound::testing
