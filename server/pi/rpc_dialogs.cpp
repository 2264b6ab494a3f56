#include "server/pi/rpc_dialogs.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <utility>

#include "session/session_id.h"

namespace rebound::server {

using protocol::Json;

// The asker let go (its request ended): the dialog closes without an answer.
class RpcDialogs::Handle : public session::Waiting {
 public:
  Handle(RpcDialogs& dialogs, std::string id)
      : dialogs_(dialogs), alive_(dialogs.alive_), id_(std::move(id)) {}
  ~Handle() override {
    if (!alive_.expired()) dialogs_.open_.erase(id_);
  }

 private:
  RpcDialogs& dialogs_;
  std::weak_ptr<bool> alive_;
  std::string id_;
};

RpcDialogs::~RpcDialogs() {
  alive_.reset();
}

std::unique_ptr<session::Waiting> RpcDialogs::ask(const session::DialogRequest& request,
                                                  std::function<void(session::DialogAnswer)> done) {
  const std::string id = session::new_session_id();  // a fresh UUID v4
  Json fields = Json::object();
  fields["id"] = id;
  fields["method"] = request.method;
  for (const auto& [key, value] : request.fields.items())
    fields[key] = value;
  Open& open = open_[id];
  open.done = std::move(done);
  open.timer = scheduler_.make_timer();
  open.timer->start(std::chrono::duration_cast<std::chrono::milliseconds>(
                        session::saturated_delay(request.timeout_ms)),
                    [this, id] {
                      resolve(id, session::DialogAnswer{{}, {}, true, true, false});
                    });
  events_.on_event(session::Event{slot_, session::ev::ExtensionUiRequest{&fields}});
  return std::make_unique<Handle>(*this, id);
}

bool RpcDialogs::answer(const std::string& id, session::DialogAnswer answer) {
  if (!open_.count(id)) {
    spdlog::debug("extension_ui_response {} matches no open dialog; ignored", id);
    return false;
  }
  resolve(id, std::move(answer));
  return true;
}

void RpcDialogs::resolve(const std::string& id, session::DialogAnswer answer) {
  const auto it = open_.find(id);
  if (it == open_.end()) return;
  auto done = std::move(it->second.done);
  open_.erase(it);  // before the answer: the asker may let go of its handle inside `done`
  if (done) done(std::move(answer));
}

void RpcDialogs::cancel_all() {
  std::vector<std::string> ids;
  for (const auto& [id, open] : open_)
    ids.push_back(id);
  for (const auto& id : ids)
    resolve(id, session::DialogAnswer{{}, {}, true, false, true});
}

}  // namespace rebound::server
