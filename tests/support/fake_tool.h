#pragma once
// A Tool whose calls the test finishes by hand: it records each call's arguments and keeps its
// progress and completion callbacks; cancel() is recorded and, when `finish_on_cancel`, posts
// the abort result the way a real tool's completion arrives (later, on the loop).

#include <memory>
#include <string>
#include <vector>

#include "session/scheduler.h"
#include "session/tool.h"

namespace rebound::testing {

class FakeTool : public session::Tool {
 public:
  struct Call {
    protocol::Json args;
    Progress progress;
    Done done;
    bool cancelled = false;
    bool destroyed = false;
  };

  FakeTool(std::string name, session::Scheduler& scheduler) : scheduler_(scheduler) {
    definition_.name = std::move(name);
    definition_.description = "A test tool";
    definition_.parameters = protocol::Json{{"type", "object"}};
  }

  const session::ToolDefinition& definition() const override { return definition_; }

  std::unique_ptr<session::ToolCall> start(const protocol::Json& args, const session::ToolContext&,
                                           Progress progress, Done done) override {
    auto call = std::make_shared<Call>(Call{args, std::move(progress), std::move(done)});
    calls.push_back(call);
    return std::make_unique<Handle>(call, *this);
  }

  /// Finishes call `i` with a text result.
  void finish(std::size_t i, std::string text, bool is_error = false) {
    session::ToolResult r;
    r.content.push_back(protocol::ContentBlock::make_text(std::move(text)));
    r.is_error = is_error;
    calls.at(i)->done(std::move(r));
  }

  std::vector<std::shared_ptr<Call>> calls;
  bool finish_on_cancel = true;

 private:
  class Handle : public session::ToolCall {
   public:
    Handle(std::shared_ptr<Call> call, FakeTool& tool) : call_(std::move(call)), tool_(tool) {}
    ~Handle() override { call_->destroyed = true; }
    void cancel() override {
      call_->cancelled = true;
      if (!tool_.finish_on_cancel) return;
      auto call = call_;
      tool_.scheduler_.post(
          [call] { call->done(session::ToolResult::error("Operation aborted")); });
    }

   private:
    std::shared_ptr<Call> call_;
    FakeTool& tool_;
  };

  session::ToolDefinition definition_;
  session::Scheduler& scheduler_;
};

}  // namespace rebound::testing
