#include "extensions/extension_set.h"

#include <algorithm>
#include <utility>

namespace rebound::extensions {

using protocol::Json;

ExtensionSet::ExtensionSet(session::Scheduler& scheduler, peer::Spawner spawner,
                           std::vector<ExtensionConfig> configs,
                           ExtensionConnection::Options options, ExtensionHost& host,
                           const HookConfig* hooks)
    : scheduler_(scheduler), hooks_(hooks), cwd_(options.session_cwd) {
  for (auto& config : configs)
    connections_.push_back(std::make_unique<ExtensionConnection>(scheduler, spawner,
                                                                 std::move(config), options, host));
}

ExtensionSet::~ExtensionSet() {
  alive_.reset();
}

void ExtensionSet::start_all() {
  for (auto& c : connections_)
    c->start();
}

void ExtensionSet::stop_all(const std::string& reason, std::function<void()> gone) {
  auto left = std::make_shared<std::size_t>(connections_.size());
  auto done = std::make_shared<std::function<void()>>(std::move(gone));
  if (connections_.empty()) {
    scheduler_.post([done] {
      if (*done) (*done)();
    });
    return;
  }
  for (auto& c : connections_)
    c->stop(reason, [left, done] {
      if (--*left == 0 && *done) (*done)();
    });
}

bool ExtensionSet::any_running() const {
  return std::any_of(connections_.begin(), connections_.end(),
                     [](const auto& c) { return c->running(); });
}

ExtensionSet::Wanted ExtensionSet::wanted(std::string_view type) const {
  Wanted out;
  const bool update = type == "message_update";
  for (const auto& c : connections_) {
    if (!c->wants(type)) continue;
    if (update && c->delta_updates()) {
      out.delta = true;
    } else {
      out.full = true;
    }
  }
  return out;
}

void ExtensionSet::forward(std::string_view type, std::string_view full, std::string_view delta) {
  const bool update = type == "message_update";
  for (auto& c : connections_)
    if (c->wants(type)) c->forward(update && c->delta_updates() ? delta : full);
}

void ExtensionSet::notify_all(const std::string& method, const Json& params) {
  for (auto& c : connections_)
    c->notify(method, params);
}

void ExtensionSet::hook_failed(const std::string& command, const std::string& error) {
  for (auto& [c, e] : hook_errors_)
    if (c == command) {
      e = error;
      return;
    }
  hook_errors_.emplace_back(command, error);
}

// ---- waiting for start-up ----

bool ExtensionSet::unsettled() const {
  return std::any_of(connections_.begin(), connections_.end(),
                     [](const auto& c) { return c->starting(); });
}

void ExtensionSet::when_settled(std::function<void()> settled) {
  if (!unsettled()) {
    scheduler_.post(std::move(settled));
    return;
  }
  settle_waiters_.push_back(std::move(settled));
}

void ExtensionSet::on_changed() {
  warn_collisions();
  if (!unsettled()) {
    auto waiters = std::move(settle_waiters_);
    settle_waiters_.clear();
    for (auto& w : waiters)
      w();
  }
  // Restarts answer once their extension is ready or failed again.
  for (auto it = restarts_.begin(); it != restarts_.end();) {
    const auto c = std::find_if(connections_.begin(), connections_.end(),
                                [&](const auto& x) { return x->name() == it->first; });
    if (c == connections_.end() || !(*c)->starting()) {
      auto done = std::move(it->second);
      it = restarts_.erase(it);
      if (c != connections_.end()) {
        done((*c)->info());
      } else {
        done(session::Error{session::ErrorKind::not_found, "Extension not found"});
      }
    } else {
      ++it;
    }
  }
}

// ---- get_extensions, restart_extension ----

Json ExtensionSet::list_json() const {
  Json extensions = Json::array();
  for (const auto& c : connections_)
    extensions.push_back(c->info());
  Json hooks = Json::array();
  if (hooks_) {
    for (const auto& h : hooks_->handlers) {
      Json one = Json::object();
      one["event"] = h.event;
      if (h.matcher) one["matcher"] = *h.matcher;
      one["command"] = h.command;
      one["timeoutMs"] = h.timeout_ms;
      one["async"] = h.async;
      one["source"] = source_name(h.source);
      one["status"] = status_name(h.status);
      if (h.status == HookStatus::invalid) one["error"] = h.error;
      for (const auto& [command, error] : hook_errors_)
        if (command == h.command) one["lastError"] = error;
      hooks.push_back(std::move(one));
    }
  }
  Json out = Json::object();
  out["extensions"] = std::move(extensions);
  out["hooks"] = std::move(hooks);
  return out;
}

void ExtensionSet::list(bool wait, std::function<void(Json)> done) {
  if (!wait) {
    done(list_json());
    return;
  }
  std::weak_ptr<bool> alive = alive_;
  when_settled([this, alive, done = std::move(done)] {
    if (!alive.expired()) done(list_json());
  });
}

void ExtensionSet::restart(const std::string& name,
                           std::function<void(session::Result<Json>)> done) {
  const auto c = std::find_if(connections_.begin(), connections_.end(),
                              [&](const auto& x) { return x->name() == name; });
  if (c == connections_.end()) {
    done(session::Error{session::ErrorKind::not_found, "Extension not found: " + name});
    return;
  }
  ExtensionConnection& connection = **c;
  if (connection.status() == ExtensionStatus::disabled) {
    done(session::Error{session::ErrorKind::failed, "Extension " + name + " is disabled"});
    return;
  }
  if (connection.status() == ExtensionStatus::untrusted) {
    done(session::Error{session::ErrorKind::failed, "Extension " + name + " is not trusted"});
    return;
  }
  std::weak_ptr<bool> alive = alive_;
  // Calls wait for it meanwhile: it counts as starting from now on (section 7.1).
  connection.stop(
      "quit",
      [this, alive, name, done = std::move(done)]() mutable {
        if (alive.expired()) return;
        const auto it = std::find_if(connections_.begin(), connections_.end(),
                                     [&](const auto& x) { return x->name() == name; });
        if (it == connections_.end()) return;
        restarts_.emplace_back(name, std::move(done));
        (*it)->start();
      },
      true);
}

}  // namespace rebound::extensions
