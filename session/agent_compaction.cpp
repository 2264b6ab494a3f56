// AgentSession: compaction (runtime.md section 5), where a context overflow goes instead of a
// retry, the threshold check after a successful run, and `compact` on demand. A compaction is
// one summary request to the current provider and model; it is not a run (no agent events) and
// never retried.

#include <nlohmann/json.hpp>

#include "session/agent_run.h"
#include "session/compaction.h"
#include "session/retry_policy.h"

namespace rebound::session {

using protocol::AgentMessage;
using protocol::Json;
using Kind = llm::StreamEvent::Kind;

namespace {

constexpr const char* kOnce =
    "Context overflow recovery failed after one compact-and-retry attempt. Try reducing context "
    "or switching to a larger-context model.";

}  // namespace

bool AgentSession::compact_after_run(const AgentMessage& last) {
  if (!settings_.compaction.enabled) return false;
  if (is_context_overflow(last, model_.context_window)) {
    emit(ev::AutoCompactionStart{CompactionReason::overflow});
    if (overflow_compacted_) {
      emit(ev::AutoCompactionEnd{nullptr, false, false, kOnce});
      give_up("context_overflow", kOnce);
      return false;
    }
    overflow_compacted_ = true;
    // The overflowing answer leaves the runtime context; the session file keeps it.
    if (!context_.empty() && context_.back().is_assistant()) context_.pop_back();
    start_compaction(CompactionReason::overflow, std::nullopt, {});
    return true;
  }
  const std::int64_t limit = model_.context_window - settings_.compaction.reserve_tokens;
  if (!last.failed() && estimate_context_tokens(context_) > limit) {
    emit(ev::AutoCompactionStart{CompactionReason::threshold});
    start_compaction(CompactionReason::threshold, std::nullopt, {});
    return true;
  }
  return false;
}

void AgentSession::compact(std::optional<std::string> custom_instructions, CompactDone done) {
  if (compaction_) {
    done(Error{ErrorKind::busy, "Compaction already in progress"});
    return;
  }
  abort_retry();
  force_end_tool_batch();
  if (run_) abort_run();
  if (compaction_) abort_compaction();  // an automatic one the aborted run could not start
  if (context_.empty()) {
    done(Error{ErrorKind::failed, "Nothing to compact (session too small)"});
    return;
  }
  start_compaction(CompactionReason::manual, custom_instructions, std::move(done));
}

void AgentSession::start_compaction(CompactionReason reason,
                                    const std::optional<std::string>& custom, CompactDone done) {
  if (run_hooks_) run_hooks_->idle_ended();
  auto c = std::make_unique<Compaction>();
  c->generation = ++generation_;
  c->reason = reason;
  c->done = std::move(done);
  c->tokens_before = estimate_context_tokens(context_);
  c->cut = find_cut(context_, settings_.compaction.keep_recent_tokens);
  const std::uint64_t generation = c->generation;
  compaction_ = std::move(c);
  if (!run_hooks_) return request_summary(generation, custom);
  // PreCompact hooks first (extensions.md section 5.4): they may refuse it or add instructions.
  std::weak_ptr<bool> alive = alive_;
  compaction_->hooks = run_hooks_->pre_compact(
      reason == CompactionReason::manual ? "manual" : "auto", custom,
      [this, alive, generation, custom](PreCompactVerdict verdict) {
        if (alive.expired() || !compaction_ || compaction_->generation != generation) return;
        // The handle may be inside its own completion now: it goes once this stack is done.
        deps_.scheduler.post([done = std::shared_ptr<Waiting>(std::move(compaction_->hooks))] {});
        if (verdict.refused) return fail_compaction(*verdict.refused);
        if (verdict.instructions.empty()) return request_summary(generation, custom);
        std::string joined = custom.value_or("");
        for (const auto& text : verdict.instructions)
          joined += (joined.empty() ? "" : "\n\n") + text;
        request_summary(generation, joined);
      });
  if (!compaction_->hooks) request_summary(generation, custom);
}

void AgentSession::request_summary(std::uint64_t generation,
                                   const std::optional<std::string>& custom) {
  if (!compaction_ || compaction_->generation != generation) return;
  const std::vector<AgentMessage> older(
      context_.begin(), context_.begin() + static_cast<std::ptrdiff_t>(compaction_->cut));
  const llm::LlmRequest request = summary_request(model_, older, custom, session_id_);
  std::weak_ptr<bool> alive = alive_;
  auto stream = timed_stream(request, [this, alive, generation](llm::StreamEvent&& e) {
    if (!alive.expired()) on_compaction_event(generation, std::move(e));
  });
  if (compaction_ && compaction_->generation == generation) compaction_->stream = std::move(stream);
}

void AgentSession::on_compaction_event(std::uint64_t generation, llm::StreamEvent e) {
  if (!compaction_ || compaction_->generation != generation) return;  // stale
  switch (e.kind) {
    case Kind::text_delta:
      compaction_->summary += e.text;
      return;
    case Kind::usage:
      // Spent, whether the summary then succeeds or not (oneshot.md section 6). A provider
      // reports the running totals; what grew since the last report is added.
      spend_->summaries += e.usage - compaction_->usage;
      compaction_->usage = e.usage;
      return;
    case Kind::done:
      if (compaction_->summary.empty()) {
        fail_compaction("the model returned an empty summary");
      } else {
        complete_compaction();
      }
      return;
    case Kind::error:
      fail_compaction(e.text.empty() ? "Unknown provider error" : e.text);
      return;
    default:
      return;  // thinking and tool calls are not part of a summary
  }
}

void AgentSession::complete_compaction() {
  std::unique_ptr<Compaction> c = std::move(compaction_);
  c->stream.reset();
  const std::size_t cut = std::min(c->cut, context_.size());
  const std::string first_kept = cut < context_.size() ? context_[cut].entry_id : std::string();
  recorder_->append(compaction_entry(c->summary, first_kept, c->tokens_before,
                                     std::string(compaction_reason_name(c->reason))));
  AgentMessage summary;
  summary.role = protocol::Role::compaction_summary;
  summary.summary = c->summary;
  summary.tokens_before = c->tokens_before;
  // The entry's own time, so that a resumed session rebuilds the very same message.
  summary.timestamp =
      parse_iso_timestamp(recorder_->entries().back()["timestamp"].get<std::string>())
          .value_or(deps_.scheduler.now_epoch_ms());
  std::vector<AgentMessage> next;
  next.push_back(std::move(summary));
  next.insert(next.end(), context_.begin() + static_cast<std::ptrdiff_t>(cut), context_.end());
  context_ = std::move(next);

  CompactionResult result{c->summary, first_kept, c->tokens_before};
  if (c->reason == CompactionReason::manual) {
    c->done(std::move(result));
    settle();
    return;
  }
  const bool resume = c->reason == CompactionReason::overflow;
  const std::uint64_t aborts = aborts_;
  emit(ev::AutoCompactionEnd{&result, false, resume, std::nullopt});
  // An observer that aborted on this event (a one-shot budget stop) ends the work here.
  if (resume && aborts == aborts_) {
    continue_run();
  } else {
    settle();
  }
}

void AgentSession::fail_compaction(const std::string& reason) {
  std::unique_ptr<Compaction> c = std::move(compaction_);
  c->stream.reset();
  if (c->reason == CompactionReason::manual) {
    c->done(Error{ErrorKind::failed, reason});
  } else {
    const std::string prefix = c->reason == CompactionReason::overflow
                                   ? "Context overflow recovery failed: "
                                   : "Auto-compaction failed: ";
    const std::string message = prefix + reason;
    emit(ev::AutoCompactionEnd{nullptr, false, false, message});
    if (c->reason == CompactionReason::overflow) give_up("context_overflow", message);
  }
  settle();
}

void AgentSession::abort_compaction() {
  std::unique_ptr<Compaction> c = std::move(compaction_);
  if (!c) return;
  c->stream.reset();
  if (c->reason == CompactionReason::manual) {
    c->done(Error{ErrorKind::cancelled, "Compaction aborted"});
  } else {
    emit(ev::AutoCompactionEnd{nullptr, true, false, std::nullopt});
  }
}

}  // namespace rebound::session
