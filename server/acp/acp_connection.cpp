#include "server/acp/acp_connection.h"

#include <spdlog/spdlog.h>

#include <utility>

#include "protocol/json_line.h"
#include "protocol/jsonrpc.h"
#include "server/acp/acp_translate.h"

namespace rebound::server {

using protocol::Json;
namespace code = protocol::jsonrpc_code;

AcpConnection::AcpConnection(AcpOptions options, AcpSessionFactory factory, AcpSessionLoader loader,
                             JsonSink out, const session::ToolRegistry& base_tools,
                             session::Scheduler& scheduler, tools::FileTools* files)
    : options_(std::move(options)),
      factory_(std::move(factory)),
      loader_(std::move(loader)),
      base_tools_(base_tools),
      scheduler_(scheduler),
      client_([this](const Json& message) { out_(message); }, 0),
      commands_(rpc_command_table()),
      gate_(acp::ToolGate::Env{
          scheduler, files, caps_, [this](session::SessionSlot slot) { return find(slot); },
          [this](const std::string& method, Json params, protocol::JsonRpcPeer::Answer answer) {
            client_.request(method, std::move(params), std::move(answer));
          },
          [this](OpenSession& s, Json body) { update(s, std::move(body)); }}) {
  // A deferred answer (a bash command's) may be the last work a shutdown waits for.
  out_ = [this, out = std::move(out)](const Json& line) {
    out(line);
    if (idle_.waiting()) idle_.check(busy());
  };
  add_methods();
}

AcpConnection::~AcpConnection() {
  *alive_ = false;
  // Nothing is written any more (the shutdown answered every prompt).
  for (auto& [slot, s] : open_) {
    if (s->turn) s->turn->reply.abandon();
    if (s->next) s->next->reply.abandon();
  }
  // host_ goes first (declared last): the sessions' running calls refer to the gate and to
  // their open state.
}

// ---- the wire ----

void AcpConnection::error_line(int error_code, std::string message) {
  out_(protocol::jsonrpc_error(
      protocol::JsonRpcError{std::nullopt, error_code, std::move(message), std::nullopt}));
}

void AcpConnection::notify(std::string_view method, Json params) {
  out_(protocol::jsonrpc_notification(method, std::move(params)));
}

void AcpConnection::update(OpenSession& s, Json body) {
  notify("session/update", acp::session_update(s.id, std::move(body)));
}

// ---- reading (section 10) ----

void AcpConnection::handle_too_long(std::size_t max_line_bytes) {
  error_line(code::parse_error,
             "Parse error: line exceeds the limit of " + std::to_string(max_line_bytes) + " bytes");
}

void AcpConnection::handle_line(std::string_view line) {
  protocol::JsonLine parsed = protocol::parse_json_line(line);
  if (!parsed.value) return error_line(code::parse_error, "Parse error: " + parsed.error);
  if (parsed.value->is_array())
    return error_line(code::invalid_request, "Invalid Request: batch requests are not supported");
  if (!parsed.value->is_object())
    return error_line(code::invalid_request, "Invalid request: expected a JSON object");
  handle_message(std::move(*parsed.value));
}

void AcpConnection::handle_message(Json message) {
  using Id = protocol::JsonRpcShape::Id;
  using P = protocol::JsonRpcShape::Params;
  const protocol::JsonRpcShape shape = protocol::jsonrpc_shape(message);
  std::optional<Json> id;
  if (shape.id != Id::absent) id = message["id"];
  const bool id_ok = shape.id == Id::absent || shape.id == Id::string || shape.id == Id::integer ||
                     shape.id == Id::null;
  const std::optional<Json> echo = id && id_ok ? id : std::nullopt;
  auto invalid = [this](std::optional<Json> answer_id, const char* what) {
    out_(protocol::jsonrpc_error(protocol::JsonRpcError{std::move(answer_id), code::invalid_request,
                                                        std::string("Invalid request: ") + what,
                                                        std::nullopt}));
  };
  if (!shape.version_ok) return invalid(echo, "jsonrpc must be \"2.0\"");
  if (!id_ok) return invalid(std::nullopt, "id must be a string, an integer or null");
  if (!shape.method) {
    if (id && shape.response) {
      if (!client_.answer(message))
        spdlog::warn("acp: a response to request {} that was never sent; ignored", id->dump());
      return;
    }
    return invalid(echo, "neither a request nor a response");
  }
  if (!shape.method->is_string()) return invalid(echo, "method must be a string");
  Json params = Json::object();
  if (shape.params == P::object) {
    params = std::move(message["params"]);
  } else if (shape.params == P::array || shape.params == P::other) {
    if (id)
      out_(protocol::jsonrpc_error(protocol::JsonRpcError{
          id, code::invalid_params, "Invalid params: params: expected object", std::nullopt}));
    return;
  }
  run_method(shape.method->get<std::string>(), std::move(id), params);
}

void AcpConnection::run_method(const std::string& method, std::optional<Json> id,
                               const Json& params) {
  if (shutting_down_) return;
  // A request for a session that is still loading waits for the load's answer.
  if (!loading_.empty() && method != "session/load" && method != "session/resume") {
    const auto sid = params.find("sessionId");
    if (sid != params.end() && sid->is_string()) {
      const auto it = loading_.find(sid->get<std::string>());
      if (it != loading_.end()) {
        it->second.waiting.push_back({method, std::move(id), params});
        return;
      }
    }
  }
  const acp::AcpMethodTable::Entry* entry = methods_.find(method);
  if (!id && (!entry || entry->kind == acp::MethodKind::request)) {
    // A notification for a method that is not one: nothing to answer.
    if (method == "initialize" || method.rfind("session/", 0) == 0)
      spdlog::warn("acp: {} sent as a notification; ignored", method);
    return;
  }
  if (!entry) {
    out_(protocol::jsonrpc_error(protocol::JsonRpcError{
        id, code::method_not_found, "Method not found: " + method, std::nullopt}));
    return;
  }
  entry->run(params, acp::AcpReply(std::move(id), out_));
}

// ---- sessions and turns ----

AcpConnection::OpenSession* AcpConnection::find(const std::string& id) {
  const auto found = by_id_.find(id);
  if (found == by_id_.end()) return nullptr;
  OpenSession* s = find(found->second);
  return s && !s->closing ? s : nullptr;
}

AcpConnection::OpenSession* AcpConnection::find(session::SessionSlot slot) {
  const auto found = open_.find(slot);
  return found == open_.end() ? nullptr : found->second.get();
}

void AcpConnection::drop_next(OpenSession& s) {
  if (!s.next) return;
  s.next->reply.ok(acp::cancelled_result());
  s.next.reset();
}

void AcpConnection::start_turn(OpenSession& s, acp::AcpReply reply, session::UserInput input) {
  const std::uint64_t serial = next_serial_++;
  s.turn.emplace(std::move(reply));
  s.turn->serial = serial;
  s.tools.clear();
  const session::SessionSlot slot = s.slot;
  // An extension's slash command runs instead of a turn (extensions.md section 9).
  const std::string text = input.text;
  auto held = std::make_shared<session::UserInput>(std::move(input));
  std::weak_ptr<bool> alive = alive_;
  s.session->route_command(
      text, session::SubmitKind::prompt,
      [this, alive, slot, serial, held](std::optional<session::Status> command) {
        if (alive.expired()) return;
        OpenSession* found = find(slot);
        if (!found || !found->turn || found->turn->serial != serial) return;
        if (command) return command_ran(*found, std::move(*command));
        run_turn(*found, std::move(*held));
      });
}

void AcpConnection::run_turn(OpenSession& s, session::UserInput input) {
  s.turn->running = true;
  const session::SessionSlot slot = s.slot;
  const std::uint64_t serial = s.turn->serial;
  // Its UserPromptSubmit hooks first (extensions.md sections 5.1, 9); the turn ends with the
  // run's work.
  std::weak_ptr<bool> alive = alive_;
  s.session->submit(
      std::move(input), session::SubmitKind::prompt, std::nullopt,
      [this, alive, slot, serial](session::Status status) {
        if (alive.expired() || status) return;
        OpenSession* found = find(slot);
        if (found && found->turn && found->turn->serial == serial)
          prompt_refused(*found, status.error());
      },
      [this, slot, serial] { finish_turn(slot, serial); });
}

void AcpConnection::prompt_refused(OpenSession& s, const session::Error& error) {
  acp::Turn turn = std::move(*s.turn);
  s.turn.reset();
  if (turn.cancelled) {
    turn.reply.ok(acp::cancelled_result());
  } else if (error.kind == session::ErrorKind::failed) {
    // A hook's refusal: the user sees its text, the prompt ends `refusal`.
    update(s, acp::text_chunk(error.message, "m" + std::to_string(next_message_++)));
    turn.reply.ok(acp::turn_result(acp::TurnEnding{"refusal", "blocked"}, 0, error.message));
  } else {
    // Another refusal (the session is busy compacting, say): acp_error's code.
    turn.reply.fail(error);
  }
  after_turn(s.slot);
}

void AcpConnection::command_ran(OpenSession& s, session::Status status) {
  acp::Turn turn = std::move(*s.turn);
  s.turn.reset();
  if (turn.cancelled) {
    turn.reply.ok(acp::cancelled_result());
  } else if (status) {
    turn.reply.ok(acp::turn_result(acp::TurnEnding{"end_turn", "handled"}, 0, std::nullopt));
  } else {
    // A failed command ends like a failed turn: the user sees why (section 6.4).
    const std::string message = status.error().message;
    update(s, acp::error_chunk(message, false, "m" + std::to_string(next_message_++)));
    turn.reply.ok(acp::turn_result(acp::TurnEnding{"end_turn", "error"}, 0, message));
  }
  after_turn(s.slot);
}

void AcpConnection::cancel_turn(OpenSession& s) {
  if (!s.turn || s.turn->cancelled) return;
  s.turn->cancelled = true;
  if (!s.turn->running) {
    // A slash command (or the wait for one) is not the session's to abort: the prompt is
    // answered now and the command's late outcome is dropped.
    acp::AcpReply reply = std::move(s.turn->reply);
    s.turn.reset();
    reply.ok(acp::cancelled_result());
    const session::SessionSlot slot = s.slot;
    scheduler_.post([this, alive = std::weak_ptr<bool>(alive_), slot] {
      if (!alive.expired()) after_turn(slot);
    });
    return;
  }
  s.session->abort();
}

void AcpConnection::finish_turn(session::SessionSlot slot, std::uint64_t serial) {
  OpenSession* found = find(slot);
  if (!found || !found->turn || found->turn->serial != serial) return;
  OpenSession& s = *found;
  acp::Turn turn = std::move(*s.turn);
  const bool error = !turn.cancelled && turn.compaction_error.has_value();
  acp::TurnEnding ending = acp::turn_ending(turn.cancelled, turn.last, error);
  // A hook's continue:false (extensions.md section 9, acp.md section 6.4).
  if (!turn.cancelled && !error && s.session->last_run_stopped_by_hook())
    ending = acp::TurnEnding{"end_turn", "stopped"};
  std::optional<std::string> message;
  if (ending.outcome == "error") {
    message = turn.compaction_error && turn.last != protocol::StopReason::stop
                  ? *turn.compaction_error
                  : turn.last_error.value_or("Unknown error");
    // The user sees why the turn stopped (section 6.4).
    update(s, acp::error_chunk(*message, turn.wrote_text, "m" + std::to_string(next_message_++)));
  }
  s.turn.reset();
  s.tools.clear();
  turn.reply.ok(acp::turn_result(ending, turn.retries, message));
  after_turn(slot);
}

void AcpConnection::after_turn(session::SessionSlot slot) {
  if (OpenSession* s = find(slot))
    for (auto& f : std::exchange(s->when_idle, {}))
      f();
  // The session may be gone now (session/close).
  OpenSession* still = find(slot);
  if (still && still->next && !still->closing && !shutting_down_) {
    acp::NextPrompt next = std::move(*still->next);
    still->next.reset();
    start_turn(*still, std::move(next.reply), std::move(next.input));
  }
}

void AcpConnection::enable_retry_control() {
  if (retry_control_) return;
  retry_control_ = true;
  for (auto& [slot, s] : open_)
    s->session->enable_retry_control();
}

// ---- shutdown ----

void AcpConnection::shutdown() {
  if (shutting_down_) return;
  shutting_down_ = true;
  // Loads end with an error answer (their requests then find the connection shutting down).
  for (auto& [id, l] : loading_)
    if (l.cancel) l.cancel();
  for (auto& [slot, s] : open_) {
    drop_next(*s);
    if (s->turn) s->turn->cancelled = true;
  }
  std::vector<session::SessionSlot> slots;
  for (auto& [slot, s] : open_)
    slots.push_back(slot);
  for (const auto slot : slots) {
    OpenSession* s = find(slot);
    if (!s) continue;
    s->session->shutdown();
    // Then its extensions and MCP servers stop, all at once (mcp.md section 3.4).
    if (s->services) {
      std::weak_ptr<bool> alive = alive_;
      s->services->stop("quit", [this, alive] {
        if (!alive.expired()) idle_.check(busy());
      });
    }
  }
  // Whatever did not end with the shutdown (a tool call still winding down) is answered now:
  // the process is leaving.
  for (const auto slot : slots) {
    OpenSession* s = find(slot);
    if (s && s->turn) finish_turn(slot, s->turn->serial);
  }
}

void AcpConnection::when_idle(std::function<void()> idle) {
  idle_.wait(std::move(idle), busy());
}

bool AcpConnection::busy() const {
  for (const auto& [slot, s] : open_) {
    if (s->session && s->session->is_bash_running()) return true;
    if (s->services && s->services->running()) return true;
  }
  return !stopping_.empty() || !loading_.empty();
}

void AcpConnection::stop_services(std::shared_ptr<session::SessionServices> services,
                                  const std::string& reason) {
  if (!services) return;
  session::SessionServices* raw = services.get();
  stopping_.push_back(std::move(services));
  std::weak_ptr<bool> alive = alive_;
  raw->stop(reason, [this, alive, raw] {
    if (alive.expired()) return;
    // Not inside the services' own callback: dropped on a later turn.
    scheduler_.post([this, alive, raw] {
      if (alive.expired()) return;
      std::erase_if(stopping_, [raw](const auto& s) { return s.get() == raw; });
      idle_.check(busy());
    });
  });
}

}  // namespace rebound::server
