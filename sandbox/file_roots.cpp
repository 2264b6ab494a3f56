#include "sandbox/file_roots.h"

#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

#include <algorithm>
#include <cstdlib>

#include "sandbox/bwrap_args.h"
#include "tools/command_watch.h"

namespace rebound::sandbox {

namespace {

constexpr int kMaxLinks = 40;

bool at_or_below(const std::string& path, const std::string& dir) {
  if (dir == "/") return true;
  return path == dir || (path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 &&
                         path[dir.size()] == '/');
}

std::string real_or_same(const std::string& p) {
  char buf[PATH_MAX];
  return ::realpath(p.c_str(), buf) ? std::string(buf) : p;
}

std::vector<std::string> split(const std::string& p) {
  std::vector<std::string> out;
  std::size_t from = 0;
  while (from < p.size()) {
    std::size_t slash = p.find('/', from);
    if (slash == std::string::npos) slash = p.size();
    if (slash > from) out.push_back(p.substr(from, slash - from));
    from = slash + 1;
  }
  return out;
}

bool has_git_component(const std::string& path, const std::string& root) {
  // Only the part at or below the root counts.
  const std::string rest = path.size() > root.size() ? path.substr(root.size()) : std::string();
  for (const auto& c : split(rest))
    if (c == ".git") return true;
  return false;
}

// The longest of `roots` at or above `real`, or null.
const std::string* holding_root(const std::vector<std::string>& roots, const std::string& real) {
  const std::string* best = nullptr;
  for (const auto& r : roots)
    if (at_or_below(real, r) && (!best || r.size() > best->size())) best = &r;
  return best;
}

// `rel` below the directory `dir` one component at a time, none of them followed.
int open_by_components(int dir, const std::string& rel, int flags, unsigned mode) {
  const auto parts = split(rel);
  int at = ::dup(dir);
  for (std::size_t i = 0; at >= 0 && i + 1 < parts.size(); ++i) {
    const int next = ::openat(at, parts[i].c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    const int saved = errno;
    ::close(at);
    errno = saved;
    at = next;
  }
  if (at < 0) return -1;
  const int fd = ::openat(at, parts.empty() ? "." : parts.back().c_str(), flags | O_NOFOLLOW,
                          static_cast<mode_t>(mode));
  const int saved = errno;
  ::close(at);
  errno = saved;
  return fd;
}

// `real` (resolved, below or at `root`) opened so that nothing leads out of `root`.
int open_below(const std::string& root, const std::string& real, int flags, unsigned mode) {
  flags |= O_CLOEXEC | O_NOFOLLOW;
  if (real == root) return ::open(real.c_str(), flags, static_cast<mode_t>(mode));
  const int dir = ::open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return -1;
  const std::string rel = real.substr(root == "/" ? 1 : root.size() + 1);
  struct open_how how {};
  how.flags = static_cast<std::uint64_t>(flags);
  how.mode = (flags & O_CREAT) != 0 ? mode : 0;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
  int fd = static_cast<int>(::syscall(SYS_openat2, dir, rel.c_str(), &how, sizeof how));
  if (fd < 0 && errno == ENOSYS) fd = open_by_components(dir, rel, flags, mode);
  const int saved = errno;
  ::close(dir);
  errno = saved;
  return fd;
}

}  // namespace

std::string resolve_components(const std::string& abs, bool follow_last) {
  std::vector<std::string> pending = split(abs);
  std::reverse(pending.begin(), pending.end());
  std::string done;  // resolved so far ("" is /)
  int links = 0;
  while (!pending.empty()) {
    std::string c = std::move(pending.back());
    pending.pop_back();
    if (c == ".") continue;
    if (c == "..") {
      const std::size_t slash = done.rfind('/');
      done = slash == std::string::npos ? std::string() : done.substr(0, slash);
      continue;
    }
    const std::string next = done + "/" + c;
    const bool last = pending.empty();
    struct stat st {};
    if ((last && !follow_last) || ::lstat(next.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) {
      done = next;
      if (::lstat(next.c_str(), &st) != 0) {
        // Missing: the rest is appended as written.
        std::reverse(pending.begin(), pending.end());
        for (const auto& p : pending)
          done += "/" + p;
        return done.empty() ? "/" : done;
      }
      continue;
    }
    if (++links > kMaxLinks) return next;
    char target[PATH_MAX];
    const ssize_t n = ::readlink(next.c_str(), target, sizeof target - 1);
    if (n <= 0) return next;
    const std::string t(target, static_cast<std::size_t>(n));
    if (!t.empty() && t.front() == '/') done.clear();
    auto parts = split(t);
    for (auto it = parts.rbegin(); it != parts.rend(); ++it)
      pending.push_back(*it);
  }
  return done.empty() ? "/" : done;
}

FileRoots::FileRoots(const SandboxConfig& config, std::shared_ptr<const DeniedFiles> denied_files)
    : denied_files_(std::move(denied_files)) {
  const std::string ws = real_or_same(config.workspace);
  for (const char* d :
       {"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt"})
    readable_.push_back(real_or_same(d));
  readable_.push_back(ws);
  const std::string tree = enclosing_work_tree(ws, config.home);
  if (!tree.empty()) readable_.push_back(tree);
  for (const auto& p : config.read_only_paths)
    readable_.push_back(real_or_same(p));
  writable_.push_back(ws);
  for (const auto& p : config.writable_roots) {
    readable_.push_back(real_or_same(p));
    writable_.push_back(real_or_same(p));
  }
  for (const auto& p : config.deny_read)
    deny_.push_back(real_or_same(p));
}

bool FileRoots::denied(const std::string& real) const {
  for (const auto& d : deny_)
    if (at_or_below(real, d)) return true;
  if (!denied_files_) return false;
  // A denied file or directory under another name (renamed, linked, its parent moved).
  for (std::string p = real; !p.empty() && p != "/"; p = p.substr(0, p.rfind('/'))) {
    struct stat st {};
    if (::lstat(p.c_str(), &st) == 0 && denied_files_->contains(st.st_dev, st.st_ino)) return true;
  }
  return false;
}

bool FileRoots::readable(const std::string& real) const {
  for (const auto& r : readable_)
    if (at_or_below(real, r)) return true;
  return own_output(real);
}

bool FileRoots::own_output(const std::string& real) const {
  // The bash tool's full-output files (its $TMPDIR logs and its spool files beside the session
  // file), written outside the sandbox by this process: known by identity, never by name.
  struct stat st {};
  return ::lstat(real.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
         tools::is_own_output_file(static_cast<unsigned long>(st.st_dev),
                                   static_cast<unsigned long>(st.st_ino));
}

std::optional<std::string> FileRoots::check(const std::string& abs, bool write) const {
  if (!write) {
    const std::string real = resolve_components(abs, true);
    if (denied(real)) return "Sandbox: " + abs + " is hidden by sandbox.denyRead";
    if (!readable(real)) return "Sandbox: " + abs + " is outside the paths this session may read";
    return std::nullopt;
  }
  const std::string real = resolve_components(abs, false);
  struct stat st {};
  if (::lstat(real.c_str(), &st) == 0 && S_ISLNK(st.st_mode))
    return "Sandbox: " + abs + " is a symbolic link; writes do not follow it";
  if (denied(real)) return "Sandbox: " + abs + " is hidden by sandbox.denyRead";
  for (const auto& w : writable_) {
    if (!at_or_below(real, w)) continue;
    if (has_git_component(real, w))
      return "Sandbox: " + abs + " is inside a .git directory, which is read-only";
    return std::nullopt;
  }
  return "Sandbox: " + abs + " is outside the paths this session may write";
}

int FileRoots::open_beneath(const std::string& abs, int flags, unsigned mode, bool write) const {
  // A directory opened for writing is a place to create in: its own last component is followed
  // (what is checked is where entries will be made).
  const std::string real = resolve_components(abs, !write || (flags & O_DIRECTORY) != 0);
  const std::string* root = nullptr;
  std::string output_dir;  // the folder of one of the bash tool's full-output files
  if (!write) {
    if (!denied(real)) root = holding_root(readable_, real);
    if (!root && !denied(real) && own_output(real)) {
      output_dir = real.substr(0, std::max<std::size_t>(1, real.rfind('/')));
      root = &output_dir;
    }
  } else if (!denied(real)) {
    root = holding_root(writable_, real);
    if (root && has_git_component(real, *root)) root = nullptr;
  }
  if (!root) {
    errno = EACCES;
    return -1;
  }
  const int fd = open_below(*root, real, flags, mode);
  if (struct stat st{}; fd >= 0 && denied_files_ && ::fstat(fd, &st) == 0 &&
                        denied_files_->contains(st.st_dev, st.st_ino)) {
    ::close(fd);  // what the name held at the open was a denied file
    errno = EACCES;
    return -1;
  }
  if (fd >= 0 && root == &output_dir) {
    // The file opened is one this process wrote, whatever replaced the name since the check.
    struct stat st {};
    if (::fstat(fd, &st) != 0 ||
        !tools::is_own_output_file(static_cast<unsigned long>(st.st_dev),
                                   static_cast<unsigned long>(st.st_ino))) {
      ::close(fd);
      errno = EACCES;
      return -1;
    }
  }
  return fd;
}

bool FileRoots::hidden(const std::string& abs) const {
  const std::string real = resolve_components(abs, true);
  return denied(real) || !readable(real);
}

}  // namespace rebound::sandbox
