#include "session/llm/scripted_provider.h"

#include <chrono>
#include <deque>

#include "session/llm/usage_cost.h"

namespace rebound::session::llm {

using protocol::Json;
using Kind = StreamEvent::Kind;

namespace {

struct TimedEvent {
  std::int64_t delay_ms;  // wait before delivering this event
  StreamEvent event;
};

StreamEvent make(Kind kind, std::string text = {}) {
  StreamEvent e{};
  e.kind = kind;
  e.text = std::move(text);
  return e;
}

// Plays a list of events with their delays; cancel() stops it for good.
class Playback : public StreamHandle, public std::enable_shared_from_this<Playback> {
 public:
  Playback(Scheduler& scheduler, std::deque<TimedEvent> events, StreamHandler handler)
      : timer_(scheduler.make_timer()), events_(std::move(events)), handler_(std::move(handler)) {}

  void begin(Scheduler& scheduler) {
    std::weak_ptr<Playback> weak = shared_from_this();
    scheduler.post([weak] {
      if (auto self = weak.lock()) self->advance(true);
    });
  }

  void cancel() override {
    cancelled_ = true;
    timer_->cancel();
    events_.clear();
  }

 private:
  // Delivers every event that is due now; waits with the timer for the next one that has a delay.
  void advance(bool first_due_now) {
    auto keep_alive = shared_from_this();
    bool due = first_due_now && (events_.empty() || events_.front().delay_ms == 0);
    while (!cancelled_ && !events_.empty()) {
      if (!due && events_.front().delay_ms > 0) {
        std::weak_ptr<Playback> weak = keep_alive;
        timer_->start(std::chrono::milliseconds(events_.front().delay_ms), [weak] {
          if (auto self = weak.lock()) self->advance(false);
        });
        events_.front().delay_ms = 0;
        return;
      }
      due = false;
      StreamEvent e = std::move(events_.front().event);
      events_.pop_front();
      handler_(std::move(e));
    }
  }

  std::unique_ptr<Timer> timer_;
  std::deque<TimedEvent> events_;
  StreamHandler handler_;
  bool cancelled_ = false;
};

// Keeps the playback alive as long as the session holds the handle.
class PlaybackHandle : public StreamHandle {
 public:
  explicit PlaybackHandle(std::shared_ptr<Playback> p) : playback_(std::move(p)) {}
  ~PlaybackHandle() override { playback_->cancel(); }
  void cancel() override { playback_->cancel(); }

 private:
  std::shared_ptr<Playback> playback_;
};

std::string last_user_text(const LlmRequest& request) {
  for (auto it = request.messages.rbegin(); it != request.messages.rend(); ++it) {
    if (it->role == protocol::Role::user) return it->text();
  }
  return {};
}

}  // namespace

ScriptedProvider::ScriptedProvider(Scheduler& scheduler,
                                   std::optional<std::vector<ScriptStep>> script, RequestLog log)
    : scheduler_(scheduler), script_(std::move(script)), log_(std::move(log)) {}

ScriptStep ScriptedProvider::next_step(const LlmRequest& request) {
  const std::size_t index = requests_++;
  if (script_ && !script_->empty()) {
    return (*script_)[std::min(index, script_->size() - 1)];
  }
  ScriptStep echo;
  echo.text = "echo: " + last_user_text(request);
  return echo;
}

std::unique_ptr<StreamHandle> ScriptedProvider::stream(const LlmRequest& request,
                                                       StreamHandler handler) {
  const bool echo = !script_;
  ScriptStep step = next_step(request);
  if (log_) {
    Json line = Json::object();
    line["t"] = scheduler_.now_epoch_ms();
    line["model"] = request.model.id;
    line["systemPrompt"] = request.system_prompt;
    Json tools = Json::array();
    for (const auto& t : request.tools)
      tools.push_back(t.name);
    line["tools"] = std::move(tools);
    line["messages"] = protocol::to_json(request.messages);
    log_(line);
  }

  std::deque<TimedEvent> events;
  std::int64_t pending_delay = step.delay_ms;
  auto push = [&](StreamEvent e, std::int64_t extra_delay = 0) {
    events.push_back({pending_delay + extra_delay, std::move(e)});
    pending_delay = 0;
  };
  if (!step.hang) {
    if (step.thinking) {
      push(make(Kind::thinking_start));
      push(make(Kind::thinking_delta, *step.thinking));
      push(make(Kind::thinking_end));
    }
    if (step.text && !step.text->empty()) {
      const auto pieces =
          echo ? split_words(*step.text) : split_into_chunks(*step.text, step.chunks);
      push(make(Kind::text_start));
      for (std::size_t i = 0; i < pieces.size(); ++i) {
        push(make(Kind::text_delta, pieces[i]), i == 0 ? 0 : step.chunk_delay_ms);
      }
      push(make(Kind::text_end));
    }
    if (step.usage) {
      StreamEvent u = make(Kind::usage);
      u.usage = *step.usage;
      apply_cost(u.usage, request.model);
      push(std::move(u));
    }
    if (step.error) {
      push(make(Kind::error, *step.error));
    } else {
      for (const auto& call : step.tool_calls) {
        StreamEvent start = make(Kind::toolcall_start);
        start.tool_id = "call_" + std::to_string(++tool_call_counter_);
        start.tool_name = call.name;
        push(std::move(start));
        push(make(Kind::toolcall_delta, call.arguments.dump()));
        StreamEvent end = make(Kind::toolcall_end);
        end.arguments = call.arguments;
        push(std::move(end));
      }
      StreamEvent done = make(Kind::done);
      done.stop_reason = step.stop_reason.value_or(
          step.tool_calls.empty() ? protocol::StopReason::stop : protocol::StopReason::tool_use);
      push(std::move(done));
    }
  }
  auto playback = std::make_shared<Playback>(scheduler_, std::move(events), std::move(handler));
  playback->begin(scheduler_);
  return std::make_unique<PlaybackHandle>(std::move(playback));
}

}  // namespace rebound::session::llm
