#include "rebound/rpc_client.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>

#include "protocol/json_line.h"
#include "protocol/line_reader.h"

extern char** environ;

namespace rebound {

namespace {

using Clock = std::chrono::steady_clock;
constexpr std::size_t kStderrTail = 8192;

std::vector<std::string> environment(const std::map<std::string, std::string>& extra) {
  std::map<std::string, std::string> vars;
  for (char** e = environ; e && *e; ++e) {
    const std::string kv(*e);
    const auto eq = kv.find('=');
    if (eq != std::string::npos) vars[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  for (const auto& [k, v] : extra)
    vars[k] = v;
  std::vector<std::string> out;
  for (const auto& [k, v] : vars)
    out.push_back(k + "=" + v);
  return out;
}

// Writes all of `data`; false on EPIPE or another error. SIGPIPE is blocked for this thread
// during the write (and a pending one consumed), so a dead server never kills the caller.
bool write_all(int fd, std::string_view data) {
  sigset_t pipe_set, old;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
  bool ok = true;
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ok = false;
      if (errno == EPIPE) {
        const timespec zero{0, 0};
        sigtimedwait(&pipe_set, nullptr, &zero);
      }
      break;
    }
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return ok;
}

std::string command_of(const Json& command) {
  const auto it = command.find("type");
  return it != command.end() && it->is_string() ? it->get<std::string>() : std::string("request");
}

}  // namespace

struct RpcClient::State {
  struct Pending {
    std::string command;
    std::optional<Json> response;  // in the pi shape
    int code = 0;                  // the JSON-RPC error code of a refused request
    std::optional<std::string> failure;
  };

  pid_t pid = -1;
  int in_fd = -1;
  std::thread reader;

  mutable std::mutex mu;  // everything below
  std::condition_variable cv;
  std::map<std::string, std::shared_ptr<Pending>> pending;
  std::uint64_t next_id = 0;
  bool exited = false;
  std::string exit_error;
  std::string stderr_tail;
  // What the events say (for wait_for_idle).
  bool streaming = false, retrying = false, compacting = false;
  std::uint64_t event_seq = 0;

  std::mutex write_mu;  // in_fd writes and close

  std::mutex sub_mu;
  std::map<std::uint64_t, EventCallback> subscribers;
  std::uint64_t next_sub = 0;

  void read_loop(int out_fd, int err_fd);
  void on_line(const std::string& line);
  void track(const Json& event);
};

void RpcClient::State::track(const Json& e) {
  const std::string type = e.value("type", std::string());
  std::lock_guard<std::mutex> lock(mu);
  if (type == "agent_start") streaming = true;
  if (type == "agent_end") streaming = false;
  if (type == "auto_retry_start") retrying = true;
  if (type == "auto_retry_end") retrying = false;
  if (type == "auto_compaction_start") compacting = true;
  if (type == "auto_compaction_end") compacting = false;
  ++event_seq;
  cv.notify_all();
}

void RpcClient::State::on_line(const std::string& line) {
  auto parsed = protocol::parse_json_line(line);
  if (!parsed.value || !parsed.value->is_object()) return;  // not protocol output
  Json& j = *parsed.value;
  if (j.contains("jsonrpc")) {
    if (const auto params = j.find("params"); j.contains("method") && params != j.end()) {
      Json event = std::move(*params);  // a notification carries the event as params
      j = std::move(event);
    } else {
      // A result or an error: answer the pending request in the pi shape.
      const auto id = j.find("id");
      if (id == j.end() || !id->is_string()) return;
      std::lock_guard<std::mutex> lock(mu);
      auto it = pending.find(id->get<std::string>());
      if (it == pending.end()) return;
      Pending& p = *it->second;
      Json response{{"id", *id}, {"type", "response"}, {"command", p.command}};
      if (const auto error = j.find("error"); error != j.end() && error->is_object()) {
        response["success"] = false;
        response["error"] = error->value("message", std::string("the command failed"));
        p.code = error->value("code", 0);
      } else {
        response["success"] = true;
        if (const auto result = j.find("result"); result != j.end() && !result->is_null())
          response["data"] = *result;
      }
      p.response = std::move(response);
      pending.erase(it);
      cv.notify_all();
      return;
    }
  }
  if (j.value("type", std::string()) == "response") {
    const auto id = j.find("id");
    if (id == j.end() || !id->is_string()) return;  // not one of ours
    std::lock_guard<std::mutex> lock(mu);
    auto it = pending.find(id->get<std::string>());
    if (it == pending.end()) return;  // timed out meanwhile
    it->second->response = j;
    pending.erase(it);
    cv.notify_all();
    return;
  }
  track(j);
  std::vector<EventCallback> callbacks;
  {
    std::lock_guard<std::mutex> lock(sub_mu);
    for (const auto& [k, cb] : subscribers)
      callbacks.push_back(cb);
  }
  for (const auto& cb : callbacks)
    cb(j);
}

void RpcClient::State::read_loop(int out_fd, int err_fd) {
  // stderr is drained on a helper thread so a chatty server never blocks on it.
  std::thread err_reader([this, err_fd] {
    char buf[4096];
    for (;;) {
      const ssize_t n = ::read(err_fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      std::lock_guard<std::mutex> lock(mu);
      stderr_tail.append(buf, static_cast<std::size_t>(n));
      if (stderr_tail.size() > kStderrTail) stderr_tail.erase(0, stderr_tail.size() - kStderrTail);
    }
    ::close(err_fd);
  });
  protocol::LineReader lines(std::size_t{1} << 30);
  auto sink = [this](protocol::LineItem item) {
    if (item.kind == protocol::LineItem::Kind::line) on_line(item.text);
  };
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(out_fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    lines.feed(std::string_view(buf, static_cast<std::size_t>(n)), sink);
  }
  lines.finish(sink);
  ::close(out_fd);
  err_reader.join();  // the process is gone or going: its stderr ends too
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  std::lock_guard<std::mutex> lock(mu);
  std::string how = WIFEXITED(status) ? "exited with status " + std::to_string(WEXITSTATUS(status))
                    : WIFSIGNALED(status)
                        ? "was killed by signal " + std::to_string(WTERMSIG(status))
                        : "ended";
  std::string tail =
      stderr_tail.size() > 2048 ? stderr_tail.substr(stderr_tail.size() - 2048) : stderr_tail;
  exit_error = "rebound " + how + (tail.empty() ? std::string() : "; stderr: " + tail);
  exited = true;
  for (auto& [id, p] : pending)
    p->failure = exit_error;
  pending.clear();
  cv.notify_all();
}

RpcClient::RpcClient(RpcClientOptions options)
    : state_(std::make_shared<State>()), options_(std::move(options)) {
  int in[2], out[2], err[2];
  if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0) {
    throw std::runtime_error(std::string("rebound: pipe failed: ") + std::strerror(errno));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err[1], 2);
  if (options_.cwd) posix_spawn_file_actions_addchdir_np(&actions, options_.cwd->c_str());
  std::vector<std::string> argv_strings{options_.server_path};
  argv_strings.insert(argv_strings.end(), options_.args.begin(), options_.args.end());
  std::vector<char*> argv;
  for (auto& a : argv_strings)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  auto env_strings = environment(options_.env);
  std::vector<char*> envp;
  for (auto& e : env_strings)
    envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid = -1;
  const int rc = ::posix_spawnp(&pid, options_.server_path.c_str(), &actions, nullptr, argv.data(),
                                envp.data());
  posix_spawn_file_actions_destroy(&actions);
  ::close(in[0]);
  ::close(out[1]);
  ::close(err[1]);
  if (rc != 0) {
    ::close(in[1]);
    ::close(out[0]);
    ::close(err[0]);
    throw std::runtime_error("cannot start " + options_.server_path + ": " + std::strerror(rc));
  }
  state_->pid = pid;
  state_->in_fd = in[1];
  // The reader holds the state too: a client destroyed from inside its own callback leaves
  // the reader thread (detached) to finish with it.
  std::shared_ptr<State> s = state_;
  const int out_fd = out[0], err_fd = err[0];
  state_->reader = std::thread([s, out_fd, err_fd] { s->read_loop(out_fd, err_fd); });
}

RpcClient::~RpcClient() {
  stop();
}

void RpcClient::stop() {
  State& s = *state_;
  {
    std::lock_guard<std::mutex> lock(s.write_mu);
    if (s.in_fd >= 0) ::close(s.in_fd);
    s.in_fd = -1;
  }
  if (std::this_thread::get_id() == s.reader.get_id()) {
    // From a callback: no waiting (this thread is the one that sees the exit). The reader
    // ends by itself once the server, its stdin closed, has exited.
    s.reader.detach();
    return;
  }
  {
    std::unique_lock<std::mutex> lock(s.mu);
    if (!s.cv.wait_for(lock, std::chrono::seconds(2), [&] { return s.exited; })) {
      ::kill(s.pid, SIGTERM);
      if (!s.cv.wait_for(lock, std::chrono::seconds(1), [&] { return s.exited; })) {
        ::kill(s.pid, SIGKILL);
        s.cv.wait(lock, [&] { return s.exited; });
      }
    }
  }
  if (s.reader.joinable()) s.reader.join();
}

bool RpcClient::running() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return !state_->exited;
}

int RpcClient::pid() const {
  return state_->pid;
}

std::string RpcClient::stderr_tail() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->stderr_tail;
}

Subscription RpcClient::on_event(EventCallback callback) {
  std::uint64_t key;
  {
    std::lock_guard<std::mutex> lock(state_->sub_mu);
    key = ++state_->next_sub;
    state_->subscribers[key] = std::move(callback);
  }
  std::weak_ptr<State> weak = state_;
  return Subscription([weak, key] {
    if (auto s = weak.lock()) {
      std::lock_guard<std::mutex> lock(s->sub_mu);
      s->subscribers.erase(key);
    }
  });
}

Json RpcClient::request(Json command, std::optional<std::chrono::milliseconds> timeout) {
  State& s = *state_;
  const std::string name = command_of(command);
  const auto wait = timeout.value_or(options_.request_timeout);
  auto slot = std::make_shared<State::Pending>();
  slot->command = name;
  std::string id;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    if (s.exited) throw RpcError(name, s.exit_error);
    id = "req_" + std::to_string(++s.next_id);
    s.pending[id] = slot;
  }
  if (options_.envelope == Envelope::jsonrpc) {
    command.erase("type");
    command.erase("id");
    command =
        Json{{"jsonrpc", "2.0"}, {"id", id}, {"method", name}, {"params", std::move(command)}};
  } else {
    command["id"] = id;
  }
  const std::string line = command.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
  bool written;
  {
    std::lock_guard<std::mutex> lock(s.write_mu);
    written = s.in_fd >= 0 && write_all(s.in_fd, line);
  }
  std::unique_lock<std::mutex> lock(s.mu);
  if (!written && !s.exited) {
    // The server is going away (or stop() closed its stdin): its exit fails the request.
    s.cv.wait_for(lock, wait, [&] { return s.exited; });
  }
  const bool answered = s.cv.wait_for(lock, wait, [&] { return slot->response || slot->failure; });
  if (!answered) {
    s.pending.erase(id);
    throw RpcError(name, "Timed out after " + std::to_string(wait.count()) +
                             " ms waiting for the response to " + name);
  }
  if (slot->failure) throw RpcError(name, *slot->failure);
  Json response = std::move(*slot->response);
  lock.unlock();
  if (!response.value("success", false)) {
    throw RpcError(name, response.value("error", std::string("the command failed")), slot->code);
  }
  return response;
}

namespace {

Json message_command(const char* type, const std::string& message,
                     const std::vector<ImageInput>& images) {
  Json c{{"type", type}, {"message", message}};
  if (!images.empty()) {
    Json list = Json::array();
    for (const auto& i : images)
      list.push_back(Json{{"type", "image"}, {"data", i.data}, {"mimeType", i.mime_type}});
    c["images"] = std::move(list);
  }
  return c;
}

Json data_of(const Json& response) {
  const auto it = response.find("data");
  return it == response.end() ? Json() : *it;
}

}  // namespace

void RpcClient::prompt(const std::string& message, std::optional<std::string> streaming_behavior,
                       const std::vector<ImageInput>& images) {
  Json c = message_command("prompt", message, images);
  if (streaming_behavior) c["streamingBehavior"] = *streaming_behavior;
  request(std::move(c));
}

void RpcClient::steer(const std::string& message, const std::vector<ImageInput>& images) {
  request(message_command("steer", message, images));
}

void RpcClient::follow_up(const std::string& message, const std::vector<ImageInput>& images) {
  request(message_command("follow_up", message, images));
}

void RpcClient::abort() {
  request(Json{{"type", "abort"}});
}

bool RpcClient::new_session(std::optional<std::string> parent_session) {
  Json c{{"type", "new_session"}};
  if (parent_session) c["parentSession"] = *parent_session;
  return data_of(request(std::move(c))).value("cancelled", false);
}

Json RpcClient::get_state() {
  return data_of(request(Json{{"type", "get_state"}}));
}

Json RpcClient::set_model(const std::string& provider, const std::string& model_id) {
  return data_of(
      request(Json{{"type", "set_model"}, {"provider", provider}, {"modelId", model_id}}));
}

Json RpcClient::cycle_model() {
  return data_of(request(Json{{"type", "cycle_model"}}));
}

Json RpcClient::get_available_models() {
  return data_of(request(Json{{"type", "get_available_models"}})).value("models", Json::array());
}

void RpcClient::set_thinking_level(const std::string& level) {
  request(Json{{"type", "set_thinking_level"}, {"level", level}});
}

Json RpcClient::cycle_thinking_level() {
  return data_of(request(Json{{"type", "cycle_thinking_level"}}));
}

void RpcClient::set_steering_mode(const std::string& mode) {
  request(Json{{"type", "set_steering_mode"}, {"mode", mode}});
}

void RpcClient::set_follow_up_mode(const std::string& mode) {
  request(Json{{"type", "set_follow_up_mode"}, {"mode", mode}});
}

void RpcClient::set_interrupt_mode(const std::string& mode) {
  request(Json{{"type", "set_interrupt_mode"}, {"mode", mode}});
}

Json RpcClient::compact(std::optional<std::string> custom_instructions) {
  Json c{{"type", "compact"}};
  if (custom_instructions) c["customInstructions"] = *custom_instructions;
  return data_of(request(std::move(c)));
}

void RpcClient::set_auto_compaction(bool enabled) {
  request(Json{{"type", "set_auto_compaction"}, {"enabled", enabled}});
}

void RpcClient::set_auto_retry(bool enabled) {
  request(Json{{"type", "set_auto_retry"}, {"enabled", enabled}});
}

void RpcClient::abort_retry() {
  request(Json{{"type", "abort_retry"}});
}

Json RpcClient::get_retry_state() {
  return data_of(request(Json{{"type", "get_retry_state"}}));
}

Json RpcClient::set_retry_policy(Json fields, bool reset) {
  Json command{{"type", "set_retry_policy"}};
  if (reset) command["reset"] = true;
  if (fields.is_object()) {
    for (auto& [key, value] : fields.items())
      command[key] = value;
  }
  return data_of(request(std::move(command)));
}

Json RpcClient::retry_now() {
  return data_of(request(Json{{"type", "retry_now"}}));
}

Json RpcClient::set_event_filter(std::optional<std::vector<std::string>> events,
                                 const std::string& message_updates) {
  Json command{{"type", "set_event_filter"}};
  command["events"] = events ? Json(*events) : Json(nullptr);
  command["messageUpdates"] = message_updates;
  return data_of(request(std::move(command)));
}

Json RpcClient::get_mcp_servers(bool wait) {
  Json command{{"type", "get_mcp_servers"}};
  if (wait) command["wait"] = true;
  return data_of(request(std::move(command)));
}

Json RpcClient::restart_mcp_server(const std::string& name) {
  return data_of(request(Json{{"type", "restart_mcp_server"}, {"name", name}}));
}

Json RpcClient::bash(const std::string& command) {
  return data_of(request(Json{{"type", "bash"}, {"command", command}}));
}

void RpcClient::abort_bash() {
  request(Json{{"type", "abort_bash"}});
}

Json RpcClient::get_session_stats() {
  return data_of(request(Json{{"type", "get_session_stats"}}));
}

bool RpcClient::switch_session(const std::string& session_path) {
  return data_of(request(Json{{"type", "switch_session"}, {"sessionPath", session_path}}))
      .value("cancelled", false);
}

std::optional<std::string> RpcClient::get_last_assistant_text() {
  const Json data = data_of(request(Json{{"type", "get_last_assistant_text"}}));
  const auto it = data.find("text");
  if (it == data.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

Json RpcClient::get_fork_messages() {
  return data_of(request(Json{{"type", "get_fork_messages"}})).value("messages", Json::array());
}

std::string RpcClient::fork(const std::string& entry_id) {
  return data_of(request(Json{{"type", "fork"}, {"entryId", entry_id}})).value("text", "");
}

void RpcClient::clone() {
  request(Json{{"type", "clone"}});
}

void RpcClient::set_session_name(const std::string& name) {
  request(Json{{"type", "set_session_name"}, {"name", name}});
}

Json RpcClient::get_entries(std::optional<std::string> since) {
  Json c{{"type", "get_entries"}};
  if (since) c["since"] = *since;
  return data_of(request(std::move(c)));
}

Json RpcClient::get_commands() {
  return data_of(request(Json{{"type", "get_commands"}})).value("commands", Json::array());
}

std::string RpcClient::export_html(std::optional<std::string> output_path) {
  Json c{{"type", "export_html"}};
  if (output_path) c["outputPath"] = *output_path;
  return data_of(request(std::move(c))).value("path", "");
}

Json RpcClient::get_messages() {
  return data_of(request(Json{{"type", "get_messages"}})).value("messages", Json::array());
}

bool RpcClient::wait_for_idle(std::chrono::milliseconds timeout) {
  State& s = *state_;
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    std::uint64_t seq;
    {
      std::unique_lock<std::mutex> lock(s.mu);
      const bool quiet = s.cv.wait_until(lock, deadline, [&] {
        return s.exited || (!s.streaming && !s.retrying && !s.compacting);
      });
      if (!quiet) return false;
      if (s.exited) throw RpcError("wait_for_idle", s.exit_error);
      seq = s.event_seq;
    }
    // The events may lag: a compaction or a queued message can start right after agent_end.
    // get_state is answered after everything the server emitted before reading it.
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return false;
    Json st;
    try {
      st = get_state();
    } catch (const RpcError&) {
      if (Clock::now() >= deadline) return false;
      throw;
    }
    std::unique_lock<std::mutex> lock(s.mu);
    const bool idle = !st.value("isStreaming", true) && !st.value("isCompacting", true) &&
                      st.value("queuedMessageCount", 1) == 0 && !s.streaming && !s.retrying &&
                      !s.compacting;
    if (idle) return true;
    if (!s.cv.wait_until(lock, deadline, [&] { return s.exited || s.event_seq != seq; })) {
      return false;
    }
  }
}

std::vector<Json> RpcClient::prompt_and_wait(const std::string& message,
                                             std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  auto events = std::make_shared<std::vector<Json>>();
  auto events_mu = std::make_shared<std::mutex>();
  Subscription sub = on_event([events, events_mu](const Json& e) {
    std::lock_guard<std::mutex> lock(*events_mu);
    events->push_back(e);
  });
  prompt(message);
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  if (!wait_for_idle(std::max(left, std::chrono::milliseconds(0)))) {
    throw RpcError("prompt", "Timed out after " + std::to_string(timeout.count()) +
                                 " ms waiting for the prompt's work to end");
  }
  sub.unsubscribe();
  std::lock_guard<std::mutex> lock(*events_mu);
  return *events;
}

}  // namespace rebound
