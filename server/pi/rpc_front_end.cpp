#include "server/pi/rpc_front_end.h"

#include "protocol/json_line.h"

namespace rebound::server {

RpcFrontEnd::RpcFrontEnd(RpcFrontEndDeps deps)
    : writer_(deps.writer),
      scheduler_(deps.scheduler),
      mcp_(std::move(deps.mcp)),
      events_(deps.writer, deps.envelope),
      extensions_(std::move(deps.extensions)),
      policy_(std::move(deps.policy)),
      make_session_(std::move(deps.make_session)),
      dialogs_(deps.scheduler, events_, 0),
      command_seen_(deps.command_seen ? std::move(deps.command_seen)
                                      : std::make_shared<bool>(false)) {
  slot_ = host_.add([this](session::SessionSlot slot) { return make_session_(slot, events_); });
  dialogs_.set_slot(slot_);
  dispatcher_ = std::make_unique<RpcDispatcher>(
      *host_.find(slot_), [this](const protocol::Json& j) { write(j); }, &events_, mcp_.get(),
      extensions_.get(), &dialogs_, policy_.get());
  dispatcher_->set_line_sink([this](std::string line) {
    writer_.write_line(std::move(line));
    if (idle_.waiting()) idle_.check(busy());
  });
  if (mcp_) {
    // MCP status changes are events once the first command was read (mcp.md section 8).
    mcp_->on_update([this](const protocol::Json& fields) {
      if (*command_seen_)
        events_.on_event(session::Event{slot_, session::ev::McpServerUpdate{&fields}});
    });
  }
}

RpcFrontEnd::~RpcFrontEnd() {
  if (mcp_) mcp_->on_update(nullptr);
}

// The MCP servers start on the loop's first turn, once the answer to a command that was
// already waiting on stdin is written: spawning them (a few ms each, the parent held until the
// exec) does not delay it. Posted after stdin's first read was started, so that read completes
// first when a command is already there.
void RpcFrontEnd::start() {
  if (!mcp_ && !extensions_) return;
  std::weak_ptr<bool> alive = alive_;
  scheduler_.post([this, alive] {
    if (alive.expired()) return;
    writer_.when_drained([this, alive] {
      if (alive.expired() || shutting_down_) return;
      if (extensions_) extensions_->start_all();
      if (mcp_) mcp_->start_all();
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
  if (extensions_) {
    std::weak_ptr<bool> alive = alive_;
    extensions_->stop_all("quit", [this, alive] {
      if (!alive.expired()) idle_.check(busy());
    });
  }
  // MCP servers stop after the protocol work above, all at once (mcp.md section 3.4).
  if (mcp_) {
    std::weak_ptr<bool> alive = alive_;
    mcp_->stop_all([this, alive] {
      if (!alive.expired()) idle_.check(busy());
    });
  }
}

bool RpcFrontEnd::busy() const {
  const session::AgentSession* session = host_.find(slot_);
  return (session && (session->is_bash_running() || session->is_loading())) ||
         (mcp_ && mcp_->any_running()) || (extensions_ && extensions_->any_running());
}

void RpcFrontEnd::when_idle(std::function<void()> idle) {
  idle_.wait(std::move(idle), busy());
}

bool RpcFrontEnd::stops_processes() const {
  return (mcp_ && mcp_->any_running()) || (extensions_ && extensions_->any_running());
}

}  // namespace rebound::server
