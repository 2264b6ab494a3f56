#include "server/pi/reply.h"

#include <spdlog/spdlog.h>
#include <cassert>
#include <nlohmann/json.hpp>
#include <utility>

#include "protocol/jsonrpc.h"
#include "protocol/responses.h"

namespace rebound::server {

Reply::Reply(std::optional<protocol::Json> id, std::string command, JsonSink sink, ReplyStyle style)
    : id_(std::move(id)), command_(std::move(command)), sink_(std::move(sink)), style_(style) {}

Reply::Reply(Reply&& other) noexcept
    : id_(std::move(other.id_)),
      command_(std::move(other.command_)),
      sink_(std::move(other.sink_)),
      style_(other.style_),
      sent_(std::exchange(other.sent_, true)) {}

Reply::~Reply() {
  if (sent_) return;
  spdlog::error("internal error: command '{}' finished without a response", command_);
  assert(false && "a command finished without a response");
  send_failure("Internal error: the command was not answered",
               protocol::jsonrpc_code::internal_error);
}

void Reply::ok() {
  send_ok(nullptr);
}

void Reply::ok(protocol::Json data) {
  send_ok(&data);
}

void Reply::fail(std::string_view error) {
  send_failure(error, protocol::jsonrpc_failure_code(error));
}

void Reply::fail(const session::Error& error) {
  fail(std::string_view(error.message));
}

bool Reply::claim() {
  if (sent_) return false;
  sent_ = true;
  return static_cast<bool>(sink_);
}

void Reply::send_ok(protocol::Json* data) {
  if (!claim()) return;
  switch (style_) {
    case ReplyStyle::pi:
      sink_(data ? protocol::success_response(id_, command_, std::move(*data))
                 : protocol::success_response(id_, command_));
      break;
    case ReplyStyle::jsonrpc:
      // A command without data and `data:null` both give "result":null.
      sink_(protocol::jsonrpc_result(id_.value_or(nullptr),
                                     data ? std::move(*data) : protocol::Json(nullptr)));
      break;
    case ReplyStyle::jsonrpc_silent:
      break;
  }
}

void Reply::send_failure(std::string_view error, int jsonrpc_code) {
  if (!claim()) return;
  switch (style_) {
    case ReplyStyle::pi:
      sink_(protocol::error_response(id_, command_, error));
      break;
    case ReplyStyle::jsonrpc:
      sink_(protocol::jsonrpc_error(
          protocol::JsonRpcError{id_, jsonrpc_code, std::string(error), command_}));
      break;
    case ReplyStyle::jsonrpc_silent:
      spdlog::warn("notification '{}' failed: {}", command_, error);
      break;
  }
}

}  // namespace rebound::server
