#include "server/acp/acp_dialogs.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <utility>

namespace rebound::server::acp {

using protocol::Json;

Json dialog_permission_request(const std::string& session_id, const std::string& tool_call_id,
                               const Json& fields) {
  Json options = Json::array();
  for (const auto& [id, name] :
       {std::pair{"allow_once", "Allow"}, std::pair{"reject_once", "Reject"}})
    options.push_back(Json{{"optionId", id}, {"name", name}, {"kind", id}});
  Json dialog = Json::object();
  dialog["title"] = fields.value("title", Json(""));
  if (fields.contains("message")) dialog["message"] = fields["message"];
  Json params = Json::object();
  params["sessionId"] = session_id;
  params["toolCall"] = Json{{"toolCallId", tool_call_id}};
  params["options"] = std::move(options);
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
             std::string option;
             if (const auto result = response.find("result");
                 result != response.end() && result->is_object()) {
               const auto outcome = result->find("outcome");
               if (outcome != result->end() && outcome->is_object() &&
                   outcome->value("outcome", Json()) == "selected" &&
                   outcome->value("optionId", Json()).is_string())
                 option = (*outcome)["optionId"].get<std::string>();
             }
             pending->answer(session::DialogAnswer{std::nullopt, option == "allow_once", false});
           });
  return std::make_unique<Handle>(pending);
}

}  // namespace rebound::server::acp
