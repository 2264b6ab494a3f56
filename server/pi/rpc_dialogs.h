#pragma once
// The rpc mode's dialogs (extensions.md section 6.1): an extension's question written as pi's
// `extension_ui_request` line (a fresh UUID v4 `id`, `method` without `ui/`, the request's
// fields, the effective `timeout`), answered by an `extension_ui_response` command with that id.
// A dialog resolves to its default at its timeout, on abort and at shutdown; a late answer or an
// unknown id is ignored. Event loop only.

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "session/event_sink.h"
#include "session/extension_host.h"
#include "session/scheduler.h"

namespace rebound::server {

class RpcDialogs : public session::DialogHost {
 public:
  RpcDialogs(session::Scheduler& scheduler, session::EventSink& events, session::SessionSlot slot)
      : scheduler_(scheduler), events_(events), slot_(slot) {}
  ~RpcDialogs() override;
  void set_slot(session::SessionSlot slot) { slot_ = slot; }

  std::unique_ptr<session::Waiting> ask(const session::DialogRequest& request,
                                        std::function<void(session::DialogAnswer)> done) override;
  /// The client's answer; false when no open dialog has that id.
  bool answer(const std::string& id, session::DialogAnswer answer);
  /// Every open dialog resolves to its default (abort, shutdown).
  void cancel_all();
  std::size_t open() const { return open_.size(); }

 private:
  struct Open {
    std::function<void(session::DialogAnswer)> done;
    std::unique_ptr<session::Timer> timer;
  };
  class Handle;
  void resolve(const std::string& id, session::DialogAnswer answer);

  session::Scheduler& scheduler_;
  session::EventSink& events_;
  session::SessionSlot slot_;
  std::map<std::string, Open> open_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace rebound::server
