#include "server/reply.h"

#include <spdlog/spdlog.h>
#include <cassert>
#include <nlohmann/json.hpp>
#include <utility>

#include "protocol/responses.h"

namespace rebound::server {

Reply::Reply(std::optional<protocol::Json> id, std::string command, JsonSink sink)
    : id_(std::move(id)), command_(std::move(command)), sink_(std::move(sink)) {}

Reply::Reply(Reply&& other) noexcept
    : id_(std::move(other.id_)),
      command_(std::move(other.command_)),
      sink_(std::move(other.sink_)),
      sent_(std::exchange(other.sent_, true)) {}

Reply::~Reply() {
  if (sent_) return;
  spdlog::error("internal error: command '{}' finished without a response", command_);
  assert(false && "a command finished without a response");
  send(protocol::error_response(id_, command_, "Internal error: the command was not answered"));
}

void Reply::ok() {
  send(protocol::success_response(id_, command_));
}

void Reply::ok(protocol::Json data) {
  send(protocol::success_response(id_, command_, std::move(data)));
}

void Reply::fail(std::string_view error) {
  send(protocol::error_response(id_, command_, error));
}

void Reply::fail(const session::Error& error) {
  fail(std::string_view(error.message));
}

void Reply::send(const protocol::Json& response) {
  if (sent_) return;
  sent_ = true;
  if (sink_) sink_(response);
}

}  // namespace rebound::server
