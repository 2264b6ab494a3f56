#include "server/acp/acp_reply.h"

#include <spdlog/spdlog.h>

#include <cassert>
#include <utility>

namespace rebound::server::acp {

namespace code = protocol::jsonrpc_code;

protocol::JsonRpcError acp_error(std::optional<Json> id, const session::Error& error) {
  if (error.field) {
    return {std::move(id), code::invalid_params,
            "Invalid params: " + error.field->path + ": expected " + error.field->expected,
            std::nullopt};
  }
  switch (error.kind) {
    case session::ErrorKind::not_found:
      return {std::move(id), code::resource_not_found, "Resource not found: " + error.message,
              std::nullopt};
    case session::ErrorKind::busy:
      return {std::move(id), code::server_error, error.message, std::nullopt};
    case session::ErrorKind::invalid_argument:
    case session::ErrorKind::failed:
    case session::ErrorKind::cancelled:
    case session::ErrorKind::internal:
      break;
  }
  return {std::move(id), code::internal_error, "Internal error: " + error.message, std::nullopt};
}

AcpReply::AcpReply(std::optional<Json> id, JsonSink sink)
    : id_(std::move(id)), sink_(std::move(sink)) {}

AcpReply::AcpReply(AcpReply&& other) noexcept
    : id_(std::move(other.id_)),
      sink_(std::move(other.sink_)),
      sent_(std::exchange(other.sent_, true)) {}

AcpReply::~AcpReply() {
  if (sent_ || !id_) return;
  spdlog::error("internal error: ACP request {} finished without a response", id_->dump());
  assert(false && "an ACP request finished without a response");
  fail(code::internal_error, "Internal error: the request was not answered");
}

bool AcpReply::claim() {
  if (sent_) return false;
  sent_ = true;
  return id_ && sink_;  // a notification is never answered
}

void AcpReply::ok(Json result) {
  if (claim()) sink_(protocol::jsonrpc_result(*id_, std::move(result)));
}

void AcpReply::fail(int error_code, std::string message) {
  if (claim())
    sink_(protocol::jsonrpc_error(
        protocol::JsonRpcError{id_, error_code, std::move(message), std::nullopt}));
}

void AcpReply::fail(const session::Error& error) {
  if (claim()) sink_(protocol::jsonrpc_error(acp_error(id_, error)));
}

namespace {

class AcpReplyWire : public ReplyWire {
 public:
  AcpReplyWire(AcpReply reply, std::function<void(bool)> answered)
      : reply_(std::move(reply)), answered_(std::move(answered)) {}
  void ok(const std::optional<Json>&, Json* data) override {
    reply_.ok(data && data->is_object() ? std::move(*data) : Json::object());
    if (answered_) answered_(true);
  }
  void fail(const std::optional<Json>&, const session::Error& error) override {
    reply_.fail(error);
    if (answered_) answered_(false);
  }

 private:
  AcpReply reply_;
  std::function<void(bool)> answered_;
};

}  // namespace

std::shared_ptr<ReplyWire> acp_reply_wire(AcpReply reply, std::function<void(bool ok)> answered) {
  return std::make_shared<AcpReplyWire>(std::move(reply), std::move(answered));
}

}  // namespace rebound::server::acp
