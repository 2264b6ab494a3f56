// Each row of policy.md section 2.7 and the mode table of section 3, judged by the policy
// itself (mode default, nobody answering: an ask shows as its text).
#include "policy/policy.h"

// Given{.allow = …} leaves the other lists empty on purpose.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "policy/bash_judgement.h"
#include "policy/dir_index.h"
#include "policy/policy_texts.h"
#include "tests/support/temp_dir.h"

using namespace rebound::policy;
using rebound::protocol::Json;
using rebound::testing::TempDir;

namespace {

struct Given {
  std::vector<std::string> allow, ask, deny;
  Mode mode = Mode::default_mode;
};

class Workspace {
 public:
  Workspace() {
    dir_.write("secrets/a.txt", "s");
    dir_.write("src/a.txt", "a");
    dir_.write("top.txt", "t");
    std::filesystem::create_symlink(dir_.path() / "secrets", dir_.path() / "pub");
  }
  std::string root() const { return std::filesystem::canonical(dir_.path()).string(); }

  Policy policy(const Given& g) const {
    PolicySettings s;
    s.workspace = root();
    s.home = "/nonexistent-home";
    s.mode = g.mode;
    auto add = [&](const std::vector<std::string>& list, Behavior b) {
      for (const auto& text : list) {
        auto parsed = parse_rule(text, b, RuleSyntax{});
        REQUIRE_MESSAGE(parsed.ok(), text);
        Rule r = parsed.value();
        r.source = "global";
        s.rules.push_back(std::move(r));
      }
    };
    add(g.deny, Behavior::deny);
    add(g.ask, Behavior::ask);
    add(g.allow, Behavior::allow);
    return Policy(std::move(s));
  }

 private:
  TempDir dir_;
};

Verdict call(const Policy& p, std::string_view tool, Json input) {
  Call c{tool, input, ""};
  return p.judge(c);
}

Verdict bash(const Policy& p, const std::string& command) {
  return call(p, "bash", Json{{"command", command}});
}

const std::string kOnePart = "This command requires approval";

}  // namespace

TEST_CASE("allow Bash(echo:*): echo runs, other commands ask") {
  Workspace w;
  const Policy p = w.policy({.allow = {"Bash(echo:*)"}});
  CHECK(bash(p, "echo a").kind == Verdict::Kind::allow);
  CHECK(bash(p, "echo").kind == Verdict::Kind::allow);
  for (const char* c : {"echoX", "(touch z2)"}) {
    INFO(c);
    const Verdict v = bash(p, c);
    CHECK(v.kind == Verdict::Kind::ask);
    CHECK(v.text == kOnePart);
    CHECK(v.reason == "mode default");
    CHECK(v.offer_always);
  }
}

TEST_CASE("allow Bash(echo:*): the part that needs approval is named") {
  Workspace w;
  const Policy p = w.policy({.allow = {"Bash(echo:*)"}});
  const std::string head =
      "This bash command contains multiple operations. The following part requires approval: ";
  CHECK(bash(p, "echo a && touch z1").text == head + "touch z1");
  CHECK(bash(p, "echo $(touch z2)").text == head + "touch z2");
  CHECK(bash(p, "echo `touch z2`").text == head + "touch z2");
  CHECK(bash(p, "echo a\ntouch z2").text == head + "touch z2");
  CHECK(bash(p, "touch a; echo b; rm c").text ==
        "This bash command contains multiple operations. The following parts require approval: "
        "touch a, rm c");
}

TEST_CASE("allow Bash(cat:*): a here-document is one part") {
  Workspace w;
  const Policy p = w.policy({.allow = {"Bash(cat:*)"}});
  CHECK(bash(p, "cat > out.txt <<'EOF'\nhello $(rm x)\nEOF").kind == Verdict::Kind::allow);
}

TEST_CASE("a command not understood needs approval") {
  Workspace w;
  const Policy p = w.policy({.allow = {"Bash(echo:*)"}});
  for (const char* c : {"select x in a; do echo $x; done", "echo 'abc"}) {
    INFO(c);
    const Verdict v = bash(p, c);
    CHECK(v.kind == Verdict::Kind::ask);
    CHECK(v.text == kOnePart);
    CHECK(v.reason == "uncertain");
    CHECK_FALSE(v.offer_always);
  }
}

TEST_CASE("allow Bash, deny Bash(rm:*): every form of rm is denied") {
  Workspace w;
  const Policy p = w.policy({.allow = {"Bash"}, .deny = {"Bash(rm:*)"}});
  for (const char* c : {"rm -f x", "env rm -f x", "timeout 5 rm -f x", "bash -c 'rm -f x'",
                        "X=1 rm -f x", "echo ok && rm -f x"}) {
    INFO(c);
    const Verdict v = bash(p, c);
    CHECK(v.kind == Verdict::Kind::deny);
    CHECK(v.text == "Permission to use bash with command " + std::string(c) + " has been denied.");
  }
  CHECK(bash(p, "rmdir x").kind == Verdict::Kind::allow);
  CHECK(bash(p, "echo $HOME").kind == Verdict::Kind::allow);
}

TEST_CASE("allow Bash, deny Bash(rm:*): parts that could be rm are uncertain") {
  Workspace w;
  const Policy p = w.policy({.allow = {"Bash"}, .deny = {"Bash(rm:*)"}});
  for (const char* c : {"sudo rm x", "$CMD x", "ls | xargs rm", "find . -exec rm {} ;"}) {
    INFO(c);
    const Verdict v = bash(p, c);
    CHECK(v.kind == Verdict::Kind::ask);
    CHECK(v.reason == "uncertain");
  }
}

TEST_CASE("uncertain only when an opaque word could make the part match") {
  Workspace w;
  const Policy p = w.policy({.allow = {"Bash"}, .deny = {"Bash(git push:*)"}});
  CHECK(bash(p, "git $SUB").kind == Verdict::Kind::ask);
  CHECK(bash(p, "$CMD x").kind == Verdict::Kind::ask);
  CHECK(bash(p, "echo $HOME").kind == Verdict::Kind::allow);
  CHECK(bash(p, "git status $X").kind == Verdict::Kind::allow);
}

TEST_CASE("allow Bash, ask Bash(git push:*): the ask rule's text") {
  Workspace w;
  const Policy p = w.policy({.allow = {"Bash"}, .ask = {"Bash(git push:*)"}});
  const Verdict v = bash(p, "git push");
  CHECK(v.kind == Verdict::Kind::ask);
  CHECK(v.text == "Rebound requested permissions to use bash, but you haven't granted it yet.");
  CHECK(v.reason == "rule Bash(git push:*) (global)");
  CHECK_FALSE(v.offer_always);
  CHECK(bash(p, "git status").kind == Verdict::Kind::allow);
}

TEST_CASE("allow Bash(cat:*), deny Read(./secrets/**): the paths a command names") {
  Workspace w;
  const Policy p = w.policy({.allow = {"Bash(cat:*)"}, .deny = {"Read(./secrets/**)"}});
  for (const char* c :
       {"cat secrets/a.txt", "cat sec*/a.txt", "cat < secrets/a.txt", "cd secrets && cat a.txt",
        "echo secrets/a.txt", "cat pub/a.txt", "cat --file=secrets/a.txt"}) {
    INFO(c);
    CHECK(bash(p, c).kind == Verdict::Kind::deny);
  }
  CHECK(bash(p, "cat src/a.txt").kind == Verdict::Kind::allow);
  CHECK(bash(p, "cd - && cat a.txt").kind == Verdict::Kind::ask);
}

TEST_CASE("deny Edit(...): output redirections are writes") {
  Workspace w;
  const Policy p = w.policy({.allow = {"Bash"}, .deny = {"Edit(src/**)"}});
  CHECK(bash(p, "echo x > src/b.txt").kind == Verdict::Kind::deny);
  CHECK(bash(p, "echo x >> top.txt").kind == Verdict::Kind::allow);
  CHECK(bash(p, "echo x > /dev/null 2>&1").kind == Verdict::Kind::allow);
}

TEST_CASE("deny Read(./secrets/**): the file tools") {
  Workspace w;
  const Policy p = w.policy({.deny = {"Read(./secrets/**)"}});
  const std::string denied = "File is in a directory that is denied by your permission settings.";
  CHECK(call(p, "read", Json{{"path", "secrets/a.txt"}}).text == denied);
  CHECK(call(p, "ls", Json{{"path", "secrets"}}).text == denied);
  CHECK(call(p, "read", Json{{"path", "pub/a.txt"}}).text == denied);  // through the symlink
  CHECK(call(p, "grep", Json{{"pattern", "x"}}).kind == Verdict::Kind::allow);
  CHECK(call(p, "read", Json{{"path", "top.txt"}}).kind == Verdict::Kind::allow);
}

TEST_CASE("allow Edit(src/**): edits inside run, elsewhere ask") {
  Workspace w;
  const Policy p = w.policy({.allow = {"Edit(src/**)"}});
  CHECK(call(p, "edit", Json{{"path", "src/a.txt"}}).kind == Verdict::Kind::allow);
  CHECK(call(p, "write", Json{{"path", "src/new.txt"}}).kind == Verdict::Kind::allow);
  const Verdict v = call(p, "edit", Json{{"path", "top.txt"}});
  CHECK(v.kind == Verdict::Kind::ask);
  CHECK(v.text == "Rebound requested permissions to write to " + w.root() +
                      "/top.txt, but you haven't granted it yet.");
  // An allow rule needs both the lexical and the real path.
  CHECK(call(p, "read", Json{{"path", "/etc/hostname"}}).kind == Verdict::Kind::ask);
}

TEST_CASE("whole-tool denies remove tools") {
  Workspace w;
  const Policy p =
      w.policy({.deny = {"bash", "LS", "Glob", "mcp__fake__danger", "mcp__other__*", "mcp__x"}});
  CHECK(p.removes("bash", ""));
  CHECK(p.removes("ls", ""));
  CHECK(p.removes("find", ""));
  CHECK_FALSE(p.removes("read", ""));
  CHECK(p.removes("mcp__fake__danger", "fake"));
  CHECK_FALSE(p.removes("mcp__fake__echo", "fake"));
  CHECK(p.removes("mcp__other__anything", "other"));
  CHECK(p.removes("mcp__x__y", "x"));
  const Policy narrow = w.policy({.deny = {"Bash(rm:*)", "Bash(*)"}});
  CHECK(narrow.removes("bash", ""));
}

TEST_CASE("MCP rules: allow one, ask the rest") {
  Workspace w;
  const Policy p = w.policy({.allow = {"mcp__fake__echo"}});
  auto mcp = [&](const char* name) {
    Json in = Json::object();
    Call c{name, in, "fake"};
    return p.judge(c);
  };
  CHECK(mcp("mcp__fake__echo").kind == Verdict::Kind::allow);
  CHECK(mcp("mcp__FAKE__ECHO").kind == Verdict::Kind::allow);
  const Verdict v = mcp("mcp__fake__other");
  CHECK(v.kind == Verdict::Kind::ask);
  CHECK(v.text ==
        "Rebound requested permissions to use mcp__fake__other, but you haven't granted it yet.");
  Json in = Json::object();
  Call hinted{"mcp__fake__look", in, "fake"};
  hinted.read_only_hint = true;
  CHECK(p.judge(hinted).kind == Verdict::Kind::allow);
}

TEST_CASE("invalid rules and their reasons") {
  auto reason = [](const char* text, bool extensions = false) {
    RuleSyntax syntax;
    syntax.extensions_configured = extensions;
    auto parsed = parse_rule(text, Behavior::allow, syntax);
    return !parsed.ok() ? parsed.error().message : std::string("valid");
  };
  CHECK(reason("Bash(echo:*") == "unbalanced parentheses");
  CHECK(reason("Bash)") == "unbalanced parentheses");
  CHECK(reason("NoSuchTool") == "unknown tool NoSuchTool");
  CHECK(reason("NoSuchTool", true) == "valid");
  CHECK(reason("Bash(make && make test)") ==
        "bash specifiers match one simple command; write one rule per command");
  CHECK(reason("Bash(a:*b)") == "':*' must end the specifier");
  CHECK(reason("Read(../x)") == "use //absolute paths for places outside the workspace");
  CHECK(reason("Bash()") == "empty specifier");
  CHECK(reason("(x)") == "empty tool name");
  CHECK(reason("Bash(x) y") == "text after the closing parenthesis");
  CHECK(reason("mcp__s__t(x)") == "mcp__s__t takes no specifier");
  CHECK(reason("mcp__s*") == "'*' is allowed only as mcp__<server>__*");
  CHECK(reason("WebFetch(domain:x.com)") == "valid");
  CHECK(reason("Bash('a;b' c)") == "valid");
  CHECK(reason("  Read  ") == "valid");
}

TEST_CASE("bash specifier forms") {
  auto rule = [](const char* spec) {
    return parse_rule(std::string("Bash(") + spec + ")", Behavior::allow, {}).value();
  };
  auto matches = [](const Rule& r, std::string_view text) {
    for (const auto& g : r.command)
      if (glob_matches(g, text)) return true;
    return false;
  };
  const Rule npm = rule("npm test:*");
  CHECK(matches(npm, "npm test"));
  CHECK(matches(npm, "npm test --silent"));
  CHECK_FALSE(matches(npm, "npm testing"));
  const Rule echo = rule("echo *");
  CHECK(matches(echo, "echo"));
  CHECK(matches(echo, "echo a"));
  CHECK_FALSE(matches(echo, "echoX"));
  const Rule touch = rule("touch * z3");
  CHECK(matches(touch, "touch a z3"));
  CHECK_FALSE(matches(touch, "touch z3"));
  const Rule exact = rule("touch z1");
  CHECK(matches(exact, "touch z1"));
  CHECK_FALSE(matches(exact, "touch z1 z2"));
  const Rule star = rule("echo \\*");
  CHECK(matches(star, "echo *"));
  CHECK_FALSE(matches(star, "echo a"));
}

TEST_CASE("the modes decide what no rule decided") {
  Workspace w;
  const std::string outside = "/etc/hostname";
  auto kind = [&](Mode m, const char* tool, const std::string& path) {
    const Policy p = w.policy({.mode = m});
    return call(p, tool, Json{{"path", path}, {"command", "true"}}).kind;
  };
  using K = Verdict::Kind;
  // read inside / outside; edit inside / outside; bash
  CHECK(kind(Mode::default_mode, "read", "top.txt") == K::allow);
  CHECK(kind(Mode::default_mode, "read", outside) == K::ask);
  CHECK(kind(Mode::default_mode, "edit", "top.txt") == K::ask);
  CHECK(kind(Mode::default_mode, "bash", "") == K::ask);
  CHECK(kind(Mode::accept_edits, "edit", "top.txt") == K::allow);
  CHECK(kind(Mode::accept_edits, "write", outside) == K::ask);
  CHECK(kind(Mode::accept_edits, "bash", "") == K::ask);
  CHECK(kind(Mode::plan, "read", "top.txt") == K::allow);
  CHECK(kind(Mode::plan, "bash", "") == K::ask);
  CHECK(kind(Mode::dont_ask, "read", "top.txt") == K::allow);
  CHECK(kind(Mode::dont_ask, "read", outside) == K::deny);
  CHECK(kind(Mode::dont_ask, "edit", "top.txt") == K::deny);
  CHECK(kind(Mode::dont_ask, "bash", "") == K::deny);
  CHECK(kind(Mode::bypass, "read", outside) == K::allow);
  CHECK(kind(Mode::bypass, "edit", outside) == K::allow);
  CHECK(kind(Mode::bypass, "bash", "") == K::allow);
}

TEST_CASE("plan refuses edits even when allowed, deny rules come first") {
  Workspace w;
  const Policy p = w.policy({.allow = {"Edit"}, .deny = {"Edit(secrets/**)"}, .mode = Mode::plan});
  const Verdict v = call(p, "edit", Json{{"path", "src/a.txt"}});
  CHECK(v.kind == Verdict::Kind::deny);
  CHECK(v.text == "Cannot write to " + w.root() + "/src/a.txt while in plan mode.");
  CHECK(call(p, "edit", Json{{"path", "secrets/a.txt"}}).text ==
        "File is in a directory that is denied by your permission settings.");
}

TEST_CASE("dontAsk denies every ask with its text, allow rules still allow") {
  Workspace w;
  const Policy p =
      w.policy({.allow = {"Bash(ls:*)"}, .ask = {"Bash(git:*)"}, .mode = Mode::dont_ask});
  CHECK(bash(p, "ls -la").kind == Verdict::Kind::allow);
  const Verdict v = bash(p, "git push");
  CHECK(v.kind == Verdict::Kind::deny);
  CHECK(v.text == dont_ask_text("bash"));
  CHECK(v.text.rfind("Permission to use bash has been denied because Rebound is running in "
                     "don't ask mode.",
                     0) == 0);
}

TEST_CASE("bypassPermissions: deny and ask rules still apply") {
  Workspace w;
  const Policy p =
      w.policy({.ask = {"Bash(git push:*)"}, .deny = {"Read(./secrets/**)"}, .mode = Mode::bypass});
  CHECK(bash(p, "git push").kind == Verdict::Kind::ask);
  CHECK(call(p, "read", Json{{"path", "secrets/a.txt"}}).kind == Verdict::Kind::deny);
  CHECK(bash(p, "anything at all").kind == Verdict::Kind::allow);
}

TEST_CASE("hooks count as rules, grants as allow rules") {
  Workspace w;
  Policy p = w.policy({.ask = {"Bash(git push:*)"}});
  Json in{{"command", "make"}};
  Call c{"bash", in, ""};
  c.hook = Behavior::allow;
  CHECK(p.judge(c).kind == Verdict::Kind::allow);
  Json push{{"command", "git push"}};
  Call c2{"bash", push, ""};
  c2.hook = Behavior::allow;
  CHECK(p.judge(c2).kind == Verdict::Kind::ask);  // an ask rule outranks a hook's allow
  Call c3{"bash", in, ""};
  c3.hook = Behavior::ask;
  c3.hook_reason = "a hook wants to know";
  const Verdict v = p.judge(c3);
  CHECK(v.reason == "hook");
  CHECK(v.text == "a hook wants to know");
  CHECK(bash(p, "make").kind == Verdict::Kind::ask);
  p.grant("bash");
  CHECK(bash(p, "make").kind == Verdict::Kind::allow);
  CHECK(bash(p, "git push").kind == Verdict::Kind::ask);
  CHECK(p.rules().back().source == "session");
}

TEST_CASE("split_rule_list: commas and blanks outside parentheses") {
  CHECK(split_rule_list("Bash(git diff:*),Read Edit(src/**)") ==
        std::vector<std::string>{"Bash(git diff:*)", "Read", "Edit(src/**)"});
  CHECK(split_rule_list(" , Bash(a b, c) ,,") == std::vector<std::string>{"Bash(a b, c)"});
}

TEST_CASE("real_path_below gives what real_path gives, with fewer system calls") {
  TempDir dir;
  dir.write("a/b/file.txt", "x");
  dir.write("other/c.txt", "y");
  std::filesystem::create_symlink(dir.path() / "other", dir.path() / "a/link");
  std::filesystem::create_symlink("../other/c.txt", dir.path() / "a/flink");
  const std::string base = dir.path().string();
  const std::string real_base = real_path(base);
  const std::vector<std::string> below = {"",
                                          "/a",
                                          "/a/b",
                                          "/a/b/file.txt",
                                          "/a/b/file.txt/under",
                                          "/a/missing",
                                          "/a/missing/x",
                                          "/a/link",
                                          "/a/link/c.txt",
                                          "/a/link/none/x",
                                          "/a/flink",
                                          "/a/b/file.txt2"};
  for (const auto& rest : below) {
    const std::string lexical = base + rest;
    CAPTURE(lexical);
    CHECK(real_path_below(lexical, base, real_base) == real_path(lexical));
  }
  // Not below the base, or the base a prefix of a longer name: the general path.
  CHECK(real_path_below(base + "x/y", base, real_base) == real_path(base + "x/y"));
  CHECK(real_path_below("/etc/hostname", base, real_base) == real_path("/etc/hostname"));
  CHECK(real_path_below("/etc/hostname", "/", "/") == real_path("/etc/hostname"));
  CHECK(real_path_below(base + "/a/link/c.txt", base, real_base) == real_base + "/other/c.txt");
}

namespace {

// A clock that runs `ahead` of the real one, so that a directory made now counts as settled.
DirIndex::WallClock clock_ahead(const std::int64_t& ahead) {
  return [&ahead] {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::system_clock::now().time_since_epoch())
               .count() +
           ahead;
  };
}

void set_mtime(const std::filesystem::path& p, const timespec& t) {
  const timespec times[2] = {t, t};
  REQUIRE(::utimensat(AT_FDCWD, p.c_str(), times, AT_SYMLINK_NOFOLLOW) == 0);
}

}  // namespace

TEST_CASE("a directory's listing is kept while its ctime stands, and only once settled") {
  TempDir dir;
  dir.write("file.txt", "x");
  dir.write("sub/inner.txt", "y");
  std::filesystem::create_symlink(dir.path() / "sub", dir.path() / "link");
  const std::string path = dir.path().string();
  std::int64_t ahead = 0;
  const DirIndex index(clock_ahead(ahead));
  using Kind = DirListing::Kind;
  // Just changed: not read, not kept.
  CHECK(index.listing(path) == nullptr);
  ahead = DirIndex::kSettledNs + 1'000'000'000;
  const auto first = index.listing(path);
  REQUIRE(first != nullptr);
  CHECK(first->kind("file.txt") == Kind::other);
  CHECK(first->kind("sub") == Kind::directory);
  CHECK(first->kind("link") == Kind::symlink);
  CHECK(first->kind("missing") == Kind::absent);
  CHECK(index.listing(path) == first);  // kept: the same listing
  // A symlink added, then the mtime set back to the kept one: the ctime still moved.
  struct stat before {};
  REQUIRE(::stat(path.c_str(), &before) == 0);
  std::filesystem::create_symlink(dir.path() / "sub", dir.path() / "late");
  set_mtime(dir.path(), before.st_mtim);
  const auto second = index.listing(path);
  REQUIRE(second != nullptr);
  CHECK(second != first);
  CHECK(second->kind("late") == Kind::symlink);
  // Not a directory, or missing: none.
  CHECK(index.listing(path + "/file.txt") == nullptr);
  CHECK(index.listing(path + "/nope") == nullptr);
  // Too many names: none.
  for (std::size_t i = 0; i <= DirIndex::kMaxNames; ++i)
    std::ofstream(dir.path() / "sub" / ("f" + std::to_string(i)));
  CHECK(index.listing(path + "/sub") == nullptr);
}

TEST_CASE("bash path words through a kept listing: symlinks, new names, files made symlinks") {
  TempDir dir;
  dir.write("secrets/a.txt", "s");
  dir.write("top.txt", "t");
  dir.write("src/a.txt", "a");
  const std::filesystem::path root = std::filesystem::canonical(dir.path());
  std::filesystem::create_symlink(root / "secrets", root / "pub");
  const std::string ws = root.string(), home = "/nonexistent-home";
  Rule deny = parse_rule("Read(./secrets/**)", Behavior::deny, RuleSyntax{}).value();
  anchor_pattern(deny.path, home, ws);
  const std::vector<Rule> rules{deny};
  std::int64_t ahead = DirIndex::kSettledNs + 1'000'000'000;
  const DirIndex index(clock_ahead(ahead));
  BashRules br{rules, home, ws, true, false, false, &ws, &index};
  const auto denied = [&](const char* command) { return judge_bash_command(command, br).denied; };
  CHECK(denied("cat pub/a.txt"));
  CHECK_FALSE(denied("cat top.txt src/a.txt --opt -- x missing"));
  CHECK(index.listing(ws) != nullptr);  // the judgements above used a kept listing
  CHECK(denied("cat secrets/a.txt"));
  // A new symlink, the mtime set back: seen.
  struct stat before {};
  REQUIRE(::stat(ws.c_str(), &before) == 0);
  std::filesystem::create_symlink(root / "secrets" / "a.txt", root / "late");
  set_mtime(root, before.st_mtim);
  CHECK(denied("cat late"));
  CHECK(denied("cat top.txt && cat late"));
  // A file replaced by a symlink under the same name.
  std::filesystem::remove(root / "top.txt");
  std::filesystem::create_symlink(root / "secrets" / "a.txt", root / "top.txt");
  CHECK(denied("cat top.txt"));
  // Without a settled directory (no listing) the answers are the same.
  ahead = 0;
  std::filesystem::create_symlink(root / "secrets", root / "late2");
  CHECK(index.listing(ws) == nullptr);
  CHECK(denied("cat late2/a.txt"));
  CHECK_FALSE(denied("cat src/a.txt"));
}
