// ACP mode's methods (acp.md sections 3 to 6 and 11) as one table: initialize, authenticate,
// the session methods and the `_rebound/*` methods, which run the rpc commands' own handlers.

#include <utility>

#include "server/acp/acp_connection.h"
#include "server/acp/acp_dialogs.h"
#include "server/acp/acp_replay.h"
#include "server/acp/acp_translate.h"
#include "server/acp/acp_updates.h"

namespace rebound::server {

using acp::AcpReply;
using acp::MethodKind;
using protocol::Json;
namespace code = protocol::jsonrpc_code;

void AcpConnection::add_methods() {
  using P = acp::SessionParams;
  methods_.add<acp::InitializeParams>(
      "initialize", MethodKind::request, acp::read_initialize,
      [this](acp::InitializeParams p, AcpReply r) { initialize(p, std::move(r)); });
  methods_.add<acp::AuthenticateParams>(
      "authenticate", MethodKind::request, acp::read_authenticate,
      [](acp::AuthenticateParams p, AcpReply r) {
        r.fail(code::invalid_params, "Invalid params: unknown auth method: " + p.method_id);
      });
  methods_.add<acp::OpenParams>("session/new", MethodKind::request, acp::read_new_session,
                                [this](acp::OpenParams p, AcpReply r) {
                                  open_session(std::move(p), OpenKind::create, std::move(r));
                                });
  if (!options_.no_session) {
    methods_.add<acp::OpenParams>("session/load", MethodKind::request, acp::read_load_session,
                                  [this](acp::OpenParams p, AcpReply r) {
                                    open_session(std::move(p), OpenKind::load, std::move(r));
                                  });
    methods_.add<acp::OpenParams>("session/resume", MethodKind::request, acp::read_load_session,
                                  [this](acp::OpenParams p, AcpReply r) {
                                    open_session(std::move(p), OpenKind::resume, std::move(r));
                                  });
  }
  methods_.add<P>("session/prompt", MethodKind::request, acp::read_session_params,
                  [this](P p, AcpReply r) { prompt(std::move(p), std::move(r)); });
  methods_.add<P>("session/close", MethodKind::request, acp::read_session_params,
                  [this](P p, AcpReply r) { close(std::move(p), std::move(r)); });
  methods_.add<P>("session/set_mode", MethodKind::request, acp::read_session_params,
                  [this](P p, AcpReply r) { set_mode(std::move(p), std::move(r)); });
  methods_.add<P>("session/cancel", MethodKind::notification, acp::read_session_params,
                  [this](P p, AcpReply r) {
                    cancel(std::move(p));
                    r.ok(Json::object());  // sent with an id: a request, answered once
                  });
  methods_.add_raw("$/cancel_request", MethodKind::notification,
                   [this](const Json& params, AcpReply r) {
                     cancel_request(params);
                     r.ok(Json::object());
                   });
  add_rebound_methods();
}

void AcpConnection::initialize(acp::InitializeParams params, AcpReply reply) {
  caps_ =
      acp::ClientCaps{params.fs_read, params.fs_write, params.notices, params.compaction_updates};
  reply.ok(acp::initialize_result(options_.no_session, options_.version));
}

void AcpConnection::open_session(acp::OpenParams params, OpenKind kind, AcpReply reply) {
  if (params.session_id && (by_id_.count(*params.session_id) || loading_.count(*params.session_id)))
    return reply.fail(code::invalid_params,
                      "Invalid params: session already open: " + *params.session_id);
  if (kind == OpenKind::create)
    return open_loaded(std::move(params), kind, std::move(reply), std::nullopt);
  // The file is read off the loop: other sessions and requests go on meanwhile.
  const std::string id = *params.session_id;
  const std::string cwd = params.cwd;
  loading_.emplace(id, Loading{});
  auto pending = std::make_shared<AcpReply>(std::move(reply));
  std::weak_ptr<bool> alive = alive_;
  auto cancel =
      loader_(cwd, id,
              [this, alive, id, kind, pending,
               params = std::move(params)](session::Result<AcpLoadedFile> read) mutable {
                if (alive.expired()) return pending->abandon();
                const auto it = loading_.find(id);
                std::vector<Waiting> waiting;
                if (it != loading_.end()) {
                  waiting = std::move(it->second.waiting);
                  loading_.erase(it);
                }
                if (!read) {
                  pending->fail(read.error());
                } else {
                  open_loaded(std::move(params), kind, std::move(*pending), std::move(*read));
                }
                for (auto& w : waiting)
                  run_method(w.method, std::move(w.id), w.params);
                if (idle_.waiting()) idle_.check(busy());
              });
  // `done` may have run already (no such file): then there is nothing left to cancel.
  if (const auto it = loading_.find(id); it != loading_.end())
    it->second.cancel = std::move(cancel);
}

void AcpConnection::open_loaded(acp::OpenParams params, OpenKind kind, AcpReply reply,
                                std::optional<AcpLoadedFile> loaded) {
  auto open = std::make_unique<OpenSession>();
  open->cwd = params.cwd;
  // The replay is made before the session takes the conversation up: the session keeps the
  // context only, not the failed attempts and compacted messages the editor is shown too.
  std::vector<Json> replay;
  if (kind == OpenKind::load && loaded) {
    auto& file = loaded->loaded;
    if (!file.restored) file.restored = session::restore_session_releasing(file);
    replay = acp::replay_updates(file.restored->history, params.cwd);
  }
  std::optional<session::Error> failed;
  const session::SessionSlot slot = host_.add([&](session::SessionSlot slot) {
    open->slot = slot;
    open->gated_tools = gate_.gate_tools(base_tools_, slot);
    open->gated_mcp = std::make_unique<acp::GatedMcpTools>(gate_, slot);
    OpenSession* o = open.get();
    open->dialogs = std::make_unique<acp::AcpDialogs>(
        scheduler_, [o] { return o->id; }, params.cwd,
        [this](const std::string& method, Json p, protocol::JsonRpcPeer::Answer answer) {
          client_.request(method, std::move(p), std::move(answer));
        },
        [o] { return o->turn.has_value(); });
    auto made = factory_(params.cwd, slot, *this, *open->gated_tools, std::move(loaded),
                         params.mcp_servers, open->gated_mcp.get(), open->dialogs.get());
    if (!made) {
      failed = made.error();
      return std::unique_ptr<session::AgentSession>();
    }
    open->keep = std::move(made->keep);
    open->services = std::move(made->services);
    open->policy = std::move(made->policy);
    open->gated_mcp->set_inner(made->offered    ? made->offered
                               : open->services ? open->services->mcp()
                                                : nullptr);
    return std::move(made->session);
  });
  if (!slot) return reply.fail(failed.value_or(session::Error{}));
  open->session = host_.find(slot);
  open->id = open->session->session_id();
  if (retry_control_) open->session->enable_retry_control();
  // The session's extensions and MCP servers start in the background; the first prompt waits
  // for the servers (mcp.md section 3.2).
  if (open->services) open->services->start();
  OpenSession& s = *open;
  by_id_[open->id] = slot;
  open_[slot] = std::move(open);
  if (kind == OpenKind::create) {
    Json result = Json::object();
    result["sessionId"] = s.id;
    result["modes"] = modes_of(s);
    if (const auto& file = s.session->session_file())
      result["_meta"] = Json{{"rebound", Json{{"sessionFile", *file}}}};
    reply.ok(std::move(result));
    return advertise_commands(slot);
  }
  acp::complete_replayed_calls(replay, s.session->settled_outcomes());
  for (auto& body : replay)
    update(s, std::move(body));
  replay.clear();
  reply.ok(Json{{"modes", modes_of(s)}});
  advertise_commands(slot);
}

void AcpConnection::advertise_commands(session::SessionSlot slot) {
  OpenSession* s = find(slot);
  if (!s) return;
  // The session's extension commands, then its templates and skills (sessions.md section 15).
  auto send = [this, slot] {
    OpenSession* open = find(slot);
    if (!open || open->closing) return;
    std::vector<Json> list;
    if (const session::SlashCommands* commands = open->session->slash_commands()) {
      for (const auto& e : commands->list())
        list.push_back(Json{{"name", e["name"]}, {"description", e["description"]}});
    }
    for (auto& e : open->session->prompts().acp_commands())
      list.push_back(std::move(e));
    if (!list.empty()) update(*open, acp::available_commands_update(std::move(list)));
  };
  session::SlashCommands* commands = s->session->slash_commands();
  if (!commands) return send();
  // Once the session's extensions are up (at once when they are), after the answer.
  std::weak_ptr<bool> alive = alive_;
  commands->when_known([this, alive, send] {
    if (alive.expired() || shutting_down_) return;
    send();
  });
}

void AcpConnection::prompt(acp::SessionParams params, AcpReply reply) {
  OpenSession* s = require(params.session_id, reply);
  if (!s) return;
  const auto blocks = params.params.find("prompt");
  if (blocks == params.params.end())
    return reply.fail(code::invalid_params, "Invalid params: prompt: expected array");
  auto input = acp::prompt_input(*blocks);
  if (!input) return reply.fail(code::invalid_params, input.error().message);
  // The turn answers when it ends: the reply goes with it.
  if (s->turn || s->next) {
    // No queueing in ACP v1: the earlier prompt is cancelled and answered first, then this one
    // runs (a prompt that was itself waiting is answered `cancelled` at once).
    drop_next(*s);
    s->next.emplace(acp::NextPrompt{std::move(reply), std::move(*input)});
    if (s->turn) cancel_turn(*s);
    return;
  }
  start_turn(*s, std::move(reply), std::move(*input));
}

void AcpConnection::cancel(acp::SessionParams params) {
  if (OpenSession* s = find(params.session_id)) cancel_turn(*s);
}

void AcpConnection::cancel_request(const Json& params) {
  const auto it = params.find("requestId");
  if (it == params.end()) return;
  for (auto& [slot, s] : open_) {
    if (s->turn && s->turn->reply.id() == *it) {
      cancel_turn(*s);
      return;
    }
  }
}

void AcpConnection::close(acp::SessionParams params, AcpReply reply) {
  OpenSession* s = find(params.session_id);
  if (!s)
    return reply.fail(code::resource_not_found, "Resource not found: session " + params.session_id);
  s->closing = true;
  drop_next(*s);
  const session::SessionSlot slot = s->slot;
  auto pending = std::make_shared<AcpReply>(std::move(reply));
  auto finish = [this, slot, pending] {
    const auto found = open_.find(slot);
    if (found == open_.end()) return;
    std::unique_ptr<OpenSession> open = std::move(found->second);
    open_.erase(found);
    by_id_.erase(open->id);
    host_.close(slot, "close");  // shut down (SessionEnd `close`), then destroyed
    open->session = nullptr;
    stop_services(std::move(open->services), "close");
    open->keep.reset();
    pending->ok(Json::object());
  };
  if (s->turn) {
    s->when_idle.push_back(std::move(finish));
    cancel_turn(*s);
  } else {
    finish();
  }
}

acp::OpenSession* AcpConnection::require(const std::string& id, AcpReply& reply) {
  OpenSession* s = find(id);
  if (!s) reply.fail(code::invalid_params, "Invalid params: unknown session: " + id);
  return s;
}

Json AcpConnection::modes_of(const OpenSession& s) const {
  return acp::session_modes(s.policy ? s.policy->mode() : "bypassPermissions");
}

void AcpConnection::set_mode(acp::SessionParams params, AcpReply reply) {
  OpenSession* s = require(params.session_id, reply);
  if (!s) return;
  const auto mode = params.params.find("modeId");
  if (mode == params.params.end() || !mode->is_string())
    return reply.fail(code::invalid_params, "Invalid params: modeId: expected string");
  // For the calls not judged yet; the client made the change, so no current_mode_update.
  if (!s->policy || !s->policy->set_mode(mode->get<std::string>()))
    return reply.fail(code::invalid_params,
                      "Invalid params: unknown mode: " + mode->get<std::string>());
  reply.ok(Json::object());
}

// ---- `_rebound/*` (section 11): the rpc commands' handlers, answered in ACP's form ----

void AcpConnection::add_rebound_methods() {
  // Which rpc command each method runs, and whether its first result turns retry-control mode
  // on for the connection: before the command (retry_now: its events already carry the typed
  // fields) or after a result.
  enum class Control { none, before, after_result };
  struct Mirror {
    const char* method;
    const char* command;
    Control control;
  };
  static constexpr Mirror kMirrors[] = {
      {"_rebound/abort_retry", "abort_retry", Control::none},
      {"_rebound/set_auto_retry", "set_auto_retry", Control::none},
      {"_rebound/get_retry_state", "get_retry_state", Control::after_result},
      {"_rebound/retry_now", "retry_now", Control::before},
      {"_rebound/set_retry_policy", "set_retry_policy", Control::after_result},
      {"_rebound/get_policy", "get_policy", Control::none},
  };
  for (const Mirror& m : kMirrors) {
    methods_.add<acp::SessionParams>(
        m.method, MethodKind::either, acp::read_session_params,
        [this, m](acp::SessionParams p, AcpReply reply) {
          OpenSession* s = require(p.session_id, reply);
          if (!s) return;
          const CommandTable::Run* run = commands_.find(m.command);
          if (m.control == Control::before) enable_retry_control();
          Json object = std::move(p.params);
          object.erase("sessionId");
          object["type"] = m.command;
          const protocol::CommandEnvelope command{reply.id(), m.command, std::move(object)};
          std::weak_ptr<bool> alive = alive_;
          auto answered = [this, alive, control = m.control](bool ok) {
            if (!alive.expired() && ok && control == Control::after_result) enable_retry_control();
          };
          // Several editor threads share one settings file: ACP's set_auto_retry does not
          // persist (section 11).
          CommandContext context{*s->session, nullptr, nullptr, /*persist_settings=*/false};
          context.policy = s->policy.get();
          std::optional<Json> id = reply.id();
          auto wire = acp::acp_reply_wire(std::move(reply), answered);
          (*run)(context, command, Reply(std::move(id), m.command, std::move(wire)));
        });
  }
}

}  // namespace rebound::server
