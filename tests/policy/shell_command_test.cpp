// The bash splitter of policy.md section 2.4: which parts a command has, their texts, and what
// it does not understand.
#include "policy/shell_command.h"

#include <doctest/doctest.h>

using namespace rebound::policy;

namespace {

std::vector<std::string> texts(std::string_view command) {
  const ShellAnalysis a = analyse_shell(command, "/home/u");
  REQUIRE_MESSAGE(a.understood, a.problem);
  std::vector<std::string> out;
  for (const auto& p : a.parts)
    out.push_back(part_text(p));
  return out;
}

bool understood(std::string_view command) {
  return analyse_shell(command, "/h").understood;
}

using V = std::vector<std::string>;

}  // namespace

TEST_CASE("parts of lists, pipelines and operators, in command order") {
  CHECK(texts("echo a && touch z1") == V{"echo a", "touch z1"});
  CHECK(texts("echo a\ntouch z2") == V{"echo a", "touch z2"});
  CHECK(texts("a || b; c | d |& e & f") == V{"a", "b", "c", "d", "e", "f"});
  CHECK(texts("! grep x f") == V{"grep x f"});
  CHECK(texts("  npm   test\t--silent  ") == V{"npm test --silent"});
  CHECK(texts("echo a \\\n  b") == V{"echo a b"});
  CHECK(texts("echo a # a comment && rm x") == V{"echo a"});
  CHECK(texts("").empty());
}

TEST_CASE("substitutions are parts, the outer command too") {
  CHECK(texts("echo $(touch z2)") == V{"echo $(touch z2)", "touch z2"});
  CHECK(texts("echo `touch z2`") == V{"echo `touch z2`", "touch z2"});
  CHECK(texts("diff <(ls a) >(cat)") == V{"diff <(ls a) >(cat)", "ls a", "cat"});
  CHECK(texts("echo \"x $(rm -f y) z\"") == V{"echo \"x $(rm -f y) z\"", "rm -f y"});
  CHECK(texts("echo $((1 + 2))") == V{"echo $((1 + 2))"});
  CHECK(texts("x=$(date) y") == V{"x=$(date) y", "date"});
}

TEST_CASE("compound commands, functions, tests and arithmetic") {
  CHECK(texts("(touch z2)") == V{"touch z2"});
  CHECK(texts("{ a; b; }") == V{"a", "b"});
  CHECK(texts("if a; then b; elif c; then d; else e; fi") == V{"a", "b", "c", "d", "e"});
  CHECK(texts("while a; do b; done") == V{"a", "b"});
  CHECK(texts("until a\ndo\n b\ndone") == V{"a", "b"});
  CHECK(texts("for f in *.txt $(ls); do cat \"$f\"; done") == V{"ls", "cat \"$f\""});
  CHECK(texts("for ((i=0;i<3;i++)); do echo $i; done") == V{"echo $i"});
  CHECK(texts("case $x in a|b) one;; (c) two;& *) three;;& esac") == V{"one", "two", "three"});
  CHECK(texts("f() { rm x; }; f") == V{"rm x", "f"});
  CHECK(texts("function g { ls; }") == V{"ls"});
  CHECK(texts("[[ -f a && $x == y ]] && echo yes") == V{"[[ -f a && $x == y ]]", "echo yes"});
  CHECK(texts("(( i++ )) || true") == V{"(( i++ ))", "true"});
  CHECK(texts("{ echo a; } > out.txt") == V{"echo a", "> out.txt"});
}

TEST_CASE("here-documents: a quoted delimiter's body is inert, an unquoted one's runs") {
  CHECK(texts("cat > out.txt <<'EOF'\n$(rm -rf x)\nEOF") == V{"cat > out.txt <<'EOF'"});
  CHECK(texts("cat <<EOF\nhello $(touch z) `id`\nEOF\necho after") ==
        V{"cat <<EOF", "touch z", "id", "echo after"});
  CHECK(texts("cat <<-EOF\n\tbody\n\tEOF\nls") == V{"cat <<-EOF", "ls"});
  CHECK(texts("cat <<< 'a string'") == V{"cat <<< 'a string'"});
}

TEST_CASE("sh -c strings and eval words are parsed the same way") {
  CHECK(texts("bash -c 'rm -f x'") == V{"bash -c 'rm -f x'", "rm -f x"});
  CHECK(texts("sh -ec \"a && b\"") == V{"sh -ec \"a && b\"", "a", "b"});
  CHECK(texts("eval 'touch a;' ls") == V{"eval 'touch a;' ls", "touch a", "ls"});
  CHECK(texts("timeout 5 bash -c 'id'") == V{"timeout 5 bash -c 'id'", "id"});
  CHECK(texts("bash script.sh") == V{"bash script.sh"});
  CHECK_FALSE(understood("bash -c \"$CMD\""));
  CHECK_FALSE(understood("eval $x"));
}

TEST_CASE("words: quotes, escapes, $'…', tilde, opaque words, globs") {
  const ShellAnalysis a =
      analyse_shell("X=1 cat 'a b' \"c\\$d\" $'e\\tf' ~/g ~root/h $HOME sec*/a.txt \\*", "/home/u");
  REQUIRE(a.understood);
  REQUIRE(a.parts.size() == 1);
  const auto& t = a.parts[0].tokens;
  REQUIRE(t.size() == 10);
  CHECK(t[0].kind == ShellToken::Kind::assignment);
  CHECK(t[2].word.value == "a b");
  CHECK(t[3].word.value == "c$d");
  CHECK(t[4].word.value == "e\tf");
  CHECK(t[5].word.value == "/home/u/g");
  CHECK(t[6].word.opaque);
  CHECK(t[7].word.opaque);
  CHECK(t[8].word.glob);
  CHECK(t[8].word.pattern == "sec*/a.txt");
  CHECK_FALSE(t[9].word.glob);
  CHECK(t[9].word.value == "*");
}

TEST_CASE("redirections are tokens of their part") {
  const ShellAnalysis a = analyse_shell("cat < in.txt 2>&1 >>log &>/dev/null", "/h");
  REQUIRE(a.understood);
  REQUIRE(a.parts.size() == 1);
  CHECK(part_text(a.parts[0]) == "cat < in.txt 2>&1 >>log &>/dev/null");
  const auto& t = a.parts[0].tokens;
  CHECK(t[1].kind == ShellToken::Kind::redirect_op);
  CHECK(t[2].kind == ShellToken::Kind::redirect_target);
  CHECK(t[2].word.value == "in.txt");
  CHECK(t[3].word.value == ">&");
  CHECK(t[5].word.value == ">>");
  CHECK(t[7].word.value == "&>");
}

TEST_CASE("cd and pushd are followed, cd - and popd lose the directory") {
  const ShellAnalysis a = analyse_shell("cd secrets && cat a.txt; cd -; ls", "/h");
  REQUIRE(a.parts.size() == 4);
  CHECK(a.parts[1].cd_path == std::vector<std::string>{"secrets"});
  CHECK(a.parts[1].cwd_known);
  CHECK_FALSE(a.parts[3].cwd_known);
}

TEST_CASE("wrappers and the command they run") {
  const ShellAnalysis a = analyse_shell(
      "env -u X A=1 nice -n 5 timeout -s KILL 5 stdbuf -oL nohup command -p rm -f x", "/h");
  REQUIRE(a.parts.size() == 1);
  const ShellPart& p = a.parts[0];
  std::size_t k = command_word(p);
  std::vector<std::string> chain;
  while (std::size_t inner = wrapped_command(p, k)) {
    chain.push_back(p.tokens[inner].word.value);
    k = inner;
  }
  CHECK(chain == V{"nice", "timeout", "stdbuf", "nohup", "command", "rm"});
}

TEST_CASE("what is not understood") {
  for (const char* c :
       {"select x in a; do echo $x; done", "echo 'abc", "echo \"abc", "coproc cat", "echo $(ls",
        "echo `ls", "cat <<EOF\nno end", "if true; then echo", "a &&", "&& a", ")", "a (b)",
        "case x in a) b", "echo ${x:-$(id)}", "for x in a; echo; done", "done"}) {
    INFO(c);
    CHECK_FALSE(understood(c));
  }
}

TEST_CASE("deep nesting ends as not understood, not in a crash") {
  std::string deep;
  for (int i = 0; i < 5000; ++i)
    deep += "$(";
  CHECK_FALSE(understood(deep));
  std::string subshells(5000, '(');
  CHECK_FALSE(understood(subshells));
}
