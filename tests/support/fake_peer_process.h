#pragma once
// A fake JSON-RPC peer process (peer/peer_process.h) for unit tests on a manual clock: what
// Rebound wrote to it (parsed), its stdin, the signals its group got, whether it is alive; the
// test plays the peer through `handlers`.

#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "peer/peer_process.h"
#include "protocol/json.h"

namespace rebound::testing {

// What the test sees of one spawned process, and how it plays the server.
struct FakePeerState {
  std::vector<protocol::Json> written;  // what Rebound wrote to it, parsed
  std::size_t unread = 0;               // bytes written while `reads` is false
  bool reads = true;
  bool stdin_closed = false;
  std::vector<int> signals;
  bool alive = true;
  bool destroyed = false;
  peer::SpawnSpec spec;
  peer::PeerProcess::Handlers handlers;
};

class FakePeerProcess : public peer::PeerProcess {
 public:
  explicit FakePeerProcess(std::shared_ptr<FakePeerState> s) : s_(std::move(s)) {}
  ~FakePeerProcess() override {
    s_->destroyed = true;
    s_->alive = false;
  }
  void write(std::string data) override {
    REQUIRE(!data.empty());
    REQUIRE(data.back() == '\n');
    s_->written.push_back(protocol::Json::parse(data));
    if (!s_->reads) s_->unread += data.size();
  }
  void close_stdin() override { s_->stdin_closed = true; }
  std::size_t input_queued() const override { return s_->unread; }
  void signal_group(int signal) override { s_->signals.push_back(signal); }
  bool group_alive() const override { return s_->alive; }

 private:
  std::shared_ptr<FakePeerState> s_;
};

/// Spawns fake processes and keeps what the test sees of each.
struct FakePeers {
  std::vector<std::shared_ptr<FakePeerState>> processes;
  std::string spawn_error;  // set: the next spawn fails with it

  peer::Spawner spawner() {
    return [this](const peer::SpawnSpec& spec, peer::PeerProcess::Handlers handlers,
                  std::string& error) -> std::unique_ptr<peer::PeerProcess> {
      if (!spawn_error.empty()) {
        error = spawn_error;
        return nullptr;
      }
      auto s = std::make_shared<FakePeerState>();
      s->spec = spec;
      s->handlers = std::move(handlers);
      processes.push_back(s);
      return std::make_unique<FakePeerProcess>(s);
    };
  }
  FakePeerState& last() { return *processes.back(); }
};

}  // namespace rebound::testing
