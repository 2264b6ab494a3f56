#pragma once
// The agent session: runtime context, the agent loop (runtime.md section 1) and the auto-retry
// policy (retry.md), driven by the server's dispatcher and by provider and timer completions.
// Everything runs on one event loop, so nothing here is locked; time and deferral come from
// the injected Scheduler, events leave through the EventSink, requests go to the Provider.
// Each request carries a generation number; completions of an older generation are dropped.

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "protocol/commands.h"
#include "protocol/messages.h"
#include "protocol/wire_types.h"
#include "session/credential_store.h"
#include "session/error.h"
#include "session/event_sink.h"
#include "session/llm/provider.h"
#include "session/message_stats.h"
#include "session/model_registry.h"
#include "session/prompt_library.h"
#include "session/retry_control.h"
#include "session/retry_state.h"
#include "session/run_hooks.h"
#include "session/scheduler.h"
#include "session/secrets.h"
#include "session/session_export.h"
#include "session/session_file.h"
#include "session/session_recorder.h"
#include "session/session_storage.h"
#include "session/settings.h"
#include "session/settings_store.h"
#include "session/shell_runner.h"
#include "session/slash_commands.h"
#include "session/tool.h"

namespace rebound::session {

struct SessionOptions {
  protocol::Model model;   // the model the session starts with
  std::string session_id;  // fresh for a new session
  /// Whether a provider's models are offered (it has a key, or needs none); all when empty.
  std::function<bool(const std::string& provider)> provider_available;
  /// --session FILE: the file to resume (`resume` holds what it loaded) or, when it did not
  /// exist, the file a new session is written to. Otherwise the storage names the file.
  std::optional<std::string> session_file = std::nullopt;
  std::optional<LoadedSession> resume = std::nullopt;
  /// Whether a resumed session's last model and thinking level are taken up (false when the
  /// command line chose the model).
  bool restore_model = true;
  /// The host's handle, stamped on every event.
  SessionSlot slot = 0;
};

struct ModelCycle {
  protocol::Model model;
  protocol::ThinkingLevel thinking_level;
};

/// What the session needs from the world; every reference must outlive the session.
struct SessionDeps {
  Scheduler& scheduler;
  EventSink& events;
  llm::Provider& provider;
  CredentialStore& credentials;
  SettingsStore& settings;
  SessionStorage& storage;
  ShellRunner& shell;
  ToolRegistry& tools;  // the tools offered to the model; may be empty
  /// Builds the system prompt from the settings' `systemPrompt` (tools.md section 10) when a
  /// session starts, at new_session and at switch_session; none: that setting as it is.
  /// `skills_block` is the prompt library's (sessions.md section 10.3), "" without skills.
  std::function<std::string(const std::string& settings_prompt, const std::string& skills_block)>
      build_system_prompt = {};
  /// The process's jitter generator (retry.md section 15, shared by its sessions); none: the
  /// session's own, seeded 0.
  SplitMix64* jitter = nullptr;
  /// Tools of MCP servers (mcp.md), offered after `tools`; none: only `tools`.
  DynamicTools* dynamic_tools = nullptr;
  /// The keys kept out of tool results and bash output (session/secrets.h); none: nothing is.
  const Secrets* secrets = nullptr;
  /// Finds the session's prompt templates and skills (sessions.md sections 9, 10) whenever a
  /// session starts, with the warnings to log; none: the session has neither.
  std::function<PromptLibrary(const Settings& settings, std::vector<std::string>& warnings)>
      scan_prompts = {};
  /// Reads a skill file when a message names it.
  ReadText read_prompt_file = {};
  /// Writes export_html's page (sessions.md section 12); none: export_html fails.
  ExportWriter export_html = {};
};

/// A user message a fork can start before (sessions.md section 3).
struct ForkMessage {
  std::string entry_id;
  std::string text;
};

/// get_entries' answer (sessions.md section 6), written as text: the file's entries as their
/// lines read back (never parsed), those held in memory as their JSON. It points into the
/// session's recorder: write it before anything is appended.
struct EntriesText {
  EntryTree tree;
  std::size_t from = 0;  // the first node answered
  /// Appends `{"entries":[…],"leafId":…}`.
  void append_json(std::string& out) const;
};

/// What `compact` answers with: the result, or the error.
using CompactDone = std::function<void(Result<CompactionResult>)>;

/// What `bash` answers with: the bashExecution message it added (or would have added).
using BashDone = std::function<void(const protocol::AgentMessage& execution)>;

struct UserInput {
  std::string text;
  std::vector<protocol::ImageContent> images;
  /// Hook texts that follow the user message (UserPromptSubmit, extensions.md section 3.9).
  std::vector<ContextNote> context = {};
  /// Its hooks' `prompt_id` (a UUID v4 drawn when it was submitted; extensions.md 3.3).
  std::string prompt_id = {};
};

/// Which command submitted a message (extensions.md section 5.1).
enum class SubmitKind { prompt, steer, follow_up };

/// Called once when the work a prompt started is over: its run, any retry chain it caused, and
/// the runs of messages it was queued behind do not count.
using Completion = std::function<void()>;

/// What a session's LLM requests spent beyond the usage of the messages they made (oneshot.md
/// section 6): the time in every request, main and compaction summary (each from sending to
/// its end, failure or cancel), and the usage of the summary requests.
struct RequestSpend {
  std::int64_t api_ms = 0;
  protocol::Usage summaries;
};

class AgentSession {
 public:
  AgentSession(SessionOptions options, ModelRegistry models, SessionDeps deps);
  ~AgentSession();
  AgentSession(const AgentSession&) = delete;
  AgentSession& operator=(const AgentSession&) = delete;

  /// Accepts or rejects a prompt. On acceptance `accepted` runs first (the response precedes
  /// every event of the run), then the run starts or the message is queued; `done` runs once the
  /// prompt's work, retries included, is over. Returns the error (busy) when rejected.
  Status prompt(UserInput input, std::optional<protocol::StreamingBehavior> behavior,
                const std::function<void()>& accepted, Completion done = {});
  /// The message of a `prompt`, `steer` or `follow_up` after its UserPromptSubmit hooks
  /// (extensions.md section 5.1; without run hooks at once): `answered` runs once, with ok when
  /// the message was accepted (before the run's events), or the error (busy, a hook's refusal,
  /// `Operation aborted`). Messages are judged one after the other in arrival order.
  /// A prompt's `done` runs as prompt()'s does, once its work is over (never when refused).
  void submit(UserInput input, SubmitKind kind, std::optional<protocol::StreamingBehavior> behavior,
              std::function<void(Status)> answered, Completion done = {});
  /// Step 1 of extensions.md section 5.1 for a message's text: when it names a slash command,
  /// a prompt runs it (after waiting for extensions still starting) and a steer or follow-up is
  /// refused, and `then` gets that outcome; otherwise `then` gets nothing, at once when no
  /// extension is starting.
  void route_command(const std::string& text, SubmitKind kind,
                     std::function<void(std::optional<Status>)> then);
  /// Steering: delivered at the next turn boundary; starts a run when idle.
  void steer(UserInput input, const std::function<void()>& accepted);
  /// Follow-up: runs after the current run ends; starts a run when idle.
  void follow_up(UserInput input, const std::function<void()>& accepted);

  /// abort_retry, then stops the active request and clears both queues. `done` runs once the
  /// run has ended: at once, every event emitted, unless tool calls are running; then after
  /// their abort results and the run's agent_end (tools.md section 7).
  void abort(Completion done = {});
  /// retry.md section 6: cancels a backoff (emitting auto_retry_end), or stops further retries
  /// of the retried request that runs now.
  void abort_retry();
  /// get_retry_state (retry.md section 16): the chain as it stands. Turns retry-control mode on.
  protocol::Json retry_state_json();
  /// set_retry_policy (section 13): the effective policy, or the first bad field's error and
  /// nothing changed. Success turns retry-control mode on.
  Result<protocol::Json> set_retry_policy(const protocol::Json& command);
  /// retry_now (section 17): `answer` gets the response data; in a backoff it is called first
  /// and the continued run starts after it. Turns retry-control mode on.
  void retry_now(const std::function<void(const protocol::Json&)>& answer);
  /// End of input or a signal (acp session/close: `end_reason` close): like abort, and a
  /// running bash is killed; then its SessionEnd hooks.
  void shutdown(std::string_view end_reason = "other") {
    shutting_down_ = true;  // nothing is written for the dropped queue (sessions.md 8)
    force_end_tool_batch();
    abort();
    abort_bash();
    end_session_hooks(end_reason);
    if (loads_pending_ > 0) deps_.storage.cancel_loads();  // answered "cancelled" at once
  }
  /// Runs `ended` once the SessionEnd hooks shutdown() started have ended (bounded by their
  /// timeouts; at once without hooks).
  void when_session_ended(std::function<void()> ended) {
    if (!run_hooks_) return ended();
    run_hooks_->when_ended(std::move(ended));
  }
  /// Kills those hooks (the deadline or a signal came first).
  void cut_session_end() {
    if (run_hooks_) run_hooks_->cut_ended();
  }
  /// A switch_session is reading its file (its answer is still to come).
  bool is_loading() const { return loads_pending_ > 0; }

  protocol::RpcSessionState state() const;
  const Settings& settings() const { return settings_; }
  const ModelRegistry& models() const { return models_; }
  /// The runtime context (what the model sees next): get_messages.
  const std::vector<protocol::AgentMessage>& messages() const { return context_; }
  /// get_last_assistant_text: the text of the last assistant message in the context that has
  /// text, or nullopt.
  std::optional<std::string> last_assistant_text() const;

  using Stats = MessageStats;
  /// get_session_stats: counted over the whole history, so failed attempts count.
  const Stats& stats() const { return stats_; }
  const std::string& session_id() const { return session_id_; }
  /// The session file's path (where it is or will be); none with --no-session.
  const std::optional<std::string>& session_file() const { return recorder_->path(); }
  /// The recorded entries of the session (for tests and compaction).
  const SessionRecorder& recorder() const { return *recorder_; }

  /// new_session: cancels a backoff, aborts a run, drops the queues and a running bash, then
  /// starts an empty session (a new id and file) with the same model and settings.
  void new_session(std::optional<std::string> parent_session);
  /// switch_session: loads `path` first (its error, and nothing changes, when it cannot be
  /// used), then cancels like new_session and takes up the loaded session.
  Status switch_session(const std::string& path);
  /// The same for the wire (tools.md section 7): a running tool batch is first aborted exactly
  /// as `abort` does (the calls' own abort results, the aborted turn, agent_end), then the
  /// session changes and `done` runs. Without a batch both finish before returning.
  void new_session(std::optional<std::string> parent_session, Completion done);
  void switch_session(const std::string& path, std::function<void(Status)> done);

  /// The session tree's commands (sessions.md sections 3 to 6, session_tree.cpp).
  /// get_fork_messages: the user messages of the active path, root first.
  Result<std::vector<ForkMessage>> fork_messages() const;
  /// get_entries: every entry in append order, or those after `since`.
  /// The unknown-outcome results the last load or copy appended (runtime.md section 8), for a
  /// replay of the conversation made before it (ACP session/load).
  const std::vector<protocol::AgentMessage>& settled_outcomes() const { return settled_; }
  Result<EntriesText> entries(const std::optional<std::string>& since) const;
  /// fork: validates, settles running work as new_session does, then continues in a new
  /// session holding the path up to the selected user message's parent; `done` gets that
  /// message's text, or the error (and nothing changed).
  void fork(const std::string& entry_id, std::function<void(Result<std::string>)> done);
  /// clone: the same with the whole active path.
  void clone(std::function<void(Status)> done);
  /// set_session_name: appends a session_info entry and emits session_info_changed; the
  /// error for a name that is empty after trimming. `announce` false: no event (--name).
  Status set_session_name(const std::string& name, bool announce = true);
  /// export_html: the active path as one HTML page; the absolute path written, or the error.
  Result<std::string> export_html(const std::optional<std::string>& output_path) const;
  /// The session's name (the last session_info entry on the active path), if any.
  const std::optional<std::string>& session_name() const { return recorder_->name(); }

  /// bash: runs the command; `done` gets the bashExecution message once it ends. The message
  /// joins the context and the file at once when idle, else when the session is next idle.
  /// Returns the error when it cannot start (busy: one bash at a time).
  Status bash(const std::string& command, BashDone done);
  /// A `bash` command has not answered yet.
  bool is_bash_running() const { return bash_jobs_.count(bash_generation_) > 0; }
  /// abort_bash: kills the running command (its `bash` answers with cancelled:true).
  void abort_bash();

  /// compact (runtime.md section 5): cancels a backoff and aborts a run, then summarises the
  /// older context with the current model; no auto_compaction events.
  void compact(std::optional<std::string> custom_instructions, CompactDone done);
  bool is_compacting() const { return compaction_ != nullptr; }

  /// `persist`: also written to settings.json (rpc mode); ACP's session-scoped form does not.
  void set_auto_retry(bool enabled, bool persist = true);
  /// Retry-control mode (retry.md section 11) from now on, as the first retry-control command
  /// turns it on (ACP: the connection's first one turns it on for every session).
  void enable_retry_control() { retry_control_ = true; }
  /// A one-shot run's deadline (oneshot.md section 12), epoch ms: a backoff that would end after
  /// it is not started, the chain ends with reason `deadline` and run_deadline_hit() says so.
  void set_run_deadline(std::optional<std::int64_t> at) { run_deadline_at_ = at; }
  bool run_deadline_hit() const { return run_deadline_hit_; }
  /// The checks each tool call passes before its batch runs (hooks); none by default.
  void set_tool_preflight(ToolPreflight* preflight) { preflight_ = preflight; }
  /// How the file tools open their paths (ToolContext::open_file), asked for each batch.
  void set_file_opener(std::function<FileOpener()> make) { file_opener_ = std::move(make); }
  /// Makes, for each batch, what walks leave out (ToolContext::hidden; the permission policy).
  void set_walk_filter(std::function<std::function<bool(std::string_view, bool)>()> make) {
    walk_filter_ = std::move(make);
  }
  /// Whether a run about to end goes on (Stop hooks); none by default.
  void set_run_hooks(RunHooks* hooks) { run_hooks_ = hooks; }
  RunHooks* run_hooks() const { return run_hooks_; }
  /// The slash commands its prompts can name (extensions.md section 4.6); none by default.
  void set_slash_commands(SlashCommands* commands) { commands_ = commands; }
  SlashCommands* slash_commands() const { return commands_; }
  /// The session's prompt templates and skills, as found when it started.
  const PromptLibrary& prompts() const { return prompts_; }
  /// get_commands' entries: the extension commands, the templates, the skills (section 11).
  std::vector<protocol::Json> command_list() const;
  /// The user message the session works on (the latest added to its context), for hooks.
  const std::optional<std::string>& prompt_id() const { return prompt_id_; }
  /// Runs the SessionStart hooks of this session (`source` startup or resume; new_session and
  /// switch_session run their own): the first LLM request waits for their texts.
  void start_session_hooks(std::string_view source);
  /// Runs the SessionEnd hooks (`reason`; new_session and switch_session run their own).
  void end_session_hooks(std::string_view reason) {
    if (run_hooks_) run_hooks_->session_end(reason);
  }
  bool auto_retry_enabled() const { return settings_.retry.enabled; }
  bool is_retrying() const { return retry_.active(); }
  bool is_streaming() const { return run_ != nullptr; }
  /// Whether the last run that ended was ended by a hook's continue:false (extensions.md 3.7).
  bool last_run_stopped_by_hook() const { return stopped_by_hook_.has_value(); }
  /// Why (the hook's stop text), when it was.
  const std::optional<std::string>& last_run_stop_text() const { return stopped_by_hook_; }
  /// The time in LLM requests and the summary requests' usage so far (RequestSpend).
  const RequestSpend& request_spend() const { return *spend_; }
  /// No run, no retry chain, nothing queued.
  bool is_idle() const { return !run_ && !retry_.active() && !compaction_ && queued_count() == 0; }

  void set_auto_compaction(bool enabled);
  void set_steering_mode(protocol::QueueMode mode) { steering_mode_ = mode; }
  void set_follow_up_mode(protocol::QueueMode mode) { follow_up_mode_ = mode; }
  void set_interrupt_mode(protocol::InterruptMode mode) { interrupt_mode_ = mode; }
  /// Sets the level, clamped to what the model supports ("off" for a model without reasoning);
  /// a change is persisted as defaultThinkingLevel.
  void set_thinking_level(protocol::ThinkingLevel level);
  std::vector<protocol::ThinkingLevel> available_thinking_levels() const;
  /// The highest level the model offers that is not above `wanted`.
  protocol::ThinkingLevel clamped_thinking_level(protocol::ThinkingLevel wanted) const;
  /// cycle_thinking_level: the next offered level (wrapping), persisted; nullopt when the model
  /// has no reasoning.
  std::optional<protocol::ThinkingLevel> cycle_thinking_level();

  /// get_available_models: the registry's models whose provider is available.
  std::vector<protocol::Model> available_models() const;
  /// set_model: the model serves from the next request on; persisted as defaultProvider and
  /// defaultModel. Returns the model, or the error ("Model not found: p/id").
  Result<protocol::Model> set_model(const std::string& provider, const std::string& model_id);
  /// cycle_model: the next available model (wrapping); nullopt when only one is available.
  std::optional<ModelCycle> cycle_model();

  /// The tools offered to the model, in order (get_tools, tools.md section 9).
  std::vector<ToolDefinition> tool_definitions() const;

 private:
  struct Queued {
    UserInput input;
    Completion done;
  };
  struct Submission {
    UserInput input;
    SubmitKind kind;
    std::optional<protocol::StreamingBehavior> behavior;
    std::function<void(Status)> answered;
    Completion done = {};
    /// The text as submitted, before template and skill expansion: what UserPromptSubmit
    /// hooks are shown (extensions.md section 3.4).
    std::string typed = {};
  };
  void queue_submission(Submission s);
  void judge_submissions();
  void submission_judged(std::uint64_t generation, PromptVerdict verdict);
  void deliver(Submission s);
  void drop_submissions();
  struct Run;
  struct Compaction;

  void use_model(const protocol::Model& model);
  std::size_t queued_count() const { return steering_.size() + follow_up_.size(); }
  void emit(EventBody body) { events_.on_event(Event{slot_, std::move(body)}); }
  protocol::AgentMessage user_message(const UserInput& input) const;

  // agent loop (agent_loop.cpp)
  void start_run(std::vector<Queued> inputs);
  void continue_run();
  void add_user_messages(std::vector<Queued> inputs);
  void request_assistant();
  void send_request();
  /// The built-in tools, then the dynamic ones (their tools into `dynamic`), 128 at most.
  std::vector<ToolDefinition> offered_tools(std::vector<std::shared_ptr<Tool>>* dynamic) const;
  Tool* find_offered(const Run& run, std::string_view name) const;
  void on_stream_event(std::uint64_t generation, llm::StreamEvent&& event);
  void ensure_message_started();
  void finish_message(protocol::StopReason reason, std::optional<std::string> error);
  static bool has_tool_calls(const protocol::AgentMessage& message);
  void finish_turn();
  void start_tool_batch();
  /// Validates and preflights the batch's calls from run_->next_preflight on, one after the
  /// other (waiting for the preflight where there is one), then starts those that passed.
  void preflight_calls(std::uint64_t generation);
  /// Applies call `index`'s preflight verdict, then goes on with the next call.
  void preflighted(std::uint64_t generation, std::size_t index, PreflightVerdict verdict);
  void start_calls(std::uint64_t generation);
  /// Whether batch call `index` of request `generation` is current and has not ended.
  bool call_open(std::uint64_t generation, std::size_t index) const;
  void end_tool_call(std::uint64_t generation, std::size_t index, ToolResult result);
  void after_call_done(std::uint64_t generation, std::size_t index, AfterCallVerdict verdict);
  void close_tool_call(std::size_t index, ToolResult result);
  void emit_context_notes(std::vector<ContextNote> notes);
  bool start_stop_hooks();
  void decide_after_run(const protocol::AgentMessage& last, RetryDecision decision);
  void give_up(std::string_view error, const std::string& message);
  void request_when_started(std::uint64_t generation);
  /// deps_.provider.stream(), its time from now to its end, failure or cancel added to spend_.
  std::unique_ptr<llm::StreamHandle> timed_stream(const llm::LlmRequest& request,
                                                  llm::StreamHandler handler);
  void request_summary(std::uint64_t generation, const std::optional<std::string>& custom);
  void stop_hooks_done(std::uint64_t generation, StopVerdict verdict);
  void complete_tool_batch();
  /// Ends every running tool call at once with "Operation aborted" (no completion from the
  /// tools), so the run ends synchronously: new_session, switch_session, compact, shutdown.
  void force_end_tool_batch();
  /// A new turn of the run: `first` (a re-ask), then the steering messages, then the request.
  void next_turn(std::vector<Queued> first = {});
  void end_run();
  /// Aborts the run; false when running tool calls must end first (`done` waits for them).
  bool abort_run(Completion done = {});
  /// Adds a finished message to the context, the history and the session file.
  void record(const protocol::AgentMessage& message, bool in_context = true);

  // compaction (agent_compaction.cpp)
  /// After a run: overflow or threshold compaction; true when one started.
  bool compact_after_run(const protocol::AgentMessage& last);
  void start_compaction(CompactionReason reason, const std::optional<std::string>& custom,
                        CompactDone done);
  void on_compaction_event(std::uint64_t generation, llm::StreamEvent event);
  void complete_compaction();
  void fail_compaction(const std::string& reason);
  void abort_compaction();

  // session files (agent_session_files.cpp)
  void start_new_recorder(std::optional<std::string> file, std::optional<std::string> parent);
  void take_up(std::string path, LoadedSession loaded, bool restore_model);
  /// runtime.md section 8: every call of a `toolUse`/`length` assistant message in the loaded
  /// context without a result gets an "Outcome unknown" result entry and the event (A7, A8).
  /// The spooled output of such a bash call follows the text; its start time is its spool
  /// file's birth time where there is one.
  void settle_unknown_outcomes();
  /// Where this session's tool calls spool their output (session/tool_spool.h); empty
  /// without a session file.
  std::string spool_dir() const;
  /// A call's tool name and its arguments as compact JSON with sorted keys (amendments A8).
  static std::string call_key(const std::string& name, const protocol::Json& arguments);
  void cancel_everything();
  void refresh_system_prompt();
  /// Runs `next` once no tool batch runs: at once, or after aborting the batch.
  void after_batch_aborted(Completion next);
  void take_up_switched(const std::string& path, LoadedSession session);
  /// Settles, then makes the chain to the entry `point` picks (none: nothing) the new
  /// session's (sessions.md section 4). `text`: the session file as read to validate (entries
  /// appended while settling are held in memory, so it is not read again).
  using CopyPoint = std::function<Result<std::optional<std::size_t>>(const EntryTree&)>;
  void fork_into_copy(std::shared_ptr<const FileBytes> text, CopyPoint point,
                      std::function<void(Status)> done);
  /// What the copy's context and counts are when the live session's give them (live_copy).
  struct LiveCopy {
    std::vector<bool> keep;  // which messages of context_ it keeps
    MessageStats stats;
  };
  std::optional<LiveCopy> live_copy(const EntryTree& tree,
                                    const std::vector<std::size_t>& kept) const;
  void take_up_copy(const EntryTree& tree, const std::vector<std::size_t>& kept);
  /// queue_update (sessions.md section 8) with the queues as they are now.
  void emit_queue_update();
  /// A message naming a template or skill, expanded in place (sessions.md 9.3, 10.4).
  void expand_prompt(UserInput& input) const;
  void append_model_state();
  void add_bash_result(protocol::AgentMessage message);

  // retry (agent_retry.cpp)
  RetryDecision retry_decision(const protocol::AgentMessage& last);
  void after_run(const protocol::AgentMessage& last, RetryDecision decision);
  void schedule_retry(const protocol::AgentMessage& failed);
  void end_chain(bool success, const std::string& final_error, std::string_view reason);
  /// `reason` of auto_retry_end (retry.md section 12), written in retry-control mode only.
  std::optional<std::string_view> end_reason(std::string_view reason) const;
  void settle();
  void schedule_drain();
  std::vector<Queued> take(std::deque<Queued>& queue, protocol::QueueMode mode);
  /// Whether anything was queued.
  bool drop_queues();

  ModelRegistry models_;
  std::function<bool(const std::string&)> provider_available_;
  SessionDeps deps_;
  EventSink& events_;
  Settings settings_;
  protocol::Model model_;
  std::string session_id_;
  /// The level sent (the chosen one mapped to what the model takes) and the one the user chose,
  /// which a switch through a model without reasoning keeps (amendments A23).
  protocol::ThinkingLevel thinking_level_;
  protocol::ThinkingLevel chosen_thinking_level_ = protocol::ThinkingLevel::off;
  protocol::QueueMode steering_mode_;
  protocol::QueueMode follow_up_mode_;
  protocol::InterruptMode interrupt_mode_;
  std::string system_prompt_;  // as sent with every request of this session
  PromptLibrary prompts_;      // rescanned with the system prompt

  std::vector<protocol::AgentMessage> context_;
  ToolPreflight* preflight_ = nullptr;
  std::function<std::function<bool(std::string_view, bool)>()> walk_filter_;
  std::function<FileOpener()> file_opener_;
  RunHooks* run_hooks_ = nullptr;
  SlashCommands* commands_ = nullptr;
  std::optional<std::string> stopped_by_hook_;  // the last run that ended
  std::deque<Submission> submissions_;          // waiting for or in their UserPromptSubmit hooks
  std::unique_ptr<Waiting> submission_wait_;    // the first one's hooks
  std::uint64_t submission_generation_ = 0;
  bool submission_starts_run_ = false;           // the first one would start a run
  std::unique_ptr<Waiting> session_start_wait_;  // SessionStart hooks, while they run
  std::uint64_t session_start_generation_ = 0;
  std::string session_context_;           // their texts, after the system prompt
  std::optional<std::string> prompt_id_;  // none at start-up and after a session change
  std::uint64_t give_ups_ = 0;            // runs given up on (StopFailure), counted
  Stats stats_;  // of every message recorded, failed attempts that a retry removed included
  std::unique_ptr<Run> run_;
  std::uint64_t generation_ = 0;
  std::uint64_t partial_version_ = 0;  // see ev::MessageUpdate
  std::uint64_t usage_version_ = 0;    // see ev::MessageUpdate
  SessionSlot slot_ = 0;
  RetryState retry_;
  // Retry control (retry.md sections 11 to 17).
  RetryPolicyValues retry_values_;  // the session policy: kept across sessions, never saved
  std::optional<std::int64_t> run_deadline_at_;
  bool run_deadline_hit_ = false;
  bool retry_control_ = false;  // typed retry fields, from the first retry-control command
  SplitMix64 own_jitter_{0};
  struct Chain {
    std::int64_t started_at = 0;
    std::int64_t max_attempts = 0;
    std::int64_t delay_ms = 0;
    std::int64_t next_attempt_at = 0;
    std::string last_error;
    ErrorInfo error;
  } chain_;
  std::optional<DelayDecision> planned_;  // decided before agent_end, used by schedule_retry
  std::deque<Queued> steering_;
  std::deque<Queued> follow_up_;
  // The calls of the context whose outcome is unknown (call_key), which a repeat asks for.
  std::set<std::string> unknown_calls_;
  std::vector<protocol::AgentMessage> settled_;  // settled_outcomes()
  std::unique_ptr<SessionRecorder> recorder_;
  std::unique_ptr<Compaction> compaction_;
  bool overflow_compacted_ = false;  // this prompt had its one overflow compaction
  std::uint64_t aborts_ = 0;         // abort() calls, to see one made during an emit
  std::map<std::uint64_t, std::unique_ptr<ShellJob>> bash_jobs_;  // by generation
  std::uint64_t bash_generation_ = 0;  // of the current command; older ones are being left
  std::vector<protocol::AgentMessage> pending_bash_;  // finished during a run
  std::vector<Completion> completions_;               // of the work in progress
  bool drain_posted_ = false;
  bool shutting_down_ = false;
  bool queue_taken_ = false;  // take() took queued messages: their delivery writes queue_update
  std::size_t loads_pending_ = 0;  // switch_session loads not answered yet
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  // What the requests spent beyond their messages' usage (request_spend()); shared with the
  // open streams' timers, which may end after a run.
  std::shared_ptr<RequestSpend> spend_ = std::make_shared<RequestSpend>();
};

}  // namespace rebound::session
