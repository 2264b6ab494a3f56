#include "session/agent_session.h"

#include <spdlog/spdlog.h>

#include "session/agent_run.h"
#include "session/session_id.h"

namespace rebound::session {

using protocol::Json;
using protocol::ThinkingLevel;

namespace {

// What may wait in the steering and follow-up queues together.
constexpr std::size_t kMaxQueued = 100;
constexpr std::size_t kMaxQueuedBytes = 4 * 1024 * 1024;

constexpr const char* kBusy =
    "Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue "
    "the message.";

Settings load_settings(SettingsStore& store) {
  std::vector<std::string> warnings;
  Settings s = settings_from_json(store.load(), warnings);
  for (const auto& w : warnings)
    spdlog::warn("{}", w);
  return s;
}

}  // namespace

AgentSession::AgentSession(SessionOptions options, ModelRegistry models, SessionDeps deps)
    : models_(std::move(models)),
      provider_available_(std::move(options.provider_available)),
      deps_(deps),
      events_(deps.events),
      settings_(load_settings(deps.settings)),
      model_(std::move(options.model)),
      session_id_(std::move(options.session_id)),
      thinking_level_(ThinkingLevel::off),
      steering_mode_(settings_.steering_mode),
      follow_up_mode_(settings_.follow_up_mode),
      interrupt_mode_(settings_.interrupt_mode),
      slot_(options.slot),
      retry_(deps.scheduler.make_timer()) {
  chosen_thinking_level_ = settings_.default_thinking_level;
  thinking_level_ = clamped_thinking_level(chosen_thinking_level_);
  if (options.resume && options.session_file) {
    take_up(*options.session_file, std::move(*options.resume), options.restore_model);
  } else {
    start_new_recorder(options.session_file, std::nullopt);
  }
  refresh_system_prompt();
}

void AgentSession::start_session_hooks(std::string_view source) {
  session_context_.clear();
  session_start_wait_.reset();
  if (!run_hooks_) return;
  std::weak_ptr<bool> alive = alive_;
  const std::uint64_t generation = ++session_start_generation_;
  session_start_wait_ = run_hooks_->session_start(
      source, model_.id, [this, alive, generation](std::vector<std::string> texts) {
        if (alive.expired() || generation != session_start_generation_ || !session_start_wait_)
          return;
        // The handle may be inside its own completion now: it goes once this stack is done.
        deps_.scheduler.post([done = std::shared_ptr<Waiting>(std::move(session_start_wait_))] {});
        for (const auto& t : texts)
          session_context_ += "\n\n" + t;
        // A request that waited for them goes out now.
        if (run_ && run_->held_for_session_start) {
          run_->held_for_session_start = false;
          request_when_started(run_->generation);
        }
      });
}

void AgentSession::refresh_system_prompt() {
  if (deps_.scan_prompts) {
    std::vector<std::string> warnings;
    prompts_ = deps_.scan_prompts(settings_, warnings);
    for (const auto& w : warnings)
      spdlog::warn("{}", w);
  }
  system_prompt_ = deps_.build_system_prompt
                       ? deps_.build_system_prompt(settings_.system_prompt, prompts_.skills_block())
                       : settings_.system_prompt;
}

AgentSession::~AgentSession() {
  *alive_ = false;
  drop_submissions();  // each is answered once, also at shutdown
}

protocol::RpcSessionState AgentSession::state() const {
  protocol::RpcSessionState s;
  s.model = model_;
  s.thinking_level = thinking_level_;
  s.is_streaming = is_streaming() || (!submissions_.empty() && submission_starts_run_);
  s.is_compacting = compaction_ != nullptr;
  s.steering_mode = steering_mode_;
  s.follow_up_mode = follow_up_mode_;
  s.interrupt_mode = interrupt_mode_;
  s.session_file = recorder_->path();
  s.session_id = session_id_;
  s.session_name = recorder_->name();
  s.auto_compaction_enabled = settings_.compaction.enabled;
  s.message_count = static_cast<std::int64_t>(context_.size());
  s.queued_message_count = static_cast<std::int64_t>(queued_count());
  return s;
}

protocol::AgentMessage AgentSession::user_message(const UserInput& input) const {
  protocol::AgentMessage m;
  m.role = protocol::Role::user;
  m.content.push_back(protocol::ContentBlock::make_text(input.text));
  for (const auto& image : input.images) {
    m.content.push_back(protocol::ContentBlock::make_image(image.data, image.mime_type));
  }
  m.timestamp = deps_.scheduler.now_epoch_ms();
  return m;
}

Status AgentSession::prompt(UserInput input, std::optional<protocol::StreamingBehavior> behavior,
                            const std::function<void()>& accepted, Completion done) {
  const bool waiting = retry_.in_backoff() || compaction_;
  if (run_ && !waiting && !behavior) return Error{ErrorKind::busy, kBusy};
  Queued q{std::move(input), std::move(done)};
  if (waiting) {
    // During a backoff or a compaction every new message waits as a follow-up (protocol.md
    // section 2).
    follow_up_.push_back(std::move(q));
  } else if (run_) {
    (*behavior == protocol::StreamingBehavior::steer ? steering_ : follow_up_)
        .push_back(std::move(q));
  } else if (queued_count() > 0) {
    // Messages are already waiting for the idle session: keep arrival order.
    follow_up_.push_back(std::move(q));
    schedule_drain();
  } else {
    accepted();
    std::vector<Queued> inputs;
    inputs.push_back(std::move(q));
    start_run(std::move(inputs));
    return ok();
  }
  emit_queue_update();  // before the response (sessions.md section 8)
  accepted();
  return ok();
}

void AgentSession::submit(UserInput input, SubmitKind kind,
                          std::optional<protocol::StreamingBehavior> behavior,
                          std::function<void(Status)> answered, Completion done) {
  Submission submission{std::move(input), kind, behavior, std::move(answered), std::move(done)};
  submission.typed = submission.input.text;
  if (!commands_) {
    expand_prompt(submission.input);
    return queue_submission(std::move(submission));
  }
  const std::string text = submission.input.text;
  auto held = std::make_shared<Submission>(std::move(submission));
  // An extension's command first; else a template or skill it names (sessions.md 9, 10, 11).
  route_command(text, kind, [this, held](std::optional<Status> command) {
    if (command) return held->answered(std::move(*command));
    expand_prompt(held->input);
    queue_submission(std::move(*held));
  });
}

void AgentSession::route_command(const std::string& text, SubmitKind kind,
                                 std::function<void(std::optional<Status>)> then) {
  const auto call = commands_ ? parse_slash_call(text) : std::nullopt;
  if (!call) return then(std::nullopt);
  std::weak_ptr<bool> alive = alive_;
  // A prompt that may name a command of an extension still starting waits for it (extensions.md
  // section 4.1), bounded by its start-up timeout.
  if (kind == SubmitKind::prompt && !commands_->known()) {
    commands_->when_known([this, alive, text, kind, then = std::move(then)]() mutable {
      if (!alive.expired()) route_command(text, kind, std::move(then));
    });
    return;
  }
  if (!commands_->has(call->name)) return then(std::nullopt);
  if (kind != SubmitKind::prompt)
    return then(Status(Error{ErrorKind::failed, queued_command_error(call->name)}));
  // Whatever the session is doing: no hook, user message or LLM request (section 4.6).
  commands_->run(call->name, call->args, [alive, then = std::move(then)](Status status) {
    if (!alive.expired()) then(std::move(status));
  });
}

void AgentSession::queue_submission(Submission s) {
  // A prompt that could only be refused as busy is refused before any hook runs; a message
  // whose hooks are running counts as a run (extensions.md section 5.1).
  const bool waiting = retry_.in_backoff() || compaction_;
  if (s.kind == SubmitKind::prompt && !s.behavior && !waiting && (run_ || !submissions_.empty())) {
    s.answered(Error{ErrorKind::busy, kBusy});
    return;
  }
  if (s.input.prompt_id.empty()) s.input.prompt_id = new_session_id();  // a fresh UUID v4
  submissions_.push_back(std::move(s));
  if (submissions_.size() == 1) judge_submissions();
}

void AgentSession::judge_submissions() {
  std::weak_ptr<bool> alive = alive_;
  while (!submissions_.empty()) {
    if (run_hooks_) {
      const bool waiting = retry_.in_backoff() || compaction_;
      submission_starts_run_ = !run_ && !waiting && queued_count() == 0;
      const std::uint64_t generation = ++submission_generation_;
      const UserInput& input = submissions_.front().input;
      const Submission& front = submissions_.front();
      submission_wait_ = run_hooks_->prompt_submitted(
          front.typed.empty() ? input.text : front.typed, input.prompt_id,
          [this, alive, generation](PromptVerdict verdict) {
            if (!alive.expired()) submission_judged(generation, std::move(verdict));
          });
      if (submission_wait_) return;
    }
    Submission s = std::move(submissions_.front());
    submissions_.pop_front();
    deliver(std::move(s));
  }
}

void AgentSession::submission_judged(std::uint64_t generation, PromptVerdict verdict) {
  if (generation != submission_generation_ || !submission_wait_ || submissions_.empty()) return;
  // The handle may be inside its own completion now: it goes once this call stack is done.
  deps_.scheduler.post([done = std::shared_ptr<Waiting>(std::move(submission_wait_))] {});
  Submission s = std::move(submissions_.front());
  submissions_.pop_front();
  if (verdict.refused) {
    s.answered(Error{ErrorKind::failed, std::move(*verdict.refused)});
  } else {
    s.input.context = std::move(verdict.context);
    deliver(std::move(s));
  }
  judge_submissions();
}

void AgentSession::deliver(Submission s) {
  // The queue is bounded (issue 50: each queue_update carries every queued text, so an
  // unbounded queue made the output grow with its square).
  const bool waiting = retry_.in_backoff() || compaction_;
  const bool queues = waiting || queued_count() > 0 ||
                      (run_ && (s.kind != SubmitKind::prompt || s.behavior.has_value()));
  if (queues) {
    std::size_t bytes = s.input.text.size();
    for (const auto* queue : {&steering_, &follow_up_})
      for (const auto& q : *queue)
        bytes += q.input.text.size();
    if (queued_count() >= kMaxQueued || bytes > kMaxQueuedBytes) {
      s.answered(Error{ErrorKind::failed, "Queue is full: at most " + std::to_string(kMaxQueued) +
                                              " messages and " +
                                              std::to_string(kMaxQueuedBytes / (1024 * 1024)) +
                                              " MiB of text may wait"});
      return;
    }
  }
  bool answered = false;
  const auto accepted = [&] {
    answered = true;
    s.answered(ok());
  };
  switch (s.kind) {
    case SubmitKind::prompt: {
      auto status = prompt(std::move(s.input), s.behavior, accepted, std::move(s.done));
      if (!answered) s.answered(std::move(status));
      return;
    }
    case SubmitKind::steer:
      steer(std::move(s.input), accepted);
      return;
    case SubmitKind::follow_up:
      follow_up(std::move(s.input), accepted);
      return;
  }
}

void AgentSession::drop_submissions() {
  // A message whose hooks are running is dropped, and so is every one behind it.
  submission_wait_.reset();
  ++submission_generation_;
  auto dropped = std::move(submissions_);
  submissions_.clear();
  for (auto& s : dropped)
    s.answered(Error{ErrorKind::failed, "Operation aborted"});
}

void AgentSession::steer(UserInput input, const std::function<void()>& accepted) {
  if (run_) {
    steering_.push_back({std::move(input), {}});
    emit_queue_update();
    accepted();
    return;
  }
  prompt(std::move(input), protocol::StreamingBehavior::steer, accepted);
}

void AgentSession::follow_up(UserInput input, const std::function<void()>& accepted) {
  prompt(std::move(input), protocol::StreamingBehavior::follow_up, accepted);
}

void AgentSession::abort(Completion done) {
  ++aborts_;
  drop_submissions();
  abort_retry();
  if (run_) {
    // The dropped queue's queue_update follows the aborted run's events (sessions.md 8).
    const bool queued = queued_count() > 0;
    std::weak_ptr<bool> alive = alive_;
    Completion after = [this, alive, queued, done] {
      if (!alive.expired() && queued && !shutting_down_) emit(ev::QueueUpdate{{}, {}});
      if (done) done();
    };
    if (!abort_run(after)) {
      drop_queues();  // `after` runs when the running tool calls have ended
      return;
    }
  }
  if (compaction_) {
    abort_compaction();
    settle();
  }
  if (drop_queues() && !shutting_down_) emit_queue_update();
  if (done) done();
}

void AgentSession::set_auto_retry(bool enabled, bool persist) {
  settings_.retry.enabled = enabled;
  if (persist) deps_.settings.persist(Json{{"retry", Json{{"enabled", enabled}}}});
}

void AgentSession::set_auto_compaction(bool enabled) {
  settings_.compaction.enabled = enabled;
  deps_.settings.persist(Json{{"compaction", Json{{"enabled", enabled}}}});
}

std::vector<ThinkingLevel> AgentSession::available_thinking_levels() const {
  if (!model_.reasoning) return {ThinkingLevel::off};
  return protocol::all_thinking_levels();
}

ThinkingLevel AgentSession::clamped_thinking_level(ThinkingLevel wanted) const {
  const auto levels = available_thinking_levels();
  ThinkingLevel effective = levels.front();
  // The highest offered level not above the one wanted.
  for (auto offered : levels) {
    if (offered <= wanted) effective = offered;
  }
  return effective;
}

void AgentSession::set_thinking_level(ThinkingLevel level) {
  // The chosen level is kept as asked; the model is sent what it takes (amendments A23).
  thinking_level_ = clamped_thinking_level(level);
  if (level == chosen_thinking_level_) return;
  chosen_thinking_level_ = level;
  recorder_->append(thinking_level_change_entry(level));
  deps_.settings.persist(Json{{"defaultThinkingLevel", std::string(protocol::to_string(level))}});
}

std::optional<std::string> AgentSession::last_assistant_text() const {
  for (auto it = context_.rbegin(); it != context_.rend(); ++it) {
    if (!it->is_assistant()) continue;
    std::string text = it->text();
    if (!text.empty()) return text;
  }
  return std::nullopt;
}

std::optional<ThinkingLevel> AgentSession::cycle_thinking_level() {
  const auto levels = available_thinking_levels();
  if (levels.size() <= 1) return std::nullopt;
  std::size_t i = 0;
  while (i < levels.size() && levels[i] != thinking_level_)
    ++i;
  set_thinking_level(levels[(i + 1) % levels.size()]);
  return thinking_level_;
}

std::vector<protocol::Model> AgentSession::available_models() const {
  std::vector<protocol::Model> out;
  for (const auto& m : models_.all()) {
    if (!provider_available_ || provider_available_(m.provider)) out.push_back(m);
  }
  return out;
}

void AgentSession::use_model(const protocol::Model& model) {
  model_ = model;
  recorder_->append(model_change_entry(model.provider, model.id));
  deps_.settings.persist(Json{{"defaultProvider", model.provider}, {"defaultModel", model.id}});
  // The chosen level stays; the new model is sent what it takes of it, and a later model that
  // reasons gets it back (providers.md section 7.4, amendments A23).
  thinking_level_ = clamped_thinking_level(chosen_thinking_level_);
}

Result<protocol::Model> AgentSession::set_model(const std::string& provider,
                                                const std::string& model_id) {
  const protocol::Model* model = models_.find(provider, model_id);
  if (!model) return Error{ErrorKind::not_found, "Model not found: " + provider + "/" + model_id};
  if (provider_available_ && !provider_available_(provider)) {
    return Error{ErrorKind::failed, "No API key for provider " + provider};
  }
  use_model(*model);
  return model_;
}

std::optional<ModelCycle> AgentSession::cycle_model() {
  const auto models = available_models();
  if (models.size() <= 1) return std::nullopt;
  std::size_t i = 0;
  while (i < models.size() &&
         !(models[i].provider == model_.provider && models[i].id == model_.id)) {
    ++i;
  }
  use_model(models[(i + 1) % models.size()]);
  return ModelCycle{model_, thinking_level_};
}

}  // namespace rebound::session
