// What a hook writes and what a settings file holds (extensions.md sections 1.2, 3.5, 3.6):
// the input's NUL-separated parts are a `hooks` settings value, then hook runs (a first byte
// choosing the event and the exit status, the rest its stdout). Reading never throws or
// crashes; a verdict is exactly one of its kinds with its text; the handlers of an occurrence
// are active, of the event and distinct; every event's decision keeps its precedence (exit 2
// blocks, refuses or gives context wherever the spec says so).

#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "extensions/hook_decisions.h"
#include "protocol/json_line.h"
#include "split_input.h"

using namespace rebound;
namespace ext = rebound::extensions;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto parts = fuzz::split_at_nul(data, size, 16);
  const auto settings = protocol::parse_json_line(parts[0]);
  const auto config = ext::read_hooks({ext::HookSettings(settings.value.value_or(protocol::Json()),
                                                         ext::HookSource::user, "f", true, false)},
                                      1000);
  for (const auto& h : config.handlers) {
    if ((h.status == ext::HookStatus::invalid) == h.error.empty()) std::abort();
    if (h.status == ext::HookStatus::active && (h.command.empty() || h.timeout_ms < 1))
      std::abort();
  }
  std::vector<ext::HookHandler> handlers(parts.size());
  std::vector<ext::HookResult> results;
  for (std::size_t i = 1; i < parts.size(); ++i) {
    if (parts[i].empty()) continue;
    const auto selector = static_cast<unsigned char>(parts[i][0]);
    const auto event = static_cast<ext::HookEvent>(selector % 13);
    ext::HookRun run;
    run.code = (selector / 13) % 4;  // 0, 1, 2, 3
    run.out = protocol::replace_invalid_utf8(parts[i].substr(1));
    run.err = run.out;
    const auto v = ext::read_hook_run(event, run);
    if ((v.kind == ext::HookVerdict::Kind::failed) == v.failure.empty()) std::abort();
    if (v.json && (v.kind != ext::HookVerdict::Kind::success || !v.plain.empty())) std::abort();
    for (const auto* h : ext::handlers_for(config, event, parts[i])) {
      if (h->known != event || h->status != ext::HookStatus::active) std::abort();
    }
    handlers[i].command = "h" + std::to_string(i);
    results.emplace_back(handlers[i], v);
  }
  // Every event's decision over the same verdicts: never throws, and keeps its invariants.
  const bool any_blocking = [&] {
    for (const auto& r : results)
      if (r.verdict.kind == ext::HookVerdict::Kind::blocking) return true;
    return false;
  }();
  const auto post = ext::decide_post_tool_use(ext::HookEvent::post_tool_use, "bash", results);
  if (any_blocking && post.context.empty()) std::abort();  // exit 2 is always context there
  const auto stop = ext::decide_stop(results);
  if (stop.continue_run && (stop.context.empty() || stop.first_blocking.empty())) std::abort();
  const auto prompt = ext::decide_user_prompt_submit(results);
  if (any_blocking && !prompt.refused) std::abort();
  if (prompt.refused && !prompt.context.empty()) std::abort();
  const auto start = ext::decide_session_start("startup", results);
  if (start.effects.stop) std::abort();  // ignored from SessionStart
  const auto compact = ext::decide_pre_compact(results);
  if (any_blocking && !compact.refused) std::abort();
  const auto o = ext::decide_pre_tool_use("bash", results);
  bool blocked = false;
  for (const auto& r : results)
    blocked = blocked || r.verdict.kind == ext::HookVerdict::Kind::blocking;
  if (blocked && o.permission != ext::PreToolUseOutcome::Permission::deny) std::abort();
  if ((o.permission == ext::PreToolUseOutcome::Permission::deny) == o.result.empty()) {
    // A deny always has its text (a deny without a reason still names its prefix).
    std::abort();
  }
  return 0;
}
