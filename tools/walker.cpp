#include "tools/walker.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <memory>

namespace rebound::tools {

namespace {

constexpr std::size_t kMaxIgnoreFileBytes = 4 * 1024 * 1024;

bool read_small_file(const std::string& path, std::string& out) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return false;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return false;
  }
  out.clear();
  char buf[16384];
  while (out.size() < kMaxIgnoreFileBytes) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return true;
}

std::string parent_of(const std::string& dir) {
  const std::size_t slash = dir.rfind('/');
  if (slash == std::string::npos || slash == 0) return "/";
  return dir.substr(0, slash);
}

bool exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

std::string join(const std::string& dir, std::string_view name) {
  std::string s = dir;
  if (s.empty() || s.back() != '/') s += '/';
  s += name;
  return s;
}

}  // namespace

void IgnoreStack::load_into(Frame& frame) {
  std::string text;
  for (const char* name : {".gitignore", ".ignore"}) {
    if (read_small_file(join(frame.dir, name), text)) {
      auto rules = parse_ignore_file(text);
      for (auto& r : rules)
        frame.rules.push_back(std::move(r));
    }
  }
  for (const auto& r : frame.rules)
    frame.matchers.push_back(std::make_unique<Matcher>(r.regex));
}

void IgnoreStack::load_ancestors(const std::string& dir) {
  std::vector<std::string> chain;
  if (exists(join(dir, ".git"))) return;  // the searched directory is the git root
  std::string d = dir;
  while (d != "/") {
    d = parent_of(d);
    chain.push_back(d);
    if (exists(join(d, ".git"))) break;
  }
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    Frame f;
    f.dir = *it == "/" ? "" : *it;
    load_into(f);
    if (!f.rules.empty()) frames_.push_back(std::move(f));
  }
}

void IgnoreStack::push_dir(const std::string& dir) {
  Frame f;
  f.dir = dir == "/" ? "" : dir;
  load_into(f);
  if (f.rules.empty()) {
    pushed_.push_back(0);
    return;
  }
  frames_.push_back(std::move(f));
  pushed_.push_back(1);
}

void IgnoreStack::add_text(const std::string& dir, std::string_view text) {
  Frame f;
  f.dir = dir == "/" ? "" : dir;
  f.rules = parse_ignore_file(text);
  for (const auto& r : f.rules)
    f.matchers.push_back(std::make_unique<Matcher>(r.regex));
  frames_.push_back(std::move(f));
  pushed_.push_back(1);
}

void IgnoreStack::pop_dir() {
  if (pushed_.empty()) return;
  if (pushed_.back() == 1) frames_.pop_back();
  pushed_.pop_back();
}

bool IgnoreStack::ignored(std::string_view abs, bool is_dir) {
  // The last matching rule decides; deeper files come later, so they win.
  for (auto f = frames_.rbegin(); f != frames_.rend(); ++f) {
    if (abs.size() <= f->dir.size() + 1 || abs.substr(0, f->dir.size()) != f->dir ||
        abs[f->dir.size()] != '/')
      continue;
    const std::string_view rel = abs.substr(f->dir.size() + 1);
    for (std::size_t i = f->rules.size(); i > 0; --i) {
      const IgnoreRule& r = f->rules[i - 1];
      if (r.dir_only && !is_dir) continue;
      if (f->matchers[i - 1]->matches(rel)) return !r.negate;
    }
  }
  return false;
}

namespace {

struct Walk {
  const std::function<bool(const WalkEntry&)>& visit;
  const std::atomic<bool>& cancelled;
  const WalkHidden& hidden;
  const OpenFile& open_file;
  IgnoreStack ignores;
  std::string root;
  bool stopped = false;

  // Walks directory `abs` whose relative path is `rel` ("" for the root).
  void dir(const std::string& abs, const std::string& rel) {
    // The root may be a symlink the caller named; below it, nothing listed as a directory is
    // followed if it became a symlink since.
    const int fd = open_with(open_file, abs,
                             O_RDONLY | O_DIRECTORY | O_CLOEXEC | (rel.empty() ? 0 : O_NOFOLLOW));
    if (fd < 0) return;
    DIR* d = ::fdopendir(fd);
    if (!d) {
      ::close(fd);
      return;
    }
    struct Item {
      std::string name;
      unsigned char type;
    };
    std::vector<Item> items;
    while (dirent* e = ::readdir(d)) {
      const std::string_view name = e->d_name;
      if (name == "." || name == "..") continue;
      items.push_back({std::string(name), e->d_type});
    }
    ::closedir(d);
    std::sort(items.begin(), items.end(),
              [](const Item& a, const Item& b) { return a.name < b.name; });
    ignores.push_dir(abs);
    for (const auto& item : items) {
      if (stopped || cancelled.load(std::memory_order_relaxed)) {
        stopped = true;
        break;
      }
      const std::string child_abs = join(abs, item.name);
      bool is_dir = item.type == DT_DIR;
      bool is_link = item.type == DT_LNK;
      if (item.type == DT_UNKNOWN) {
        struct stat st {};
        if (::lstat(child_abs.c_str(), &st) != 0) continue;
        is_dir = S_ISDIR(st.st_mode);
        is_link = S_ISLNK(st.st_mode);
      }
      if (is_dir && item.name == ".git") continue;
      if (ignores.ignored(child_abs, is_dir)) continue;
      if (hidden && hidden(child_abs, is_dir)) continue;
      const std::string child_rel = rel.empty() ? item.name : rel + "/" + item.name;
      if (!visit(WalkEntry{child_rel, child_abs, is_dir, is_link})) {
        stopped = true;
        break;
      }
      if (is_dir) dir(child_abs, child_rel);
    }
    ignores.pop_dir();
  }
};

}  // namespace

void walk(const std::string& root, const std::function<bool(const WalkEntry&)>& visit,
          const std::atomic<bool>& cancelled, const WalkHidden& hidden, const OpenFile& open_file) {
  Walk w{visit, cancelled, hidden, open_file, {}, root};
  w.ignores.load_ancestors(root);
  w.dir(root, "");
}

}  // namespace rebound::tools
