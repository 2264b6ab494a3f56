// The permission rule parser and the bash command splitter (policy.md sections 2.1 to 2.4) on
// arbitrary input: no crash, no hang, and a few properties hold. Input: a rule's text, NUL, then
// a bash command.

#include <cstdint>
#include <cstdlib>
#include <string>
#include <variant>

#include "policy/policy.h"
#include "policy/shell_command.h"
#include "split_input.h"

using namespace rebound::policy;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto parts = rebound::fuzz::split_at_nul(data, size, 2);
  const std::string rule_text = parts[0];
  const std::string command = parts.size() > 1 ? parts[1] : std::string();

  PolicySettings settings;
  settings.workspace = "/nonexistent-rebound-fuzz/ws";
  settings.home = "/nonexistent-rebound-fuzz/home";
  settings.mode = Mode::default_mode;
  for (Behavior b : {Behavior::allow, Behavior::ask, Behavior::deny}) {
    auto parsed = parse_rule(rule_text, b, RuleSyntax{});
    if (auto* rule = (parsed ? &*parsed : nullptr)) {
      // A rule's own globs intersect themselves, and its text survives the round trip.
      for (const auto& g : rule->command)
        if (!globs_intersect(g, g)) std::abort();
      auto again = parse_rule(rule->text, b, RuleSyntax{});
      if (!again.ok()) std::abort();
      rule->source = "cli";
      settings.rules.push_back(std::move(*rule));
    } else if (parsed.error().message.empty()) {
      std::abort();  // every refusal has a reason
    }
  }
  for (const char* extra : {"Bash(rm:*)", "Read(./s/**)", "Edit(out/**)"}) {
    Rule r = parse_rule(extra, Behavior::deny, RuleSyntax{}).value();
    r.source = "global";
    settings.rules.push_back(std::move(r));
  }

  const ShellAnalysis a = analyse_shell(command, settings.home);
  for (const auto& p : a.parts) {
    (void)part_text(p);
    std::size_t k = command_word(p);
    while (k < p.tokens.size()) {
      const std::size_t inner = wrapped_command(p, k);
      if (inner != 0 && inner <= k) std::abort();  // a wrapper always moves forward
      if (inner == 0) break;
      k = inner;
    }
  }
  const Policy policy(settings);
  const rebound::protocol::Json input{{"command", command}};
  const Verdict first = policy.judge(Call("bash", input));
  const Verdict second = policy.judge(Call("bash", input));
  if (first.kind != second.kind || first.text != second.text) std::abort();
  if (first.kind != Verdict::Kind::allow && first.text.empty()) std::abort();
  const rebound::protocol::Json path{{"path", command}};
  (void)policy.judge(Call("read", path));
  return 0;
}
