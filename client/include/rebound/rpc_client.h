#pragma once
// RpcClient: drives a `rebound` server over its stdio protocol (protocol.md). It spawns the
// server with piped stdin/stdout/stderr, writes one JSON command per line and reads responses
// and events on a reader thread. Every helper blocks until its response (or the request
// timeout) and throws rebound::RpcError when the server answers success:false, the request
// times out, or the server exits (the error then carries the tail of its stderr).
//
// Thread-safety: every member may be called from any thread. Event callbacks run on the
// reader thread, in order; they may subscribe and unsubscribe, but must not wait for responses.
// RAII: the destructor stops the server (stop()).

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace rebound {

using Json = nlohmann::ordered_json;

/// How commands are framed (protocol.md section 9): pi command objects, or JSON-RPC 2.0 requests
/// (the server then writes its events as notifications; on_event() sees the same event objects
/// either way).
enum class Envelope { pi, jsonrpc };

struct RpcClientOptions {
  std::string server_path = "rebound";     // a path, or a name looked up in PATH
  std::vector<std::string> args;           // after the program name
  std::map<std::string, std::string> env;  // added to (or replacing in) this environment
  std::optional<std::string> cwd;
  std::chrono::milliseconds request_timeout{30000};
  Envelope envelope = Envelope::pi;
};

/// A failed request: the server's error text, a timeout, or the server's exit.
class RpcError : public std::runtime_error {
 public:
  RpcError(std::string command, const std::string& message, int code = 0)
      : std::runtime_error(message), command_(std::move(command)), code_(code) {}
  /// The command that failed ("prompt", "get_state", ...).
  const std::string& command() const { return command_; }
  /// The JSON-RPC error code (-32000, -32601, -32602, ...) when the request went in the
  /// JSON-RPC envelope and the server refused it; 0 otherwise.
  int code() const { return code_; }

 private:
  std::string command_;
  int code_ = 0;
};

struct ImageInput {
  std::string data;  // base64
  std::string mime_type;
};

/// Ends an on_event() subscription when unsubscribe() is called or the handle is destroyed.
class Subscription {
 public:
  Subscription() = default;
  Subscription(std::function<void()> cancel) : cancel_(std::move(cancel)) {}
  Subscription(Subscription&& other) noexcept : cancel_(std::move(other.cancel_)) {
    other.cancel_ = nullptr;
  }
  Subscription& operator=(Subscription&& other) noexcept {
    if (this != &other) {
      unsubscribe();
      cancel_ = std::move(other.cancel_);
      other.cancel_ = nullptr;
    }
    return *this;
  }
  Subscription(const Subscription&) = delete;
  Subscription& operator=(const Subscription&) = delete;
  ~Subscription() { unsubscribe(); }
  void unsubscribe() {
    if (auto c = std::move(cancel_)) c();
    cancel_ = nullptr;
  }

 private:
  std::function<void()> cancel_;
};

class RpcClient {
 public:
  using EventCallback = std::function<void(const Json& event)>;

  /// Starts the server; throws std::runtime_error when it cannot be spawned.
  explicit RpcClient(RpcClientOptions options);
  ~RpcClient();
  RpcClient(const RpcClient&) = delete;
  RpcClient& operator=(const RpcClient&) = delete;

  /// Closes the server's stdin (a shutdown request), waits up to 2 s, then terminates it, and
  /// reaps it. Pending requests fail. Idempotent.
  void stop();
  /// Whether the server process is still running.
  bool running() const;
  /// The server's process id.
  int pid() const;
  /// The last bytes the server wrote to stderr (at most 8 KiB).
  std::string stderr_tail() const;

  /// Every event line (no responses) goes to `callback` until the handle goes away.
  [[nodiscard]] Subscription on_event(EventCallback callback);

  /// Sends any command object (an "id" is added) and returns the whole response in the pi
  /// shape ({"id","type":"response","command","success","data"?}, also when it went as a
  /// JSON-RPC request); throws RpcError for a failure, a timeout or the server's exit.
  Json request(Json command, std::optional<std::chrono::milliseconds> timeout = std::nullopt);

  // One helper per command of protocol.md section 2. Those without data return nothing.
  void prompt(const std::string& message, std::optional<std::string> streaming_behavior = {},
              const std::vector<ImageInput>& images = {});
  void steer(const std::string& message, const std::vector<ImageInput>& images = {});
  void follow_up(const std::string& message, const std::vector<ImageInput>& images = {});
  void abort();
  /// Returns `cancelled`.
  bool new_session(std::optional<std::string> parent_session = {});
  Json get_state();
  Json set_model(const std::string& provider, const std::string& model_id);
  Json cycle_model();           // null when only one model is available
  Json get_available_models();  // the "models" array
  void set_thinking_level(const std::string& level);
  Json cycle_thinking_level();  // null when the model has no reasoning
  void set_steering_mode(const std::string& mode);
  void set_follow_up_mode(const std::string& mode);
  void set_interrupt_mode(const std::string& mode);
  Json compact(std::optional<std::string> custom_instructions = {});
  void set_auto_compaction(bool enabled);
  void set_auto_retry(bool enabled);
  void abort_retry();
  /// Retry control (retry.md sections 11 to 17); the first of these turns the typed retry
  /// fields on for the rest of the process.
  Json get_retry_state();  // the RetryState: phase, attempt, delays, lastError, policy
  /// A partial update of the session policy: `fields` holds any of maxRetries, baseDelayMs,
  /// maxDelayMs, jitter, honorRetryAfter, maxServerDelayMs, deadlineMs (null drops one);
  /// `reset` drops every session value first. Returns the effective RetryPolicy; an invalid
  /// field throws RpcError and changes nothing.
  Json set_retry_policy(Json fields = Json::object(), bool reset = false);
  /// Ends a running backoff now: {"skipped":true,"attempt":n}, else
  /// {"skipped":false,"phase":"idle"|"request"}.
  Json retry_now();
  /// Which events this connection receives and how message_update looks (protocol.md
  /// section 8): `events` is an allow-list (nullopt: every event), `message_updates` "full" or
  /// "delta". Replaces the whole filter; returns the filter as the server echoes it. Leaving out
  /// agent_end and the retry events makes wait_for_idle() and prompt_and_wait() blind.
  Json set_event_filter(std::optional<std::vector<std::string>> events = std::nullopt,
                        const std::string& message_updates = "full");
  /// The MCP servers (mcp.md section 8): {"servers":[McpServer…]}; `wait` answers once none
  /// is starting or re-listing.
  Json get_mcp_servers(bool wait = false);
  /// Restarts one MCP server; returns its McpServer once it is ready or failed again. An
  /// unknown or disabled server throws RpcError.
  Json restart_mcp_server(const std::string& name);
  Json bash(const std::string& command);
  void abort_bash();
  Json get_session_stats();
  /// Returns `cancelled`.
  bool switch_session(const std::string& session_path);
  std::optional<std::string> get_last_assistant_text();
  Json get_messages();  // the "messages" array
  /// The session tree (sessions.md): the user messages a fork can start before
  /// ([{"entryId","text"}…]); a fork before one of them, which returns that message's text (for
  /// the input box); a clone of the whole conversation; the session's name (written as a
  /// session_info entry, seen in get_state's sessionName); every entry after `since` (an entry
  /// id: a cursor) as {"entries","leafId"}; the slash commands ([{"name","description","source",
  /// "sourceInfo"}…]); the conversation as one HTML page, whose absolute path is returned.
  Json get_fork_messages();
  std::string fork(const std::string& entry_id);
  void clone();
  void set_session_name(const std::string& name);
  Json get_entries(std::optional<std::string> since = {});
  Json get_commands();
  std::string export_html(std::optional<std::string> output_path = {});

  /// Waits until the work is really over: no run streaming (the last agent_end had
  /// willRetry:false), no retry chain, no compaction, nothing queued, as confirmed by a
  /// get_state round trip. False on timeout.
  bool wait_for_idle(std::chrono::milliseconds timeout);
  /// Sends a prompt and returns every event from its response until the work is over.
  /// Throws RpcError when that takes longer than `timeout`.
  std::vector<Json> prompt_and_wait(const std::string& message, std::chrono::milliseconds timeout);

 private:
  struct State;
  std::shared_ptr<State> state_;
  RpcClientOptions options_;
};

}  // namespace rebound
