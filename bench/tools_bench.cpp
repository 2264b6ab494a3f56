// Benchmark of the search tools (tools.md sections 4.5, 4.6) and of read's paging: grep over a
// generated tree of 50,000 files / 500 MB (a pattern with few matches, one with many) and find
// '**/*.cpp' over the same tree, each side by side with GNU grep -r and find run on the same
// tree in the same run; then read of a 100 MB file at an offset in its middle, with the
// process's peak memory before and after (it must not load the file).
//
// Usage: bench_tools [DIR] [FILES] [MB]   (default /tmp/rebound-tools-bench 50000 500)
// The tree is made once and reused while its parameters match. Warm page cache: each
// measurement is the median of 5 runs after one unmeasured run.

#include <sys/resource.h>
#include <sys/wait.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "protocol/json.h"
#include "tools/builtin_tools.h"
#include "tools/walker.h"

namespace fs = std::filesystem;
using rebound::protocol::Json;
using Clock = std::chrono::steady_clock;

namespace {

const char* kWords[] = {"int",    "return", "value",  "const",  "auto",   "static", "void",
                        "struct", "class",  "public", "size_t", "buffer", "count",  "index",
                        "result", "error",  "string", "vector", "begin",  "end",    "while",
                        "for",    "if",     "else",   "switch", "case",   "break",  "data"};
constexpr const char* kRare = "XYZZY_RARE_TOKEN";

long peak_rss_kib() {
  struct rusage u {};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

void make_tree(const fs::path& dir, int files, long megabytes) {
  const fs::path marker = dir / ".bench-params";
  const std::string params = std::to_string(files) + " " + std::to_string(megabytes);
  {
    std::ifstream in(marker);
    std::string have;
    std::getline(in, have);
    if (have == params) return;
  }
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::mt19937 rng(42);
  const long per_file = megabytes * 1024 * 1024 / files;
  const int dirs = std::max(1, files / 500);
  const char* ext[] = {".cpp", ".h", ".txt"};
  std::string line;
  for (int f = 0; f < files; ++f) {
    const fs::path sub = dir / ("d" + std::to_string(f % dirs)) / ("e" + std::to_string(f % 7));
    fs::create_directories(sub);
    std::ofstream out(sub / ("f" + std::to_string(f) + ext[f % 3]), std::ios::binary);
    long written = 0;
    const long target = per_file / 2 + static_cast<long>(rng() % static_cast<unsigned>(per_file));
    int line_no = 0;
    while (written < target) {
      line.clear();
      const int words = 6 + static_cast<int>(rng() % 8);
      for (int w = 0; w < words; ++w) {
        line += kWords[rng() % (sizeof kWords / sizeof *kWords)];
        line += ' ';
      }
      if (f % 2500 == 17 && line_no == 40) line += kRare;
      line += '\n';
      out << line;
      written += static_cast<long>(line.size());
      ++line_no;
    }
  }
  std::ofstream(marker) << params << "\n";
}

template <class F>
double median_ms(F&& f, int runs = 5) {
  f();  // warm-up
  std::vector<double> ms;
  for (int i = 0; i < runs; ++i) {
    const auto t0 = Clock::now();
    f();
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

// Runs a shell command with its output counted (lines) and discarded.
long run_counting(const std::string& command) {
  FILE* p = ::popen(command.c_str(), "r");
  if (!p) return -1;
  long lines = 0;
  char buf[65536];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0)
    lines += std::count(buf, buf + n, '\n');
  ::pclose(p);
  return lines;
}

std::string first_line(const rebound::session::ToolResult& r) {
  const std::string& t = r.content.front().text;
  return t.substr(0, std::min<std::size_t>(t.find('\n'), 80));
}

}  // namespace

int main(int argc, char** argv) {
  const fs::path dir = argc > 1 ? argv[1] : "/tmp/rebound-tools-bench";
  const int files = argc > 2 ? std::atoi(argv[2]) : 50000;
  const long megabytes = argc > 3 ? std::atol(argv[3]) : 500;
  std::atomic<bool> running{false};
  rebound::session::ToolContext context;

  // read of a 100 MB file in the middle, before anything else grows the peak.
  const fs::path big = dir.string() + "-read.txt";
  if (!fs::exists(big) || fs::file_size(big) < 100u * 1024 * 1024) {
    std::ofstream out(big, std::ios::binary);
    std::string l;
    for (long i = 1; i <= 2'000'000; ++i) {
      l = "line " + std::to_string(i) + " of a hundred megabytes of text, padded to size ...\n";
      out << l;
    }
  }
  context.cwd = big.parent_path().string();
  const long rss_before = peak_rss_kib();
  const Json read_args{{"path", big.string()}, {"offset", 1000000}, {"limit", 50}};
  rebound::session::ToolResult read_result;
  const double read_ms =
      median_ms([&] { read_result = rebound::tools::run_read(read_args, context, running); });
  const long rss_after = peak_rss_kib();
  std::printf(
      "read %s (%.0f MB) offset 1000000 limit 50: %.1f ms median; peak RSS %ld KiB before, "
      "%ld KiB after; first line: %s\n",
      big.filename().c_str(), fs::file_size(big) / 1048576.0, read_ms, rss_before, rss_after,
      first_line(read_result).c_str());
  const double sed_ms =
      median_ms([&] { run_counting("sed -n '1000000,1000049p' '" + big.string() + "'"); });
  std::printf("  for comparison: sed -n '1000000,1000049p': %.1f ms median\n", sed_ms);

  const auto t0 = Clock::now();
  make_tree(dir, files, megabytes);
  std::printf("tree %s: %d files, %ld MB (made or checked in %.1f s)\n", dir.c_str(), files,
              megabytes, std::chrono::duration<double>(Clock::now() - t0).count());
  context.cwd = dir.string();

  struct Case {
    const char* name;
    std::string pattern;
  };
  for (const Case& c : {Case{"few matches", kRare}, Case{"many matches", "return value"}}) {
    rebound::session::ToolResult r;
    const double ours = median_ms([&] {
      r = rebound::tools::run_grep(Json{{"pattern", c.pattern}}, context, running);
    });
    long gnu_lines = 0;
    const double gnu = median_ms([&] {
      gnu_lines = run_counting("grep -r -n -e '" + c.pattern + "' '" + dir.string() + "'");
    });
    std::printf(
        "grep %-13s Rebound %8.1f ms (%s%s) | GNU grep -r -n %8.1f ms (%ld lines) | "
        "ratio %.2f\n",
        c.name, ours, first_line(r).c_str(),
        r.details && r.details->contains("matchLimitReached") ? ", stopped at 100 matches" : "",
        gnu, gnu_lines, ours / gnu);
    // ripgrep (Debian's `ripgrep`), the tool most agents shell out to, when it is installed.
    if (std::system("command -v rg >/dev/null 2>&1") == 0) {
      long rg_lines = 0;
      const double rg = median_ms(
          [&] { rg_lines = run_counting("rg -n -e '" + c.pattern + "' '" + dir.string() + "'"); });
      std::printf("     %-13s ripgrep rg -n %8.1f ms (%ld lines) | Rebound/rg ratio %.2f\n", "", rg,
                  rg_lines, ours / rg);
    }
  }
  rebound::session::ToolResult found;
  const double find_ms = median_ms([&] {
    found = rebound::tools::run_find(Json{{"pattern", "**/*.cpp"}, {"limit", 1000000}}, context,
                                     running);
  });
  long find_lines = 0;
  const double gnu_find =
      median_ms([&] { find_lines = run_counting("find '" + dir.string() + "' -name '*.cpp'"); });
  std::printf(
      "find '**/*.cpp'     Rebound %8.1f ms (output cut at 50KB by design) | GNU find -name "
      "%8.1f ms (%ld paths) | ratio %.2f\n",
      find_ms, gnu_find, find_lines, find_ms / gnu_find);
  const double find_all_ms = median_ms([&] {
    std::atomic<bool> never{false};
    long n = 0;
    rebound::tools::walk(
        dir.string(), [&](const rebound::tools::WalkEntry&) { return ++n > 0; }, never);
  });
  std::printf("walk of the whole tree (every entry, ignore rules checked): %.1f ms\n", find_all_ms);
  return 0;
}
