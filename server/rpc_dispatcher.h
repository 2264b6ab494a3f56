#pragma once
// Maps protocol lines to session calls through the command table and their results back to
// responses. It translates only: validation lives in protocol/, behaviour in session/. Runs on
// the event loop; every line it is given gets exactly one response (blank lines never reach
// it).

#include <string_view>

#include "server/command_table.h"
#include "server/reply.h"

namespace rebound::server {

class RpcDispatcher {
 public:
  RpcDispatcher(session::AgentSession& session, JsonSink out);

  /// One complete, non-blank line from stdin.
  void handle_line(std::string_view line);
  /// A line that exceeded the limit (its bytes were dropped).
  void handle_too_long(std::size_t max_line_bytes);

 private:
  CommandContext context_;
  CommandTable commands_;
  JsonSink out_;
};

}  // namespace rebound::server
