#include "server/pi/rpc_front_end.h"

#include "protocol/json_line.h"

namespace rebound::server {

RpcFrontEnd::RpcFrontEnd(RpcFrontEndDeps deps)
    : writer_(deps.writer),
      scheduler_(deps.scheduler),
      services_(std::move(deps.services)),
      events_(deps.writer, deps.envelope),
      make_session_(std::move(deps.make_session)),
      dialogs_(deps.scheduler, events_, 0),
      command_seen_(deps.command_seen ? std::move(deps.command_seen)
                                      : std::make_shared<bool>(false)) {
  slot_ = host_.add([this](session::SessionSlot slot) { return make_session_(slot, events_); });
  dialogs_.set_slot(slot_);
  dispatcher_ = std::make_unique<RpcDispatcher>(
      *host_.find(slot_), [this](const protocol::Json& j) { write(j); }, &events_, mcp(),
      services_ ? services_->extensions() : nullptr, &dialogs_,
      services_ ? services_->policy() : nullptr);
  dispatcher_->set_line_sink([this](std::string line) {
    writer_.write_line(std::move(line));
    if (idle_.waiting()) idle_.check(busy());
  });
  if (session::McpControl* servers = mcp()) {
    // MCP status changes are events once the first command was read (mcp.md section 8).
    servers->on_update([this](const protocol::Json& fields) {
      if (*command_seen_)
        events_.on_event(session::Event{slot_, session::ev::McpServerUpdate{&fields}});
    });
  }
}

RpcFrontEnd::~RpcFrontEnd() {
  if (session::McpControl* servers = mcp()) servers->on_update(nullptr);
}

// The MCP servers start on the loop's first turn, once the answer to a command that was
// already waiting on stdin is written: spawning them (a few ms each, the parent held until the
// exec) does not delay it. Posted after stdin's first read was started, so that read completes
// first when a command is already there.
void RpcFrontEnd::start() {
  if (!services_ || (!services_->mcp() && !services_->extensions())) return;
  std::weak_ptr<bool> alive = alive_;
  scheduler_.post([this, alive] {
    if (alive.expired()) return;
    writer_.when_drained([this, alive] {
      if (alive.expired() || shutting_down_) return;
      services_->start();
    });
  });
}

void RpcFrontEnd::write(const protocol::Json& line) {
  writer_.write_line(protocol::to_line(line));
  // A deferred answer (bash) is the last thing a running command does.
  if (idle_.waiting()) idle_.check(busy());
}

void RpcFrontEnd::handle_line(std::string_view line) {
  *command_seen_ = true;
  dispatcher_->handle_line(line);
}

void RpcFrontEnd::handle_too_long(std::size_t max_line_bytes) {
  *command_seen_ = true;
  dispatcher_->handle_too_long(max_line_bytes);
}

void RpcFrontEnd::shutdown() {
  shutting_down_ = true;
  dialogs_.cancel_all();
  host_.shutdown_all();  // aborts runs; a running bash command's group is killed
  // The services stop after the protocol work above.
  if (services_) {
    std::weak_ptr<bool> alive = alive_;
    services_->stop("quit", [this, alive] {
      if (!alive.expired()) idle_.check(busy());
    });
  }
}

bool RpcFrontEnd::busy() const {
  const session::AgentSession* session = host_.find(slot_);
  return (session && (session->is_bash_running() || session->is_loading())) || stops_processes();
}

void RpcFrontEnd::when_idle(std::function<void()> idle) {
  idle_.wait(std::move(idle), busy());
}

bool RpcFrontEnd::stops_processes() const {
  return services_ && services_->running();
}

}  // namespace rebound::server
