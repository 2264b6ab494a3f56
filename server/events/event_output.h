#pragma once
// The rpc connection's event output (protocol.md sections 8 and 9): which events this
// connection receives (the event filter), how message_update looks (full or delta), and the
// event envelope (pi lines or JSON-RPC notifications, with the sticky switch of `--envelope
// auto`). Typed session events come in; finished lines go to the line sink. The filter and the
// envelope belong to the connection: a new or switched session keeps them. Event loop only.

#include <array>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "server/events/pi_encoder.h"
#include "server/io/out_line.h"
#include "session/event_sink.h"

namespace rebound::server {

/// `--envelope`: pinned to one envelope, or `auto` (pi until the first valid JSON-RPC request).
enum class EnvelopeMode { pi, jsonrpc, automatic };

/// What set_event_filter set: the allow-list as sent (nullopt: every event) and the form of
/// message_update.
struct EventFilter {
  std::optional<std::vector<std::string>> events;
  bool delta_updates = false;
};

class EventOutput : public session::EventSink {
 public:
  EventOutput(LineWriter& out, EnvelopeMode mode);

  void on_event(const session::Event& event) override;

  /// Replaces the whole filter.
  void set_filter(EventFilter filter);
  const EventFilter& filter() const { return filter_; }

  /// Whether events (and lines that cannot carry their own envelope) are JSON-RPC now.
  bool jsonrpc() const { return jsonrpc_; }
  /// A valid JSON-RPC request arrived: an `auto` envelope switches to jsonrpc for good.
  void on_jsonrpc_request();

 private:
  LineWriter& out_;
  EnvelopeMode mode_;
  bool jsonrpc_ = false;
  EventFilter filter_;
  std::array<bool, kEventTypeCount> allowed_{};
  std::array<std::string, kEventTypeCount> notification_heads_;  // {"jsonrpc":…,"params":
  PiEventEncoder encoder_;
  std::string scratch_;  // the delta form's lines are built here
};

}  // namespace rebound::server
