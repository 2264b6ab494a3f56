#pragma once
// The sessions of one process, owned by slot on the one event loop. The rpc front end drives
// the one it creates at start-up; a front end with several sessions per connection (ACP) adds
// and closes more. Every event a session emits carries its slot (session/event.h), so one sink
// can serve them all. Event loop only.

#include <functional>
#include <map>
#include <memory>
#include <string_view>

#include "session/agent_session.h"

namespace rebound::session {

class SessionHost {
 public:
  /// Builds a session for the given slot (which goes into its SessionOptions).
  using Factory = std::function<std::unique_ptr<AgentSession>(SessionSlot slot)>;

  /// Creates a session with the next free slot (slots start at 1 and are never reused). A
  /// factory that could not make one returns null: nothing is added and the answer is 0.
  SessionSlot add(const Factory& make) {
    const SessionSlot slot = next_++;
    auto made = make(slot);
    if (!made) return 0;
    sessions_.emplace(slot, std::move(made));
    return slot;
  }
  AgentSession* find(SessionSlot slot) const {
    const auto it = sessions_.find(slot);
    return it == sessions_.end() ? nullptr : it->second.get();
  }
  /// Shuts the session down (its events are emitted now) and destroys it.
  void close(SessionSlot slot, std::string_view end_reason = "other") {
    const auto it = sessions_.find(slot);
    if (it == sessions_.end()) return;
    it->second->shutdown(end_reason);
    sessions_.erase(it);
  }
  /// End of input or a signal: every session stops its work (the sessions stay).
  void shutdown_all() {
    for (auto& [slot, session] : sessions_)
      session->shutdown();
  }
  std::size_t size() const { return sessions_.size(); }

 private:
  std::map<SessionSlot, std::unique_ptr<AgentSession>> sessions_;
  SessionSlot next_ = 1;
};

}  // namespace rebound::session
