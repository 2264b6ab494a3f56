// ExtensionSet's tools as the session offers them (extensions.md section 4.5): after the
// built-in and MCP tools, in extension order, while their extension is ready; a name that is
// taken is skipped with a warning; the whole set within the 128-tool limit.
#include <spdlog/spdlog.h>

#include <set>
#include <utility>

#include "extensions/extension_set.h"

namespace rebound::extensions {

using protocol::Json;

namespace {

// One extension tool as a session::Tool: its calls go to its extension.
class OfferedTool : public session::Tool {
 public:
  OfferedTool(ExtensionConnection& c, const ExtensionTool& tool) : c_(c) {
    definition_.name = tool.name;
    definition_.description = tool.description;
    definition_.parameters = tool.parameters;
    definition_.external = true;  // the extension validates its own arguments
    definition_.extension = c_.name();
  }
  const session::ToolDefinition& definition() const override { return definition_; }
  std::unique_ptr<session::ToolCall> start(const Json& args, const session::ToolContext& context,
                                           Progress progress, Done done) override {
    return c_.call_tool(definition_.name, context.tool_call_id, args, std::move(progress),
                        std::move(done));
  }

 private:
  ExtensionConnection& c_;
  session::ToolDefinition definition_;
};

class Offered : public session::DynamicTools {
 public:
  Offered(ExtensionSet& set, session::DynamicTools* inner, std::vector<std::string> builtin)
      : set_(set), inner_(inner), builtin_(builtin.begin(), builtin.end()) {}

  std::unique_ptr<session::Waiting> when_settled(std::function<void()> settled) override {
    // The inner tools first, then the extensions still starting (each bounded by its timeout).
    struct Both : session::Waiting {
      std::unique_ptr<session::Waiting> inner;
      std::shared_ptr<bool> alive = std::make_shared<bool>(true);
    };
    auto both = std::make_unique<Both>();
    auto callback = std::make_shared<std::function<void()>>(std::move(settled));
    auto after_extensions = [this, alive = std::weak_ptr<bool>(both->alive), callback] {
      if (alive.expired()) return;
      set_.when_settled([alive, callback] {
        if (!alive.expired()) (*callback)();
      });
    };
    if (inner_) {
      both->inner = inner_->when_settled(after_extensions);
      if (both->inner) return both;
    }
    if (!set_.any_starting()) return nullptr;  // nothing to wait for: `settled` never runs
    after_extensions();
    return both;
  }

  std::vector<std::shared_ptr<session::Tool>> offered(std::size_t room) override {
    std::vector<std::shared_ptr<session::Tool>> out;
    if (inner_) out = inner_->offered(room);
    std::set<std::string> taken = builtin_;
    for (const auto& t : out)
      taken.insert(t->definition().name);
    for (const auto& c : set_.connections()) {
      if (!c->ready()) continue;
      for (const auto& tool : c->tools()) {
        if (out.size() >= room) return out;
        if (!taken.insert(tool.name).second) {
          if (warned_.insert(c->name() + "/" + tool.name).second)
            spdlog::warn("ext[{}] tool {} skipped: the name is taken", c->name(), tool.name);
          continue;
        }
        out.push_back(std::make_shared<OfferedTool>(*c, tool));
      }
    }
    return out;
  }

 private:
  ExtensionSet& set_;
  session::DynamicTools* inner_;
  std::set<std::string> builtin_;
  std::set<std::string> warned_;
};

}  // namespace

std::unique_ptr<session::DynamicTools> ExtensionSet::tools(session::DynamicTools* inner,
                                                           std::vector<std::string> builtin_names) {
  return std::make_unique<Offered>(*this, inner, std::move(builtin_names));
}

}  // namespace rebound::extensions
