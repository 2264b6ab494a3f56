#pragma once
// One way to make a session, for every mode: its settings and session storage for its cwd, the
// process's providers, credentials, shell and jitter, its tools, and the system prompt for its
// cwd. The rpc mode makes one at start-up (possibly resuming --session FILE); ACP one per
// session/new, load and resume. Event loop only.

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "config/file_session_storage.h"
#include "config/file_settings_store.h"
#include "session/agent_session.h"
#include "session/error.h"
#include "session/llm/provider_router.h"
#include "session/model_registry.h"
#include "session/retry_control.h"
#include "workspace/service_flags.h"

namespace rebound::server {

/// The files of sessions working in one directory: settings (global + project) and storage.
struct SessionFiles {
  SessionFiles(const std::filesystem::path& agent_dir, const std::filesystem::path& cwd,
               config::SessionStorageOptions storage_options)
      : settings(agent_dir / "settings.json", cwd / ".rebound" / "settings.json"),
        storage(std::move(storage_options)) {}
  config::FileSettingsStore settings;
  config::FileSessionStorage storage;
};

/// Where a session goes and what it runs with.
struct SessionSpec {
  std::filesystem::path cwd;  // absolute
  session::SessionSlot slot = 0;
  session::EventSink& events;
  session::ToolRegistry& tools;
  session::DynamicTools* dynamic_tools = nullptr;
  /// The session file: resumed when `loaded` is set, else a new session written there.
  std::optional<std::string> file = std::nullopt;
  std::optional<session::LoadedSession> loaded = std::nullopt;
  /// acp: the session's own policy decides these (none: the process's).
  std::optional<std::vector<std::string>> active_tools = std::nullopt;
  std::optional<std::string> guideline = std::nullopt;
  /// Appended to the system prompt (one-shot's structured output paragraph).
  std::string prompt_tail = {};
};

/// The providers every session talks to, as the application set them up.
struct SessionModels {
  session::ModelRegistry& models;
  session::llm::ProviderRouter& router;
  protocol::Model start_model;
  /// Providers whose models are offered (a key is known, or none is needed).
  std::function<bool(const std::string& provider)> has_key;
  /// Neither --model nor --provider was given: the settings' default model applies.
  bool settings_choose = true;
};

/// The process-wide parts every session shares.
struct SessionFactoryDeps {
  const workspace::ServiceFlags& options;
  std::filesystem::path agent_dir;
  session::Scheduler& scheduler;
  SessionModels providers;
  session::CredentialStore& credentials;
  session::ShellRunner& shell;
  session::SplitMix64& jitter;
  std::vector<std::string> active_tools;
  const session::Secrets* secrets = nullptr;  // kept out of tool results and bash output
  std::string guideline = {};  // the sandbox's line of the default prompt (policy.md 8.7)
};

class SessionFactory {
 public:
  explicit SessionFactory(SessionFactoryDeps deps) : deps_(std::move(deps)) {}

  /// The settings and storage of sessions in `cwd`.
  std::shared_ptr<SessionFiles> files_for(const std::filesystem::path& cwd) const;
  /// The session of `id` from its file in `files`' session directory (session/load), read on
  /// the storage's thread: `done` gets, on the loop, the file and what it holds, or not_found /
  /// failed. Returns what cancels the read (`done` then gets an error at once).
  using LoadedById = session::Result<std::pair<std::string, session::LoadedSession>>;
  std::function<void()> load_by_id(std::shared_ptr<SessionFiles> files, const std::string& id,
                                   std::function<void(LoadedById)> done) const;
  /// A session with `files` (from files_for(spec.cwd)), which the caller keeps until the
  /// session is gone.
  std::unique_ptr<session::AgentSession> make(SessionSpec spec, SessionFiles& files) const;

 private:
  SessionFactoryDeps deps_;
};

}  // namespace rebound::server
