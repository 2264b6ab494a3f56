// policy.md 2.4.1 as a property: a command built from the input that bash would run as
// `rm -f x` (quotes, escapes, `$'…'`, braces, wrappers, shells with options around `-c`,
// `eval`, `env -S`, lists and substitutions around it) is never allowed under
// `deny: Bash(rm:*)`, nor under `ask: Bash(rm:*)`; both beside an `allow: Bash`.

#include <cstdint>
#include <cstdlib>
#include <string>
#include <variant>

#include "denied_forms.h"
#include "policy/policy.h"

using namespace rebound::policy;

namespace {

Policy make(Behavior b) {
  PolicySettings settings;
  settings.workspace = "/nonexistent-rebound-fuzz/ws";
  settings.home = "/nonexistent-rebound-fuzz/home";
  settings.mode = Mode::default_mode;
  for (auto [text, behavior] : {std::pair{"Bash", Behavior::allow}, std::pair{"Bash(rm:*)", b}}) {
    Rule r = parse_rule(text, behavior, RuleSyntax{}).value();
    r.source = "cli";
    settings.rules.push_back(std::move(r));
  }
  return Policy(std::move(settings));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const Policy deny = make(Behavior::deny);
  static const Policy ask = make(Behavior::ask);
  rebound::fuzz::Choices in(data, size);
  bool oracle = true;
  const std::string command = rebound::fuzz::build_rm_command(in, oracle);
  const rebound::protocol::Json input{{"command", command}};
  if (deny.judge(Call{"bash", input, ""}).kind == Verdict::Kind::allow) std::abort();
  if (ask.judge(Call{"bash", input, ""}).kind == Verdict::Kind::allow) std::abort();
  return 0;
}
