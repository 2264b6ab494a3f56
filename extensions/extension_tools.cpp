// ExtensionConnection: what an extension offers, its own tools (extensions.md section 4.5:
// `tools/call`, its partial results, its result in pi's shape, the error texts) and its slash
// commands (section 4.6: `commands/run`).
#include <spdlog/spdlog.h>

#include <chrono>
#include <utility>

#include "extensions/extension_connection.h"
#include "protocol/jsonrpc.h"
#include "tools/truncate.h"

namespace rebound::extensions {

using protocol::Json;
using session::ToolResult;

namespace {

ToolResult failure(std::string text) {
  ToolResult r = ToolResult::error(std::move(text));
  r.details = Json::object();
  return r;
}

// pi's tool result {"content":[TextContent|ImageContent…],"details"?,"isError"?}; `problem` set
// when it has another shape.
ToolResult read_tool_result(const Json& result, std::string& problem) {
  ToolResult out;
  if (!result.is_object()) {
    problem = "result must be an object";
    return out;
  }
  const auto content = result.find("content");
  if (content == result.end() || !content->is_array()) {
    problem = "content must be an array";
    return out;
  }
  for (const auto& block : *content) {
    const Json type = block.is_object() ? block.value("type", Json()) : Json();
    if (type == "text" && block.value("text", Json()).is_string()) {
      out.content.push_back(protocol::ContentBlock::make_text(block["text"].get<std::string>()));
    } else if (type == "image" && block.value("data", Json()).is_string() &&
               block.value("mimeType", Json()).is_string()) {
      out.content.push_back(protocol::ContentBlock::make_image(
          block["data"].get<std::string>(), block["mimeType"].get<std::string>()));
    } else {
      problem = "content must hold text and image blocks";
      return out;
    }
  }
  if (const auto details = result.find("details"); details != result.end()) out.details = *details;
  if (const auto is_error = result.find("isError"); is_error != result.end()) {
    if (!is_error->is_boolean()) {
      problem = "isError must be a boolean";
      return out;
    }
    out.is_error = is_error->get<bool>();
  }
  return out;
}

}  // namespace

class ExtensionConnection::CallHandle : public session::ToolCall {
 public:
  CallHandle(ExtensionConnection& c, std::int64_t id) : c_(c), alive_(c.alive_), id_(id) {}
  ~CallHandle() override {
    // Let go of without a completion: the extension is told, nothing more is reported.
    if (!alive_.expired() && c_.calls_.count(id_)) {
      c_.calls_[id_].done = nullptr;
      c_.end_call(id_, ToolResult{}, "Request was aborted");
    }
  }
  void cancel() override {
    if (!alive_.expired() && c_.calls_.count(id_))
      c_.end_call(id_, failure("Operation aborted"), "Request was aborted");
  }

 private:
  ExtensionConnection& c_;
  std::weak_ptr<bool> alive_;
  std::int64_t id_;
};

std::unique_ptr<session::ToolCall> ExtensionConnection::call_tool(const std::string& tool,
                                                                  const std::string& call_id,
                                                                  const Json& args,
                                                                  session::Tool::Progress progress,
                                                                  session::Tool::Done done) {
  auto post = [this](session::Tool::Done d, ToolResult r) {
    scheduler_.post([d = std::move(d), r = std::move(r)]() mutable { d(std::move(r)); });
    return nullptr;
  };
  if (!args.is_object())
    return post(std::move(done), failure("Invalid arguments: expected an object"));
  if (!ready() || !peer_)
    return post(std::move(done),
                failure("Extension " + name() + " is not available: " +
                        (error_.empty() ? std::string(status_name(status_)) : error_)));
  Json params = Json::object();
  params["name"] = tool;
  params["toolCallId"] = call_id;
  params["arguments"] = args;
  const std::int64_t id = peer_->next_id();
  PendingCall& pending = calls_[id];
  pending.call_id = call_id;
  pending.progress = std::move(progress);
  pending.done = std::move(done);
  const std::int64_t timeout = options_.settings.tool_timeout_ms;
  pending.timer = scheduler_.make_timer();
  pending.timer->start(
      std::chrono::duration_cast<std::chrono::milliseconds>(session::saturated_delay(timeout)),
      [this, id, timeout] {
        const std::string t = std::to_string(timeout);
        end_call(id, failure("Extension tool call timed out after " + t + " ms"),
                 "Timed out after " + t + " ms");
      });
  peer_->request("tools/call", std::move(params),
                 [this, id](const Json& response) { on_call_answer(id, response); });
  return std::make_unique<CallHandle>(*this, id);
}

void ExtensionConnection::on_call_answer(std::int64_t id, const Json& response) {
  if (!calls_.count(id)) return;
  if (const auto error = response.find("error"); error != response.end()) {
    end_call(id, failure(protocol::jsonrpc_error_text(*error, "Extension error")), "");
    return;
  }
  std::string problem;
  const auto result = response.find("result");
  ToolResult converted = read_tool_result(result != response.end() ? *result : Json(), problem);
  if (!problem.empty()) {
    end_call(id, failure("Extension " + name() + " sent an invalid result: " + problem), "");
    return;
  }
  // Texts truncated as an MCP tool's are (section 4.5, mcp.md section 6).
  if (auto truncation = tools::truncate_result_head(converted.content)) {
    if (!converted.details || !converted.details->is_object()) converted.details = Json::object();
    (*converted.details)["truncation"] = std::move(*truncation);
  }
  end_call(id, std::move(converted), "");
}

void ExtensionConnection::on_tool_update(const Json& params) {
  const auto call_id = params.find("toolCallId");
  if (call_id == params.end() || !call_id->is_string()) return;
  for (auto& [id, pending] : calls_) {
    if (pending.call_id != *call_id || !pending.progress) continue;
    std::string problem;
    const auto partial = params.find("partialResult");
    ToolResult r = read_tool_result(partial != params.end() ? *partial : Json(), problem);
    if (problem.empty()) pending.progress(std::move(r));
    return;
  }
}

void ExtensionConnection::end_call(std::int64_t id, ToolResult result,
                                   const std::string& cancel_reason) {
  const auto it = calls_.find(id);
  if (it == calls_.end()) return;
  auto done = std::move(it->second.done);
  calls_.erase(it);
  if (peer_) peer_->forget(id);
  if (!cancel_reason.empty()) send_cancelled(id, cancel_reason);
  if (done)
    scheduler_.post([done = std::move(done), result = std::move(result)]() mutable {
      done(std::move(result));
    });
}

void ExtensionConnection::send_cancelled(std::int64_t id, const std::string& reason) {
  if (!peer_) return;
  Json params = Json::object();
  params["id"] = id;
  params["reason"] = reason;
  peer_->notify("cancelled", params);
}

// ---- slash commands ----

void ExtensionConnection::run_command(const std::string& command, const std::string& args,
                                      std::function<void(session::Status)> done) {
  const std::int64_t id = peer_ && ready() ? peer_->next_id() : 0;
  PendingCommand& pending = command_runs_[id];
  pending.name = command;
  pending.done = std::move(done);
  if (id == 0) {
    end_command(0, error_.empty() ? std::string(status_name(status_)) : error_, "");
    return;
  }
  const std::int64_t timeout = options_.settings.tool_timeout_ms;
  pending.timer = scheduler_.make_timer();
  pending.timer->start(
      std::chrono::duration_cast<std::chrono::milliseconds>(session::saturated_delay(timeout)),
      [this, id, timeout] {
        end_command(id, "no answer within " + std::to_string(timeout) + " ms",
                    "Timed out after " + std::to_string(timeout) + " ms");
      });
  Json params = Json::object();
  params["name"] = command;
  params["args"] = args;
  peer_->request("commands/run", std::move(params), [this, id](const Json& response) {
    const auto error = response.find("error");
    if (error == response.end()) return end_command(id, std::nullopt, "");
    end_command(id, protocol::jsonrpc_error_text(*error), "");
  });
}

void ExtensionConnection::end_command(std::int64_t id, std::optional<std::string> failure,
                                      const std::string& cancel_reason) {
  const auto it = command_runs_.find(id);
  if (it == command_runs_.end()) return;
  auto done = std::move(it->second.done);
  const std::string command = std::move(it->second.name);
  command_runs_.erase(it);
  if (peer_ && id != 0) peer_->forget(id);
  if (!cancel_reason.empty()) send_cancelled(id, cancel_reason);
  session::Status status = session::ok();
  if (failure)
    status = session::Error{session::ErrorKind::failed,
                            "Extension command /" + command + " failed: " + *failure};
  scheduler_.post([done = std::move(done), status = std::move(status)]() mutable {
    if (done) done(std::move(status));
  });
}

}  // namespace rebound::extensions
