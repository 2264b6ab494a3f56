// ExtensionSet's preflight: the `tool_call` interceptors one extension after the other, each on
// the input the previous one left, then the hooks' preflight (extensions.md sections 2, 4.4 and
// 5.2).
#include <utility>

#include "extensions/extension_set.h"

namespace rebound::extensions {

using protocol::Json;

class ExtensionSet::Preflight : public session::ToolPreflight {
 public:
  Preflight(ExtensionSet& set, session::ToolPreflight* inner) : set_(set), inner_(inner) {}

  std::unique_ptr<session::Waiting> check(
      const session::PreflightCall& call,
      std::function<void(session::PreflightVerdict)> done) override {
    bool any = set_.unsettled();
    for (const auto& c : set_.connections_)
      any = any || c->intercepts();
    if (!any) return inner_ ? inner_->check(call, std::move(done)) : nullptr;
    auto chain = std::make_shared<Chain>();
    chain->id = call.id;
    chain->name = call.name;
    chain->input = call.input;
    chain->mcp_server = call.mcp_server;
    chain->validate = call.validate;
    chain->extension = call.extension;
    chain->done = std::move(done);
    auto handle = std::make_unique<Handle>(chain);
    set_.when_settled([this, weak = std::weak_ptr<Chain>(chain)] {
      if (auto c = weak.lock()) step(c);
    });
    return handle;
  }

  std::unique_ptr<session::Waiting> after_call(
      const session::FinishedCall& call,
      std::function<void(session::AfterCallVerdict)> done) override {
    return inner_ ? inner_->after_call(call, std::move(done)) : nullptr;
  }

 private:
  struct Chain {
    std::string id, name, mcp_server;
    Json input;
    std::function<std::optional<std::string>(const Json&)> validate;
    std::string extension;
    bool modified = false;
    std::size_t next = 0;
    std::function<void(session::PreflightVerdict)> done;
    std::unique_ptr<session::Waiting> waiting;  // the interceptor or the hooks asked now
  };
  // Owned by the session: destroying it (an abort) drops what is being asked.
  struct Handle : session::Waiting {
    explicit Handle(std::shared_ptr<Chain> c) : chain(std::move(c)) {}
    ~Handle() override {
      chain->done = nullptr;
      chain->waiting.reset();
    }
    std::shared_ptr<Chain> chain;
  };

  static void finish(const std::shared_ptr<Chain>& chain, session::PreflightVerdict verdict) {
    auto done = std::move(chain->done);
    chain->done = nullptr;
    if (done) done(std::move(verdict));
  }

  static session::PreflightVerdict refusal(std::string text) {
    session::PreflightVerdict v;
    v.refused = session::ToolResult::error(std::move(text));
    v.refused->details = Json::object();
    return v;
  }

  void step(const std::shared_ptr<Chain>& chain) {
    if (!chain->done) return;
    auto& connections = set_.connections_;
    while (chain->next < connections.size() && !connections[chain->next]->intercepts())
      ++chain->next;
    if (chain->next == connections.size()) {
      hooks(chain);
      return;
    }
    ExtensionConnection& c = *connections[chain->next];
    std::weak_ptr<Chain> weak = chain;
    chain->waiting =
        c.intercept(chain->id, chain->name, chain->input, [this, weak, &c](Interception result) {
          auto chain = weak.lock();
          if (!chain || !chain->done) return;
          chain->waiting.reset();
          switch (result.kind) {
            case Interception::Kind::block:
              finish(chain,
                     refusal(result.reason.empty() ? "Tool execution was blocked" : result.reason));
              return;
            case Interception::Kind::failed:
              if (!c.config().fail_open) {
                finish(chain, refusal("Extension " + c.name() +
                                      " failed, blocking execution: " + result.reason));
                return;
              }
              break;
            case Interception::Kind::modify:
              // Validated again before a later extension or a hook sees it (section 4.4).
              if (chain->validate)
                if (auto problem = chain->validate(result.input)) {
                  session::PreflightVerdict failed;
                  failed.refused = session::ToolResult::error(std::move(*problem));
                  finish(chain, std::move(failed));
                  return;
                }
              chain->input = std::move(result.input);
              chain->modified = true;
              break;
            case Interception::Kind::allow:
              break;
          }
          ++chain->next;
          step(chain);
        });
  }

  // The hooks see the input the interceptors left (section 2).
  void hooks(const std::shared_ptr<Chain>& chain) {
    session::PreflightVerdict own;
    if (chain->modified) own.input = chain->input;
    if (!inner_) {
      finish(chain, std::move(own));
      return;
    }
    std::weak_ptr<Chain> weak = chain;
    session::PreflightCall call(chain->id, chain->name, chain->input, chain->mcp_server);
    call.validate = chain->validate;
    call.extension = chain->extension;
    chain->waiting = inner_->check(call, [weak](session::PreflightVerdict verdict) {
      auto chain = weak.lock();
      if (!chain) return;
      if (!verdict.input && chain->modified) verdict.input = chain->input;
      finish(chain, std::move(verdict));
    });
    if (!chain->waiting) finish(chain, std::move(own));
  }

  ExtensionSet& set_;
  session::ToolPreflight* inner_;
};

std::unique_ptr<session::ToolPreflight> ExtensionSet::preflight(session::ToolPreflight* inner) {
  return std::make_unique<Preflight>(*this, inner);
}

}  // namespace rebound::extensions
