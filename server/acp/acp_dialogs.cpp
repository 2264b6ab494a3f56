#include "server/acp/acp_dialogs.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <utility>

#include "server/acp/acp_translate.h"
#include "server/acp/acp_updates.h"

namespace rebound::server::acp {

using protocol::Json;

Json dialog_permission_request(const std::string& session_id, const std::string& tool_call_id,
                               const Json& fields) {
  Json dialog = Json::object();
  dialog["title"] = fields.value("title", Json(""));
  if (fields.contains("message")) dialog["message"] = fields["message"];
  Json params = Json::object();
  params["sessionId"] = session_id;
  params["toolCall"] = Json{{"toolCallId", tool_call_id}};
  params["options"] = permission_options(false);
  params["_meta"] = Json{{"rebound", Json{{"dialog", std::move(dialog)}}}};
  return params;
}

namespace {

// One question to the client: answered once (the client's answer, the timeout or the asker
// letting go, whichever comes first).
struct Pending {
  std::function<void(session::DialogAnswer)> done;
  std::unique_ptr<session::Timer> timer;
  void answer(session::DialogAnswer a) {
    if (timer) timer->cancel();
    if (auto d = std::exchange(done, nullptr)) d(std::move(a));
  }
};

// The optionId a session/request_permission answer selected, or "" (cancelled, an error).
std::string selected_option(const Json& response) {
  const auto result = response.find("result");
  if (result == response.end() || !result->is_object()) return {};
  const auto outcome = result->find("outcome");
  if (outcome == result->end() || !outcome->is_object() ||
      outcome->value("outcome", Json()) != "selected" ||
      !outcome->value("optionId", Json()).is_string())
    return {};
  return (*outcome)["optionId"].get<std::string>();
}

struct Handle : session::Waiting {
  explicit Handle(std::shared_ptr<Pending> p) : pending(std::move(p)) {}
  ~Handle() override {
    pending->done = nullptr;
    if (pending->timer) pending->timer->cancel();
  }
  std::shared_ptr<Pending> pending;
};

}  // namespace

std::unique_ptr<session::Waiting> AcpDialogs::ask(const session::DialogRequest& request,
                                                  std::function<void(session::DialogAnswer)> done) {
  if (const auto permission = request.fields.find("permission");
      request.method == "select" && permission != request.fields.end() && permission->is_object()) {
    bool offer_always = false;
    for (const auto& o : request.fields.value("options", Json::array()))
      offer_always = offer_always || o == "Always allow";
    return ask_permission(*permission, offer_always, std::move(done));
  }
  auto pending = std::make_shared<Pending>();
  pending->done = std::move(done);
  if (request.method != "confirm" || request.tool_call_id.empty() || !prompt_pending_()) {
    spdlog::info("ext[{}] ui/{} resolved to its default: no ACP form outside a tool call",
                 request.extension, request.method);
    scheduler_.post([pending] { pending->answer(session::DialogAnswer{{}, {}, true}); });
    return std::make_unique<Handle>(pending);
  }
  pending->timer = scheduler_.make_timer();
  pending->timer->start(std::chrono::duration_cast<std::chrono::milliseconds>(
                            session::saturated_delay(request.timeout_ms)),
                        [pending] {
                          pending->answer(session::DialogAnswer{{}, {}, true});
                        });
  request_("session/request_permission",
           dialog_permission_request(session_id_(), request.tool_call_id, request.fields),
           [pending](const Json& response) {
             pending->answer(session::DialogAnswer{
                 std::nullopt, selected_option(response) == "allow_once", false});
           });
  return std::make_unique<Handle>(pending);
}

std::unique_ptr<session::Waiting> AcpDialogs::ask_permission(
    const Json& permission, bool offer_always, std::function<void(session::DialogAnswer)> done) {
  auto pending = std::make_shared<Pending>();
  pending->done = std::move(done);
  const std::string call_id = permission.value("toolCallId", std::string());
  const std::string tool = permission.value("toolName", std::string());
  const Json args = permission.value("args", Json::object());
  request_("session/request_permission",
           permission_request(session_id_(), call_id, tool_call_info(tool, args, cwd_), args,
                              offer_always),
           [pending](const Json& response) {
             const std::string option = selected_option(response);
             const char* value = option == "allow_once"     ? "Allow"
                                 : option == "allow_always" ? "Always allow"
                                                            : "Deny";
             pending->answer(session::DialogAnswer{std::string(value), std::nullopt, false});
           });
  return std::make_unique<Handle>(pending);
}

}  // namespace rebound::server::acp
