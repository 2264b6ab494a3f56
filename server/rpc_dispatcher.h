#pragma once
// Maps protocol lines to session calls and their results back to responses. It translates
// only: validation lives in protocol/, behaviour in session/. Runs on the event loop; every
// line it is given gets exactly one response (blank lines never reach it).

#include "protocol/commands.h"
#include "server/reply.h"
#include "session/agent_session.h"

namespace rebound::server {

class RpcDispatcher {
 public:
  RpcDispatcher(session::AgentSession& session, JsonSink out);

  /// One complete, non-blank line from stdin.
  void handle_line(std::string_view line);
  /// A line that exceeded the limit (its bytes were dropped).
  void handle_too_long(std::size_t max_line_bytes);

 private:
  void dispatch(protocol::Command& command, Reply& reply);

  session::AgentSession& session_;
  JsonSink out_;
};

}  // namespace rebound::server
