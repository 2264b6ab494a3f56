#include "mcp/mcp_manager.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <utility>

namespace rebound::mcp {

using protocol::Json;

namespace {

// A call that ended before it began (its result is on its way): nothing to cancel.
class NoCall : public session::ToolCall {
 public:
  void cancel() override {}
};

// The text of a call whose server set is gone (never in practice: the set outlives its session).
constexpr const char* kGone = "MCP server is not available: stopped";

}  // namespace

// One offered MCP tool: calls go to its server under the server's own name for it.
class McpManager::ToolAdapter : public session::Tool {
 public:
  ToolAdapter(session::Scheduler& scheduler, McpConnection& connection, std::weak_ptr<bool> alive,
              const ServerTool& tool, std::string offered_name)
      : scheduler_(scheduler),
        connection_(connection),
        alive_(std::move(alive)),
        tool_name_(tool.name),
        read_only_(tool.read_only) {
    definition_.name = std::move(offered_name);
    definition_.description = tool.description;
    definition_.parameters = tool.parameters;
    definition_.external = true;
    definition_.mcp_server = connection.name();
  }
  const session::ToolDefinition& definition() const override { return definition_; }
  bool read_only_hint() const override { return read_only_; }
  std::unique_ptr<session::ToolCall> start(const Json& args, const session::ToolContext&,
                                           Progress progress, Done done) override {
    if (alive_.expired()) {
      scheduler_.post([done = std::move(done)] { done(session::ToolResult::error(kGone)); });
      return std::make_unique<NoCall>();
    }
    auto call = connection_.call(tool_name_, args, std::move(progress), std::move(done));
    if (!call) return std::make_unique<NoCall>();
    return call;
  }

 private:
  session::Scheduler& scheduler_;
  McpConnection& connection_;
  std::weak_ptr<bool> alive_;
  std::string tool_name_;
  bool read_only_;
  session::ToolDefinition definition_;
};

class McpManager::Wait : public session::Waiting {
 public:
  Wait(McpManager& manager, std::uint64_t id)
      : manager_(manager), alive_(manager.alive_), id_(id) {}
  ~Wait() override {
    if (alive_.expired()) return;
    std::erase_if(manager_.waiters_, [this](const Waiter& w) { return w.id == id_; });
  }

 private:
  McpManager& manager_;
  std::weak_ptr<bool> alive_;
  std::uint64_t id_;
};

McpManager::McpManager(session::Scheduler& scheduler, Spawner spawner,
                       std::vector<ServerConfig> servers, McpConnection::Options options,
                       std::vector<std::string> builtin_names)
    : scheduler_(scheduler),
      options_(std::move(options)),
      builtin_names_(std::move(builtin_names)) {
  for (auto& config : servers) {
    Server s;
    s.connection = std::make_unique<McpConnection>(scheduler_, spawner, std::move(config), options_,
                                                   [this] { on_changed(); });
    s.last_update = server_json(s, false);  // what a first event would have to differ from
    servers_.push_back(std::move(s));
  }
}

McpManager::~McpManager() {
  alive_.reset();
  waiters_.clear();
  servers_.clear();  // each connection kills what is left of its process group
}

void McpManager::start_all() {
  // One spawn per loop turn (each holds the loop until its exec): commands that arrive
  // meanwhile are answered between them. Each is `starting` from now on.
  for (auto& s : servers_) {
    McpConnection* c = s.connection.get();
    c->mark_starting();
    std::weak_ptr<bool> alive = alive_;
    scheduler_.post([alive, c] {
      if (!alive.expired() && c->start_queued()) c->start();
    });
  }
}

bool McpManager::settled() const {
  return std::none_of(servers_.begin(), servers_.end(),
                      [](const Server& s) { return s.connection->unsettled(); });
}

std::int64_t McpManager::longest_startup_ms() const {
  std::int64_t longest = 0;
  for (const auto& s : servers_) {
    longest = std::max(longest, s.connection->config().startup_timeout_ms.value_or(
                                    options_.settings.startup_timeout_ms));
  }
  return longest;
}

std::uint64_t McpManager::add_waiter(std::function<void()> settled_fn) {
  const std::uint64_t id = next_waiter_++;
  Waiter w{id, std::move(settled_fn), scheduler_.make_timer(), {}};
  // Bounded: a re-list that never ends does not hold the session (section 3.2).
  const std::int64_t limit = longest_startup_ms();
  w.limit->start(
      std::chrono::duration_cast<std::chrono::milliseconds>(session::saturated_delay(limit)),
      [this, id] {
        auto it = std::find_if(waiters_.begin(), waiters_.end(),
                               [id](const Waiter& x) { return x.id == id; });
        if (it == waiters_.end()) return;
        auto fn = std::move(it->settled);
        waiters_.erase(it);
        // A server still starting at the longest deadline is past its own (its timer is due a
        // moment later): it is reported failed, not `starting`.
        for (auto& s : servers_)
          s.connection->time_out_startup();
        if (!settled()) spdlog::warn("mcp: gave up waiting for servers to settle");
        fn();
      });
  waiters_.push_back(std::move(w));
  return id;
}

std::unique_ptr<session::Waiting> McpManager::when_settled(std::function<void()> settled_fn) {
  if (settled()) return nullptr;
  const std::uint64_t id = add_waiter(std::move(settled_fn));
  if (board_)
    waiters_.back().mark =
        board_->begin(session::WaitBoard::Kind::mcp, scheduler_.now_epoch_ms(), [this] {
          Json names = Json::array();
          for (const auto& s : servers_)
            if (s.connection->unsettled()) names.push_back(s.connection->name());
          return names.empty() ? Json() : Json{{"servers", names}};
        });
  return std::make_unique<Wait>(*this, id);
}

void McpManager::after_settled(std::function<void()> fn) {
  if (settled()) {
    fn();
    return;
  }
  add_waiter(std::move(fn));
}

std::vector<std::pair<bool, std::uint64_t>> McpManager::naming_basis() const {
  std::vector<std::pair<bool, std::uint64_t>> basis;
  basis.reserve(servers_.size());
  for (const auto& s : servers_)
    basis.emplace_back(s.connection->ready(), s.connection->tools_version());
  return basis;
}

void McpManager::rename_tools() {
  // Named again only when a server's readiness or tools changed (60,000 tools took 5.6 s to
  // name and were named on every request).
  auto basis = naming_basis();
  if (basis == named_from_ && !basis.empty()) return;
  named_from_ = std::move(basis);
  ToolNamer namer(builtin_names_);
  tools_.clear();
  for (auto& s : servers_) {
    s.offered_names.clear();
    if (!s.connection->ready()) continue;
    for (const auto& tool : s.connection->tools()) {
      auto name = namer.name(s.connection->name(), tool.name);
      if (!name) {
        spdlog::warn("mcp[{}] tool {} skipped: no free name for it", s.connection->name(),
                     tool.name);
        s.offered_names.emplace_back();
        continue;
      }
      s.offered_names.push_back(*name);
      tools_.push_back(
          std::make_shared<ToolAdapter>(scheduler_, *s.connection, alive_, tool, *name));
    }
  }
}

std::vector<std::shared_ptr<session::Tool>> McpManager::offered(std::size_t room) {
  // Computed now: a server that failed a moment ago (its change notice still queued) offers
  // nothing to this request.
  rename_tools();
  if (tools_.size() <= room) return tools_;
  // Logged once per change of the set or of what is left out.
  const std::size_t over = tools_.size() - room;
  std::vector<std::string> names;
  for (const auto& t : tools_)
    names.push_back(t->definition().name);
  if (over != last_over_limit_ || names != last_names_) {
    spdlog::warn("mcp: {} tools over the limit of {} are not offered", over,
                 session::kMaxOfferedTools);
    last_over_limit_ = over;
    last_names_ = std::move(names);
  }
  return {tools_.begin(), tools_.begin() + static_cast<std::ptrdiff_t>(room)};
}

Json McpManager::server_json(const Server& s, bool with_info) const {
  const McpConnection& c = *s.connection;
  Json j = Json::object();
  j["name"] = c.name();
  j["status"] = status_name(c.status());
  Json tools = Json::array();
  if (c.ready()) {
    for (const auto& n : s.offered_names) {
      if (!n.empty()) tools.push_back(n);
    }
  }
  j["tools"] = std::move(tools);
  if (c.status() == Status::failed) j["error"] = c.error();
  if (with_info && c.server_info()) j["serverInfo"] = *c.server_info();
  return j;
}

Json McpManager::servers_json() const {
  Json list = Json::array();
  for (const auto& s : servers_)
    list.push_back(server_json(s, true));
  Json out = Json::object();
  out["servers"] = std::move(list);
  return out;
}

void McpManager::on_changed() {
  rename_tools();
  for (auto& s : servers_) {
    Json fields = server_json(s, false);
    if (fields == s.last_update) continue;
    s.last_update = fields;
    if (update_) update_(fields);
  }
  // Restarts answer once their server is ready or failed again.
  for (std::size_t i = 0; i < restarts_.size();) {
    Restart& r = restarts_[i];
    const Status st = r.connection->status();
    if (r.started && st != Status::starting) {
      auto done = std::move(r.done);
      const McpConnection* c = r.connection;
      restarts_.erase(restarts_.begin() + static_cast<std::ptrdiff_t>(i));
      for (const auto& s : servers_) {
        if (s.connection.get() == c) done(server_json(s, true));
      }
      continue;
    }
    ++i;
  }
  if (!waiters_.empty() && settled()) {
    auto waiting = std::move(waiters_);
    waiters_.clear();
    for (auto& w : waiting)
      w.settled();
  }
}

std::optional<std::string> McpManager::restart(const std::string& name,
                                               std::function<void(Json)> done) {
  auto it = std::find_if(servers_.begin(), servers_.end(),
                         [&](const Server& s) { return s.connection->name() == name; });
  if (it == servers_.end()) return "MCP server not found: " + name;
  McpConnection* c = it->connection.get();
  if (c->config().disabled) return "MCP server " + name + " is disabled";
  restarts_.push_back(Restart{c, std::move(done), false});
  std::weak_ptr<bool> alive = alive_;
  c->stop([this, alive, c] {
    if (alive.expired() || stopping_all_) return;  // shut down meanwhile: no new process
    for (auto& r : restarts_) {
      if (r.connection == c) r.started = true;
    }
    c->start();
  });
  return std::nullopt;
}

bool McpManager::any_running() const {
  return std::any_of(servers_.begin(), servers_.end(),
                     [](const Server& s) { return s.connection->running(); });
}

void McpManager::stop_all(std::function<void()> gone) {
  stopping_all_ = true;
  // Nothing will settle any more: whoever waits gets the servers as they are now.
  auto waiting = std::move(waiters_);
  waiters_.clear();
  for (auto& w : waiting)
    scheduler_.post(std::move(w.settled));
  // A restart in progress will not start its server again: it is answered with it as it is.
  for (auto& r : std::exchange(restarts_, {})) {
    for (const auto& srv : servers_) {
      if (srv.connection.get() == r.connection)
        scheduler_.post([done = std::move(r.done), server = server_json(srv, true)]() mutable {
          done(std::move(server));
        });
    }
  }
  auto left = std::make_shared<std::size_t>(servers_.size() + 1);
  auto one_gone = [left, gone = std::move(gone)] {
    if (--*left == 0 && gone) gone();
  };
  for (auto& s : servers_)
    s.connection->stop(one_gone);
  one_gone();
}

}  // namespace rebound::mcp
