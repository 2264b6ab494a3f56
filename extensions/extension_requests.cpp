// ExtensionConnection: the tool_call interceptor (extensions.md section 4.4) and the
// extension's own requests (4.7).
#include <spdlog/spdlog.h>

#include <algorithm>

#include <chrono>
#include <utility>

#include "extensions/extension_connection.h"
#include "protocol/json_access.h"
#include "protocol/jsonrpc.h"

namespace rebound::extensions {

using protocol::Json;
namespace code = protocol::jsonrpc_code;

namespace {

// A tool_call answer read (section 4.4); `problem` set when it has another shape.
Interception read_interception(const Json& result, std::string& problem) {
  using Kind = Interception::Kind;
  if (result.is_null() || (result.is_object() && result.empty())) return Interception{};
  if (!result.is_object()) {
    problem = "invalid answer: result must be an object";
    return {};
  }
  const auto action = result.find("action");
  if (action == result.end() || *action == "allow") return Interception{};
  if (*action == "block") {
    const auto reason = result.find("reason");
    if (reason != result.end() && !reason->is_string()) {
      problem = "invalid answer: reason must be a string";
      return {};
    }
    return Interception{Kind::block, reason != result.end() ? reason->get<std::string>() : "", {}};
  }
  if (*action == "modify") {
    const auto input = result.find("input");
    if (input == result.end() || !input->is_object()) {
      problem = "invalid answer: input must be an object";
      return {};
    }
    return Interception{Kind::modify, "", *input};
  }
  problem = "invalid answer: action must be allow, block or modify";
  return {};
}

// The field of a dialog request that is missing or of the wrong type (section 4.7): `title`,
// the method's own field, `timeout`.
std::optional<std::string> dialog_problem(const std::string& method, const Json& params) {
  struct Field {
    const char* name;
    bool required;
    std::string_view kind;
  };
  const Field own = method == "select"    ? Field{"options", true, "array of strings"}
                    : method == "confirm" ? Field{"message", false, "string"}
                    : method == "input"   ? Field{"placeholder", false, "string"}
                                          : Field{"prefill", false, "string"};
  if (!params.is_object()) return std::string("params: expected object");
  for (const Field& f : {Field{"title", true, "string"}, own, Field{"timeout", false, "integer"}}) {
    const auto it = params.find(f.name);
    const bool fits =
        it != params.end() &&
        (f.kind == "string"    ? it->is_string()
         : f.kind == "integer" ? it->is_number_integer() && it->get<std::int64_t>() >= 1
                               : protocol::is_string_array(*it));
    if (!fits && (it != params.end() || f.required))
      return std::string(f.name) + ": expected " + std::string(f.kind);
  }
  return std::nullopt;
}

// A session/send_user_message's content as a user message: a string, or its text blocks joined.
session::UserInput user_input(const Json& params) {
  session::UserInput input;
  if (params["content"].is_string()) {
    input.text = params["content"].get<std::string>();
    return input;
  }
  for (const auto& block : params["content"])
    if (block.is_object() && block.value("type", Json()) == "text")
      input.text += protocol::get_string(block, "text");
  return input;
}

// `deliverAs`: steer, followUp, or (absent) a prompt.
session::SubmitKind send_kind(const Json& params) {
  const Json deliver = params.value("deliverAs", Json());
  return deliver == "steer"      ? session::SubmitKind::steer
         : deliver == "followUp" ? session::SubmitKind::follow_up
                                 : session::SubmitKind::prompt;
}

// The answer a dialog gives the extension; `answer` cancelled (or empty): its default.
Json dialog_result(const std::string& method, const Json& params,
                   const session::DialogAnswer& answer) {
  Json out = Json::object();
  if (method == "confirm") {
    out["confirmed"] = !answer.cancelled && answer.confirmed.value_or(false);
    return out;
  }
  out["value"] = nullptr;
  if (answer.cancelled || !answer.value) return out;
  if (method == "select") {
    for (const auto& option : params["options"])
      if (option == *answer.value) out["value"] = *answer.value;
    return out;
  }
  out["value"] = *answer.value;
  return out;
}

}  // namespace

// ---- the interceptor ----

class ExtensionConnection::InterceptHandle : public session::Waiting {
 public:
  InterceptHandle(ExtensionConnection& c, std::int64_t id) : c_(c), alive_(c.alive_), id_(id) {}
  ~InterceptHandle() override {
    // Let go of (an abort): the extension is told, nothing more is reported.
    if (!alive_.expired() && c_.intercepts_pending_.count(id_)) {
      c_.intercepts_pending_[id_].done = nullptr;
      c_.end_intercept(id_, Interception{}, true, "Request was aborted");
    }
  }

 private:
  ExtensionConnection& c_;
  std::weak_ptr<bool> alive_;
  std::int64_t id_;
};

std::unique_ptr<session::Waiting> ExtensionConnection::intercept(
    const std::string& call_id, const std::string& tool, const Json& input,
    std::function<void(Interception)> done) {
  auto post = [this](std::function<void(Interception)> d, Interception result) {
    scheduler_.post(
        [d = std::move(d), result = std::move(result)]() mutable { d(std::move(result)); });
    return nullptr;
  };
  if (!ready() || !peer_) {
    // A guard that is down blocks (section 4.9); one that never declared tool_call does not.
    if (!intercepts_ || status_ == ExtensionStatus::disabled ||
        status_ == ExtensionStatus::untrusted)
      return post(std::move(done), Interception{});
    return post(std::move(done),
                Interception{Interception::Kind::failed,
                             error_.empty() ? std::string(status_name(status_)) : error_,
                             {}});
  }
  if (!intercepts_) return post(std::move(done), Interception{});
  Json params = Json::object();
  params["toolCallId"] = call_id;
  params["toolName"] = tool;
  params["input"] = input;
  const std::int64_t id = peer_->next_id();
  PendingIntercept& pending = intercepts_pending_[id];
  pending.call_id = call_id;
  pending.done = std::move(done);
  if (options_.waits)
    pending.mark = options_.waits->begin(
        session::WaitBoard::Kind::extension, scheduler_.now_epoch_ms(),
        [keys = Json{{"extension", name()}, {"toolCallId", call_id}, {"toolName", tool}}] {
          return keys;
        });
  peer_->request("tool_call", std::move(params),
                 [this, id](const Json& response) { on_intercept_answer(id, response); });
  if (dialogs_.empty()) arm_intercept_timer(id);
  return std::make_unique<InterceptHandle>(*this, id);
}

void ExtensionConnection::arm_intercept_timer(std::int64_t id) {
  const auto it = intercepts_pending_.find(id);
  if (it == intercepts_pending_.end()) return;
  const std::int64_t timeout = timeout_ms();
  PendingIntercept& pending = it->second;
  if (pending.left_ms < 0) pending.left_ms = timeout;
  pending.armed_at = scheduler_.now_epoch_ms();
  pending.timer = scheduler_.make_timer();
  pending.timer->start(std::chrono::duration_cast<std::chrono::milliseconds>(
                           session::saturated_delay(pending.left_ms)),
                       [this, id, timeout] {
                         const std::string why =
                             "no answer within " + std::to_string(timeout) + " ms";
                         if (host_.error) host_.error(name(), "tool_call", why);
                         end_intercept(id, Interception{Interception::Kind::failed, why, {}}, true,
                                       "Timed out after " + std::to_string(timeout) + " ms");
                       });
}

void ExtensionConnection::on_intercept_answer(std::int64_t id, const Json& response) {
  if (!intercepts_pending_.count(id)) return;
  std::string problem;
  Interception result;
  if (const auto error = response.find("error"); error != response.end()) {
    problem = protocol::jsonrpc_error_text(*error);
  } else {
    const auto r = response.find("result");
    result = read_interception(r != response.end() ? *r : Json(), problem);
  }
  if (!problem.empty()) {
    if (host_.error) host_.error(name(), "tool_call", problem);
    result = Interception{Interception::Kind::failed, problem, {}};
  }
  end_intercept(id, std::move(result), false, "");
}

void ExtensionConnection::end_intercept(std::int64_t id, Interception result, bool cancel,
                                        const std::string& why) {
  const auto it = intercepts_pending_.find(id);
  if (it == intercepts_pending_.end()) return;
  auto done = std::move(it->second.done);
  intercepts_pending_.erase(it);
  if (peer_) peer_->forget(id);
  if (cancel) send_cancelled(id, why);
  if (done)
    scheduler_.post([done = std::move(done), result = std::move(result)]() mutable {
      done(std::move(result));
    });
}

// ---- the extension's requests ----

void ExtensionConnection::on_request(const std::string& method, const Json& params,
                                     const Json& id) {
  std::weak_ptr<bool> alive = alive_;
  if (method.rfind("ui/", 0) == 0 && method != "ui/notify") {
    const std::string dialog = method.substr(3);
    if (dialog == "select" || dialog == "confirm" || dialog == "input" || dialog == "editor") {
      open_dialog(dialog, params, id);
      return;
    }
  }
  if (method == "ping") {
    peer_->respond(id, Json::object());
  } else if (method == "session/get_state" && host_.state) {
    peer_->respond(id, host_.state());
  } else if (method == "session/abort" && host_.abort) {
    host_.abort([this, alive, id] {
      if (!alive.expired() && peer_) peer_->respond(id, Json::object());
    });
  } else if (method == "session/send_user_message" && host_.send_user_message) {
    if (!params.is_object() || !params.contains("content") ||
        !(params["content"].is_string() || params["content"].is_array())) {
      peer_->respond_error(id, code::invalid_params, "Invalid params: content: expected string");
      return;
    }
    const auto kind = send_kind(params);
    host_.send_user_message(user_input(params), kind, [this, alive, id, kind](session::Status st) {
      if (alive.expired() || !peer_) return;
      if (st) return peer_->respond(id, Json::object());
      // Without deliverAs a busy session refuses with pi's text (section 4.7).
      const bool busy =
          st.error().kind == session::ErrorKind::busy && kind == session::SubmitKind::prompt;
      peer_->respond_error(id, code::server_error,
                           busy ? "Agent is already processing. Specify deliverAs ('steer' or "
                                  "'followUp') to queue the message."
                                : st.error().message);
    });
  } else {
    peer_->respond_error(id, code::method_not_found, "Method not found: " + method);
  }
}

void ExtensionConnection::open_dialog(const std::string& method, const Json& params,
                                      const Json& id) {
  if (auto problem = dialog_problem(method, params)) {
    peer_->respond_error(id, code::invalid_params, "Invalid params: " + *problem);
    return;
  }
  session::DialogRequest request;
  request.extension = name();
  request.method = method;
  request.timeout_ms =
      params.value("timeout", Json(options_.settings.dialog_timeout_ms)).get<std::int64_t>();
  request.fields = Json::object();
  for (const char* key : {"title", "options", "message", "placeholder", "prefill"})
    if (params.contains(key)) request.fields[key] = params[key];
  request.fields["timeout"] = request.timeout_ms;
  if (!intercepts_pending_.empty())
    request.tool_call_id = intercepts_pending_.begin()->second.call_id;
  if (!host_.dialogs) {
    spdlog::info("ext[{}] ui/{} resolved to its default: no client can answer", name(), method);
    peer_->respond(id, dialog_result(method, params, session::DialogAnswer{{}, {}, true}));
    return;
  }
  // The interceptor's timeout does not count the time the user takes (section 4.4): what is
  // left of it runs on once the last dialog closes.
  if (dialogs_.empty())
    for (auto& [pending_id, pending] : intercepts_pending_) {
      if (!pending.timer) continue;
      pending.timer->cancel();
      pending.left_ms = std::max<std::int64_t>(
          0, pending.left_ms - (scheduler_.now_epoch_ms() - pending.armed_at));
    }
  const std::uint64_t key = next_dialog_++;
  std::weak_ptr<bool> alive = alive_;
  auto waiting = host_.dialogs->ask(
      request, [this, alive, key, method, params, id](session::DialogAnswer answer) {
        if (alive.expired() || !dialogs_.count(key)) return;
        if (peer_) peer_->respond(id, dialog_result(method, params, answer));
        close_dialog(key);
      });
  if (waiting) dialogs_[key] = std::move(waiting);
}

void ExtensionConnection::close_dialog(std::uint64_t key) {
  dialogs_.erase(key);
  if (!dialogs_.empty()) return;
  std::vector<std::int64_t> ids;
  for (const auto& [id, pending] : intercepts_pending_)
    ids.push_back(id);
  for (const auto id : ids)
    arm_intercept_timer(id);
}

}  // namespace rebound::extensions
