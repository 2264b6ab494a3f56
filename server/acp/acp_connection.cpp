#include "server/acp/acp_connection.h"

#include <fcntl.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <filesystem>
#include <utility>

#include "protocol/json_line.h"
#include "protocol/jsonrpc.h"
#include "server/pi/pi_encoder.h"
#include "tools/builtin_tools.h"
#include "tools/edit_core.h"
#include "tools/file_io.h"
#include "tools/paths.h"
#include "tools/tool_args.h"

namespace rebound::server {

using acp::text_content;
using protocol::Json;
namespace code = protocol::jsonrpc_code;
namespace ev = session::ev;

namespace {


// The methods of section 11 this build serves (all of them: the rpc commands exist).
const char* const kReboundMethods[] = {"_rebound/abort_retry", "_rebound/set_auto_retry",
                                       "_rebound/get_retry_state", "_rebound/retry_now",
                                       "_rebound/set_retry_policy"};

bool flag(const Json& object, std::initializer_list<const char*> path) {
  const Json* at = &object;
  for (const char* key : path) {
    if (!at->is_object()) return false;
    const auto it = at->find(key);
    if (it == at->end()) return false;
    at = &*it;
  }
  return at->is_boolean() ? at->get<bool>() : at->is_object();
}

bool valid_id(const Json& id) {
  return id.is_string() || id.is_number_integer() || id.is_number_unsigned() || id.is_null();
}

// "Invalid field 'x': expected k" (the rpc commands' form) → "Invalid params: x: expected k".
std::string acp_params_message(const std::string& message) {
  const std::string prefix = "Invalid field '";
  if (message.rfind(prefix, 0) != 0) return message;
  const auto end = message.find("': ", prefix.size());
  if (end == std::string::npos) return message;
  return "Invalid params: " + message.substr(prefix.size(), end - prefix.size()) + ": " +
         message.substr(end + 3);
}

Json in_progress_update(const std::string& tool_call_id) {
  Json body = Json::object();
  body["sessionUpdate"] = "tool_call_update";
  body["toolCallId"] = tool_call_id;
  body["status"] = "in_progress";
  return body;
}

}  // namespace

AcpConnection::AcpConnection(AcpOptions options, AcpSessionFactory factory, JsonSink out,
                             const session::ToolRegistry& base_tools, session::Scheduler& scheduler)
    : options_(std::move(options)),
      factory_(std::move(factory)),
      base_tools_(base_tools),
      scheduler_(scheduler) {
  // A deferred answer (a bash command's) may be the last work a shutdown waits for.
  out_ = [this, out = std::move(out)](const Json& line) {
    out(line);
    if (idle_.waiting()) idle_.check(busy());
  };
}

AcpConnection::~AcpConnection() {
  *alive_ = false;
  // Sessions first: their running calls refer to this connection.
  for (auto& [slot, s] : sessions_)
    s->parts.session.reset();
}

struct AcpConnection::CallState {
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
  bool waiting_permission = false;
  bool waiting_client = false;
  bool cancelled = false;
};

// A built-in tool as acp mode runs it.
class AcpConnection::GatedTool : public session::Tool {
 public:
  GatedTool(AcpConnection& connection, session::SessionSlot slot, session::Tool& inner)
      : connection_(connection), slot_(slot), inner_(inner) {}
  // An MCP tool: held as long as the gate.
  GatedTool(AcpConnection& connection, session::SessionSlot slot,
            std::shared_ptr<session::Tool> inner)
      : connection_(connection), slot_(slot), inner_(*inner), keep_(std::move(inner)) {}
  bool read_only_hint() const override { return inner_.read_only_hint(); }
  const session::ToolDefinition& definition() const override { return inner_.definition(); }
  void prepare_arguments(Json& args) const override { inner_.prepare_arguments(args); }
  std::unique_ptr<session::ToolCall> start(const Json& args, const session::ToolContext& context,
                                           Progress progress, Done done) override {
    return connection_.start_call(slot_, inner_, args, context, std::move(progress),
                                  std::move(done));
  }

 private:
  AcpConnection& connection_;
  session::SessionSlot slot_;
  session::Tool& inner_;
  std::shared_ptr<session::Tool> keep_;
};

// A session's MCP tools as acp mode runs them: through the same gate as the built-in ones, the
// readOnlyHint of each remembered for the permission rule (section 7.3).
class AcpConnection::GatedMcpTools : public session::DynamicTools {
 public:
  GatedMcpTools(AcpConnection& connection, session::SessionSlot slot)
      : connection_(connection), slot_(slot) {}
  void set_inner(mcp::McpManager* inner) { inner_ = inner; }
  std::unique_ptr<session::Waiting> when_settled(std::function<void()> settled) override {
    return inner_ ? inner_->when_settled(std::move(settled)) : nullptr;
  }
  std::vector<std::shared_ptr<session::Tool>> offered(std::size_t room) override {
    std::vector<std::shared_ptr<session::Tool>> out;
    if (!inner_) return out;
    const auto found = connection_.sessions_.find(slot_);
    for (auto& tool : inner_->offered(room)) {
      if (found != connection_.sessions_.end())
        found->second->mcp_read_only[tool->definition().name] = tool->read_only_hint();
      out.push_back(std::make_shared<GatedTool>(connection_, slot_, std::move(tool)));
    }
    return out;
  }

 private:
  AcpConnection& connection_;
  session::SessionSlot slot_;
  mcp::McpManager* inner_ = nullptr;
};

class AcpConnection::GatedCall : public session::ToolCall {
 public:
  GatedCall(AcpConnection& connection, std::shared_ptr<CallState> state)
      : connection_(connection), state_(std::move(state)) {}
  ~GatedCall() override {
    state_->dead = true;
    state_->inner.reset();
  }
  void cancel() override {
    CallState& c = *state_;
    if (c.finished || c.cancelled) return;
    c.cancelled = true;
    if (c.inner) {
      c.inner->cancel();
      return;
    }
    // A pending permission request counts as rejected; a file request through the client is
    // abandoned (its answer is ignored). The completion comes on a later loop turn.
    const char* text = c.waiting_permission ? "Permission denied by the user" : "Operation aborted";
    c.waiting_permission = c.waiting_client = false;
    std::weak_ptr<bool> alive = connection_.alive_;
    connection_.scheduler_.post([&connection = connection_, alive, state = state_, text] {
      if (!alive.expired()) connection.finish_call(state, session::ToolResult::error(text));
    });
  }

 private:
  AcpConnection& connection_;
  std::shared_ptr<CallState> state_;
};

// ---- the wire ----

void AcpConnection::respond(const Json& id, Json result) {
  out_(protocol::jsonrpc_result(id, std::move(result)));
}

void AcpConnection::respond_error(std::optional<Json> id, int error_code, std::string message) {
  out_(protocol::jsonrpc_error(
      protocol::JsonRpcError{std::move(id), error_code, std::move(message), std::nullopt}));
}

void AcpConnection::notify(std::string_view method, Json params) {
  out_(protocol::jsonrpc_notification(method, std::move(params)));
}

void AcpConnection::update(Open& s, Json body) {
  Json params = Json::object();
  params["sessionId"] = s.id;
  params["update"] = std::move(body);
  notify("session/update", std::move(params));
}

void AcpConnection::session_notification(Open& s, std::string_view method, Json event) {
  Json params = Json::object();
  params["sessionId"] = s.id;
  for (auto& [key, value] : event.items()) {
    if (key != "type") params[key] = value;
  }
  notify(method, std::move(params));
}

// ---- reading ----

void AcpConnection::handle_too_long(std::size_t max_line_bytes) {
  respond_error(
      std::nullopt, code::parse_error,
      "Parse error: line exceeds the limit of " + std::to_string(max_line_bytes) + " bytes");
}

void AcpConnection::handle_line(std::string_view line) {
  protocol::JsonLine parsed = protocol::parse_json_line(line);
  if (!parsed.value) {
    respond_error(std::nullopt, code::parse_error, "Parse error: " + parsed.error);
    return;
  }
  Json& message = *parsed.value;
  if (message.is_array()) {
    respond_error(std::nullopt, code::invalid_request,
                  "Invalid Request: batch requests are not supported");
    return;
  }
  if (!message.is_object()) {
    respond_error(std::nullopt, code::invalid_request, "Invalid request: expected a JSON object");
    return;
  }
  std::optional<Json> id;
  if (const auto it = message.find("id"); it != message.end()) id = *it;
  const bool id_ok = !id || valid_id(*id);
  const std::optional<Json> echo = id && id_ok ? id : std::nullopt;
  const auto version = message.find("jsonrpc");
  if (version == message.end() || !version->is_string() || *version != "2.0") {
    respond_error(echo, code::invalid_request, "Invalid request: jsonrpc must be \"2.0\"");
    return;
  }
  if (!id_ok) {
    respond_error(std::nullopt, code::invalid_request,
                  "Invalid request: id must be a string, an integer or null");
    return;
  }
  const auto method = message.find("method");
  if (method == message.end()) {
    if (id && (message.contains("result") || message.contains("error"))) {
      handle_response(message);
      return;
    }
    respond_error(echo, code::invalid_request, "Invalid request: neither a request nor a response");
    return;
  }
  if (!method->is_string()) {
    respond_error(echo, code::invalid_request, "Invalid request: method must be a string");
    return;
  }
  Json params = Json::object();
  if (const auto it = message.find("params"); it != message.end() && !it->is_null()) {
    if (!it->is_object()) {
      if (id) respond_error(id, code::invalid_params, "Invalid params: params: expected object");
      return;
    }
    params = *it;
  }
  handle_request(method->get<std::string>(), id, params);
}

void AcpConnection::handle_response(const Json& message) {
  const Json& id = message["id"];
  const auto found = id.is_number_integer() ? client_requests_.find(id.get<std::int64_t>())
                                            : client_requests_.end();
  if (found == client_requests_.end()) {
    spdlog::warn("acp: a response to request {} that was never sent; ignored", id.dump());
    return;
  }
  ClientAnswer answer = std::move(found->second);
  client_requests_.erase(found);
  answer(message);
}

void AcpConnection::request_client(const std::string& method, Json params, ClientAnswer answer) {
  const std::int64_t id = next_client_id_++;
  client_requests_.emplace(id, std::move(answer));
  out_(protocol::jsonrpc_request(id, method, std::move(params)));
}

void AcpConnection::handle_request(const std::string& method, std::optional<Json> id,
                                   const Json& params) {
  if (shutting_down_) return;
  if (method == "session/cancel") {
    cancel(params);
    return;
  }
  if (method == "$/cancel_request") {
    cancel_request(params);
    return;
  }
  if (method.rfind("_rebound/", 0) == 0) {
    for (const char* name : kReboundMethods) {
      if (method == name) {
        rebound_request(method, id, params);
        return;
      }
    }
  }
  if (!id) {
    // A notification for a method that is not one: nothing to answer.
    if (method == "initialize" || method.rfind("session/", 0) == 0)
      spdlog::warn("acp: {} sent as a notification; ignored", method);
    return;
  }
  if (method == "initialize") {
    initialize(*id, params);
  } else if (method == "authenticate") {
    const auto it = params.find("methodId");
    const std::string which = it != params.end() && it->is_string() ? it->get<std::string>() : "";
    respond_error(id, code::invalid_params, "Invalid params: unknown auth method: " + which);
  } else if (method == "session/new") {
    open_session(*id, params, OpenKind::create);
  } else if ((method == "session/load" || method == "session/resume") && !options_.no_session) {
    open_session(*id, params, method == "session/load" ? OpenKind::load : OpenKind::resume);
  } else if (method == "session/prompt") {
    prompt(*id, params);
  } else if (method == "session/close") {
    close(*id, params);
  } else {
    respond_error(id, code::method_not_found, "Method not found: " + method);
  }
}

// ---- methods ----

void AcpConnection::initialize(const Json& id, const Json& params) {
  const auto version = params.find("protocolVersion");
  if (version == params.end() || !(version->is_number_integer() || version->is_number_unsigned())) {
    respond_error(id, code::invalid_params, "Invalid params: protocolVersion: expected integer");
    return;
  }
  const Json none = Json::object();
  const auto caps_it = params.find("clientCapabilities");
  const Json& caps = caps_it != params.end() && caps_it->is_object() ? *caps_it : none;
  fs_read_ = flag(caps, {"fs", "readTextFile"});
  fs_write_ = flag(caps, {"fs", "writeTextFile"});
  notices_ = flag(caps, {"session", "notices"});
  compaction_updates_ = flag(caps, {"session", "compaction"});

  Json prompt_caps = Json::object();
  prompt_caps["image"] = true;
  prompt_caps["audio"] = false;
  prompt_caps["embeddedContext"] = true;
  Json mcp = Json::object();
  mcp["http"] = false;
  mcp["sse"] = false;
  Json session_caps = Json::object();
  if (!options_.no_session) session_caps["resume"] = Json::object();
  session_caps["close"] = Json::object();
  Json methods = Json::array();
  for (const char* name : kReboundMethods)
    methods.push_back(name);
  Json rebound = Json::object();
  rebound["retryNotifications"] = true;
  rebound["compactionNotifications"] = true;
  rebound["methods"] = std::move(methods);
  Json agent = Json::object();
  agent["loadSession"] = !options_.no_session;
  agent["promptCapabilities"] = std::move(prompt_caps);
  agent["mcpCapabilities"] = std::move(mcp);
  agent["sessionCapabilities"] = std::move(session_caps);
  agent["_meta"] = Json{{"rebound", std::move(rebound)}};
  Json info = Json::object();
  info["name"] = "rebound";
  info["title"] = "Rebound";
  info["version"] = options_.version;
  Json result = Json::object();
  result["protocolVersion"] = 1;
  result["agentCapabilities"] = std::move(agent);
  result["agentInfo"] = std::move(info);
  result["authMethods"] = Json::array();
  respond(id, std::move(result));
}

void AcpConnection::open_session(const Json& id, const Json& params, OpenKind kind) {
  std::optional<std::string> load;
  if (kind != OpenKind::create) {
    const auto it = params.find("sessionId");
    if (it == params.end() || !it->is_string()) {
      respond_error(id, code::invalid_params, "Invalid params: sessionId: expected string");
      return;
    }
    load = it->get<std::string>();
  }
  const auto cwd_it = params.find("cwd");
  if (cwd_it == params.end() || !cwd_it->is_string()) {
    respond_error(id, code::invalid_params, "Invalid params: cwd: expected string");
    return;
  }
  const std::string cwd = cwd_it->get<std::string>();
  if (cwd.empty() || cwd.front() != '/') {
    respond_error(id, code::invalid_params, "Invalid params: cwd must be an absolute path");
    return;
  }
  std::error_code ec;
  if (!std::filesystem::is_directory(cwd, ec)) {
    respond_error(id, code::invalid_params, "Invalid params: cwd is not a directory: " + cwd);
    return;
  }
  const auto servers = params.find("mcpServers");
  if (servers != params.end() && !servers->is_null() && !servers->is_array()) {
    respond_error(id, code::invalid_params, "Invalid params: mcpServers: expected array");
    return;
  }
  if (load && by_id_.count(*load)) {
    respond_error(id, code::invalid_params, "Invalid params: session already open: " + *load);
    return;
  }
  const session::SessionSlot slot = next_slot_++;
  auto open = std::make_unique<Open>();
  open->cwd = cwd;
  open->slot = slot;
  open->gated_tools = std::make_unique<session::ToolRegistry>();
  for (const auto& definition : base_tools_.definitions()) {
    if (session::Tool* tool = base_tools_.find(definition.name))
      open->gated_tools->add(std::make_shared<GatedTool>(*this, slot, *tool));
  }
  open->gated_mcp = std::make_unique<GatedMcpTools>(*this, slot);
  const Json no_servers = Json::array();
  auto made = factory_(cwd, slot, *this, *open->gated_tools, load,
                       servers != params.end() && servers->is_array() ? *servers : no_servers,
                       open->gated_mcp.get());
  if (!made) {
    const session::Error& error = made.error();
    if (error.kind == session::ErrorKind::not_found) {
      respond_error(id, code::resource_not_found, "Resource not found: " + error.message);
    } else {
      respond_error(id, code::internal_error, "Internal error: " + error.message);
    }
    return;
  }
  open->parts = std::move(*made);
  open->id = open->parts.session->session_id();
  if (retry_control_) open->parts.session->enable_retry_control();
  // The session's MCP servers start in the background; the first prompt waits for them
  // (mcp.md section 3.2).
  if (open->parts.mcp) {
    open->gated_mcp->set_inner(open->parts.mcp.get());
    open->parts.mcp->start_all();
  }
  Open& s = *open;
  by_id_[open->id] = slot;
  sessions_[slot] = std::move(open);
  if (kind == OpenKind::create) {
    Json result = Json::object();
    result["sessionId"] = s.id;
    if (const auto& file = s.parts.session->session_file())
      result["_meta"] = Json{{"rebound", Json{{"sessionFile", *file}}}};
    respond(id, std::move(result));
    return;
  }
  if (kind == OpenKind::load) replay(s);
  respond(id, Json::object());
}

AcpConnection::Open* AcpConnection::session_param(const std::optional<Json>& id, const Json& params,
                                                  int unknown_code,
                                                  const std::string& unknown_prefix) {
  const auto it = params.find("sessionId");
  if (it == params.end() || !it->is_string()) {
    if (id) respond_error(id, code::invalid_params, "Invalid params: sessionId: expected string");
    return nullptr;
  }
  const std::string name = it->get<std::string>();
  const auto found = by_id_.find(name);
  if (found == by_id_.end() || sessions_.at(found->second)->closing) {
    if (id) respond_error(id, unknown_code, unknown_prefix + name);
    return nullptr;
  }
  return sessions_.at(found->second).get();
}

void AcpConnection::prompt(const Json& id, const Json& params) {
  Open* s = session_param(id, params, code::invalid_params, "Invalid params: unknown session: ");
  if (!s) return;
  const auto blocks = params.find("prompt");
  if (blocks == params.end()) {
    respond_error(id, code::invalid_params, "Invalid params: prompt: expected array");
    return;
  }
  auto input = acp::prompt_input(*blocks);
  if (auto* error = std::get_if<std::string>(&input)) {
    respond_error(id, code::invalid_params, *error);
    return;
  }
  if (s->turn || s->next) {
    // No queueing in ACP v1: the earlier prompt is cancelled and answered first, then this one
    // runs (a prompt that was itself waiting is answered `cancelled` at once).
    drop_next(*s);
    s->next = NextPrompt{id, std::move(std::get<session::UserInput>(input))};
    if (s->turn) cancel_turn(*s);
    return;
  }
  start_turn(*s, id, std::move(std::get<session::UserInput>(input)));
}

void AcpConnection::drop_next(Open& s) {
  if (!s.next) return;
  Json result = Json::object();
  result["stopReason"] = "cancelled";
  result["_meta"] = Json{{"rebound", Json{{"outcome", "cancelled"}, {"retries", 0}}}};
  respond(s.next->id, std::move(result));
  s.next.reset();
}

void AcpConnection::start_turn(Open& s, Json id, session::UserInput input) {
  const std::uint64_t serial = next_serial_++;
  s.turn = Turn{};
  s.turn->id = std::move(id);
  s.turn->serial = serial;
  s.tools.clear();
  const session::SessionSlot slot = s.slot;
  auto status = s.parts.session->prompt(
      std::move(input), std::nullopt, [] {}, [this, slot, serial] { finish_turn(slot, serial); });
  if (!status) {
    Json request_id = std::move(s.turn->id);
    s.turn.reset();
    respond_error(request_id, code::internal_error, "Internal error: " + status.error().message);
  }
}

void AcpConnection::cancel_turn(Open& s) {
  if (!s.turn || s.turn->cancelled) return;
  s.turn->cancelled = true;
  s.parts.session->abort();
}

void AcpConnection::cancel(const Json& params) {
  Open* s = session_param(std::nullopt, params, code::invalid_params, "");
  if (s) cancel_turn(*s);
}

void AcpConnection::cancel_request(const Json& params) {
  const auto it = params.find("requestId");
  if (it == params.end()) return;
  for (auto& [slot, s] : sessions_) {
    if (s->turn && s->turn->id == *it) {
      cancel_turn(*s);
      return;
    }
  }
}

void AcpConnection::finish_turn(session::SessionSlot slot, std::uint64_t serial) {
  const auto found = sessions_.find(slot);
  if (found == sessions_.end()) return;
  Open& s = *found->second;
  if (!s.turn || s.turn->serial != serial) return;
  Turn turn = std::move(*s.turn);
  const bool error = !turn.cancelled && turn.compaction_error.has_value();
  const acp::TurnEnding ending = acp::turn_ending(turn.cancelled, turn.last, error);
  Json meta = Json::object();
  meta["outcome"] = ending.outcome;
  meta["retries"] = turn.retries;
  if (ending.outcome == "error") {
    const std::string message = turn.compaction_error && turn.last != protocol::StopReason::stop
                                    ? *turn.compaction_error
                                    : turn.last_error.value_or("Unknown error");
    meta["errorMessage"] = message;
    // The user sees why the turn stopped (section 6.4).
    Json chunk = Json::object();
    chunk["sessionUpdate"] = "agent_message_chunk";
    chunk["content"] = text_content((turn.wrote_text ? "\n\nError: " : "Error: ") + message);
    chunk["messageId"] = "m" + std::to_string(next_message_++);
    update(s, std::move(chunk));
  }
  s.turn.reset();
  s.tools.clear();
  Json result = Json::object();
  result["stopReason"] = ending.stop_reason;
  result["_meta"] = Json{{"rebound", std::move(meta)}};
  respond(turn.id, std::move(result));
  for (auto& f : std::exchange(s.when_idle, {}))
    f();
  // `s` may be gone now (session/close).
  const auto again = sessions_.find(slot);
  if (again == sessions_.end()) return;
  Open& still = *again->second;
  if (still.next && !still.closing && !shutting_down_) {
    NextPrompt next = std::move(*still.next);
    still.next.reset();
    start_turn(still, std::move(next.id), std::move(next.input));
  }
}

void AcpConnection::close(const Json& id, const Json& params) {
  Open* s = session_param(id, params, code::resource_not_found, "Resource not found: session ");
  if (!s) return;
  s->closing = true;
  drop_next(*s);
  const session::SessionSlot slot = s->slot;
  auto finish = [this, slot, id] {
    const auto found = sessions_.find(slot);
    if (found == sessions_.end()) return;
    std::unique_ptr<Open> open = std::move(found->second);
    sessions_.erase(found);
    by_id_.erase(open->id);
    open->parts.session->shutdown();
    open->parts.session.reset();
    stop_mcp(std::move(open->parts.mcp));
    open->parts.keep.reset();
    respond(id, Json::object());
  };
  if (s->turn) {
    s->when_idle.push_back(std::move(finish));
    cancel_turn(*s);
  } else {
    finish();
  }
}

void AcpConnection::enable_retry_control() {
  if (retry_control_) return;
  retry_control_ = true;
  for (auto& [slot, s] : sessions_)
    s->parts.session->enable_retry_control();
}

void AcpConnection::rebound_request(const std::string& method, const std::optional<Json>& id,
                                    const Json& params) {
  Open* s = session_param(id, params, code::invalid_params, "Invalid params: unknown session: ");
  if (!s) return;
  session::AgentSession& session = *s->parts.session;
  auto answer = [this, &id](Json result) {
    if (id) respond(*id, std::move(result));
  };
  if (method == "_rebound/abort_retry") {
    session.abort_retry();
    answer(Json::object());
  } else if (method == "_rebound/set_auto_retry") {
    const auto it = params.find("enabled");
    if (it == params.end() || !it->is_boolean()) {
      if (id) respond_error(id, code::invalid_params, "Invalid params: enabled: expected boolean");
      return;
    }
    session.set_auto_retry(it->get<bool>(), /*persist=*/false);
    answer(Json::object());
  } else if (method == "_rebound/get_retry_state") {
    Json state = session.retry_state_json();
    enable_retry_control();
    answer(std::move(state));
  } else if (method == "_rebound/set_retry_policy") {
    Json command = params;
    command.erase("sessionId");
    command["type"] = "set_retry_policy";
    auto policy = session.set_retry_policy(command);
    if (!policy) {
      const std::string message = policy.error().message;
      if (id) {
        if (message.rfind("Invalid field '", 0) == 0) {
          respond_error(id, code::invalid_params, acp_params_message(message));
        } else {
          respond_error(id, code::internal_error, "Internal error: " + message);
        }
      }
      return;
    }
    enable_retry_control();
    answer(std::move(*policy));
  } else if (method == "_rebound/retry_now") {
    enable_retry_control();
    const std::optional<Json> request_id = id;
    session.retry_now([this, request_id](const Json& data) {
      if (request_id) respond(*request_id, data.is_object() ? data : Json::object());
    });
  }
}

// ---- tool calls: permissions and files through the client (sections 7.3 and 7.4) ----

bool AcpConnection::asks_permission(const Open& s, std::string_view tool) const {
  if (!options_.ask_permissions) return false;
  // MCP tools ask unless their server marked them read-only (section 7.3).
  if (const auto mcp = s.mcp_read_only.find(tool); mcp != s.mcp_read_only.end()) {
    if (mcp->second) return false;
  } else if (tool != "edit" && tool != "write" && tool != "bash") {
    return false;
  }
  return s.always_allowed.find(tool) == s.always_allowed.end();
}

AcpConnection::ToolState* AcpConnection::tool_state(session::SessionSlot slot,
                                                    const std::string& call_id) {
  const auto found = sessions_.find(slot);
  if (found == sessions_.end()) return nullptr;
  const auto it = found->second->tools.find(call_id);
  return it == found->second->tools.end() ? nullptr : &it->second;
}

std::unique_ptr<session::ToolCall> AcpConnection::start_call(session::SessionSlot slot,
                                                             session::Tool& inner, const Json& args,
                                                             const session::ToolContext& context,
                                                             session::Tool::Progress progress,
                                                             session::Tool::Done done) {
  auto call = std::make_shared<CallState>();
  call->slot = slot;
  call->call_id = context.tool_call_id;
  call->name = inner.definition().name;
  call->inner_tool = &inner;
  call->args = args;
  call->context = context;
  call->progress = std::move(progress);
  call->done = std::move(done);
  auto handle = std::make_unique<GatedCall>(*this, call);
  const auto found = sessions_.find(slot);
  if (found == sessions_.end()) {
    run_call(call);
    return handle;
  }
  Open& s = *found->second;
  call->session_id = s.id;
  if (!asks_permission(s, call->name)) {
    run_call(call);
    return handle;
  }
  // Ask first: the tool_call update went out already (message_update toolcall_end).
  const acp::ToolCallInfo info = acp::tool_call_info(call->name, args, s.cwd);
  Json tool_call = Json::object();
  tool_call["toolCallId"] = call->call_id;
  tool_call["title"] = info.title;
  tool_call["kind"] = info.kind;
  tool_call["status"] = "pending";
  tool_call["rawInput"] = args.is_object() ? args : Json::object();
  Json options = Json::array();
  for (const auto& [id, name] :
       {std::pair{"allow_once", "Allow"}, std::pair{"allow_always", "Always allow"},
        std::pair{"reject_once", "Reject"}}) {
    Json option = Json::object();
    option["optionId"] = id;
    option["name"] = name;
    option["kind"] = id;
    options.push_back(std::move(option));
  }
  Json params = Json::object();
  params["sessionId"] = s.id;
  params["toolCall"] = std::move(tool_call);
  params["options"] = std::move(options);
  call->waiting_permission = true;
  request_client("session/request_permission", std::move(params), [this, call](const Json& answer) {
    if (call->dead || call->finished || !call->waiting_permission) return;
    call->waiting_permission = false;
    std::string option;
    if (const auto result = answer.find("result"); result != answer.end() && result->is_object()) {
      const auto outcome = result->find("outcome");
      if (outcome != result->end() && outcome->is_object() &&
          tools::string_arg(*outcome, "outcome") == "selected")
        option = tools::string_arg(*outcome, "optionId");
    }
    if (option != "allow_once" && option != "allow_always") {
      finish_call(call, session::ToolResult::error("Permission denied by the user"));
      return;
    }
    const auto found = sessions_.find(call->slot);
    if (found != sessions_.end()) {
      Open& s = *found->second;
      if (option == "allow_always") s.always_allowed[call->name] = true;
      if (s.turn) update(s, in_progress_update(call->call_id));
    }
    run_call(call);
  });
  return handle;
}

void AcpConnection::run_call(const std::shared_ptr<CallState>& call) {
  if (call->dead || call->finished) return;
  const std::string& name = call->name;
  if (name == "read" && fs_read_) {
    // Images are read locally (the client's text read cannot carry them).
    const std::string abs =
        tools::resolve_path(tools::string_arg(call->args, "path"), call->context.cwd);
    if (!acp::is_image_file(abs)) {
      client_read(call);
      return;
    }
  } else if (name == "edit" && (fs_read_ || fs_write_)) {
    client_edit(call);
    return;
  } else if (name == "write" && fs_write_) {
    client_write(call);
    return;
  }
  std::weak_ptr<CallState> weak = call;
  call->inner = call->inner_tool->start(
      call->args, call->context,
      [weak](session::ToolResult partial) {
        if (auto c = weak.lock(); c && !c->dead && !c->finished) c->progress(std::move(partial));
      },
      [this, weak](session::ToolResult result) {
        if (auto c = weak.lock()) finish_call(c, std::move(result));
      });
}

void AcpConnection::finish_call(const std::shared_ptr<CallState>& call,
                                session::ToolResult result) {
  if (call->dead || call->finished) return;
  call->finished = true;
  call->waiting_client = call->waiting_permission = false;
  call->done(std::move(result));
}

namespace {

// The client's answer to a file request: the error text, or none.
std::optional<std::string> client_error(const Json& answer) {
  if (const auto error = answer.find("error"); error != answer.end()) {
    if (error->is_object() && error->contains("message") && (*error)["message"].is_string())
      return (*error)["message"].get<std::string>();
    return std::string("The client could not do it");
  }
  return std::nullopt;
}

// The text of a successful fs/read_text_file answer.
std::optional<std::string> read_content(const Json& answer) {
  const auto result = answer.find("result");
  if (result == answer.end() || !result->is_object()) return std::nullopt;
  const auto content = result->find("content");
  if (content == result->end() || !content->is_string()) return std::nullopt;
  return content->get<std::string>();
}

constexpr const char* kNoContent = "The client's fs/read_text_file answer has no content text";

}  // namespace

void AcpConnection::call_client(const std::shared_ptr<CallState>& call, const char* method,
                                const std::string& path, const std::string* content,
                                ClientAnswer answer) {
  Json params = Json::object();
  params["sessionId"] = call->session_id;
  params["path"] = path;
  if (content) params["content"] = *content;
  call->waiting_client = true;
  request_client(method, std::move(params),
                 [call, answer = std::move(answer)](const Json& response) {
                   // A call that ended meanwhile (cancelled, its session gone) ignores it.
                   if (call->dead || call->finished || !call->waiting_client) return;
                   call->waiting_client = false;
                   answer(response);
                 });
}

void AcpConnection::client_read(const std::shared_ptr<CallState>& call) {
  const std::string abs =
      tools::resolve_path(tools::string_arg(call->args, "path"), call->context.cwd);
  call_client(call, "fs/read_text_file", abs, nullptr, [this, call](const Json& answer) {
    if (auto error = client_error(answer))
      return finish_call(call, session::ToolResult::error(*error));
    const auto text = read_content(answer);
    if (!text) return finish_call(call, session::ToolResult::error(kNoContent));
    finish_call(call, tools::read_text(call->args, *text));
  });
}

void AcpConnection::client_write(const std::shared_ptr<CallState>& call) {
  const std::string given = tools::string_arg(call->args, "path");
  const std::string abs = tools::resolve_path(given, call->context.cwd);
  const std::string content = tools::string_arg(call->args, "content");
  auto write = [this, call, given, abs, content] {
    if (call->dead || call->finished) return;
    // Rebound makes the parent directories itself (section 7.4).
    std::string failed_dir;
    if (const int err = tools::make_parent_dirs(abs, failed_dir)) {
      finish_call(call, session::ToolResult::error(tools::fs_error(err, "mkdir", failed_dir)));
      return;
    }
    call_client(call, "fs/write_text_file", abs, &content,
                [this, call, given, content](const Json& answer) {
                  if (auto error = client_error(answer))
                    return finish_call(call, session::ToolResult::error(*error));
                  if (ToolState* state = tool_state(call->slot, call->call_id))
                    state->after = content;
                  finish_call(call, tools::text_result("Successfully wrote " +
                                                       std::to_string(content.size()) +
                                                       " bytes to " + given));
                });
  };
  if (!fs_read_) return write();
  // The diff's "before" is read the way the tool reads (acp.md section 15): through the client;
  // a file it cannot read counts as new.
  call_client(call, "fs/read_text_file", abs, nullptr, [this, call, write](const Json& answer) {
    if (ToolState* state = tool_state(call->slot, call->call_id))
      state->before = client_error(answer) ? std::nullopt : read_content(answer);
    write();
  });
}

void AcpConnection::client_edit(const std::shared_ptr<CallState>& call) {
  const std::string given = tools::string_arg(call->args, "path");
  const std::string abs = tools::resolve_path(given, call->context.cwd);
  std::vector<tools::TextEdit> edits;
  for (const auto& e : call->args.value("edits", Json::array())) {
    if (e.is_object())
      edits.push_back({tools::string_arg(e, "oldText"), tools::string_arg(e, "newText")});
  }
  if (edits.empty()) {
    finish_call(call,
                session::ToolResult::error(
                    "Edit tool input is invalid. edits must contain at least one replacement."));
    return;
  }
  // Edit the text, then write it back (through the client or locally).
  auto apply = [this, call, given, abs, edits](const std::string& original) {
    if (call->dead || call->finished) return;
    tools::EditOutcome outcome = tools::apply_edits(original, edits, given);
    if (outcome.error)
      return finish_call(call, session::ToolResult::error(std::move(*outcome.error)));
    if (ToolState* state = tool_state(call->slot, call->call_id)) state->before = original;
    session::ToolResult done = tools::text_result(
        "Successfully replaced " + std::to_string(edits.size()) + " block(s) in " + given + ".");
    done.details = Json{{"diff", outcome.diff}, {"firstChangedLine", outcome.first_changed_line}};
    auto written = [this, call, content = outcome.content, done]() mutable {
      if (ToolState* state = tool_state(call->slot, call->call_id)) state->after = content;
      finish_call(call, std::move(done));
    };
    if (!fs_write_) {
      const int fd = ::open(abs.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
      const bool ok = fd >= 0 && tools::write_all(fd, outcome.content);
      const int err = errno;
      if (fd >= 0) ::close(fd);
      if (!ok)
        return finish_call(
            call, session::ToolResult::error("Could not edit file: " + given +
                                             ". Error code: " + tools::errno_name(err) + "."));
      return written();
    }
    call_client(call, "fs/write_text_file", abs, &outcome.content,
                [this, call, written](const Json& answer) mutable {
                  if (auto error = client_error(answer))
                    return finish_call(call, session::ToolResult::error(*error));
                  written();
                });
  };
  if (fs_read_) {
    call_client(call, "fs/read_text_file", abs, nullptr, [this, call, apply](const Json& answer) {
      if (auto error = client_error(answer))
        return finish_call(call, session::ToolResult::error(*error));
      const auto text = read_content(answer);
      if (!text) return finish_call(call, session::ToolResult::error(kNoContent));
      apply(*text);
    });
    return;
  }
  auto original = acp::read_whole_file(abs);
  if (!original) {
    finish_call(call, session::ToolResult::error("Could not edit file: " + given +
                                                 ". Error code: ENOENT."));
    return;
  }
  // Not from inside start(): the completion may come at once.
  std::weak_ptr<bool> alive = alive_;
  scheduler_.post([alive, apply, text = std::move(*original)] {
    if (!alive.expired()) apply(text);
  });
}

// ---- session/load's replay (section 4) ----

void AcpConnection::replay(Open& s) {
  using protocol::ContentBlock;
  using protocol::Role;
  using protocol::StopReason;
  const auto& history = s.parts.session->history();
  std::map<std::string, const protocol::AgentMessage*> results;
  for (const auto& m : history) {
    if (m.role == Role::tool_result) results[m.tool_call_id] = &m;
  }
  auto chunk = [&](const char* kind, Json content, const std::string& message_id) {
    Json body = Json::object();
    body["sessionUpdate"] = kind;
    body["content"] = std::move(content);
    body["messageId"] = message_id;
    update(s, std::move(body));
  };
  for (std::size_t i = 0; i < history.size(); ++i) {
    const protocol::AgentMessage& m = history[i];
    if (m.role == Role::user) {
      for (const auto& block : m.content) {
        if (block.kind == ContentBlock::Kind::text) {
          chunk("user_message_chunk", text_content(block.text), m.entry_id);
        } else if (block.kind == ContentBlock::Kind::image) {
          chunk("user_message_chunk", acp::image_content(block), m.entry_id);
        }
      }
      continue;
    }
    if (!m.is_assistant()) continue;  // tool results complete their call; the rest is not shown
    const bool error = m.stop_reason == StopReason::error;
    // An attempt that was retried: the next message on the path is the retry's.
    if (error && i + 1 < history.size() && history[i + 1].is_assistant()) continue;
    bool wrote_text = false;
    for (const auto& block : m.content) {
      if (block.kind == ContentBlock::Kind::text) {
        chunk("agent_message_chunk", text_content(block.text), m.entry_id);
        wrote_text = true;
      } else if (block.kind == ContentBlock::Kind::thinking && !error) {
        chunk("agent_thought_chunk", text_content(block.text), m.entry_id);
      }
    }
    if (error) {
      chunk("agent_message_chunk",
            text_content((wrote_text ? "\n\nError: " : "Error: ") +
                         m.error_message.value_or("Unknown error")),
            m.entry_id + "-error");
      continue;
    }
    if (m.stop_reason == StopReason::aborted) continue;
    for (const auto& block : m.content) {
      if (block.kind != ContentBlock::Kind::tool_call) continue;
      const acp::ToolCallInfo info = acp::tool_call_info(block.name, block.arguments, s.cwd);
      const auto found = results.find(block.id);
      const protocol::AgentMessage* result = found == results.end() ? nullptr : found->second;
      Json body = Json::object();
      body["sessionUpdate"] = "tool_call";
      body["toolCallId"] = block.id;
      body["title"] = info.title;
      body["kind"] = info.kind;
      body["status"] = !result || result->is_error ? "failed" : "completed";
      session::ToolResult tool_result;
      if (result) {
        tool_result.content = result->content;
        if (!result->details.is_null()) tool_result.details = result->details;
        tool_result.is_error = result->is_error;
        body["content"] = acp::content_of(tool_result);
      }
      Json locations = info.locations;
      // An edit's first changed line is known once it ran (tools.md section 4.3's details).
      if (block.name == "edit" && result && locations.is_array() && !locations.empty() &&
          result->details.is_object()) {
        const auto line = result->details.find("firstChangedLine");
        if (line != result->details.end() && line->is_number_integer() && *line >= 1 &&
            *line <= 4294967295LL)
          locations[0]["line"] = *line;
      }
      if (!locations.is_null()) body["locations"] = std::move(locations);
      body["rawInput"] = block.arguments.is_object() ? block.arguments : Json::object();
      if (result) body["rawOutput"] = pi_tool_result_json(tool_result);
      update(s, std::move(body));
    }
  }
}

// ---- shutdown ----

void AcpConnection::shutdown() {
  if (shutting_down_) return;
  shutting_down_ = true;
  for (auto& [slot, s] : sessions_) {
    drop_next(*s);
    if (s->turn) s->turn->cancelled = true;
  }
  std::vector<session::SessionSlot> slots;
  for (auto& [slot, s] : sessions_)
    slots.push_back(slot);
  for (const auto slot : slots) {
    const auto found = sessions_.find(slot);
    if (found == sessions_.end()) continue;
    found->second->parts.session->shutdown();
    // Then its MCP servers stop, all at once (mcp.md section 3.4).
    if (found->second->parts.mcp) {
      std::weak_ptr<bool> alive = alive_;
      found->second->parts.mcp->stop_all([this, alive] {
        if (!alive.expired()) idle_.check(busy());
      });
    }
  }
  // Whatever did not end with the shutdown (a tool call still winding down) is answered now:
  // the process is leaving.
  for (const auto slot : slots) {
    const auto found = sessions_.find(slot);
    if (found == sessions_.end() || !found->second->turn) continue;
    finish_turn(slot, found->second->turn->serial);
  }
}

void AcpConnection::when_idle(std::function<void()> idle) {
  idle_.wait(std::move(idle), busy());
}

bool AcpConnection::busy() const {
  for (const auto& [slot, s] : sessions_) {
    if (s->parts.session && s->parts.session->is_bash_running()) return true;
    if (s->parts.mcp && s->parts.mcp->any_running()) return true;
  }
  return !stopping_mcp_.empty();
}

void AcpConnection::stop_mcp(std::unique_ptr<mcp::McpManager> manager) {
  if (!manager) return;
  mcp::McpManager* raw = manager.get();
  stopping_mcp_.push_back(std::move(manager));
  std::weak_ptr<bool> alive = alive_;
  raw->stop_all([this, alive, raw] {
    if (alive.expired()) return;
    // Not inside the manager's own callback: dropped on a later turn.
    scheduler_.post([this, alive, raw] {
      if (alive.expired()) return;
      std::erase_if(stopping_mcp_, [raw](const auto& m) { return m.get() == raw; });
      idle_.check(busy());
    });
  });
}

// ---- events ----

void AcpConnection::on_event(const session::Event& event) {
  const auto found = sessions_.find(event.session);
  if (found == sessions_.end()) return;
  Open& s = *found->second;
  if (!s.turn) return;  // nothing for a session outside its prompt (section 12)
  std::visit(
      [&](const auto& e) {
        using T = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<T, ev::MessageStart>) {
          if (e.message.is_assistant()) s.message_id = "m" + std::to_string(next_message_++);
        } else if constexpr (std::is_same_v<T, ev::MessageUpdate>) {
          on_message_update(s, e);
        } else if constexpr (std::is_same_v<T, ev::MessageEnd>) {
          on_message_end(s, e);
        } else if constexpr (std::is_same_v<T, ev::ToolExecutionStart>) {
          on_tool_start(s, e);
        } else if constexpr (std::is_same_v<T, ev::ToolExecutionUpdate>) {
          on_tool_update(s, e);
        } else if constexpr (std::is_same_v<T, ev::ToolExecutionEnd>) {
          on_tool_end(s, e);
        } else if constexpr (std::is_same_v<T, ev::AutoRetryStart> ||
                             std::is_same_v<T, ev::AutoRetryEnd>) {
          on_retry(s, event);
        } else if constexpr (std::is_same_v<T, ev::AutoCompactionStart> ||
                             std::is_same_v<T, ev::AutoCompactionEnd>) {
          on_compaction(s, event);
        }
      },
      event.body);
}

void AcpConnection::on_message_update(Open& s, const ev::MessageUpdate& e) {
  using K = session::AssistantUpdateKind;
  if (e.kind == K::text_delta || e.kind == K::thinking_delta) {
    if (e.delta.empty()) return;
    Json chunk = Json::object();
    chunk["sessionUpdate"] =
        e.kind == K::text_delta ? "agent_message_chunk" : "agent_thought_chunk";
    chunk["content"] = text_content(std::string(e.delta));
    chunk["messageId"] = s.message_id;
    if (e.kind == K::text_delta) s.turn->wrote_text = true;
    update(s, std::move(chunk));
  } else if (e.kind == K::toolcall_end) {
    if (e.content_index >= e.partial.content.size()) return;
    const protocol::ContentBlock& call = e.partial.content[e.content_index];
    ToolState state;
    state.info = acp::tool_call_info(call.name, call.arguments, s.cwd);
    Json body = Json::object();
    body["sessionUpdate"] = "tool_call";
    body["toolCallId"] = call.id;
    body["title"] = state.info.title;
    body["kind"] = state.info.kind;
    body["status"] = "pending";
    if (!state.info.locations.is_null()) body["locations"] = state.info.locations;
    body["rawInput"] = call.arguments.is_object() ? call.arguments : Json::object();
    s.tools[call.id] = std::move(state);
    update(s, std::move(body));
  }
}

void AcpConnection::on_message_end(Open& s, const ev::MessageEnd& e) {
  if (!e.message.is_assistant()) return;
  s.turn->last = e.message.stop_reason;
  s.turn->last_error = e.message.error_message;
  if (e.message.failed()) return;
  const session::AgentSession& session = *s.parts.session;
  Json body = Json::object();
  body["sessionUpdate"] = "usage_update";
  body["used"] = e.message.usage.total_tokens;
  const auto model = session.state().model;
  body["size"] = model ? model->context_window : 0;
  Json cost = Json::object();
  cost["amount"] = session.stats().tokens.cost_total;
  cost["currency"] = "USD";
  body["cost"] = std::move(cost);
  update(s, std::move(body));
}

void AcpConnection::on_tool_start(Open& s, const ev::ToolExecutionStart& e) {
  auto it = s.tools.find(e.tool_call_id);
  if (it == s.tools.end()) {
    ToolState state;
    state.info = acp::tool_call_info(e.tool_name, e.args, s.cwd);
    it = s.tools.emplace(e.tool_call_id, std::move(state)).first;
  }
  // edit and write: the file before the call, for the diff (section 7.2).
  if (it->second.info.edits_file) it->second.before = acp::read_whole_file(it->second.info.path);
  // A call that asks first shows in_progress only once the client allowed it (section 7.3).
  it->second.asks = asks_permission(s, e.tool_name);
  if (it->second.asks) return;
  update(s, in_progress_update(e.tool_call_id));
}

void AcpConnection::on_tool_update(Open& s, const ev::ToolExecutionUpdate& e) {
  if (!acp::has_text(e.partial_result)) return;
  Json text_entry = acp::content_entry(text_content(acp::result_text(e.partial_result)));
  Json body = Json::object();
  body["sessionUpdate"] = "tool_call_update";
  body["toolCallId"] = e.tool_call_id;
  body["content"] = Json::array({std::move(text_entry)});
  update(s, std::move(body));
}

void AcpConnection::on_tool_end(Open& s, const ev::ToolExecutionEnd& e) {
  Json body = Json::object();
  body["sessionUpdate"] = "tool_call_update";
  body["toolCallId"] = e.tool_call_id;
  body["status"] = e.result.is_error ? "failed" : "completed";
  const auto it = s.tools.find(e.tool_call_id);
  std::optional<std::string> after;
  if (!e.result.is_error && it != s.tools.end() && it->second.info.edits_file) {
    after = it->second.after ? it->second.after : acp::read_whole_file(it->second.info.path);
  }
  if (after) {
    body["content"] =
        Json::array({acp::diff_content(it->second.info.path, it->second.before, *after)});
  } else {
    body["content"] = acp::content_of(e.result);
  }
  body["rawOutput"] = pi_tool_result_json(e.result);
  if (it != s.tools.end()) s.tools.erase(it);
  update(s, std::move(body));
}

void AcpConnection::on_retry(Open& s, const session::Event& event) {
  const Json rpc = pi_event_json(event);
  if (const auto* start = std::get_if<ev::AutoRetryStart>(&event.body)) {
    ++s.turn->retries;
    session_notification(s, "_rebound/auto_retry_start", rpc);
    if (!notices_) return;
    Json meta = Json::object();
    meta["event"] = "auto_retry_start";
    meta["attempt"] = start->attempt;
    meta["maxAttempts"] = start->max_attempts;
    meta["delayMs"] = start->delay_ms;
    Json body = Json::object();
    body["sessionUpdate"] = "notice";
    body["severity"] = "warning";
    body["title"] = acp::retry_notice_title(start->attempt, start->max_attempts, start->delay_ms);
    body["description"] = start->error_message;
    body["_meta"] = Json{{"rebound", std::move(meta)}};
    update(s, std::move(body));
    return;
  }
  const auto& end = std::get<ev::AutoRetryEnd>(event.body);
  session_notification(s, "_rebound/auto_retry_end", rpc);
  if (!notices_ || !end.success) return;
  Json meta = Json::object();
  meta["event"] = "auto_retry_end";
  meta["success"] = true;
  meta["attempt"] = end.attempt;
  Json body = Json::object();
  body["sessionUpdate"] = "notice";
  body["severity"] = "info";
  body["title"] = acp::recovered_notice_title(end.attempt);
  body["_meta"] = Json{{"rebound", std::move(meta)}};
  update(s, std::move(body));
}

void AcpConnection::on_compaction(Open& s, const session::Event& event) {
  const Json rpc = pi_event_json(event);
  if (const auto* start = std::get_if<ev::AutoCompactionStart>(&event.body)) {
    s.turn->overflow_compaction = start->reason == session::CompactionReason::overflow;
    s.compaction_id = acp::random_hex_id();
    session_notification(s, "_rebound/auto_compaction_start", rpc);
    if (compaction_updates_) {
      Json body = Json::object();
      body["sessionUpdate"] = "compaction_update";
      body["compactionId"] = s.compaction_id;
      body["status"] = "in_progress";
      update(s, std::move(body));
    } else if (notices_) {
      Json body = Json::object();
      body["sessionUpdate"] = "notice";
      body["severity"] = "info";
      body["title"] = "Compacting the conversation (" +
                      std::string(session::compaction_reason_name(start->reason)) + ")";
      update(s, std::move(body));
    }
    return;
  }
  const auto& end = std::get<ev::AutoCompactionEnd>(event.body);
  if (end.error_message && !end.aborted && s.turn->overflow_compaction)
    s.turn->compaction_error = std::string(*end.error_message);
  session_notification(s, "_rebound/auto_compaction_end", rpc);
  if (!compaction_updates_) return;
  Json body = Json::object();
  body["sessionUpdate"] = "compaction_update";
  body["compactionId"] = s.compaction_id;
  if (end.result) {
    body["status"] = "completed";
    body["summary"] = Json::array({text_content(end.result->summary)});
  } else if (end.aborted) {
    body["status"] = "cancelled";
  } else {
    body["status"] = "failed";
    body["error"] = end.error_message ? std::string(*end.error_message) : std::string();
  }
  update(s, std::move(body));
}

}  // namespace rebound::server
