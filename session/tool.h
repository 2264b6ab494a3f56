#pragma once
// The tool seam (tools.md): a Tool runs one call asynchronously and reports partial results
// and exactly one final result; a ToolRegistry holds the active tools in the order they are
// offered to the model. The session starts every call of a batch, forwards progress as
// tool_execution_update and cancels running calls on abort; completions of an older run are
// dropped by the session. Everything runs on the session's event loop.

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/json.h"
#include "protocol/messages.h"

namespace rebound::session {

/// What the model is told about a tool (tools.md section 2).
struct ToolDefinition {
  std::string name;
  std::string description;
  protocol::Json parameters;  // a JSON Schema object
  /// A tool from outside (an MCP server, mcp.md section 4.2): `parameters` go to every provider
  /// whole, and the call's arguments reach the tool unchecked (its server validates them).
  bool external = false;
  /// An MCP tool's server (its name in the configuration); empty for the others.
  std::string mcp_server = {};
  /// An extension's tool: the extension's name (extensions.md section 4.5); empty for the others.
  std::string extension = {};
};

/// A call's result, partial or final: `content` and `details` as tools.md section 3 fixes them.
struct ToolResult {
  std::vector<protocol::ContentBlock> content;
  std::optional<protocol::Json> details;  // omitted from the wire when none
  bool is_error = false;

  static ToolResult error(std::string text);
};

/// A running call. cancel() asks it to stop: its completion still arrives once, with the
/// tool's abort result. Destroying the handle stops it without a completion.
class ToolCall {
 public:
  virtual ~ToolCall() = default;
  virtual void cancel() = 0;
};

/// Opens an absolute path for a tool: open(2)'s flags and mode, and whether it is for writing.
using FileOpener = std::function<int(const std::string& abs, int flags, unsigned mode, bool write)>;

struct ToolContext {
  std::string cwd;           // the session's working directory
  std::string tool_call_id;  // the call being started (its tool_execution_start came just before)
  bool model_images = true;  // whether the model's input includes "image"
  /// Whether a call that waited for its file must be skipped now (a steering message is
  /// queued and interruptMode is "immediate", tools.md section 7). Event loop only.
  std::function<bool()> skip_for_steering;
  /// Entries a walk (grep, find, ls) leaves out as if ignored: the permission policy's read
  /// deny and ask rules (policy.md section 2.5). Called from the tools' worker threads.
  std::function<bool(std::string_view abs, bool is_dir)> hidden;
  /// How the file tools open their paths (`write`: the last component not followed, but for
  /// O_DIRECTORY): with the sandbox's roots, beneath them (policy.md section 8.9); empty:
  /// open(2). Called from the tools' worker threads; -1 with errno set on failure.
  FileOpener open_file;
  /// Where a call spools its output (session/tool_spool.h): the session file's spool folder,
  /// empty without a session file.
  std::string spool_dir;
};

class Tool {
 public:
  virtual ~Tool() = default;
  using Progress = std::function<void(ToolResult partial)>;
  using Done = std::function<void(ToolResult result)>;

  virtual const ToolDefinition& definition() const = 0;
  /// Rewrites the received arguments before they are checked against the schema (edit's
  /// argument preparation, tools.md section 4.3). Most tools leave them alone.
  virtual void prepare_arguments(protocol::Json& args) const { (void)args; }
  /// Starts a call with the arguments as checked and coerced (session/tool_arguments.h). `done`
  /// runs exactly once, on the event loop and never from inside start(); `progress` any number of
  /// times before it.
  virtual std::unique_ptr<ToolCall> start(const protocol::Json& args, const ToolContext& context,
                                          Progress progress, Done done) = 0;
  /// Whether the tool only reads (an MCP tool's annotations.readOnlyHint): acp mode runs it
  /// without asking (acp.md section 7.3).
  virtual bool read_only_hint() const { return false; }

  /// What a call left in its spool file when Rebound stopped during it (runtime.md section 8):
  /// the text to add to its unknown outcome, and whether the file stays (the text names it as
  /// the full output). None for a tool that spools nothing.
  struct SpooledOutput {
    std::string text;
    bool keep_file = false;
  };
  virtual std::optional<SpooledOutput> spooled_output(const std::string& spool_file) const {
    (void)spool_file;
    return std::nullopt;
  }
};

/// A wait that can be dropped: destroying it means the callback never runs.
class Waiting {
 public:
  virtual ~Waiting() = default;
  /// A tool call's preflight dropped by an abort: the call's result text instead of
  /// `Operation aborted` (acp mode's open permission question, policy.md section 5).
  virtual std::optional<std::string> abort_text() const { return std::nullopt; }
};

/// A call about to run, as the preflight sees it: its arguments as the model wrote them (they
/// passed validation; the call runs with their checked form unless the verdict replaces them).
struct PreflightCall {
  PreflightCall(const std::string& id_, const std::string& name_, const protocol::Json& input_,
                const std::string& mcp_server_)
      : id(id_), name(name_), input(input_), mcp_server(mcp_server_) {}
  const std::string& id;
  const std::string& name;
  const protocol::Json& input;
  const std::string& mcp_server;  // the tool's MCP server, or empty
  std::string extension = {};     // the tool's extension, or empty
  bool read_only_hint = false;    // an MCP tool's annotations.readOnlyHint
  /// The same tool and arguments as a call whose outcome is unknown (amendments A8).
  bool repeats_unknown = false;
  /// The tool's validation of a replaced input: its error text, or nothing when it is valid
  /// (empty: not offered).
  std::function<std::optional<std::string>(const protocol::Json&)> validate = {};
};

/// A text a hook gives the model (extensions.md section 3.9): the session makes it a custom
/// message (`customType`, string content, `details`).
struct ContextNote {
  ContextNote(std::string custom_type_, std::string content_, protocol::Json details_)
      : custom_type(std::move(custom_type_)),
        content(std::move(content_)),
        details(std::move(details_)) {}
  std::string custom_type;
  std::string content;
  protocol::Json details;
};

/// What the preflight decided: refused (the call does not run, `refused` is its result), or it
/// runs, with `input` in place of its arguments when set (validated again by the session).
/// Either way `context` follows the batch's results, and `stop_run` ends the run after the batch
/// (a hook's `continue:false`; its text says why).
/// A PreToolUse hook's allow or ask, which the permission policy counts as a matching rule.
enum class HookPermission { none, allow, ask };

struct PreflightVerdict {
  std::optional<ToolResult> refused;
  std::optional<protocol::Json> input;
  std::vector<ContextNote> context;
  std::optional<std::string> stop_run;
  HookPermission hook_permission = HookPermission::none;
  std::string hook_reason;  // the asking hook's permissionDecisionReason
};

/// A call that ran and ended (not one refused before it ran, nor one an abort ended).
struct FinishedCall {
  FinishedCall(const std::string& id_, const std::string& name_, const protocol::Json& input_,
               const ToolResult& result_, std::int64_t duration_ms_, const std::string& mcp_server_)
      : id(id_),
        name(name_),
        input(input_),
        result(result_),
        duration_ms(duration_ms_),
        mcp_server(mcp_server_) {}
  const std::string& id;
  const std::string& name;
  const protocol::Json& input;  // what it ran with
  const ToolResult& result;
  std::int64_t duration_ms;       // of the tool's own execution
  const std::string& mcp_server;  // the tool's MCP server, or empty
  std::string extension = {};     // the tool's extension, or empty
};

/// What runs after a call, before its tool_execution_end: texts for the model and `stop_run`.
struct AfterCallVerdict {
  std::vector<ContextNote> context;
  std::optional<std::string> stop_run;
};

/// What the PermissionRequest hooks answered about a call the permission policy would ask about
/// (extensions.md section 3.7): nothing (the question goes on), allow (with a replaced input),
/// or deny with the call's text; `stop_run` for a deny with `interrupt`.
struct PermissionHookVerdict {
  enum class Kind { none, allow, deny };
  Kind kind = Kind::none;
  std::string text;
  std::optional<protocol::Json> input;
  std::optional<std::string> stop_run;
};

/// The PermissionRequest hooks (policy.md section 4 step 9).
class PermissionHooks {
 public:
  virtual ~PermissionHooks() = default;
  /// nullptr when no hook matches (`done` never runs: the question goes on); else `done` once,
  /// later on the loop, unless the handle is destroyed first.
  virtual std::unique_ptr<Waiting> permission_request(
      const PreflightCall& call, std::function<void(PermissionHookVerdict)> done) = 0;
  /// The policy's question about a call of `tool_name` was put to the client (the Notification
  /// hooks' permission_prompt); nothing waits.
  virtual void question_put(const std::string& tool_name) { (void)tool_name; }
};

/// The checks every call of a batch passes before any of them runs, one call after the other in
/// message order (extensions.md section 5.2: the PreToolUse hooks), and what runs after each
/// call that ran (PostToolUse, PostToolUseFailure). Optional: without one a batch runs as
/// tools.md section 6 says.
class ToolPreflight {
 public:
  virtual ~ToolPreflight() = default;
  /// nullptr when there is nothing to wait for (`done` is then never called: the call goes
  /// on); otherwise `done` runs once, later on the loop, unless the handle is destroyed first
  /// (an abort).
  virtual std::unique_ptr<Waiting> check(const PreflightCall& call,
                                         std::function<void(PreflightVerdict)> done) = 0;
  /// As check(), after a call that ran.
  virtual std::unique_ptr<Waiting> after_call(const FinishedCall& call,
                                              std::function<void(AfterCallVerdict)> done) {
    (void)call;
    (void)done;
    return nullptr;
  }
};

/// Tools that come and go while a session lives (MCP servers, mcp.md): offered after the
/// registry's tools, looked up only in the set that was offered to the request whose answer
/// made the call (mcp.md section 7).
class DynamicTools {
 public:
  virtual ~DynamicTools() = default;
  /// nullptr when nothing is starting or re-listing; otherwise `settled` runs once, later, when
  /// that is over (each source bounded by its start-up timeout), unless the handle is gone.
  virtual std::unique_ptr<Waiting> when_settled(std::function<void()> settled) = 0;
  /// The tools to offer now, in order, at most `room` of them.
  virtual std::vector<std::shared_ptr<Tool>> offered(std::size_t room) = 0;
};

/// The most tools one LLM request offers, built-in ones included (mcp.md section 4.2).
inline constexpr std::size_t kMaxOfferedTools = 128;

/// The active tools, in the order they are offered. Empty by default: every call is then
/// answered "Tool <name> not found".
class ToolRegistry {
 public:
  void add(std::shared_ptr<Tool> tool) { tools_.push_back(std::move(tool)); }
  Tool* find(std::string_view name) const {
    for (const auto& t : tools_) {
      if (t->definition().name == name) return t.get();
    }
    return nullptr;
  }
  std::vector<ToolDefinition> definitions() const {
    std::vector<ToolDefinition> out;
    for (const auto& t : tools_)
      out.push_back(t->definition());
    return out;
  }
  bool empty() const { return tools_.empty(); }

 private:
  std::vector<std::shared_ptr<Tool>> tools_;
};

/// A result as tool_execution_end carries it: `content`, then `details` when there are any.
inline protocol::Json tool_result_json(const ToolResult& result) {
  protocol::Json content = protocol::Json::array();
  for (const auto& block : result.content)
    content.push_back(protocol::to_json(block));
  protocol::Json j = protocol::Json::object();
  j["content"] = std::move(content);
  if (result.details) j["details"] = *result.details;
  return j;
}

inline ToolResult ToolResult::error(std::string text) {
  ToolResult r;
  r.content.push_back(protocol::ContentBlock::make_text(std::move(text)));
  r.details = protocol::Json::object();
  r.is_error = true;
  return r;
}

}  // namespace rebound::session
