#include "server/pi/reply.h"

#include <spdlog/spdlog.h>
#include <cassert>
#include <nlohmann/json.hpp>
#include <utility>

#include "protocol/json_line.h"
#include "protocol/jsonrpc.h"
#include "protocol/responses.h"

namespace rebound::server {

Reply::Reply(std::optional<protocol::Json> id, std::string command, JsonSink sink, ReplyStyle style)
    : id_(std::move(id)), command_(std::move(command)), sink_(std::move(sink)), style_(style) {}

Reply::Reply(std::optional<protocol::Json> id, std::string command, std::shared_ptr<ReplyWire> wire)
    : id_(std::move(id)), command_(std::move(command)), wire_(std::move(wire)) {}

Reply::Reply(Reply&& other) noexcept
    : id_(std::move(other.id_)),
      command_(std::move(other.command_)),
      sink_(std::move(other.sink_)),
      style_(other.style_),
      wire_(std::move(other.wire_)),
      line_sink_(std::move(other.line_sink_)),
      sent_(std::exchange(other.sent_, true)) {}

int jsonrpc_error_code(const session::Error& error) {
  return error.kind == session::ErrorKind::invalid_argument ? protocol::jsonrpc_code::invalid_params
                                                            : protocol::jsonrpc_code::server_error;
}

Reply::~Reply() {
  if (sent_) return;
  spdlog::error("internal error: command '{}' finished without a response", command_);
  assert(false && "a command finished without a response");
  send_failure(
      session::Error{session::ErrorKind::internal, "Internal error: the command was not answered"});
}

void Reply::ok() {
  send_ok(nullptr);
}

void Reply::ok(protocol::Json data) {
  send_ok(&data);
}

void Reply::ok_text(const std::function<void(std::string&)>& append_data) {
  if (!line_sink_ || wire_ || style_ == ReplyStyle::jsonrpc_silent) {
    std::string text;
    append_data(text);
    return ok(protocol::Json::parse(text));
  }
  if (!claim()) return;
  // The envelope with a null in the data's place, the data written where the null was: the
  // key orders are those of ok(data).
  std::string line = protocol::to_line(
      style_ == ReplyStyle::pi
          ? protocol::success_response(id_, command_, nullptr)
          : protocol::jsonrpc_result(id_.value_or(nullptr), protocol::Json(nullptr)));
  constexpr std::string_view kTail = "null}\n";
  assert(line.size() > kTail.size() &&
         line.compare(line.size() - kTail.size(), kTail.size(), kTail) == 0);
  line.resize(line.size() - kTail.size());
  append_data(line);
  line += "}\n";
  line_sink_(std::move(line));
}

void Reply::fail(const session::Error& error) {
  send_failure(error);
}

void Reply::acknowledge() {
  if (style_ == ReplyStyle::jsonrpc || wire_) {
    send_ok(nullptr);
    return;
  }
  sent_ = true;
}

bool Reply::claim() {
  if (sent_) return false;
  sent_ = true;
  return sink_ || wire_;
}

void Reply::send_ok(protocol::Json* data) {
  if (!claim()) return;
  if (wire_) return wire_->ok(id_, data);
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

void Reply::send_failure(const session::Error& error) {
  if (!claim()) return;
  if (wire_) return wire_->fail(id_, error);
  switch (style_) {
    case ReplyStyle::pi:
      sink_(protocol::error_response(id_, command_, error.message));
      break;
    case ReplyStyle::jsonrpc:
      sink_(protocol::jsonrpc_error(
          protocol::JsonRpcError{id_, jsonrpc_error_code(error), error.message, command_}));
      break;
    case ReplyStyle::jsonrpc_silent:
      spdlog::warn("notification '{}' failed: {}", command_, error.message);
      break;
  }
}

}  // namespace rebound::server
