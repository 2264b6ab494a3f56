#include "sandbox/bwrap_args.h"

#include <dirent.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

namespace rebound::sandbox {

namespace {

constexpr int kGitDepth = 8;

std::string real(const std::string& path) {
  char buf[PATH_MAX];
  return ::realpath(path.c_str(), buf) ? std::string(buf) : std::string();
}

bool is_dir(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

std::string parent_of(const std::string& p) {
  const std::size_t slash = p.rfind('/');
  if (slash == std::string::npos || slash == 0) return "/";
  return p.substr(0, slash);
}

bool at_or_below(const std::string& path, const std::string& dir) {
  if (dir == "/") return true;
  return path == dir || (path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 &&
                         path[dir.size()] == '/');
}

void scan(const std::string& dir, int depth, std::size_t limit, std::vector<std::string>& out) {
  if (out.size() > limit) return;
  DIR* d = ::opendir(dir.c_str());
  if (!d) return;
  std::vector<std::pair<std::string, bool>> children;
  while (dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    const std::string path = dir == "/" ? "/" + name : dir + "/" + name;
    bool directory = e->d_type == DT_DIR;
    if (e->d_type == DT_UNKNOWN) {
      struct stat st {};
      directory = ::lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
    }
    if (name == ".git") {
      out.push_back(path);  // a directory or a file (a worktree's, a submodule's)
      continue;
    }
    if (directory && name != "node_modules") children.emplace_back(path, true);
  }
  ::closedir(d);
  if (depth >= kGitDepth) return;
  for (const auto& [path, directory] : children)
    scan(path, depth + 1, limit, out);
}

}  // namespace

std::vector<std::string> find_git_entries(const std::string& root, std::size_t limit) {
  std::vector<std::string> out;
  scan(root, 1, limit, out);
  return out;
}

std::string enclosing_work_tree(const std::string& workspace, const std::string& home) {
  for (std::string dir = parent_of(workspace); dir != "/"; dir = parent_of(dir)) {
    if (!home.empty() && at_or_below(home, dir)) break;  // $HOME or above it
    if (exists(dir + "/.git")) return dir;
  }
  return {};
}

std::string workspace_problem(const SandboxConfig& config, const std::string& workspace) {
  if (workspace == "/") return "the workspace is /";
  const std::string home = real(config.home).empty() ? config.home : real(config.home);
  if (!home.empty() && home != "/" && at_or_below(home, workspace))
    return workspace == home ? "the workspace is $HOME" : "the workspace contains $HOME";
  for (const auto& r : config.writable_roots)
    if (r == "/" || real(r) == "/") return "sandbox.writableRoots contains /";
  return {};
}

session::Result<std::vector<std::string>> bwrap_options(const SandboxConfig& config,
                                                        const std::string& workspace,
                                                        const std::vector<std::string>& hidden) {
  std::vector<std::string> a{"--tmpfs", "/"};
  for (const char* d :
       {"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt"}) {
    struct stat st {};
    if (::lstat(d, &st) != 0) continue;
    if (S_ISLNK(st.st_mode)) {
      char target[PATH_MAX];
      const ssize_t n = ::readlink(d, target, sizeof target - 1);
      if (n <= 0) continue;
      a.insert(a.end(), {"--symlink", std::string(target, static_cast<std::size_t>(n)), d});
    } else if (S_ISDIR(st.st_mode)) {
      a.insert(a.end(), {"--ro-bind", d, d});
    }
  }
  a.insert(a.end(), {"--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--tmpfs", "/var/tmp"});
  if (!config.home.empty() && config.home != "/") a.insert(a.end(), {"--tmpfs", config.home});
  for (const auto& p : config.read_only_paths)
    if (const std::string r = real(p); !r.empty()) a.insert(a.end(), {"--ro-bind", r, r});
  const std::string tree = enclosing_work_tree(workspace, config.home);
  if (!tree.empty()) a.insert(a.end(), {"--ro-bind", tree, tree});
  std::vector<std::string> writable{workspace};
  for (const auto& p : config.writable_roots)
    if (const std::string r = real(p); !r.empty()) writable.push_back(r);
  for (const auto& w : writable)
    a.insert(a.end(), {"--bind", w, w});
  // Every .git read-only again: its hooks and config run outside at the user's next git.
  std::vector<std::string> gits;
  for (const auto& w : writable) {
    for (auto& g : find_git_entries(w, kMaxGitEntries - gits.size()))
      gits.push_back(std::move(g));
    if (gits.size() > kMaxGitEntries)
      return session::failure("Sandbox: more than " + std::to_string(kMaxGitEntries) +
                              " .git entries below " + w +
                              "; remove some to run commands in the sandbox");
  }
  if (!tree.empty()) gits.push_back(tree + "/.git");
  for (const auto& g : gits) {
    struct stat st {};
    if (::lstat(g.c_str(), &st) != 0) continue;
    if (!S_ISLNK(st.st_mode)) {
      a.insert(a.end(), {"--ro-bind", g, g});
      continue;
    }
    // A `.git` symlink: its target read-only when it lies in a writable root (elsewhere nothing
    // can write it); a dangling one or one pointing outside is left alone (binding over a
    // symlink follows it, and a target that is not there would stop every later call).
    const std::string target = real(g);
    if (target.empty()) continue;
    for (const auto& w : writable) {
      if (at_or_below(target, w)) {
        a.insert(a.end(), {"--ro-bind", target, target});
        break;
      }
    }
  }
  std::vector<std::string> denied = config.deny_read;
  denied.insert(denied.end(), hidden.begin(), hidden.end());
  for (const auto& p : denied) {
    const std::string r = real(p);
    if (r.empty()) continue;
    if (is_dir(r)) {
      a.insert(a.end(), {"--tmpfs", r, "--remount-ro", r});
    } else {
      a.insert(a.end(), {"--ro-bind", "/dev/null", r});
    }
  }
  if (config.network) {
    const std::string resolv = real("/etc/resolv.conf");
    if (!resolv.empty() && resolv.rfind("/etc/", 0) != 0 && resolv.rfind("/usr/", 0) != 0)
      a.insert(a.end(), {"--ro-bind", resolv, resolv});
  }
  a.insert(a.end(), {"--remount-ro", "/", "--unshare-user", "--unshare-ipc", "--unshare-pid",
                     "--unshare-uts", "--unshare-cgroup"});
  if (!config.network) a.push_back("--unshare-net");
  a.insert(a.end(),
           {"--disable-userns", "--cap-drop", "ALL", "--new-session", "--die-with-parent"});
  return a;
}

}  // namespace rebound::sandbox
