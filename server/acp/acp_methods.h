#pragma once
// ACP's methods as a table (acp.md sections 3 to 11): one registration per method of its name,
// whether it is a request, a notification or either, its typed params reader and its handler,
// which gets an AcpReply that answers exactly once (nothing for a notification). Unknown
// methods are the caller's (-32601, or nothing for a notification). Event loop only.

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "protocol/json.h"
#include "server/acp/acp_reply.h"

namespace rebound::server::acp {

/// Params that cannot be used: answered -32602 with this whole message (`Invalid params: …`).
struct ParamsError {
  std::string message;
};

template <typename Args>
using ParamsRead = std::variant<Args, ParamsError>;

/// How a method may come.
enum class MethodKind {
  request,       // a notification of it is ignored (and logged)
  notification,  // answered `{}` only when sent with an id (a request after all)
  either,        // answered when it has an id
};

class AcpMethodTable {
 public:
  using Run = std::function<void(const Json& params, AcpReply reply)>;
  struct Entry {
    MethodKind kind;
    Run run;
  };

  template <typename Args>
  void add(std::string name, MethodKind kind, ParamsRead<Args> (*read)(const Json&),
           std::function<void(Args, AcpReply)> handle) {
    entries_[std::move(name)] =
        Entry{kind, [read, handle = std::move(handle)](const Json& params, AcpReply reply) {
                auto args = read(params);
                if (auto* error = std::get_if<ParamsError>(&args)) {
                  reply.fail(protocol::jsonrpc_code::invalid_params, std::move(error->message));
                  return;
                }
                handle(std::move(std::get<Args>(args)), std::move(reply));
              }};
  }
  /// A method whose handler reads the params itself.
  void add_raw(std::string name, MethodKind kind, Run handle) {
    entries_[std::move(name)] = Entry{kind, std::move(handle)};
  }

  const Entry* find(std::string_view name) const {
    const auto it = entries_.find(name);
    return it == entries_.end() ? nullptr : &it->second;
  }

 private:
  std::map<std::string, Entry, std::less<>> entries_;
};

// ---- the params of ACP's methods ----

/// `"Invalid params: <path>: expected <kind>"` (section 10).
ParamsError expected(std::string_view path, std::string_view kind);
/// A string member, or the params error naming it.
std::variant<std::string, ParamsError> string_param(const Json& params, const char* name);

struct InitializeParams {
  bool fs_read = false, fs_write = false, notices = false, compaction_updates = false;
};
ParamsRead<InitializeParams> read_initialize(const Json& params);

struct AuthenticateParams {
  std::string method_id;  // "" when missing
};
ParamsRead<AuthenticateParams> read_authenticate(const Json& params);

/// session/new (no sessionId) and session/load, session/resume (sessionId first).
struct OpenParams {
  std::optional<std::string> session_id;
  std::string cwd;  // absolute, an existing directory
  Json mcp_servers = Json::array();
};
ParamsRead<OpenParams> read_new_session(const Json& params);
ParamsRead<OpenParams> read_load_session(const Json& params);

/// Methods that name a session; what else they take stays in `params`.
struct SessionParams {
  std::string session_id;
  Json params;
};
ParamsRead<SessionParams> read_session_params(const Json& params);

}  // namespace rebound::server::acp
