#pragma once
// Maps protocol lines to session calls through the command table and their results back to
// responses. It translates only: validation lives in protocol/, behaviour in session/. A line
// is a pi command (protocol.md section 2) or, when it has a `jsonrpc` member, a JSON-RPC 2.0
// request (section 9); each is answered in its own envelope, and the connection's event output
// decides the envelope of lines that cannot carry one (parse errors). Runs on the event loop;
// every line it is given gets exactly one response, except JSON-RPC notifications, which get
// none (blank lines never reach it).

#include <memory>
#include <string_view>

#include "server/events/event_output.h"
#include "server/pi/command_table.h"
#include "server/pi/reply.h"

namespace rebound::server {

class RpcDispatcher {
 public:
  /// `events` is the connection's event output (filter and envelope); without one the
  /// dispatcher keeps its own, whose events go nowhere (tests).
  RpcDispatcher(session::AgentSession& session, JsonSink out, EventOutput* events = nullptr,
                session::McpControl* mcp = nullptr, session::ExtensionControl* extensions = nullptr,
                RpcDialogs* dialogs = nullptr, session::PolicyControl* policy = nullptr);

  /// Where answers built as text go (Reply::ok_text); without one they are parsed and sent as
  /// JSON through `out`.
  void set_line_sink(LineSink sink) { line_sink_ = std::move(sink); }

  /// One complete, non-blank line from stdin.
  void handle_line(std::string_view line);
  /// A line that exceeded the limit (its bytes were dropped).
  void handle_too_long(std::size_t max_line_bytes);

 private:
  void handle_jsonrpc(protocol::Json object);
  void run(const protocol::CommandEnvelope& command, ReplyStyle style);
  void line_error(const protocol::ProtocolError& error);

  struct NoOutput : LineWriter {
    void write_line(OutLine) override {}
    void write_text(std::string_view) override {}
  };
  NoOutput no_output_;
  std::unique_ptr<EventOutput> own_events_;
  EventOutput& events_;
  CommandContext context_;
  CommandTable commands_;
  JsonSink out_;
  LineSink line_sink_;
};

}  // namespace rebound::server
