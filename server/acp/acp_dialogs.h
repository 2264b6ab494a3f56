#pragma once
// acp mode's dialogs (extensions.md section 6.2): an extension's `ui/confirm` while its
// `tool_call` request for a call of a pending `session/prompt` is open becomes
// `session/request_permission` for that call (options `allow_once` Allow and `reject_once`
// Reject, `_meta.rebound.dialog` {title, message?}); `allow_once` confirms, anything else
// does not. The permission policy's question (a `select` with `permission`, policy.md section
// 6.2) becomes acp.md section 7.3's request about its call, without a time limit: `allow_once`
// answers Allow, `allow_always` Always allow, anything else Deny. Every other dialog resolves to
// its default at once. Event loop only.

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
  /// `cwd` is the session's (the tool call's title and kind are worked out against it).
  AcpDialogs(session::Scheduler& scheduler, std::function<std::string()> session_id,
             std::string cwd, Request request, std::function<bool()> prompt_pending)
      : scheduler_(scheduler),
        session_id_(std::move(session_id)),
        cwd_(std::move(cwd)),
        request_(std::move(request)),
        prompt_pending_(std::move(prompt_pending)) {}

  std::unique_ptr<session::Waiting> ask(const session::DialogRequest& request,
                                        std::function<void(session::DialogAnswer)> done) override;

 private:
  std::unique_ptr<session::Waiting> ask_permission(const protocol::Json& permission,
                                                   bool offer_always,
                                                   std::function<void(session::DialogAnswer)> done);

  session::Scheduler& scheduler_;
  std::function<std::string()> session_id_;
  std::string cwd_;
  Request request_;
  std::function<bool()> prompt_pending_;
};

/// The session/request_permission params of a dialog about call `tool_call_id` (section 6.2).
protocol::Json dialog_permission_request(const std::string& session_id,
                                         const std::string& tool_call_id,
                                         const protocol::Json& fields);

}  // namespace rebound::server::acp
