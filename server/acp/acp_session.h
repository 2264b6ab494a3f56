#pragma once
// What ACP mode keeps for one open session beside the AgentSession itself (which the
// connection's SessionHost owns): its turn (the pending session/prompt), the prompt waiting
// behind it, its tool calls as announced, the permission memory, and what the session depends
// on. Plain data; the connection and the gate change it, on the event loop.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "protocol/json.h"
#include "protocol/messages.h"
#include "server/acp/acp_reply.h"
#include "server/acp/acp_updates.h"
#include "session/agent_session.h"
#include "session/extension_host.h"
#include "session/policy_host.h"
#include "session/session_services.h"
#include "session/tool.h"

namespace rebound::server::acp {

/// One session/prompt until it is answered (section 6.2).
struct Turn {
  explicit Turn(AcpReply r) : reply(std::move(r)) {}
  AcpReply reply;  // the prompt's, answered when the turn ends
  std::uint64_t serial = 0;
  bool cancelled = false;
  bool running = false;  // the session runs it (not yet: a slash command may take it)
  std::int64_t retries = 0;
  bool wrote_text = false;
  std::optional<protocol::StopReason> last;
  std::optional<std::string> last_error;
  std::optional<std::string> compaction_error;
  bool overflow_compaction = false;
};

/// A prompt that arrived while a turn was pending: it runs once that turn is answered.
struct NextPrompt {
  AcpReply reply;
  session::UserInput input;
};

/// A tool call as the client was told of it.
struct ToolState {
  ToolCallInfo info;
  std::optional<std::string> before;  // edit/write: the file before the call (none: absent)
  std::optional<std::string> after;   // edit/write: the file after it (none: not known)
};

class GatedMcpTools;

struct OpenSession {
  std::string id;
  std::string cwd;
  session::SessionSlot slot = 0;
  session::AgentSession* session = nullptr;            // owned by the connection's SessionHost
  std::shared_ptr<void> keep;                          // what the session depends on (its files)
  std::unique_ptr<session::ToolRegistry> gated_tools;  // its tools, as acp runs them
  std::unique_ptr<GatedMcpTools> gated_mcp;            // its MCP tools, as acp runs them
  std::unique_ptr<session::DialogHost> dialogs;        // its extensions' dialogs (acp_dialogs.h)
  std::shared_ptr<session::SessionServices> services;  // its MCP servers and extensions
  std::shared_ptr<session::PolicyControl> policy;      // its permission policy, or none
  std::optional<Turn> turn;
  std::optional<NextPrompt> next;
  std::vector<std::function<void()>> when_idle;  // session/close waiting for the turn
  std::map<std::string, ToolState> tools;
  std::string message_id;
  std::string compaction_id;
  bool closing = false;

  ToolState* tool(const std::string& call_id) {
    const auto it = tools.find(call_id);
    return it == tools.end() ? nullptr : &it->second;
  }
};

}  // namespace rebound::server::acp
