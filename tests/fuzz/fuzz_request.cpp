// Every request Rebound builds is one the real API accepts, in any state a session reaches
// (providers.md section 7): the input is read as a session's context (user prompts, assistant
// turns of four providers with thinking, text and tool calls under odd ids, results, failed
// turns, bash executions), a target model and a thinking level; the request body each of the
// four codecs makes from it must pass the strict fake's rules of that API
// (tests/support/strict_llm.h), with the signatures and encrypted reasoning the "same model"
// issued. A refusal aborts with the API's error text.

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "session/llm/request_codec.h"
#include "session/llm/wire_api.h"
#include "tests/support/strict_rules.h"

using namespace rebound;
using namespace rebound::session::llm;
using protocol::AgentMessage;
using protocol::ContentBlock;
using protocol::Json;
using protocol::Role;

namespace {

struct Reader {
  std::string_view in;
  std::size_t at = 0;
  bool more() const { return at < in.size(); }
  unsigned byte() { return at < in.size() ? static_cast<unsigned char>(in[at++]) : 0u; }
};

struct Origin {
  const char* provider;
  const char* api;
  const char* model;
};
constexpr Origin kOrigins[] = {
    {"claude", "anthropic-messages", "claude-sonnet-4-5"},
    {"chat", "openai-completions", "gpt-4o"},
    {"resp", "openai-responses", "gpt-5"},
    {"resp", "openai-responses", "gpt-5.1-codex"},
    {"gem", "google-generative-ai", "gemini-2.5-flash"},
    {"gem", "google-generative-ai", "gemini-3-pro-preview"},
};

const char* const kIds[] = {"call_1|fc_1",    "toolu_01A", "read_3", "call_2",
                            "id with spaces", "x|1",       "x_1",    ""};

std::string long_id(unsigned n) {
  return "call_" + std::string(40 + n % 40, 'a') + "|fc_" + std::string(30, 'b');
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Reader r{std::string_view(reinterpret_cast<const char*>(data), size)};
  testing::Issued issued;
  std::vector<AgentMessage> context;
  std::vector<std::string> open;  // ids of the last assistant turn's calls
  int n = 0;
  auto user = [&](std::string text) {
    AgentMessage m;
    m.role = Role::user;
    m.content.push_back(ContentBlock::make_text(std::move(text)));
    context.push_back(std::move(m));
  };
  user("start");
  while (r.more() && context.size() < 40) {
    const unsigned op = r.byte() % 6;
    if (op == 0) {
      user("prompt " + std::to_string(++n));
    } else if (op == 1 || op == 2) {
      const Origin& o = kOrigins[r.byte() % std::size(kOrigins)];
      AgentMessage m;
      m.role = Role::assistant;
      m.provider = o.provider;
      m.api = o.api;
      m.model = o.model;
      const unsigned flags = r.byte();
      const std::string api = o.api;
      if (flags & 1) {
        // Thinking as each API leaves it: Claude's signature (or a redacted block's data), a
        // Responses reasoning item, a Gemini thought signature; or none (cut off).
        ContentBlock t = ContentBlock::make_thinking("thought");
        const bool sign = flags & 2;
        const std::string token = issued.make(o.model);
        if (sign && api == "anthropic-messages") {
          t.signature = token;
          t.redacted = flags & 4;
        } else if (sign && api == "openai-responses") {
          Json item{
              {"id", "rs_" + std::to_string(n)}, {"type", "reasoning"}, {"summary", Json::array()}};
          if (flags & 4) item["encrypted_content"] = token;  // absent without `include`
          t.signature = item.dump();
        } else if (sign && api == "google-generative-ai") {
          t.signature = token;
        }
        m.content.push_back(std::move(t));
      }
      if (flags & 8) m.content.push_back(ContentBlock::make_text((flags & 16) ? "" : "text"));
      open.clear();
      const unsigned calls = op == 2 ? 1 + r.byte() % 3 : 0;
      for (unsigned i = 0; i < calls; ++i) {
        const unsigned pick = r.byte();
        std::string id = pick % 9 == 8 ? long_id(pick) : kIds[pick % 8];
        ContentBlock call = ContentBlock::make_tool_call(id, "read", Json::object());
        if ((r.byte() & 1) && api == "google-generative-ai") call.signature = issued.make(o.model);
        m.content.push_back(std::move(call));
        open.push_back(id);
      }
      const unsigned end = r.byte() % 8;
      m.stop_reason = end == 0   ? protocol::StopReason::aborted
                      : end == 1 ? protocol::StopReason::error
                      : calls    ? protocol::StopReason::tool_use
                                 : protocol::StopReason::stop;
      context.push_back(std::move(m));
    } else if (op == 3) {
      // A result: for one of the last turn's calls, or for an id no call has.
      AgentMessage m;
      m.role = Role::tool_result;
      const unsigned pick = r.byte();
      m.tool_call_id = !open.empty() && pick % 4 ? open[pick % open.size()] : kIds[pick % 8];
      m.tool_name = "read";
      m.content.push_back(ContentBlock::make_text(pick & 1 ? "" : "out"));
      if (pick & 2) m.content.push_back(ContentBlock::make_image("AA==", "image/png"));
      m.is_error = pick & 4;
      context.push_back(std::move(m));
    } else if (op == 4) {
      AgentMessage m;
      m.role = Role::bash_execution;
      m.command = "ls";
      m.output = "x";
      m.exit_code = 0;
      context.push_back(std::move(m));
    } else {
      // The context a request is made for ends with a prompt or with a batch's results.
      if (r.byte() & 1) user("again");
    }
  }
  // A request follows a prompt or the results of the last turn's calls.
  if (context.back().role != Role::user && context.back().role != Role::tool_result) user("last");

  const Origin& target = kOrigins[r.byte() % std::size(kOrigins)];
  LlmRequest request;
  request.model.id = target.model;
  request.model.provider = target.provider;
  request.model.api = target.api;
  request.model.reasoning = std::string(target.model) != "gpt-4o";
  request.model.input = {"text", "image"};
  request.model.max_tokens = 32000;
  request.thinking_level = static_cast<protocol::ThinkingLevel>(r.byte() % 6);
  request.system_prompt = "be brief";
  request.session_id = "sid";
  request.messages = std::move(context);
  session::ToolDefinition tool;
  tool.name = "read";
  tool.description = "read a file";
  tool.parameters = Json{{"type", "object"}, {"properties", Json::object()}};
  request.tools = {tool};
  request.cache_retention = static_cast<protocol::CacheRetention>(r.byte() % 3);

  const WireApi* api = find_wire_api(target.api);
  if (!api) std::abort();
  const Json body = api->request_body(request, WireOptions{});
  std::optional<testing::Refusal> refusal;
  const std::string api_name = target.api;
  if (api_name == "anthropic-messages") {
    refusal = testing::check_anthropic({{"anthropic-version", "2023-06-01"}}, body, issued);
  } else if (api_name == "openai-completions") {
    refusal = testing::check_chat(body);
  } else if (api_name == "openai-responses") {
    refusal = testing::check_responses(body, issued);
  } else {
    refusal = testing::check_gemini(target.model, body, issued);
  }
  if (refusal) {
    std::fprintf(stderr, "%s refused: %d %s\n%s\n", target.model, refusal->status,
                 refusal->message.c_str(), body.dump().c_str());
    std::abort();
  }
  return 0;
}
