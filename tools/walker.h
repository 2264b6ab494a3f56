#pragma once
// The walker of grep and find (tools.md section 4.8): depth-first, entries of each directory in
// byte order, hidden entries included, `.git` never entered, symlinks to directories not
// followed, `.gitignore` and `.ignore` files applied from the walked directories and from the
// ancestors up to the nearest one holding `.git`. Runs on the calling thread; stops when the
// visitor says so or `cancelled` is set.

#include <atomic>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "tools/file_io.h"
#include "tools/glob.h"

namespace rebound::tools {

struct WalkEntry {
  std::string_view rel;  // `/`-separated, relative to the root
  std::string_view abs;
  bool is_dir = false;
  bool is_link = false;  // a symlink when listed (one to a directory is not entered)
};

class IgnoreStack {
 public:
  /// Loads the ignore files of `dir`'s ancestors (not `dir` itself) up to the git root.
  void load_ancestors(const std::string& dir);
  /// Pushes the ignore files of `dir` (which may have none).
  void push_dir(const std::string& dir);
  void pop_dir();
  bool ignored(std::string_view abs, bool is_dir);

  /// Adds the rules of `text` as an ignore file of `dir` (tests and the fuzz target).
  void add_text(const std::string& dir, std::string_view text);

 private:
  struct Frame {
    std::string dir;  // no trailing slash ("" for the root directory "/")
    std::vector<IgnoreRule> rules;
    std::vector<std::unique_ptr<Matcher>> matchers;
  };
  void load_into(Frame& frame);
  std::vector<Frame> frames_;
  std::vector<std::size_t> pushed_;  // frames added per push_dir (0 or 1)
};

using WalkHidden = std::function<bool(std::string_view abs, bool is_dir)>;

/// Walks below `root` (an existing directory). `visit` returns false to stop. Entries `hidden`
/// names are left out with what lies below them. Each directory is opened through `open_file`
/// when given (the sandbox's roots, policy.md section 8.9), and never through a symlink at its
/// last component, so a directory swapped for a symlink after it was listed leads nowhere.
void walk(const std::string& root, const std::function<bool(const WalkEntry&)>& visit,
          const std::atomic<bool>& cancelled, const WalkHidden& hidden = {},
          const OpenFile& open_file = {});

}  // namespace rebound::tools
