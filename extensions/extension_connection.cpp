#include "extensions/extension_connection.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <utility>

#include "protocol/json_access.h"
#include "protocol/json_line.h"
#include "protocol/jsonrpc.h"
#include "protocol/name_table.h"

namespace rebound::extensions {

using protocol::Json;
namespace code = protocol::jsonrpc_code;

namespace {

constexpr std::string_view kEventHead = R"({"jsonrpc":"2.0","method":"event","params":)";

bool valid_tool_name(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  for (const char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') return false;
  return true;
}

}  // namespace

namespace {
constexpr protocol::Named<ExtensionStatus> kStatusNames[] = {
    {ExtensionStatus::starting, "starting"},
    {ExtensionStatus::ready, "ready"},
    {ExtensionStatus::failed, "failed"},
    {ExtensionStatus::disabled, "disabled"},
    {ExtensionStatus::untrusted, "untrusted"}};
}  // namespace

std::string_view status_name(ExtensionStatus status) {
  return protocol::name_of(status, kStatusNames);
}

// ---- life cycle ----

ExtensionConnection::ExtensionConnection(session::Scheduler& scheduler, peer::Spawner spawner,
                                         ExtensionConfig config, Options options,
                                         ExtensionHost& host)
    : scheduler_(scheduler),
      config_(std::move(config)),
      options_(std::move(options)),
      host_(host),
      child_(scheduler, std::move(spawner),
             peer::PeerChild::Options{"ext[" + config_.name + "]", peer::kMaxMessageBytes,
                                      peer::kMaxMessageBytes, "Event queue over 64 MiB"}) {}

ExtensionConnection::~ExtensionConnection() {
  alive_.reset();
  dialogs_.clear();
}

std::int64_t ExtensionConnection::timeout_ms() const {
  return config_.timeout_ms.value_or(options_.settings.interceptor_timeout_ms);
}

void ExtensionConnection::post_changed() {
  if (change_posted_ || !host_.changed) return;
  change_posted_ = true;
  std::weak_ptr<bool> alive = alive_;
  scheduler_.post([this, alive] {
    if (alive.expired()) return;
    change_posted_ = false;
    host_.changed();
  });
}

void ExtensionConnection::start() {
  status_ = ExtensionStatus::starting;
  error_.clear();
  server_info_.reset();
  events_.clear();
  event_set_.clear();
  all_events_ = delta_ = initialised_ = false;
  tools_.clear();
  commands_.clear();
  post_changed();
  if (config_.disabled) {
    status_ = ExtensionStatus::disabled;
    return;
  }
  if (!config_.trusted) {
    status_ = ExtensionStatus::untrusted;
    return;
  }
  if (config_.error) {
    fail(*config_.error, "initialize");
    return;
  }
  peer::SpawnSpec spec;
  spec.argv.push_back(config_.command);
  spec.argv.insert(spec.argv.end(), config_.args.begin(), config_.args.end());
  spec.cwd = options_.session_cwd;
  if (config_.cwd && !config_.cwd->empty())
    spec.cwd =
        config_.cwd->front() == '/' ? *config_.cwd : options_.session_cwd + "/" + *config_.cwd;
  std::vector<std::pair<std::string, std::string>> extra{
      {"REBOUND_PROJECT_DIR", options_.session_cwd}};
  extra.insert(extra.end(), config_.env.begin(), config_.env.end());
  for (const auto& [key, value] : peer::child_environment(options_.getenv, extra))
    spec.env.push_back(key + "=" + value);

  std::string spawn_error;
  if (!child_.start(
          spec, [this](std::string_view line) { on_line(line); },
          [this](std::string error) { fail(std::move(error), ""); }, spawn_error)) {
    fail(spawn_error, "initialize");
    return;
  }
  peer_ = std::make_unique<protocol::JsonRpcPeer>(
      [this](const Json& message) { child_.write(protocol::to_line(message)); });
  peer_->on_request_async([this](const std::string& method, const Json& params, const Json& id) {
    on_request(method, params, id);
  });
  peer_->on_notification([this](const std::string& method, const Json& params) {
    if (method == "ui/notify" && params.is_object() && params.contains("message") &&
        params["message"].is_string()) {
      const auto type = params.find("notifyType");
      const std::string t = type != params.end() && type->is_string() ? type->get<std::string>()
                                                                      : std::string("info");
      if (host_.notify) host_.notify(params["message"].get<std::string>(), t);
      return;
    }
    if (method == "tools/update" && params.is_object()) {
      on_tool_update(params);
      return;
    }
    spdlog::debug("ext[{}] notification {} ignored", name(), method);
  });

  const std::int64_t timeout = timeout_ms();
  startup_timer_ = scheduler_.make_timer();
  startup_timer_->start(
      std::chrono::duration_cast<std::chrono::milliseconds>(session::saturated_delay(timeout)),
      [this, timeout] {
        if (starting())
          fail("Startup timed out after " + std::to_string(timeout) + " ms", "initialize");
      });

  Json client_info = Json::object();
  client_info["name"] = "rebound";
  client_info["version"] = options_.version;
  Json params = Json::object();
  params["protocolVersion"] = 1;
  params["clientInfo"] = std::move(client_info);
  params["name"] = name();
  params["mode"] = options_.mode;
  params["ui"] = options_.ui;
  params["cwd"] = options_.session_cwd;
  params["session"] = host_.session ? host_.session() : Json::object();
  peer_->request("initialize", std::move(params),
                 [this](const Json& response) { on_initialized(response); });
}

void ExtensionConnection::on_line(std::string_view line) {
  if (peer_->receive(line) == protocol::JsonRpcPeer::Received::not_an_object)
    spdlog::warn("ext[{}] ignored a line that is not a JSON object", name());
}

void ExtensionConnection::on_initialized(const Json& response) {
  if (!starting()) return;
  if (const auto error = response.find("error"); error != response.end()) {
    fail("Initialization failed: " + protocol::jsonrpc_error_text(*error), "initialize");
    return;
  }
  const auto result = response.find("result");
  if (result == response.end() || !result->is_object()) {
    fail("Initialization failed: invalid answer: result must be an object", "initialize");
    return;
  }
  const auto version = result->find("protocolVersion");
  if (version == result->end() || *version != Json(1)) {
    fail("Unsupported protocol version: " +
             (version == result->end() ? std::string("(none)") : version->dump()),
         "initialize");
    return;
  }
  if (const auto read = read_answer(*result); !read) {
    fail("Initialization failed: invalid answer: " + read.error().message, "initialize");
    return;
  }
  if (startup_timer_) startup_timer_->cancel();
  peer_->notify("initialized");
  Json start = Json::object();
  start["reason"] = "startup";
  const Json session = host_.session ? host_.session() : Json::object();
  for (const auto& [key, value] : session.items())
    start[key] = value;
  peer_->notify("session_start", start);
  status_ = ExtensionStatus::ready;
  post_changed();
}

session::Status ExtensionConnection::read_answer(const Json& result) {
  auto wrong = [](const char* field, const char* kind) {
    return session::failure(std::string(field) + " must be " + kind);
  };
  if (const auto info = result.find("serverInfo"); info != result.end()) {
    if (!info->is_object()) return wrong("serverInfo", "an object");
    Json kept = Json::object();
    kept["name"] = protocol::get_string(*info, "name");
    kept["version"] = protocol::get_string(*info, "version");
    server_info_ = std::move(kept);
  }
  if (const auto events = result.find("events"); events != result.end()) {
    if (!protocol::is_string_array(*events)) return wrong("events", "an array of strings");
    for (const auto& e : *events) {
      events_.push_back(e.get<std::string>());
      if (events_.back() == "*") all_events_ = true;
      event_set_.insert(events_.back());
    }
  }
  if (const auto updates = result.find("messageUpdates"); updates != result.end()) {
    if (*updates != "full" && *updates != "delta") return wrong("messageUpdates", "full or delta");
    delta_ = *updates == "delta";
  }
  if (const auto list = result.find("interceptors"); list != result.end()) {
    if (!protocol::is_string_array(*list)) return wrong("interceptors", "an array of strings");
    for (const auto& i : *list) {
      if (i == "tool_call") {
        intercepts_ = true;
      } else {
        spdlog::warn("ext[{}] interceptor {} is not provided; ignored", name(), i.dump());
      }
    }
  }
  if (const auto list = result.find("tools"); list != result.end()) {
    if (!list->is_array()) return wrong("tools", "an array");
    for (const auto& t : *list) {
      if (!t.is_object() || !t.contains("name") || !t["name"].is_string())
        return wrong("tools", "an array of tools");
      ExtensionTool tool;
      tool.name = t["name"].get<std::string>();
      if (!valid_tool_name(tool.name)) {
        spdlog::warn("ext[{}] skipped tool {}: its name is not ^[a-zA-Z0-9_-]{{1,64}}$", name(),
                     tool.name);
        continue;
      }
      tool.description = protocol::get_string(t, "description");
      tool.parameters = t.value("parameters", Json::object());
      if (!tool.parameters.is_object()) return wrong("tools", "an array of tools");
      if (!tool.parameters.contains("type")) tool.parameters["type"] = "object";
      tools_.push_back(std::move(tool));
    }
  }
  if (const auto list = result.find("commands"); list != result.end()) {
    if (!list->is_array()) return wrong("commands", "an array");
    for (const auto& c : *list) {
      if (!c.is_object() || !c.contains("name") || !c["name"].is_string())
        return wrong("commands", "an array of commands");
      commands_.push_back(
          ExtensionCommand{c["name"].get<std::string>(), protocol::get_string(c, "description")});
    }
  }
  initialised_ = true;
  return session::ok();
}

void ExtensionConnection::fail(std::string error, std::string method) {
  if (status_ == ExtensionStatus::failed) return;
  spdlog::warn("ext[{}] failed: {}", name(), error);
  if (method.empty())
    method = !intercepts_pending_.empty() ? "tool_call"
             : !calls_.empty()            ? "tools/call"
             : !command_runs_.empty()     ? "commands/run"
             : starting()                 ? "initialize"
                                          : "process";
  status_ = ExtensionStatus::failed;
  error_ = std::move(error);
  if (startup_timer_) startup_timer_->cancel();
  // Its pending requests end at once; only this failure is reported.
  session::ToolResult stopped =
      session::ToolResult::error("Extension " + name() + " stopped during the call: " + error_);
  stopped.details = Json::object();
  end_pending(error_, stopped, "");
  child_.stop();
  post_changed();
  if (host_.error) host_.error(name(), method, error_);
}

void ExtensionConnection::end_pending(const std::string& intercept_reason,
                                      const session::ToolResult& call_result,
                                      const std::string& cancel_reason) {
  std::vector<std::int64_t> ids;
  for (const auto& [id, pending] : intercepts_pending_)
    ids.push_back(id);
  for (const auto id : ids)
    end_intercept(id, Interception{Interception::Kind::failed, intercept_reason, {}},
                  !cancel_reason.empty(), cancel_reason);
  ids.clear();
  for (const auto& [id, pending] : calls_)
    ids.push_back(id);
  for (const auto id : ids)
    end_call(id, call_result, cancel_reason);
  ids.clear();
  for (const auto& [id, pending] : command_runs_)
    ids.push_back(id);
  for (const auto id : ids)
    end_command(id, intercept_reason, cancel_reason);
  dialogs_.clear();
}

void ExtensionConnection::stop(const std::string& reason, std::function<void()> gone,
                               bool restarting) {
  if (ready() && peer_) {
    Json params = Json::object();
    params["reason"] = reason;
    const Json session = host_.session ? host_.session() : Json::object();
    params["sessionId"] = session.value("sessionId", Json(""));
    peer_->notify("session_shutdown", params);
  }
  end_pending("Stopped", session::ToolResult::error("Operation aborted"), "Request was aborted");
  if (startup_timer_) startup_timer_->cancel();
  if (restarting) {
    status_ = ExtensionStatus::starting;
    error_.clear();
    post_changed();
  } else if (status_ == ExtensionStatus::starting || status_ == ExtensionStatus::ready) {
    status_ = ExtensionStatus::failed;
    error_ = "Stopped";
  }
  child_.stop(std::move(gone));
}

// ---- what an extension is given ----

bool ExtensionConnection::wants(std::string_view type) const {
  return ready() && (all_events_ || event_set_.find(type) != event_set_.end());
}

void ExtensionConnection::forward(std::string_view line) {
  if (!ready()) return;
  child_.write_later(kEventHead);
  child_.write_later(line);
  child_.write_later("}\n");
}

void ExtensionConnection::notify(const std::string& method, const Json& params) {
  if (ready() && peer_) peer_->notify(method, params);
}

protocol::Json ExtensionConnection::info() const {
  Json out = Json::object();
  out["name"] = name();
  out["status"] = status_name(status_);
  out["source"] = source_name(config_.source);
  out["events"] = events_;
  if (initialised_) out["messageUpdates"] = delta_ ? "delta" : "full";
  out["interceptors"] = intercepts_ ? Json::array({"tool_call"}) : Json::array();
  Json tools = Json::array();
  if (ready())
    for (const auto& t : tools_)
      tools.push_back(t.name);
  out["tools"] = std::move(tools);
  Json commands = Json::array();
  for (const auto& c : commands_)
    commands.push_back(c.name);
  out["commands"] = std::move(commands);
  out["failOpen"] = config_.fail_open;
  if (status_ == ExtensionStatus::failed) out["error"] = error_;
  if (server_info_) out["serverInfo"] = *server_info_;
  return out;
}

}  // namespace rebound::extensions
