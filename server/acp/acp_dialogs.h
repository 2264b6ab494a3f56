#pragma once
// acp mode's dialogs (extensions.md section 6.2): an extension's `ui/confirm` while its
// `tool_call` request for a call of a pending `session/prompt` is open becomes
// `session/request_permission` for that call (options `allow_once` Allow and `reject_once`
// Reject, `_meta.rebound.dialog` {title, message?}); `allow_once` confirms, anything else
// does not. Every other dialog resolves to its default at once. Event loop only.

#include <functional>
#include <memory>
#include <string>

#include "protocol/json.h"
#include "protocol/jsonrpc_peer.h"
#include "session/extension_host.h"
#include "session/scheduler.h"

namespace rebound::server::acp {

class AcpDialogs : public session::DialogHost {
 public:
  using Request = std::function<void(const std::string& method, protocol::Json params,
                                     protocol::JsonRpcPeer::Answer answer)>;
  /// `prompt_pending` says whether the session has a session/prompt in progress.
  AcpDialogs(session::Scheduler& scheduler, std::function<std::string()> session_id,
             Request request, std::function<bool()> prompt_pending)
      : scheduler_(scheduler),
        session_id_(std::move(session_id)),
        request_(std::move(request)),
        prompt_pending_(std::move(prompt_pending)) {}

  std::unique_ptr<session::Waiting> ask(const session::DialogRequest& request,
                                        std::function<void(session::DialogAnswer)> done) override;

 private:
  session::Scheduler& scheduler_;
  std::function<std::string()> session_id_;
  Request request_;
  std::function<bool()> prompt_pending_;
};

/// The session/request_permission params of a dialog about call `tool_call_id` (section 6.2).
protocol::Json dialog_permission_request(const std::string& session_id,
                                         const std::string& tool_call_id,
                                         const protocol::Json& fields);

}  // namespace rebound::server::acp
