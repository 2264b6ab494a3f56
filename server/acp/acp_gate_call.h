#pragma once
// One tool call passing the ACP gate (acp_gate.h): what the gate's two files share of it.
// Event loop only.

#include <memory>
#include <string>

#include "server/acp/acp_gate.h"

namespace rebound::server::acp {

struct ToolGate::CallState {
  session::SessionSlot slot = 0;
  std::string session_id;
  std::string call_id;
  std::string name;
  session::Tool* inner_tool = nullptr;
  Json args;
  session::ToolContext context;
  session::Tool::Progress progress;
  session::Tool::Done done;
  std::unique_ptr<session::ToolCall> inner;  // the call running locally
  bool dead = false;                         // the session let go of the call
  bool finished = false;                     // `done` ran
  bool waiting = false;                      // for the client's answer or a local file operation
  bool cancelled = false;
};

}  // namespace rebound::server::acp
