#include "mcp/mcp_connection.h"

#include "protocol/json_line.h"
#include "protocol/jsonrpc.h"
#include "protocol/name_table.h"

#include <spdlog/spdlog.h>

#include <utility>

#include "mcp/mcp_results.h"
#include "protocol/messages.h"
#include "tools/tool_args.h"
#include "tools/truncate.h"

namespace rebound::mcp {

using protocol::Json;
using session::ToolResult;

namespace {

constexpr const char* kProtocolVersion = "2025-11-25";
constexpr const char* kKnownVersions[] = {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"};

using tools::has_string;
using tools::string_arg;

std::string utf8_prefix(std::string_view text, std::size_t max) {
  return std::string(tools::utf8_prefix(text, max));
}

// A response's `result` when it is an object; else an empty object.
const Json& result_of(const Json& response) {
  static const Json empty = Json::object();
  const auto result = response.find("result");
  return result != response.end() && result->is_object() ? *result : empty;
}

}  // namespace

namespace {
constexpr protocol::Named<Status> kStatusNames[] = {{Status::starting, "starting"},
                                                    {Status::ready, "ready"},
                                                    {Status::failed, "failed"},
                                                    {Status::disabled, "disabled"}};
}  // namespace

std::string_view status_name(Status status) {
  return protocol::name_of(status, kStatusNames);
}

// ---- a call's handle ----

class McpConnection::CallHandle : public session::ToolCall {
 public:
  CallHandle(McpConnection& connection, std::int64_t id)
      : connection_(connection), alive_(connection.alive_), id_(id) {}
  ~CallHandle() override {
    // Dropped without a completion (the session let go of the call): the server is told.
    if (!alive_.expired() && connection_.calls_.count(id_)) {
      connection_.cancel_call(id_, "Request was aborted", std::nullopt);
    }
  }
  void cancel() override {
    if (!alive_.expired() && connection_.calls_.count(id_))
      connection_.cancel_call(id_, "Request was aborted", ToolResult::error("Operation aborted"));
  }

 private:
  McpConnection& connection_;
  std::weak_ptr<bool> alive_;
  std::int64_t id_;
};

// ---- life cycle ----

McpConnection::McpConnection(session::Scheduler& scheduler, Spawner spawner, ServerConfig config,
                             Options options, std::function<void()> changed)
    : scheduler_(scheduler),
      spawner_(std::move(spawner)),
      config_(std::move(config)),
      options_(std::move(options)),
      changed_(std::move(changed)),
      child_(scheduler, spawner_,
             peer::PeerChild::Options{
                 "mcp[" + config_.name + "]", kMaxMessageBytes, options_.max_queued_input,
                 "The server does not read its input (more than " +
                     std::to_string(options_.max_queued_input) + " bytes waiting)"}) {
  if (config_.disabled) status_ = Status::disabled;
}

McpConnection::~McpConnection() {
  alive_.reset();
}

void McpConnection::notify_changed() {
  if (change_posted_) return;
  change_posted_ = true;
  std::weak_ptr<bool> alive = alive_;
  scheduler_.post([this, alive] {
    if (alive.expired()) return;
    change_posted_ = false;
    if (changed_) changed_();
  });
}

void McpConnection::start() {
  start_queued_ = false;
  status_ = Status::starting;
  error_.clear();
  tools_.clear();
  ++tools_version_;
  server_info_.reset();
  initialized_sent_ = listing_ = relist_ = false;
  end_all_calls("Operation aborted");  // none is left by stop(); nothing is ever dropped
  notify_changed();
  if (config_.disabled) {
    status_ = Status::disabled;
    return;
  }
  if (config_.error) {
    fail(*config_.error);
    return;
  }
  SpawnSpec spec;
  spec.argv.push_back(config_.command);
  spec.argv.insert(spec.argv.end(), config_.args.begin(), config_.args.end());
  spec.cwd = options_.session_cwd;
  if (config_.cwd && !config_.cwd->empty()) {
    spec.cwd =
        config_.cwd->front() == '/' ? *config_.cwd : options_.session_cwd + "/" + *config_.cwd;
  }
  for (const auto& [key, value] : server_environment(options_.getenv, config_.env))
    spec.env.push_back(key + "=" + value);
  spec.sandboxed = config_.sandbox.value_or(false);

  std::string spawn_error;
  if (!child_.start(
          spec, [this](std::string_view line) { on_line(line); },
          [this](std::string error) { fail(std::move(error)); }, spawn_error)) {
    fail(spawn_error);
    return;
  }
  peer_ = std::make_unique<protocol::JsonRpcPeer>(
      [this](const Json& message) { child_.write(protocol::to_line(message)); });
  // Of the server's own requests only ping is served (section 5).
  peer_->on_request([](const std::string& method, const Json&) -> std::optional<Json> {
    if (method == "ping") return Json::object();
    return std::nullopt;
  });
  peer_->on_notification(
      [this](const std::string& method, const Json& params) { on_notification(method, params); });

  const std::int64_t timeout =
      config_.startup_timeout_ms.value_or(options_.settings.startup_timeout_ms);
  startup_timer_ = scheduler_.make_timer();
  startup_timer_->start(
      std::chrono::duration_cast<std::chrono::milliseconds>(session::saturated_delay(timeout)),
      [this] { time_out_startup(); });

  Json client_info = Json::object();
  client_info["name"] = "rebound";
  client_info["title"] = "Rebound";
  client_info["version"] = options_.version;
  Json params = Json::object();
  params["protocolVersion"] = kProtocolVersion;
  params["capabilities"] = Json::object();
  params["clientInfo"] = std::move(client_info);
  peer_->request("initialize", std::move(params),
                 [this](const Json& response) { on_initialized(response); });
}

void McpConnection::on_initialized(const Json& response) {
  if (status_ != Status::starting) return;
  if (const auto error = response.find("error"); error != response.end()) {
    fail("Initialization failed: " + protocol::jsonrpc_error_text(*error, "MCP error"));
    return;
  }
  const Json& result = result_of(response);
  const auto version = result.find("protocolVersion");
  const std::string v = version != result.end() && version->is_string()
                            ? version->get<std::string>()
                            : (version != result.end() ? version->dump() : std::string("(none)"));
  bool known = false;
  for (const char* k : kKnownVersions)
    known = known || v == k;
  if (!known) {
    fail("Unsupported protocol version: " + v);
    return;
  }
  if (const auto info = result.find("serverInfo"); info != result.end() && info->is_object()) {
    Json kept = Json::object();
    kept["name"] = string_arg(*info, "name");
    kept["version"] = string_arg(*info, "version");
    server_info_ = std::move(kept);
  }
  peer_->notify("notifications/initialized");
  initialized_sent_ = true;
  const auto caps = result.find("capabilities");
  if (caps != result.end() && caps->is_object() && caps->contains("tools")) {
    list_tools(std::nullopt, 1, std::make_shared<std::vector<ServerTool>>());
    return;
  }
  finish_listing({});
}

void McpConnection::list_tools(std::optional<Json> cursor, int page,
                               std::shared_ptr<std::vector<ServerTool>> so_far) {
  listing_ = true;
  Json params = Json::object();
  if (cursor) params["cursor"] = *cursor;
  peer_->request("tools/list", std::move(params), [this, page, so_far](const Json& response) {
    if (status_ != Status::starting && status_ != Status::ready) return;
    if (const auto error = response.find("error"); error != response.end()) {
      const std::string text = protocol::jsonrpc_error_text(*error, "MCP error");
      if (status_ == Status::starting) {
        fail("Initialization failed: " + text);
        return;
      }
      spdlog::warn("mcp[{}] tools/list failed, keeping the old list: {}", name(), text);
      finish_listing(tools_);
      return;
    }
    const Json& result = result_of(response);
    if (const auto list = result.find("tools"); list != result.end() && list->is_array())
      accept_tools(*list, *so_far);
    const auto next = result.find("nextCursor");
    if (next != result.end() && !next->is_null()) {
      if (page < kMaxListPages) {
        list_tools(*next, page + 1, so_far);
        return;
      }
      spdlog::warn("mcp[{}] tools/list: more than {} pages, using the first {}", name(),
                   kMaxListPages, kMaxListPages);
    }
    finish_listing(std::move(*so_far));
  });
}

void McpConnection::accept_tools(const Json& list, std::vector<ServerTool>& into) const {
  for (const auto& tool : list) {
    if (!tool.is_object() || !has_string(tool, "name")) {
      spdlog::warn("mcp[{}] skipped a tool without a name", name());
      continue;
    }
    ServerTool t;
    t.name = tool["name"].get<std::string>();
    if (config_.include_tools &&
        std::find(config_.include_tools->begin(), config_.include_tools->end(), t.name) ==
            config_.include_tools->end())
      continue;
    if (std::find(config_.exclude_tools.begin(), config_.exclude_tools.end(), t.name) !=
        config_.exclude_tools.end())
      continue;
    const auto schema = tool.find("inputSchema");
    if (schema == tool.end() || !schema->is_object() ||
        (schema->contains("type") && (*schema)["type"] != "object")) {
      spdlog::warn("mcp[{}] skipped tool {}: its inputSchema is not an object schema", name(),
                   t.name);
      continue;
    }
    if (const auto execution = tool.find("execution");
        execution != tool.end() && execution->is_object() &&
        execution->value("taskSupport", Json()) == "required") {
      spdlog::warn("mcp[{}] skipped tool {}: it requires MCP tasks", name(), t.name);
      continue;
    }
    t.parameters = *schema;
    if (!t.parameters.contains("type")) t.parameters["type"] = "object";
    const auto annotations = tool.find("annotations");
    const bool has_annotations = annotations != tool.end() && annotations->is_object();
    if (has_string(tool, "description")) {
      t.description = tool["description"].get<std::string>();
    } else if (has_string(tool, "title")) {
      t.description = tool["title"].get<std::string>();
    } else if (has_annotations) {
      t.description = string_arg(*annotations, "title");
    }
    t.read_only = has_annotations && annotations->value("readOnlyHint", Json(false)) == true;
    into.push_back(std::move(t));
  }
}

void McpConnection::finish_listing(std::vector<ServerTool> tools) {
  tools_ = std::move(tools);
  ++tools_version_;
  if (status_ == Status::starting) {
    status_ = Status::ready;
    if (startup_timer_) startup_timer_->cancel();
  }
  if (relist_) {
    relist_ = false;
    list_tools(std::nullopt, 1, std::make_shared<std::vector<ServerTool>>());
  } else {
    listing_ = false;
  }
  notify_changed();
}

// ---- input from the server ----

void McpConnection::on_line(std::string_view line) {
  if (peer_->receive(line) == protocol::JsonRpcPeer::Received::not_an_object)
    spdlog::warn("mcp[{}] ignored non-JSON output: {}", name(), utf8_prefix(line, 200));
}

void McpConnection::on_notification(const std::string& method, const Json& params) {
  if (method == "notifications/tools/list_changed") {
    if (!initialized_sent_ || (status_ != Status::starting && status_ != Status::ready)) return;
    if (listing_) {
      relist_ = true;
    } else {
      list_tools(std::nullopt, 1, std::make_shared<std::vector<ServerTool>>());
      notify_changed();
    }
    return;
  }
  if (method == "notifications/progress") {
    const auto token = params.find("progressToken");
    if (token == params.end() || !token->is_number_integer()) return;
    const auto it = calls_.find(token->get<std::int64_t>());
    if (it == calls_.end() || !it->second.progress) return;
    Json details = Json::object();
    details["progress"] = params.value("progress", Json(0));
    if (params.contains("total")) details["total"] = params["total"];
    if (params.contains("message")) details["message"] = params["message"];
    ToolResult partial;
    partial.details = std::move(details);
    it->second.progress(std::move(partial));
    return;
  }
  spdlog::debug("mcp[{}] notification {} ignored", name(), method);
}

// ---- failure and stopping ----

void McpConnection::time_out_startup() {
  if (status_ != Status::starting) return;
  const std::int64_t timeout =
      config_.startup_timeout_ms.value_or(options_.settings.startup_timeout_ms);
  fail("Startup timed out after " + std::to_string(timeout) + " ms");
}

void McpConnection::fail(std::string error) {
  if (status_ == Status::failed) return;
  spdlog::warn("mcp[{}] failed: {}", name(), error);
  const bool was_up = status_ == Status::ready || status_ == Status::starting;
  status_ = Status::failed;
  error_ = std::move(error);
  tools_.clear();
  ++tools_version_;
  listing_ = relist_ = false;
  if (startup_timer_) startup_timer_->cancel();
  if (was_up) end_all_calls("MCP server " + name() + " stopped during the call: " + error_);
  child_.stop();
  notify_changed();
}

void McpConnection::stop(std::function<void()> gone) {
  if (start_queued_) {
    // Stopped before it started: it never will.
    start_queued_ = false;
    status_ = Status::failed;
    error_ = "Stopped before it started";
  }
  // Pending calls are cancelled as on an abort (section 5).
  for (const auto id : call_ids())
    cancel_call(id, "Request was aborted", ToolResult::error("Operation aborted"));
  if (status_ == Status::starting || status_ == Status::ready) {
    if (startup_timer_) startup_timer_->cancel();
    listing_ = relist_ = false;
  }
  child_.stop(std::move(gone));
}

// ---- calls ----

std::unique_ptr<session::ToolCall> McpConnection::call(const std::string& tool, const Json& args,
                                                       session::Tool::Progress progress,
                                                       session::Tool::Done done) {
  if (!args.is_object()) {
    post_done(std::move(done), ToolResult::error("Invalid arguments: expected an object"));
    return nullptr;
  }
  if (status_ != Status::ready || !peer_ || child_.stopping()) {
    const std::string why = !error_.empty()     ? error_
                            : child_.stopping() ? std::string("stopping")
                                                : std::string(status_name(status_));
    post_done(std::move(done),
              ToolResult::error("MCP server " + name() + " is not available: " + why));
    return nullptr;
  }
  const std::int64_t id = peer_->next_id();
  Json meta = Json::object();
  meta["progressToken"] = id;
  Json params = Json::object();
  params["name"] = tool;
  params["arguments"] = args;
  params["_meta"] = std::move(meta);
  PendingCall& pending = calls_[id];
  pending.tool = tool;
  pending.progress = std::move(progress);
  pending.done = std::move(done);
  const std::int64_t timeout = config_.tool_timeout_ms.value_or(options_.settings.tool_timeout_ms);
  pending.timer = scheduler_.make_timer();
  pending.timer->start(
      std::chrono::duration_cast<std::chrono::milliseconds>(session::saturated_delay(timeout)),
      [this, id, timeout] {
        const std::string t = std::to_string(timeout);
        cancel_call(id, "Timed out after " + t + " ms",
                    ToolResult::error("MCP tool call timed out after " + t + " ms"));
      });
  peer_->request("tools/call", std::move(params), [this, id, tool](const Json& response) {
    if (!calls_.count(id)) return;
    if (const auto error = response.find("error"); error != response.end()) {
      end_call(id, ToolResult::error(protocol::jsonrpc_error_text(*error, "MCP error")));
      return;
    }
    const auto result = response.find("result");
    auto converted = convert_call_result(result != response.end() ? *result : Json(), name(), tool);
    if (!converted) {
      end_call(id, ToolResult::error("MCP server " + name() +
                                     " sent an invalid result: " + converted.error().message));
      return;
    }
    end_call(id, std::move(*converted));
  });
  return std::make_unique<CallHandle>(*this, id);
}

void McpConnection::end_call(std::int64_t id, ToolResult result) {
  const auto it = calls_.find(id);
  if (it == calls_.end()) return;
  session::Tool::Done done = std::move(it->second.done);
  calls_.erase(it);
  if (peer_) peer_->forget(id);
  post_done(std::move(done), std::move(result));
}

void McpConnection::post_done(session::Tool::Done done, ToolResult result) {
  // Never inside the caller's stack (a cancel(), a call()); the session checks its own
  // liveness in `done`.
  scheduler_.post([done = std::move(done), result = std::move(result)]() mutable {
    if (done) done(std::move(result));
  });
}

void McpConnection::cancel_call(std::int64_t id, const std::string& reason,
                                std::optional<ToolResult> result) {
  if (!calls_.count(id)) return;
  if (peer_ && child_.running() && !child_.stopping()) {
    Json params = Json::object();
    params["requestId"] = id;
    params["reason"] = reason;
    peer_->notify("notifications/cancelled", params);
  }
  if (result) {
    end_call(id, std::move(*result));
  } else {
    calls_.erase(id);
    if (peer_) peer_->forget(id);
  }
}

std::vector<std::int64_t> McpConnection::call_ids() const {
  std::vector<std::int64_t> ids;
  for (const auto& [id, call] : calls_)
    ids.push_back(id);
  return ids;
}

void McpConnection::end_all_calls(const std::string& text) {
  for (const auto id : call_ids())
    end_call(id, ToolResult::error(text));
}

}  // namespace rebound::mcp
