// Golden results of grep and find over fixture trees with nested .gitignore files and
// negation (tools.md sections 4.5, 4.6, 4.8), and the regex engine's limits.

#include <doctest/doctest.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "protocol/json.h"
#include "tests/support/temp_dir.h"
#include "tests/tools/tool_test_support.h"
#include "tools/builtin_tools.h"
#include "tools/file_io.h"
#include "tools/glob.h"
#include "tools/mapped_file.h"
#include "tools/regex.h"
#include "tools/walker.h"

using rebound::protocol::Json;
using rebound::session::ToolContext;
using rebound::testing::context_in;
using rebound::testing::kNotCancelled;
using rebound::testing::TempDir;
using rebound::testing::text_of;
namespace tools = rebound::tools;

namespace {

// A tree: a git root with ignore rules at two levels, a negation, hidden files, build output.
void make_tree(const TempDir& dir) {
  std::filesystem::create_directories(dir.path() / ".git");
  dir.write(".git/config", "needle in git\n");
  dir.write(".gitignore", "*.log\nbuild/\n!keep.log\n/top-only.txt\n");
  dir.write("a.txt", "alpha needle\nbeta\n");
  dir.write("keep.log", "needle kept\n");
  dir.write("drop.log", "needle dropped\n");
  dir.write("top-only.txt", "needle top\n");
  dir.write("build/out.txt", "needle built\n");
  dir.write(".hidden/h.txt", "needle hidden\n");
  dir.write("src/.gitignore", "gen/\n*.tmp\n!important.tmp\n");
  dir.write("src/main.cpp", "int main() { return needle; }\n");
  dir.write("src/util.cpp", "// NEEDLE upper\nvoid f();\n");
  dir.write("src/x.tmp", "needle tmp\n");
  dir.write("src/important.tmp", "needle important\n");
  dir.write("src/gen/g.cpp", "needle generated\n");
  dir.write("src/top-only.txt", "needle nested top\n");
  dir.write("bin.dat", std::string("needle\0binary", 13));
}

}  // namespace

TEST_CASE("find: walk order, nested .gitignore with negation, directories marked") {
  TempDir dir;
  make_tree(dir);
  const auto c = context_in(dir);
  auto r = tools::run_find(Json{{"pattern", "*"}}, c, kNotCancelled);
  CHECK(text_of(r) ==
        ".gitignore\n.hidden/\n.hidden/h.txt\na.txt\nbin.dat\nkeep.log\nsrc/\nsrc/.gitignore\n"
        "src/important.tmp\nsrc/main.cpp\nsrc/top-only.txt\nsrc/util.cpp");
  CHECK(text_of(tools::run_find(Json{{"pattern", "**/*.cpp"}}, c, kNotCancelled)) ==
        "src/main.cpp\nsrc/util.cpp");
  CHECK(text_of(tools::run_find(Json{{"pattern", "src/*.{tmp,txt}"}}, c, kNotCancelled)) ==
        "src/important.tmp\nsrc/top-only.txt");
  CHECK(text_of(tools::run_find(Json{{"pattern", "*.cpp"}, {"path", "src"}}, c, kNotCancelled)) ==
        "main.cpp\nutil.cpp");
  r = tools::run_find(Json{{"pattern", "*"}, {"limit", 2}}, c, kNotCancelled);
  CHECK(text_of(r) ==
        ".gitignore\n.hidden/\n\n[2 results limit reached. Use limit=4 for more, or refine "
        "pattern]");
  CHECK(r.details->dump() == R"({"resultLimitReached":2})");
  CHECK(text_of(tools::run_find(Json{{"pattern", "*.none"}}, c, kNotCancelled)) ==
        "No files found matching pattern");
  CHECK(text_of(tools::run_find(Json{{"pattern", "*"}, {"path", "a.txt"}}, c, kNotCancelled)) ==
        "Path not found: " + (dir.path() / "a.txt").string());
}

TEST_CASE("find: ignore files of ancestors up to the git root apply to a searched subdirectory") {
  TempDir dir;
  make_tree(dir);
  CHECK(text_of(tools::run_find(Json{{"pattern", "*.log"}, {"path", "."}}, context_in(dir),
                                kNotCancelled)) == "keep.log");
  auto c = context_in(dir);
  c.cwd = (dir.path() / "src").string();
  dir.write("src/more.log", "x\n");
  dir.write("src/keep.log", "x\n");
  CHECK(text_of(tools::run_find(Json{{"pattern", "*.log"}}, c, kNotCancelled)) == "keep.log");
}

TEST_CASE("grep: matches in walk order, ignored and binary files skipped") {
  TempDir dir;
  make_tree(dir);
  const auto c = context_in(dir);
  auto r = tools::run_grep(Json{{"pattern", "needle"}}, c, kNotCancelled);
  CHECK(text_of(r) ==
        ".hidden/h.txt:1: needle hidden\na.txt:1: alpha needle\nkeep.log:1: needle kept\n"
        "src/important.tmp:1: needle important\nsrc/main.cpp:1: int main() { return needle; }\n"
        "src/top-only.txt:1: needle nested top");
  CHECK(!r.details);
  CHECK(
      text_of(tools::run_grep(Json{{"pattern", "needle"}, {"ignoreCase", true}, {"glob", "*.cpp"}},
                              c, kNotCancelled)) ==
      "src/main.cpp:1: int main() { return needle; }\nsrc/util.cpp:1: // NEEDLE upper");
  CHECK(text_of(tools::run_grep(Json{{"pattern", "f("}, {"literal", true}}, c, kNotCancelled)) ==
        "src/util.cpp:2: void f();");
  CHECK(text_of(tools::run_grep(Json{{"pattern", "beta"}, {"path", "a.txt"}}, c, kNotCancelled)) ==
        "a.txt:2: beta");
  CHECK(text_of(tools::run_grep(Json{{"pattern", "zzz"}}, c, kNotCancelled)) == "No matches found");
  r = tools::run_grep(Json{{"pattern", "("}}, c, kNotCancelled);
  CHECK(r.is_error);
  CHECK(text_of(r).rfind("Invalid regular expression: missing closing parenthesis", 0) == 0);
  CHECK(text_of(tools::run_grep(Json{{"pattern", "x"}, {"path", "nope"}}, c, kNotCancelled)) ==
        "Path not found: " + (dir.path() / "nope").string());
  // JavaScript escapes: \u0061 is "a".
  CHECK(text_of(tools::run_grep(Json{{"pattern", "\\u0061lpha"}}, c, kNotCancelled)) ==
        "a.txt:1: alpha needle");
}

TEST_CASE("grep: context blocks, limit, long lines, CRLF") {
  TempDir dir;
  dir.write("f.txt", "one\r\ntwo\r\nthree\r\nfour\r\nfive\r\n");
  dir.write("long.txt", std::string(600, 'q') + "\n");
  const auto c = context_in(dir);
  CHECK(text_of(tools::run_grep(Json{{"pattern", "t"}, {"path", "f.txt"}, {"context", 1}}, c,
                                kNotCancelled)) ==
        "f.txt-1- one\nf.txt:2: two\nf.txt-3- three\nf.txt-2- two\nf.txt:3: three\nf.txt-4- four");
  auto r =
      tools::run_grep(Json{{"pattern", "o"}, {"path", "f.txt"}, {"limit", 2}}, c, kNotCancelled);
  CHECK(text_of(r) ==
        "f.txt:1: one\nf.txt:2: two\n\n[2 matches limit reached. Use limit=4 for more, or refine "
        "pattern]");
  CHECK(r.details->dump() == R"({"matchLimitReached":2})");
  r = tools::run_grep(Json{{"pattern", "q"}, {"path", "long.txt"}}, c, kNotCancelled);
  CHECK(text_of(r) == "long.txt:1: " + std::string(500, 'q') +
                          "... [truncated]\n\n[Some lines truncated to 500 chars. Use read tool to "
                          "see full lines]");
  CHECK(r.details->dump() == R"({"linesTruncated":true})");
  CHECK(text_of(tools::run_grep(Json{{"pattern", "^five$"}, {"path", "f.txt"}}, c,
                                kNotCancelled)) == "f.txt:5: five");
}

TEST_CASE("grep: a large counted pattern on a 400 KB line gives up with the file and line") {
  // Issue 50: each unit of PCRE2's match limit walks the whole compiled group, so a pattern of
  // 40 KB compiled spent about a second per call at the plain limit (minutes with several
  // calls and larger patterns); the limit is now shared out by the compiled size.
  TempDir dir;
  dir.write("big.txt", std::string(399999, 'a') + "!\n");
  const auto start = std::chrono::steady_clock::now();
  auto r =
      tools::run_grep(Json{{"pattern", "(?:a?){5000}a{5000}$"}}, context_in(dir), kNotCancelled);
  const auto took = std::chrono::steady_clock::now() - start;
  CHECK(r.is_error);
  CHECK(text_of(r) == "Regular expression too complex (match limit exceeded in big.txt:1)");
  MESSAGE("the large pattern gave up after "
          << std::chrono::duration_cast<std::chrono::milliseconds>(took).count() << " ms");
}

TEST_CASE("grep: a catastrophically backtracking pattern fails fast with the file and line") {
  TempDir dir;
  dir.write("ok.txt", "fine\n");
  dir.write("z.txt", "short\n" + std::string(40, 'a') + "!\n");
  const auto start = std::chrono::steady_clock::now();
  auto r = tools::run_grep(Json{{"pattern", "(a+)+$"}}, context_in(dir), kNotCancelled);
  const auto took = std::chrono::steady_clock::now() - start;
  CHECK(r.is_error);
  CHECK(text_of(r) == "Regular expression too complex (match limit exceeded in z.txt:2)");
  // Not a timing assertion of performance: a hang would never get here.
  MESSAGE("catastrophic pattern gave up after "
          << std::chrono::duration_cast<std::chrono::milliseconds>(took).count() << " ms");
}

TEST_CASE("globs and ignore lines") {
  auto g = tools::PathGlob::compile("src/**/*.test.ts");
  REQUIRE(g);
  tools::Matcher m(g->regex());
  CHECK(g->matches("src/a.test.ts", m));
  CHECK(g->matches("x/src/a/b/c.test.ts", m));
  CHECK(!g->matches("src/a.ts", m));
  auto b = tools::PathGlob::compile("[!a-c]?.{js,ts}");
  REQUIRE(b);
  tools::Matcher mb(b->regex());
  CHECK(mb.matches("dx.ts"));
  CHECK(!mb.matches("ax.ts"));
  CHECK(!mb.matches("d/.ts"));
  tools::IgnoreStack stack;
  stack.add_text("/r", "# comment\n*.o\n!keep.o\nout/\n/rooted\ndocs/**/*.md\n\\#hash\n");
  CHECK(stack.ignored("/r/x.o", false));
  CHECK(stack.ignored("/r/deep/y.o", false));
  CHECK(!stack.ignored("/r/keep.o", false));
  CHECK(stack.ignored("/r/out", true));
  CHECK(!stack.ignored("/r/out", false));
  CHECK(stack.ignored("/r/rooted", false));
  CHECK(!stack.ignored("/r/sub/rooted", false));
  CHECK(stack.ignored("/r/docs/a/b/c.md", false));
  CHECK(stack.ignored("/r/#hash", false));
  CHECK(!stack.ignored("/other/x.o", false));
}

TEST_CASE("grep: a search has a total budget, reported with the file and line it reached") {
  TempDir dir;
  std::string evil;
  for (int i = 0; i < 20000; ++i)
    evil += std::string(18, 'a') + "!\n";  // each line under the match limit, all 25 s
  dir.write("evil.txt", evil);
  const auto r =
      tools::run_grep_within(Json{{"pattern", "^(a|a)*$"}, {"path", "evil.txt"}}, context_in(dir),
                             kNotCancelled, std::chrono::milliseconds(200));
  CHECK(r.is_error);
  const std::string text = text_of(r);
  CHECK(text.rfind("Search stopped: it ran past its 200 ms budget (in evil.txt:", 0) == 0);
  CHECK(text.find("). Refine the pattern or the path") != std::string::npos);
  // The default budget is 30 s.
  CHECK(tools::kGrepBudget == std::chrono::milliseconds(30000));
}

TEST_CASE("grep: a mapped file that shrinks under the search is never fatal") {
  TempDir dir;
  std::string big;
  while (big.size() < 1024 * 1024)
    big += "some line of text\n";
  dir.write("big.txt", big);
  const std::string path = (dir.path() / "big.txt").string();
  tools::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  REQUIRE(fd);
  tools::MappedFile map;
  REQUIRE(map.map(fd.get(), big.size()));
  CHECK(!map.shrank());
  REQUIRE(::truncate(path.c_str(), 4096) == 0);  // another process cut the file
  // Reading past the new end raised SIGBUS and killed the process before the fix.
  const std::string_view data = map.data();
  CHECK(data.substr(0, 10) == "some line ");
  CHECK(std::count(data.begin(), data.end(), '\0') == static_cast<long>(big.size() - 4096));
  CHECK(map.shrank());
  // And through grep: the file is searched whole (its lost tail reads as NUL bytes).
  dir.write("big.txt", big);
  const auto r = tools::run_grep(Json{{"pattern", "text"}, {"path", "big.txt"}, {"limit", 3}},
                                 context_in(dir), kNotCancelled);
  CHECK(text_of(r).rfind("big.txt:1: some line of text", 0) == 0);
}

namespace {

// The file names of a tree of `n` files, in walk order (byte order: zero-padded).
std::string numbered(int i) {
  std::string n = std::to_string(i);
  return "f" + std::string(4 - n.size(), '0') + n + ".txt";
}

}  // namespace

TEST_CASE("grep over many files: the output is the walk order's, limits cut across files") {
  // 700 files: more than the first batches of the parallel search (16, 32, ... 256), so files
  // are searched by several threads and joined batch after batch.
  TempDir dir;
  std::string expected_all, every_line;
  for (int i = 0; i < 700; ++i) {
    // Larger files in between, so that threads finish out of order.
    const std::string filler = i % 7 == 0 ? std::string(200000, 'z') + "\n" : "";
    dir.write(numbered(i), filler + "hit " + std::to_string(i) + "\nmiss\nhit again\n");
    const std::size_t line = filler.empty() ? 1 : 2;
    if (!expected_all.empty()) expected_all += '\n';
    expected_all += numbered(i) + ":" + std::to_string(line) + ": hit " + std::to_string(i) + "\n" +
                    numbered(i) + ":" + std::to_string(line + 2) + ": hit again";
    if (!filler.empty())
      every_line += numbered(i) + ":1: " + std::string(500, 'z') + "... [truncated]\n";
    every_line += numbered(i) + ":" + std::to_string(line) + ": hit " + std::to_string(i) + "\n" +
                  numbered(i) + ":" + std::to_string(line + 1) + ": miss\n" + numbered(i) + ":" +
                  std::to_string(line + 2) + ": hit again\n";
  }
  const auto c = context_in(dir);
  auto r = tools::run_grep(Json{{"pattern", "^hit"}, {"limit", 1400}}, c, kNotCancelled);
  // 1,400 matches of about 25 bytes: under the 50KB cut, all in walk order.
  CHECK(text_of(r).substr(0, expected_all.size()) == expected_all);
  CHECK(r.details->dump() == R"({"matchLimitReached":1400})");
  // A limit that ends inside a file of a later batch: exactly the first 1,001 matches.
  r = tools::run_grep(Json{{"pattern", "^hit"}, {"limit", 1001}}, c, kNotCancelled);
  std::string first;
  std::size_t at = 0;
  for (int k = 0; k < 1001; ++k) {
    const std::size_t lf = expected_all.find('\n', at);
    at = lf == std::string::npos ? expected_all.size() : lf + 1;
  }
  first = expected_all.substr(0, at - 1);
  CHECK(text_of(r) == first +
                          "\n\n[1001 matches limit reached. Use limit=2002 for more, or refine "
                          "pattern]");
  // The 50KB cut in walk order too (every line, long ones cut to 500 characters).
  r = tools::run_grep(Json{{"pattern", "."}, {"limit", 100000}}, c, kNotCancelled);
  const std::string text = text_of(r);
  REQUIRE(r.details);
  CHECK(r.details->contains("truncation"));
  CHECK(r.details->value("linesTruncated", false));
  const std::size_t cut = text.find("\n\n[");
  REQUIRE(cut != std::string::npos);
  CHECK(cut > 40000);
  CHECK(every_line.rfind(text.substr(0, cut) + "\n", 0) == 0);
}

TEST_CASE("grep over many files: the first problem in walk order is the one reported") {
  TempDir dir;
  for (int i = 0; i < 400; ++i)
    dir.write(numbered(i), "fine\n");
  // Both too complex for the match limit; the earlier one in walk order is named.
  dir.write(numbered(150), "short\n" + std::string(40, 'a') + "!\n");
  dir.write(numbered(390), std::string(40, 'a') + "!\n");
  auto r = tools::run_grep(Json{{"pattern", "(a+)+$"}}, context_in(dir), kNotCancelled);
  CHECK(r.is_error);
  CHECK(text_of(r) ==
        "Regular expression too complex (match limit exceeded in " + numbered(150) + ":2)");
  // A cut line counts only when its match is in the output.
  dir.write(numbered(399), std::string(600, 'q') + "\n");
  dir.write(numbered(150), "q\n");
  dir.write(numbered(390), "fine\n");
  r = tools::run_grep(Json{{"pattern", "q"}, {"limit", 1}}, context_in(dir), kNotCancelled);
  CHECK(text_of(r) == numbered(150) +
                          ":1: q\n\n[1 matches limit reached. Use limit=2 for more, or refine "
                          "pattern]");
  CHECK(r.details->dump() == R"({"matchLimitReached":1})");
}

TEST_CASE("grep over many files: abort ends a search in flight") {
  TempDir dir;
  std::string evil;
  for (int i = 0; i < 2000; ++i)
    evil += std::string(18, 'a') + "!\n";
  for (int i = 0; i < 64; ++i)
    dir.write(numbered(i), evil);
  std::atomic<bool> cancelled{false};
  std::thread aborter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the abort comes later
    cancelled = true;
  });
  const auto r = tools::run_grep(Json{{"pattern", "^(a|a)*$"}}, context_in(dir), cancelled);
  aborter.join();
  CHECK(r.is_error);
  CHECK(text_of(r) == "Operation aborted");
}

TEST_CASE("the walk never follows a directory or file swapped for a symlink after it was listed") {
  TempDir dir;
  dir.write("ws/a/inside.txt", "needle inside\n");
  dir.write("ws/b.txt", "needle b\n");
  dir.write("ws/linked.txt", "needle linked\n");
  dir.write("outside/secret.txt", "needle secret\n");
  const auto ws = dir.path() / "ws";
  std::filesystem::rename(ws / "linked.txt", dir.path() / "linked-target.txt");
  std::filesystem::create_symlink(dir.path() / "linked-target.txt", ws / "linked.txt");
  // The visitor swaps `a` for a symlink out between listing it and entering it.
  std::vector<std::string> seen;
  tools::walk(
      ws.string(),
      [&](const tools::WalkEntry& e) {
        seen.emplace_back(e.rel);
        if (e.rel == "a") {
          std::filesystem::rename(ws / "a", ws / "a-old");
          std::filesystem::create_symlink(dir.path() / "outside", ws / "a");
        }
        return true;
      },
      kNotCancelled);
  CHECK(seen == std::vector<std::string>{"a", "b.txt", "linked.txt"});
  // grep: a file listed as a regular file and swapped for a symlink out is not read; a file that
  // was a symlink when listed is followed as before.
  std::filesystem::remove(ws / "a");
  std::filesystem::rename(ws / "a-old", ws / "a");
  ToolContext context;
  context.cwd = ws.string();
  context.hidden = [&](std::string_view abs, bool) {
    if (abs.size() >= 5 && abs.substr(abs.size() - 5) == "b.txt") {
      std::filesystem::remove(ws / "b.txt");
      std::filesystem::create_symlink(dir.path() / "outside" / "secret.txt", ws / "b.txt");
    }
    return false;
  };
  const std::string out =
      text_of(tools::run_grep(Json{{"pattern", "needle"}}, context, kNotCancelled));
  CHECK(out.find("needle inside") != std::string::npos);
  CHECK(out.find("needle linked") != std::string::npos);
  CHECK(out.find("secret") == std::string::npos);
}
