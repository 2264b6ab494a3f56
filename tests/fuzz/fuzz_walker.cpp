// .gitignore lines, globs and the walker on arbitrary input: no crash, no hang, and the walk
// never reports an entry its own ignore rules exclude. Input: ignore-file text, NUL, a glob,
// NUL, then NUL-separated relative paths to test against both.

#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "split_input.h"
#include "tools/glob.h"
#include "tools/walker.h"

using namespace rebound::tools;

namespace {

// A small fixed tree, made once; each input's ignore text becomes its root .gitignore.
const std::string& tree() {
  static const std::string root = [] {
    char tmpl[] = "/tmp/rebound-fuzz-walker-XXXXXX";
    std::string dir = ::mkdtemp(tmpl);
    for (const char* f : {"a.txt", "b.log", "src/main.cpp", "src/gen/x.cpp", ".hidden/h",
                          "build/out.o", "docs/a/b.md", "#weird", "sp ace"}) {
      const std::filesystem::path p = std::filesystem::path(dir) / f;
      std::filesystem::create_directories(p.parent_path());
      std::ofstream(p) << "x\n";
    }
    std::filesystem::create_directories(std::filesystem::path(dir) / ".git");
    static const std::string keep = dir;
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(keep, ec);
    });
    return dir;
  }();
  return root;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::vector<std::string> parts = rebound::fuzz::split_at_nul(data, size);
  const std::string& ignore_text = parts[0];
  const std::string glob = parts.size() > 1 ? parts[1] : "*";

  IgnoreStack stack;
  stack.add_text("/r", ignore_text);
  auto path_glob = PathGlob::compile(glob);
  std::optional<Matcher> glob_matcher;
  if (path_glob) glob_matcher.emplace(path_glob->regex());
  for (std::size_t i = 2; i < parts.size() && i < 64; ++i) {
    stack.ignored("/r/" + parts[i], i % 2 == 0);
    if (path_glob) path_glob->matches(parts[i], *glob_matcher);
  }

  // The real walk with this text as the root's .gitignore.
  const std::string root = tree();
  { std::ofstream(root + "/.gitignore", std::ios::trunc) << ignore_text.substr(0, 4096); }
  IgnoreStack check;
  check.add_text(root, ignore_text.substr(0, 4096));
  std::atomic<bool> cancelled{false};
  int visited = 0;
  walk(
      root,
      [&](const WalkEntry& e) {
        // Only top-level entries are judged by the root rules alone (deeper ones may be
        // re-included by nothing else here either, but their parents decide first).
        if (e.rel.find('/') == std::string_view::npos && check.ignored(e.abs, e.is_dir))
          std::abort();
        if (path_glob) path_glob->matches(e.rel, *glob_matcher);
        return ++visited < 100;
      },
      cancelled);
  return 0;
}
