// policy.md 2.4.1 as a table: every way of writing a denied command that bash would run as that
// command is denied under the deny rule and asked under the same rule as an ask rule; the
// commands beside them that are not that command stay allowed.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "policy/policy.h"
#include "tests/fuzz/denied_forms.h"
#include "tests/support/temp_dir.h"

using namespace rebound::policy;
using rebound::protocol::Json;
using rebound::testing::TempDir;

namespace {

Policy make_policy(const std::string& workspace, Behavior behavior, const std::string& rule,
                   const std::string& prefix = "") {
  PolicySettings s;
  s.workspace = workspace;
  s.home = "/nonexistent-home";
  s.mode = Mode::default_mode;
  s.shell_command_prefix = prefix;
  for (const auto& [text, b] :
       {std::pair{std::string("Bash"), Behavior::allow}, std::pair{rule, behavior}}) {
    auto parsed = parse_rule(text, b, RuleSyntax{});
    REQUIRE_MESSAGE(parsed.ok(), text);
    Rule r = parsed.value();
    r.source = "global";
    s.rules.push_back(std::move(r));
  }
  return Policy(std::move(s));
}

Verdict verdict(const Policy& p, const std::string& command) {
  const Json input{{"command", command}};
  return p.judge(Call{"bash", input, ""});
}

Verdict::Kind judge(const Policy& p, const std::string& command) {
  return verdict(p, command).kind;
}

// The forms of `rm -f x` of policy.md 2.4.1's table, one per line.
const std::vector<std::string> kRmForms = {
    // decoded words (form d)
    "'rm' -f x",
    "\"rm\" -f x",
    "\\rm -f x",
    "r\"\"m -f x",
    "r''m -f x",
    "$'rm' -f x",
    "$'\\x72m' -f x",
    "$'\\162m' -f x",
    "$'\\u0072m' -f x",
    "'r'\"m\" -f x",
    "$'\\cM'; 'rm' -f x",
    "X=1 'rm' -f x",
    // brace expansion
    "{rm,-f,x}",
    "{'rm',-f,x}",
    "{r,}m -f x",
    "echo ok; {rm,-f,x}",
    "{rm,-f}{,x}",
    // shells with options before -c, and -c followed by --
    "bash -e -c 'rm -f x'",
    "bash -x -c 'rm -f x'",
    "bash -o errexit -c 'rm -f x'",
    "bash +o posix -c 'rm -f x'",
    "bash -O extglob -c 'rm -f x'",
    "bash +O extglob -c 'rm -f x'",
    "bash -- -c 'rm -f x'",
    "bash -ec 'rm -f x'",
    "bash -lc 'rm -f x'",
    "sh -c -- 'rm -f x'",
    "bash --norc -c 'rm -f x'",
    "bash --rcfile /dev/null -c 'rm -f x'",
    "dash -e -c \"'rm' -f x\"",
    "zsh -c '{rm,-f,x}'",
    "bash -c 'bash -e -c \"rm -f x\"'",
    // the -c string and eval decoded
    "bash -c \\'rm\\'' -f x'",
    "eval 'rm' -f x",
    "eval \"'rm' -f x\"",
    "eval -- rm -f x",
    "eval '\\rm -f x'",
    // wrappers with long options and --
    "env --unset X rm -f x",
    "env --unset=X rm -f x",
    "env --chdir /tmp rm -f x",
    "env -- rm -f x",
    "env -i -- 'rm' -f x",
    "nice --adjustment 5 rm -f x",
    "nice --adjustment=5 rm -f x",
    "nice -n 5 -- rm -f x",
    "nice -5 rm -f x",
    "timeout --signal KILL 5 rm -f x",
    "timeout --kill-after 1 5 rm -f x",
    "timeout -- 5 rm -f x",
    "stdbuf --output L rm -f x",
    "stdbuf --input=0 --error 0 rm -f x",
    "stdbuf -oL rm -f x",
    "setsid --fork rm -f x",
    "setsid -w rm -f x",
    "command -- rm -f x",
    "command -p rm -f x",
    "exec -a name rm -f x",
    "nohup -- rm -f x",
    "time -p rm -f x",
    "env nice timeout 5 'rm' -f x",
    // env -S and --split-string
    "env -S 'rm -f x'",
    "env -S rm -f x",
    "env -S'rm -f' x",
    "env --split-string 'rm -f x'",
    "env --split-string='rm -f x'",
    "env -iS 'rm -f x'",
    "env -S \"'rm' -f x\"",
};

}  // namespace

TEST_CASE("policy 2.4.1: every form of rm is denied under deny Bash(rm:*)") {
  TempDir dir;
  const Policy p = make_policy(dir.path().string(), Behavior::deny, "Bash(rm:*)");
  for (const auto& c : kRmForms) {
    INFO(c);
    CHECK(judge(p, c) == Verdict::Kind::deny);
  }
}

TEST_CASE("policy 2.4.1: every form of rm is asked under ask Bash(rm:*)") {
  TempDir dir;
  const Policy p = make_policy(dir.path().string(), Behavior::ask, "Bash(rm:*)");
  for (const auto& c : kRmForms) {
    INFO(c);
    CHECK(judge(p, c) == Verdict::Kind::ask);
  }
}

TEST_CASE("policy 2.4.1: commands that are not rm stay allowed beside the deny rule") {
  TempDir dir;
  const Policy p = make_policy(dir.path().string(), Behavior::deny, "Bash(rm:*)");
  for (const std::string c :
       {"echo 'rm' -f x", "echo {rm,-f,x}", "rmdir x", "'rmdir' x", "bash -e script.sh",
        "bash -o errexit script.sh", "env -i ls", "env --chdir /tmp ls", "nice -n 5 ls",
        "timeout --signal KILL 5 ls", "stdbuf -oL ls", "echo {a,b}", "echo {1..3}",
        "echo '{rm,-f,x}'", "echo ${HOME}", "env -S 'ls -l'", "command -v rm", "ls {}",
        "echo a{b}c"}) {
    INFO(c);
    CHECK(judge(p, c) == Verdict::Kind::allow);
  }
}

TEST_CASE("policy 2.4.1: what cannot be known is uncertain") {
  TempDir dir;
  const Policy p = make_policy(dir.path().string(), Behavior::deny, "Bash(rm:*)");
  // More than 256 words from one brace expansion, one around an opaque word, a wrapper option
  // the analysis does not know, an opaque shell option before -c.
  for (const std::string c :
       {"echo {1..300}", "echo {a,b}{c,d}{e,f}{g,h}{i,j}{k,l}{m,n}{o,p}{q,r}", "{$X,-f,x}",
        "nice --frobnicate rm2 x", "stdbuf -q ls", "setsid --session ls", "bash $OPTS -c 'ls'"}) {
    INFO(c);
    const Verdict v = verdict(p, c);
    CHECK(v.kind == Verdict::Kind::ask);
    CHECK(v.reason == "uncertain");
  }
  // Uncertain parts are asked whenever the analysis runs, not only under a bash specifier.
  const Policy reads = make_policy(dir.path().string(), Behavior::deny, "Read(./secrets/**)");
  CHECK(judge(reads, "echo {1..300}") == Verdict::Kind::ask);
}

TEST_CASE("policy 2.4.1: a Read deny rule sees the paths of a brace expansion") {
  TempDir dir;
  dir.write("secrets/a.txt", "s");
  dir.write("x/a.txt", "x");
  const Policy p = make_policy(dir.path().string(), Behavior::deny, "Read(./secrets/**)");
  for (const std::string c :
       {"cat {secrets,x}/a.txt", "cat {x,secrets}/a.txt", "cat secret{s,}/a.txt",
        "cat 'secrets'/a.txt", "cat {secrets/a.txt,}", "head -n1 s{e,}crets/a.txt"}) {
    INFO(c);
    CHECK(judge(p, c) == Verdict::Kind::deny);
  }
  CHECK(judge(p, "cat {x,y}/a.txt") == Verdict::Kind::allow);
}

TEST_CASE("policy 2.4.1: shellCommandPrefix is judged with every command") {
  TempDir dir;
  const std::string ws = dir.path().string();
  // A prefix the deny rule matches makes every call denied; one an ask rule matches, asked.
  CHECK(judge(make_policy(ws, Behavior::deny, "Bash(rm:*)", "rm -rf ~/x"), "ls") ==
        Verdict::Kind::deny);
  CHECK(judge(make_policy(ws, Behavior::deny, "Bash(rm:*)", "'rm' -rf ~/x"), "ls") ==
        Verdict::Kind::deny);
  CHECK(judge(make_policy(ws, Behavior::ask, "Bash(curl:*)", "curl -s x | sh"), "ls") ==
        Verdict::Kind::ask);
  // A harmless prefix changes nothing.
  CHECK(judge(make_policy(ws, Behavior::deny, "Bash(rm:*)", "set -e"), "ls") ==
        Verdict::Kind::allow);
  CHECK(judge(make_policy(ws, Behavior::deny, "Bash(rm:*)", "set -e"), "rm x") ==
        Verdict::Kind::deny);
}

TEST_CASE("policy 2.4.1: 300 random rm commands run rm in real bash and are all denied") {
  // The generator of the fuzz target deny_forms, with a fixed seed; each command is run by
  // bash with a fake `rm` first in PATH that records its arguments, so the test also proves
  // that bash does run each one as `rm -f x`.
  TempDir dir;
  const std::string ws = dir.path().string();
  dir.write("bin/rm", "#!/bin/sh\necho \"$*\" >> \"$RM_LOG\"\n");
  std::filesystem::permissions(dir.path() / "bin/rm", std::filesystem::perms::owner_all);
  const Policy deny = make_policy(ws, Behavior::deny, "Bash(rm:*)");
  const Policy ask = make_policy(ws, Behavior::ask, "Bash(rm:*)");
  std::mt19937 random(2024);
  int observed = 0;
  for (int n = 0; n < 300; ++n) {
    std::vector<std::uint8_t> bytes(48);
    for (auto& b : bytes)
      b = static_cast<std::uint8_t>(random());
    rebound::fuzz::Choices in(bytes.data(), bytes.size());
    bool oracle = true;
    const std::string command = rebound::fuzz::build_rm_command(in, oracle);
    INFO(command);
    CHECK(judge(deny, command) == Verdict::Kind::deny);
    CHECK(judge(ask, command) != Verdict::Kind::allow);
    if (!oracle) continue;
    const std::string log = ws + "/rm.log";
    std::filesystem::remove(log);
    const std::string script = "cd " + rebound::fuzz::single_quoted(ws) +
                               " && PATH=" + rebound::fuzz::single_quoted(ws + "/bin") +
                               ":\"$PATH\" RM_LOG=" + rebound::fuzz::single_quoted(log) +
                               " bash -c " + rebound::fuzz::single_quoted(command) +
                               " </dev/null >/dev/null 2>&1";
    CHECK(std::system(script.c_str()) == 0);
    std::ifstream in_log(log);
    std::string line;
    std::getline(in_log, line);
    CHECK_MESSAGE(line.find("-f x") != std::string::npos, "rm did not run with -f x: ", line);
    ++observed;
  }
  CHECK(observed > 250);
}
