#include "server/acp/acp_methods.h"

#include <filesystem>
#include <initializer_list>

namespace rebound::server::acp {

namespace {

bool flag(const Json& object, std::initializer_list<const char*> path) {
  const Json* at = &object;
  for (const char* key : path) {
    if (!at->is_object()) return false;
    const auto it = at->find(key);
    if (it == at->end()) return false;
    at = &*it;
  }
  return at->is_boolean() ? at->get<bool>() : at->is_object();
}

ParamsRead<OpenParams> read_open(const Json& params, bool with_id) {
  OpenParams out;
  if (with_id) {
    auto id = string_param(params, "sessionId");
    if (auto* error = std::get_if<ParamsError>(&id)) return std::move(*error);
    out.session_id = std::move(std::get<std::string>(id));
  }
  auto cwd = string_param(params, "cwd");
  if (auto* error = std::get_if<ParamsError>(&cwd)) return std::move(*error);
  out.cwd = std::move(std::get<std::string>(cwd));
  if (out.cwd.empty() || out.cwd.front() != '/')
    return ParamsError{"Invalid params: cwd must be an absolute path"};
  std::error_code ec;
  if (!std::filesystem::is_directory(out.cwd, ec))
    return ParamsError{"Invalid params: cwd is not a directory: " + out.cwd};
  const auto servers = params.find("mcpServers");
  if (servers != params.end() && !servers->is_null()) {
    if (!servers->is_array()) return expected("mcpServers", "array");
    out.mcp_servers = *servers;
  }
  return out;
}

}  // namespace

ParamsError expected(std::string_view path, std::string_view kind) {
  return ParamsError{"Invalid params: " + std::string(path) + ": expected " + std::string(kind)};
}

std::variant<std::string, ParamsError> string_param(const Json& params, const char* name) {
  const auto it = params.find(name);
  if (it == params.end() || !it->is_string()) return expected(name, "string");
  return it->get<std::string>();
}

ParamsRead<InitializeParams> read_initialize(const Json& params) {
  const auto version = params.find("protocolVersion");
  if (version == params.end() || !(version->is_number_integer() || version->is_number_unsigned()))
    return expected("protocolVersion", "integer");
  const Json none = Json::object();
  const auto caps_it = params.find("clientCapabilities");
  const Json& caps = caps_it != params.end() && caps_it->is_object() ? *caps_it : none;
  InitializeParams out;
  out.fs_read = flag(caps, {"fs", "readTextFile"});
  out.fs_write = flag(caps, {"fs", "writeTextFile"});
  out.notices = flag(caps, {"session", "notices"});
  out.compaction_updates = flag(caps, {"session", "compaction"});
  return out;
}

ParamsRead<AuthenticateParams> read_authenticate(const Json& params) {
  const auto it = params.find("methodId");
  return AuthenticateParams{it != params.end() && it->is_string() ? it->get<std::string>() : ""};
}

ParamsRead<OpenParams> read_new_session(const Json& params) {
  return read_open(params, false);
}

ParamsRead<OpenParams> read_load_session(const Json& params) {
  return read_open(params, true);
}

ParamsRead<SessionParams> read_session_params(const Json& params) {
  auto id = string_param(params, "sessionId");
  if (auto* error = std::get_if<ParamsError>(&id)) return std::move(*error);
  return SessionParams{std::move(std::get<std::string>(id)), params};
}

}  // namespace rebound::server::acp
