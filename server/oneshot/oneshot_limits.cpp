// OneShotLimits (oneshot_front_end.h): the preflight, run hooks and tools one-shot mode puts
// around its session (oneshot.md sections 10 and 11), asking the front end through the limits'
// callbacks.

#include "server/oneshot/oneshot_front_end.h"

namespace rebound::server {

using protocol::Json;

namespace {

// `value` handed to `done` later on the loop, unless the returned wait is dropped first.
template <typename T>
std::unique_ptr<session::Waiting> posted(session::Scheduler& scheduler, T value,
                                         std::function<void(T)> done) {
  auto pending = std::make_shared<std::function<void(T)>>(std::move(done));
  struct Handle : session::Waiting {
    explicit Handle(std::shared_ptr<std::function<void(T)>> d) : done(std::move(d)) {}
    ~Handle() override { *done = nullptr; }
    std::shared_ptr<std::function<void(T)>> done;
  };
  scheduler.post([pending, value = std::move(value)]() mutable {
    if (*pending) (*pending)(std::move(value));
  });
  return std::make_unique<Handle>(pending);
}

// The front end's own verdicts first (a structured output's calls, a limit reached, a run that
// gave up); the preflights behind decide the other calls.
class LimitPreflight : public session::ToolPreflight {
 public:
  LimitPreflight(OneShotLimits& limits, session::ToolPreflight* inner)
      : limits_(limits), inner_(inner) {}
  std::unique_ptr<session::Waiting> check(
      const session::PreflightCall& call,
      std::function<void(session::PreflightVerdict)> done) override {
    if (auto own = limits_.own ? limits_.own(call) : std::nullopt)
      return posted(*limits_.scheduler, std::move(*own), std::move(done));
    if (!inner_) return nullptr;
    // What the preflights behind refuse is a permission denial of the run.
    return inner_->check(call, [this, id = call.id, name = call.name, input = call.input,
                                done = std::move(done)](session::PreflightVerdict v) {
      if (v.refused && limits_.refused) {
        std::string text;
        for (const auto& b : v.refused->content)
          if (b.kind == protocol::ContentBlock::Kind::text) text += b.text;
        limits_.refused(id, name, input, text);
      }
      done(std::move(v));
    });
  }
  std::unique_ptr<session::Waiting> after_call(
      const session::FinishedCall& call,
      std::function<void(session::AfterCallVerdict)> done) override {
    return inner_ ? inner_->after_call(call, std::move(done)) : nullptr;
  }

 private:
  OneShotLimits& limits_;
  session::ToolPreflight* inner_;
};

// A run about to end normally: the front end may re-ask (section 11.2) or end it; otherwise
// the hooks behind (Stop) decide.
class LimitRunHooks : public session::ForwardingRunHooks {
 public:
  LimitRunHooks(OneShotLimits& limits, session::RunHooks* inner)
      : ForwardingRunHooks(inner), limits_(limits) {}
  std::unique_ptr<session::Waiting> stop(const session::StopCall& call,
                                         std::function<void(session::StopVerdict)> done) override {
    const OneShotLimits::AtEnd end = limits_.at_end ? limits_.at_end() : OneShotLimits::AtEnd{};
    if (end.kind == OneShotLimits::AtEnd::Kind::end) return nullptr;
    if (end.kind == OneShotLimits::AtEnd::Kind::pass)
      return ForwardingRunHooks::stop(call, std::move(done));
    session::StopVerdict verdict;
    verdict.user_message = end.message;
    return posted(*limits_.scheduler, std::move(verdict), std::move(done));
  }

 private:
  OneShotLimits& limits_;
};

// `structured_output` (section 11.1): offered, never started (the preflight answers its calls).
class StructuredOutputTool : public session::Tool {
 public:
  StructuredOutputTool(session::Scheduler& scheduler, const Json& schema) : scheduler_(scheduler) {
    definition_.name = kStructuredToolName;
    definition_.description = kStructuredToolDescription;
    definition_.parameters = schema;
    definition_.external = true;  // the whole schema to every provider, arguments unchanged
  }
  const session::ToolDefinition& definition() const override { return definition_; }
  std::unique_ptr<session::ToolCall> start(const Json&, const session::ToolContext&, Progress,
                                           Done done) override {
    scheduler_.post(
        [done = std::move(done)] { done(session::ToolResult::error(kStructuredAlreadyGiven)); });
    return nullptr;
  }

 private:
  session::Scheduler& scheduler_;
  session::ToolDefinition definition_;
};

// The tools behind, one place kept for `structured_output`, which comes last.
class StructuredTools : public session::DynamicTools {
 public:
  StructuredTools(session::DynamicTools* inner, std::shared_ptr<session::Tool> tool)
      : inner_(inner), tool_(std::move(tool)) {}
  std::unique_ptr<session::Waiting> when_settled(std::function<void()> settled) override {
    return inner_ ? inner_->when_settled(std::move(settled)) : nullptr;
  }
  std::vector<std::shared_ptr<session::Tool>> offered(std::size_t room) override {
    std::vector<std::shared_ptr<session::Tool>> out;
    if (room == 0) return out;
    if (inner_) out = inner_->offered(room - 1);
    out.push_back(tool_);
    return out;
  }

 private:
  session::DynamicTools* inner_;
  std::shared_ptr<session::Tool> tool_;
};

}  // namespace

std::unique_ptr<session::ToolPreflight> OneShotLimits::preflight(session::ToolPreflight* inner) {
  return std::make_unique<LimitPreflight>(*this, inner);
}

std::unique_ptr<session::RunHooks> OneShotLimits::run_hooks(session::RunHooks* inner) {
  return std::make_unique<LimitRunHooks>(*this, inner);
}

std::unique_ptr<session::DynamicTools> OneShotLimits::tools(session::DynamicTools* inner,
                                                            const Json& schema) {
  return std::make_unique<StructuredTools>(
      inner, std::make_shared<StructuredOutputTool>(*scheduler, schema));
}

}  // namespace rebound::server
