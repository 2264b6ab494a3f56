#include "server/acp/acp_gate.h"
#include "server/acp/acp_gate_call.h"

#include <cerrno>
#include <utility>

#include "server/acp/acp_translate.h"
#include "tools/builtin_tools.h"
#include "tools/definitions.h"
#include "tools/file_io.h"
#include "tools/paths.h"
#include "tools/tool_args.h"

namespace rebound::server::acp {

using session::ToolResult;

// A tool as acp mode runs it: a built-in one by reference, an MCP one held as long as the gate.
class ToolGate::GatedTool : public session::Tool {
 public:
  GatedTool(ToolGate& gate, session::SessionSlot slot, session::Tool& inner)
      : gate_(gate), slot_(slot), inner_(inner) {}
  GatedTool(ToolGate& gate, session::SessionSlot slot, std::shared_ptr<session::Tool> inner)
      : gate_(gate), slot_(slot), inner_(*inner), keep_(std::move(inner)) {}
  bool read_only_hint() const override { return inner_.read_only_hint(); }
  const session::ToolDefinition& definition() const override { return inner_.definition(); }
  void prepare_arguments(Json& args) const override { inner_.prepare_arguments(args); }
  std::optional<SpooledOutput> spooled_output(const std::string& spool_file) const override {
    return inner_.spooled_output(spool_file);
  }
  std::unique_ptr<session::ToolCall> start(const Json& args, const session::ToolContext& context,
                                           Progress progress, Done done) override {
    return gate_.start_call(slot_, inner_, args, context, std::move(progress), std::move(done));
  }

 private:
  ToolGate& gate_;
  session::SessionSlot slot_;
  session::Tool& inner_;
  std::shared_ptr<session::Tool> keep_;
};

class ToolGate::GatedCall : public session::ToolCall {
 public:
  GatedCall(ToolGate& gate, Call state) : gate_(gate), state_(std::move(state)) {}
  ~GatedCall() override {
    state_->dead = true;
    state_->inner.reset();
  }
  void cancel() override {
    CallState& c = *state_;
    if (c.finished || c.cancelled) return;
    c.cancelled = true;
    if (c.inner) {
      c.inner->cancel();
      return;
    }
    // A file request (through the client or local) is abandoned (its answer is ignored). The
    // completion comes on a later loop turn.
    c.waiting = false;
    std::weak_ptr<bool> alive = gate_.alive_;
    gate_.env_.scheduler.post([&gate = gate_, alive, state = state_] {
      if (!alive.expired()) gate.finish(state, ToolResult::error("Operation aborted"));
    });
  }

 private:
  ToolGate& gate_;
  Call state_;
};

std::unique_ptr<session::Waiting> GatedMcpTools::when_settled(std::function<void()> settled) {
  return inner_ ? inner_->when_settled(std::move(settled)) : nullptr;
}

std::vector<std::shared_ptr<session::Tool>> GatedMcpTools::offered(std::size_t room) {
  std::vector<std::shared_ptr<session::Tool>> out;
  if (!inner_) return out;
  for (auto& tool : inner_->offered(room)) {
    out.push_back(std::make_shared<ToolGate::GatedTool>(gate_, slot_, std::move(tool)));
  }
  return out;
}

ToolGate::ToolGate(Env env) : env_(std::move(env)) {}

ToolGate::~ToolGate() {
  *alive_ = false;
}

std::unique_ptr<session::ToolRegistry> ToolGate::gate_tools(const session::ToolRegistry& base,
                                                            session::SessionSlot slot) {
  auto gated = std::make_unique<session::ToolRegistry>();
  for (const auto& definition : base.definitions()) {
    if (session::Tool* tool = base.find(definition.name))
      gated->add(std::make_shared<GatedTool>(*this, slot, *tool));
  }
  return gated;
}

ToolState* ToolGate::state_of(const Call& call) {
  OpenSession* s = env_.find(call->slot);
  return s ? s->tool(call->call_id) : nullptr;
}

std::unique_ptr<session::ToolCall> ToolGate::start_call(session::SessionSlot slot,
                                                        session::Tool& inner, const Json& args,
                                                        const session::ToolContext& context,
                                                        session::Tool::Progress progress,
                                                        session::Tool::Done done) {
  auto call = std::make_shared<CallState>();
  call->slot = slot;
  call->call_id = context.tool_call_id;
  call->name = inner.definition().name;
  call->inner_tool = &inner;
  call->args = args;
  call->context = context;
  call->progress = std::move(progress);
  call->done = std::move(done);
  auto handle = std::make_unique<GatedCall>(*this, call);
  OpenSession* s = env_.find(slot);
  if (!s) {
    run(call);
    return handle;
  }
  call->session_id = s->id;
  // The policy allowed the call (its preflight is over): only now is it in progress, so that a
  // refused call goes from pending to failed (acp.md section 7.3).
  if (s->turn) env_.update(*s, in_progress_update(call->call_id));
  prepare(call);
  return handle;
}

void ToolGate::prepare(const Call& call) {
  // edit and write: the file before the call, for the diff (section 7.2), read before it runs.
  ToolState* state = state_of(call);
  if (!state || !state->info.edits_file) return run(call);
  read_local(call, state->info.path, [this, call](std::optional<std::string> text, int) {
    if (ToolState* st = state_of(call)) st->before = std::move(text);
    run(call);
  });
}

void ToolGate::run(const Call& call) {
  if (call->dead || call->finished) return;
  const std::string& name = call->name;
  const ClientCaps& caps = env_.caps;
  if (name == "read" && caps.fs_read) {
    // Images are read locally (the client's text read cannot carry them).
    const std::string abs =
        tools::resolve_path(tools::string_arg(call->args, "path"), call->context.cwd);
    if (!tools::is_regular_image_file(abs)) return client_read(call);
  } else if (name == "edit" && (caps.fs_read || caps.fs_write)) {
    return client_edit(call);
  } else if (name == "write" && caps.fs_write) {
    return client_write(call);
  }
  run_locally(call);
}

void ToolGate::run_locally(const Call& call) {
  std::weak_ptr<CallState> weak = call;
  call->inner = call->inner_tool->start(
      call->args, call->context,
      [weak](ToolResult partial) {
        if (auto c = weak.lock(); c && !c->dead && !c->finished) c->progress(std::move(partial));
      },
      [this, weak](ToolResult result) {
        auto c = weak.lock();
        if (!c) return;
        ToolState* state = state_of(c);
        if (result.is_error || !state || !state->info.edits_file)
          return finish(c, std::move(result));
        // The file as the call left it, for the diff.
        read_local(
            c, state->info.path,
            [this, c, result = std::move(result)](std::optional<std::string> text, int) mutable {
              if (ToolState* st = state_of(c)) st->after = std::move(text);
              finish(c, std::move(result));
            });
      });
}

void ToolGate::finish(const Call& call, ToolResult result) {
  if (call->dead || call->finished) return;
  call->finished = true;
  call->waiting = false;
  call->done(std::move(result));
}

// Whether the answer to what `call` waited for is still wanted (the gate and the call live on,
// and nothing ended the wait); it ends the wait when it is.
bool ToolGate::take_answer(const std::weak_ptr<bool>& alive, const Call& call) {
  if (alive.expired() || call->dead || call->finished || !call->waiting) return false;
  call->waiting = false;
  return true;
}

void ToolGate::read_local(const Call& call, const std::string& path,
                          std::function<void(std::optional<std::string>, int)> done) {
  std::weak_ptr<bool> alive = alive_;
  call->waiting = true;
  if (!env_.files) {
    // No file layer (the fuzzer): unreadable, and still never from inside start().
    env_.scheduler.post([alive, call, done = std::move(done)] {
      if (take_answer(alive, call)) done(std::nullopt, ENOENT);
    });
    return;
  }
  env_.files->read_file(
      path, [alive, call, done = std::move(done)](std::optional<std::string> text, int error) {
        if (take_answer(alive, call)) done(std::move(text), error);
      });
}

void ToolGate::write_local(const Call& call, const std::string& path, std::string content,
                           std::function<void(int)> done) {
  std::weak_ptr<bool> alive = alive_;
  call->waiting = true;
  if (!env_.files) {
    env_.scheduler.post([alive, call, done = std::move(done)] {
      if (take_answer(alive, call)) done(EROFS);
    });
    return;
  }
  env_.files->write_file(path, std::move(content),
                         [alive, call, done = std::move(done)](int error) {
                           if (take_answer(alive, call)) done(error);
                         });
}

}  // namespace rebound::server::acp
