// The sandbox room's pure parts (policy.md section 8): path resolution component by component,
// the file tools' roots and texts, the environment inside, bubblewrap's options and the
// workspace rules. The real bubblewrap runs in tests/server/sandbox_e2e_test.cpp and the escape
// suite.

#include <doctest/doctest.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <filesystem>

#include "sandbox/bwrap_args.h"
#include "sandbox/file_roots.h"
#include "sandbox/sandbox.h"
#include "sandbox/sandbox_spawn.h"
#include "tests/support/temp_dir.h"
#include "tools/command_watch.h"
#include "tools/file_io.h"

using namespace rebound::sandbox;
using rebound::testing::TempDir;
namespace fs = std::filesystem;

namespace {

std::string real_dir(const fs::path& p) {
  return fs::canonical(p).string();
}

bool has_pair(const std::vector<std::string>& args, const std::string& option,
              const std::string& path) {
  for (std::size_t i = 0; i + 1 < args.size(); ++i)
    if (args[i] == option && args[i + 1] == path) return true;
  return false;
}

}  // namespace

TEST_CASE("resolve_components follows symlinks one component at a time") {
  TempDir d;
  const std::string root = real_dir(d.path());
  d.write("real/a.txt", "a");
  fs::create_symlink(root + "/real", root + "/link");
  fs::create_symlink("../real/a.txt", root + "/real/rel-link");
  fs::create_symlink(root + "/loop", root + "/loop");
  CHECK(resolve_components(root + "/link/a.txt", true) == root + "/real/a.txt");
  CHECK(resolve_components(root + "/link/missing/x", true) == root + "/real/missing/x");
  CHECK(resolve_components(root + "/real/rel-link", true) == root + "/real/a.txt");
  // A write does not follow the last component.
  CHECK(resolve_components(root + "/real/rel-link", false) == root + "/real/rel-link");
  CHECK(resolve_components(root + "/link/../real/a.txt", true) == root + "/real/a.txt");
  // `..` after a symlink goes up from where the link leads, as the kernel does.
  fs::create_directories(root + "/deep/inner");
  fs::create_symlink(root + "/deep/inner", root + "/to-inner");
  CHECK(resolve_components(root + "/to-inner/../x", true) == root + "/deep/x");
  // A loop ends without hanging.
  (void)resolve_components(root + "/loop/x", true);
}

namespace {

// A full-output file of the bash tool, made by this process in `dir`.
std::string own_output_file(const std::string& dir, const std::string& text) {
  const char* before = std::getenv("TMPDIR");
  const std::string saved = before ? before : "";
  ::setenv("TMPDIR", dir.c_str(), 1);
  rebound::tools::OutputFile f;
  REQUIRE(f.open(text));
  f.close();
  if (before)
    ::setenv("TMPDIR", saved.c_str(), 1);
  else
    ::unsetenv("TMPDIR");
  return f.path();
}

}  // namespace

TEST_CASE("the file tools' roots and their texts") {
  TempDir d;
  const std::string root = real_dir(d.path());
  d.write("ws/src/a.txt", "a");
  d.write("ws/.git/config", "c");
  d.write("ws/sub/.git", "gitdir: x");
  d.write("ws/secrets/k", "k");
  d.write("cache/x", "x");
  d.write("outside/o.txt", "o");
  d.write("tmp/rebound-bash-0123456789abcdef.log", "log");
  d.write("tmp/other.log", "log");
  fs::create_symlink(root + "/outside/o.txt", root + "/ws/out-link");
  SandboxConfig c;
  c.workspace = root + "/ws";
  c.home = root + "/home";
  c.writable_roots = {root + "/cache"};
  c.deny_read = {root + "/ws/secrets"};
  const FileRoots roots(c);
  CHECK_FALSE(roots.check(root + "/ws/src/a.txt", false));
  CHECK_FALSE(roots.check("/etc/hostname", false));
  CHECK_FALSE(roots.check(root + "/cache/x", true));
  // A full-output file this process wrote is readable; one only named like it is not.
  const std::string own = own_output_file(root + "/tmp", "log");
  CHECK_FALSE(roots.check(own, false));
  CHECK(roots.check(root + "/tmp/rebound-bash-0123456789abcdef.log", false) ==
        "Sandbox: " + root +
            "/tmp/rebound-bash-0123456789abcdef.log is outside the paths this session may read");
  CHECK(roots.check(root + "/tmp/other.log", false) ==
        "Sandbox: " + root + "/tmp/other.log is outside the paths this session may read");
  CHECK(roots.check("/proc/self/environ", false) ==
        std::string("Sandbox: /proc/self/environ is outside the paths this session may read"));
  CHECK(roots.check(root + "/ws/out-link", false) ==
        "Sandbox: " + root + "/ws/out-link is outside the paths this session may read");
  CHECK(roots.check(root + "/ws/out-link", true) ==
        "Sandbox: " + root + "/ws/out-link is a symbolic link; writes do not follow it");
  CHECK(roots.check(root + "/ws/.git/config", true) ==
        "Sandbox: " + root + "/ws/.git/config is inside a .git directory, which is read-only");
  CHECK(roots.check(root + "/ws/sub/.git", true) ==
        "Sandbox: " + root + "/ws/sub/.git is inside a .git directory, which is read-only");
  CHECK_FALSE(roots.check(root + "/ws/.git/config", false));  // reading it is fine
  CHECK(roots.check(root + "/ws/secrets/k", false) ==
        "Sandbox: " + root + "/ws/secrets/k is hidden by sandbox.denyRead");
  CHECK(roots.check(root + "/outside/new.txt", true) ==
        "Sandbox: " + root + "/outside/new.txt is outside the paths this session may write");
  CHECK(roots.check("/usr/bin/x", true) ==
        std::string("Sandbox: /usr/bin/x is outside the paths this session may write"));
  CHECK(roots.hidden(root + "/ws/out-link"));
  CHECK(roots.hidden(root + "/ws/secrets"));
  CHECK_FALSE(roots.hidden(root + "/ws/src"));
}

TEST_CASE("the file tools open beneath their root, checked again at the open") {
  TempDir d;
  const std::string root = real_dir(d.path());
  d.write("ws/src/a.txt", "alpha");
  d.write("ws/.git/config", "c");
  d.write("ws/secrets/k", "k");
  d.write("outside/src/a.txt", "outside");
  d.write("tmp/rebound-bash-0123456789abcdef.log", "log");
  fs::create_symlink(root + "/outside/src/a.txt", root + "/ws/out-link");
  SandboxConfig c;
  c.workspace = root + "/ws";
  c.home = root + "/home";
  c.deny_read = {root + "/ws/secrets"};
  const FileRoots roots(c);
  auto read_all = [](int fd) {
    REQUIRE(fd >= 0);
    char buf[64];
    const ssize_t n = ::read(fd, buf, sizeof buf);
    ::close(fd);
    return std::string(buf, n > 0 ? static_cast<std::size_t>(n) : 0);
  };
  CHECK(read_all(roots.open_beneath(root + "/ws/src/a.txt", O_RDONLY, 0, false)) == "alpha");
  const std::string own = own_output_file(root + "/tmp", "log");
  CHECK(read_all(roots.open_beneath(own, O_RDONLY, 0, false)) == "log");
  // Named like one, not written by this process: refused.
  CHECK(roots.open_beneath(root + "/tmp/rebound-bash-0123456789abcdef.log", O_RDONLY, 0, false) ==
        -1);
  // The own file's name now holding another file: refused at the open.
  d.write("tmp/replacement", "replaced");
  fs::rename(root + "/tmp/replacement", own);
  CHECK(roots.open_beneath(own, O_RDONLY, 0, false) == -1);
  const int ws_dir = roots.open_beneath(root + "/ws", O_RDONLY | O_DIRECTORY, 0, false);
  CHECK(ws_dir >= 0);
  ::close(ws_dir);
  const int etc = roots.open_beneath("/etc/hostname", O_RDONLY, 0, false);
  CHECK(etc >= 0);
  ::close(etc);
  auto refused = [&](const std::string& path, int flags, bool write) {
    const int fd = roots.open_beneath(path, flags, 0644, write);
    if (fd >= 0) ::close(fd);
    return fd < 0 ? errno : 0;
  };
  CHECK(refused(root + "/ws/secrets/k", O_RDONLY, false) == EACCES);
  CHECK(refused(root + "/ws/out-link", O_RDONLY, false) == EACCES);
  CHECK(refused(root + "/ws/out-link", O_WRONLY, true) == ELOOP);  // never followed
  CHECK(refused(root + "/ws/.git/config", O_WRONLY, true) == EACCES);
  CHECK(refused("/etc/hostname", O_WRONLY, true) == EACCES);
  const int made = roots.open_beneath(root + "/ws/new.txt", O_WRONLY | O_CREAT, 0644, true);
  CHECK(made >= 0);
  ::close(made);
  CHECK(fs::exists(root + "/ws/new.txt"));
  // The directory the check passed is swapped for a symlink leading out: the open is refused.
  fs::rename(root + "/ws/src", root + "/ws/src-old");
  fs::create_symlink(root + "/outside/src", root + "/ws/src");
  CHECK(refused(root + "/ws/src/a.txt", O_RDONLY, false) == EACCES);
  CHECK(refused(root + "/ws/src/b.txt", O_WRONLY | O_CREAT, true) == EACCES);
  CHECK(!fs::exists(root + "/outside/src/b.txt"));
}

TEST_CASE("write's missing parent directories are made beneath the root that holds them") {
  TempDir d;
  const std::string root = real_dir(d.path());
  d.write("ws/real-docs/index.md", "i");
  d.write("ws/.git/config", "c");
  d.write("outside/keep.txt", "k");
  fs::create_symlink(root + "/outside", root + "/ws/out");
  fs::create_symlink(root + "/ws/real-docs", root + "/ws/docs");
  SandboxConfig c;
  c.workspace = root + "/ws";
  c.home = root + "/home";
  const FileRoots roots(c);
  const rebound::tools::OpenFile opener = [&](const std::string& abs, int flags, unsigned mode,
                                              bool write) {
    return roots.open_beneath(abs, flags, mode, write);
  };
  std::string failed;
  CHECK(rebound::tools::make_parent_dirs(root + "/ws/a/b/c/file.txt", failed, opener) == 0);
  CHECK(fs::is_directory(root + "/ws/a/b/c"));
  // A symlinked directory inside the workspace is a place to create in.
  CHECK(rebound::tools::make_parent_dirs(root + "/ws/docs/new/x.md", failed, opener) == 0);
  CHECK(fs::is_directory(root + "/ws/real-docs/new"));
  // Leading out of the workspace, into .git, onto the system: refused, nothing made.
  CHECK(rebound::tools::make_parent_dirs(root + "/ws/out/made/x.txt", failed, opener) == EACCES);
  CHECK(failed == root + "/ws/out/made");
  CHECK_FALSE(fs::exists(root + "/outside/made"));
  CHECK(rebound::tools::make_parent_dirs(root + "/ws/.git/hooks2/x", failed, opener) == EACCES);
  CHECK_FALSE(fs::exists(root + "/ws/.git/hooks2"));
  CHECK(rebound::tools::make_parent_dirs("/usr/rebound-test-dir/x", failed, opener) == EACCES);
  CHECK_FALSE(fs::exists("/usr/rebound-test-dir"));
  // Without an opener (no sandbox) the symlink is followed, as mkdir -p would.
  CHECK(rebound::tools::make_parent_dirs(root + "/ws/out/made/x.txt", failed) == 0);
  CHECK(fs::is_directory(root + "/outside/made"));
}

TEST_CASE("the environment inside: secrets, REBOUND_*, the key variables out, sandbox.env in") {
  const std::vector<std::string> env = {
      "PATH=/usr/bin",         "HOME=/home/u",       "OPENAI_API_KEY=sk-1",
      "GITHUB_TOKEN=ghp",      "ssh_auth_sock=/s",   "DBUS_SESSION_BUS_ADDRESS=x",
      "REBOUND_AGENT_DIR=/a",  "MY_PASSWD=p",        "AWS_SECRET_ACCESS_KEY=s",
      "CUSTOM_PROVIDER_VAR=k", "TMPDIR=/var/tmp/me", "LANG=C.UTF-8",
      "HTTP_COOKIE=c",         "X_CREDENTIALS=c",    "AUTHOR=me"};
  const auto out = sandbox_environment(env, {"CUSTOM_PROVIDER_VAR"},
                                       {{"NPM_TOKEN", "t"}, {"LANG", "en_US.UTF-8"}});
  CHECK(out == std::vector<std::string>{"PATH=/usr/bin", "HOME=/home/u", "TMPDIR=/tmp",
                                        "REBOUND_SANDBOX=1", "NPM_TOKEN=t", "LANG=en_US.UTF-8"});
}

TEST_CASE("bubblewrap's options: mounts in order, every .git read-only, no network") {
  TempDir d;
  const std::string root = real_dir(d.path());
  d.write("repo/.git/HEAD", "ref");
  d.write("repo/ws/src/a.txt", "a");
  d.write("repo/ws/sub/.git/HEAD", "ref");
  d.write("repo/ws/node_modules/pkg/.git/HEAD", "ref");
  d.write("repo/ws/deny/x", "x");
  d.write("repo/ws/deny-file", "x");
  SandboxConfig c;
  c.workspace = root + "/repo/ws";
  c.home = root + "/home";
  c.deny_read = {root + "/repo/ws/deny", root + "/repo/ws/deny-file", root + "/missing"};
  const auto a = bwrap_options(c, root + "/repo/ws").value();
  CHECK(a[0] == "--tmpfs");
  CHECK(a[1] == "/");
  CHECK(has_pair(a, "--ro-bind", "/usr"));
  CHECK(has_pair(a, "--dev", "/dev"));
  CHECK(has_pair(a, "--proc", "/proc"));
  CHECK(has_pair(a, "--tmpfs", "/tmp"));
  CHECK(has_pair(a, "--tmpfs", root + "/home"));
  CHECK(has_pair(a, "--ro-bind", root + "/repo"));  // the enclosing work tree
  CHECK(has_pair(a, "--bind", root + "/repo/ws"));
  CHECK(has_pair(a, "--ro-bind", root + "/repo/ws/sub/.git"));
  CHECK(has_pair(a, "--ro-bind", root + "/repo/.git"));
  CHECK_FALSE(has_pair(a, "--ro-bind", root + "/repo/ws/node_modules/pkg/.git"));
  CHECK(has_pair(a, "--tmpfs", root + "/repo/ws/deny"));
  CHECK(has_pair(a, "--remount-ro", root + "/repo/ws/deny"));
  CHECK(std::find(a.begin(), a.end(), root + "/missing") == a.end());
  // The workspace's bind comes before the .git binds that cover parts of it.
  const auto pos = [&](const std::string& option, const std::string& path) {
    for (std::size_t i = 0; i + 1 < a.size(); ++i)
      if (a[i] == option && a[i + 1] == path) return i;
    return a.size();
  };
  CHECK(pos("--bind", root + "/repo/ws") < pos("--ro-bind", root + "/repo/ws/sub/.git"));
  CHECK(pos("--ro-bind", root + "/repo") < pos("--bind", root + "/repo/ws"));
  for (const char* flag : {"--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-net",
                           "--disable-userns", "--new-session", "--die-with-parent"})
    CHECK(std::find(a.begin(), a.end(), flag) != a.end());
  CHECK(has_pair(a, "--cap-drop", "ALL"));
  c.network = true;
  const auto net = bwrap_options(c, root + "/repo/ws").value();
  CHECK(std::find(net.begin(), net.end(), "--unshare-net") == net.end());
}

TEST_CASE("the workspace rules and the .git scan's depth") {
  SandboxConfig c;
  c.home = "/home/u";
  CHECK(workspace_problem(c, "/") == "the workspace is /");
  CHECK(workspace_problem(c, "/home/u") == "the workspace is $HOME");
  CHECK(workspace_problem(c, "/home") == "the workspace contains $HOME");
  CHECK(workspace_problem(c, "/home/u/proj").empty());
  c.writable_roots = {"/"};
  CHECK(workspace_problem(c, "/home/u/proj") == "sandbox.writableRoots contains /");
  TempDir d;
  std::string deep = "ws";
  for (int i = 0; i < 9; ++i)
    deep += "/d" + std::to_string(i);
  d.write("ws/d0/.git/HEAD", "x");
  d.write(deep + "/.git/HEAD", "x");
  const auto found = find_git_entries(real_dir(d.path() / "ws"));
  CHECK(found.size() == 1);  // the one 9 levels down is beyond the 8 of section 8.3
}

TEST_CASE("acp's sandboxes by workspace: shared, released with the last session, fail closed") {
  boost::asio::io_context io;
  std::vector<std::string> plain_cwds;
  auto sandboxes = std::make_shared<WorkspaceSandboxes>(
      io.get_executor(),
      [&plain_cwds](const std::vector<std::string>&, const std::string& cwd,
                    std::string& error) -> std::unique_ptr<rebound::tools::WatchedProcess> {
        plain_cwds.push_back(cwd);
        error = "plain";
        return nullptr;
      });
  auto spawn = sandboxes->spawn();
  std::string error;
  // No session works there: refused, never run bare.
  CHECK(spawn({"/bin/sh", "-c", "true"}, "/w/a", error) == nullptr);
  CHECK(error == "Sandbox unavailable: no session works in /w/a");
  CHECK(plain_cwds.empty());
  // A session without the sandbox: its commands run bare, under any spelling of its cwd.
  auto bare = sandboxes->attach("/w/a/", nullptr);
  CHECK(spawn({"/bin/sh", "-c", "true"}, "/w/./a", error) == nullptr);
  CHECK(plain_cwds == std::vector<std::string>{"/w/./a"});
  // A sandboxed one in the same workspace wins (the tighter), and is found for the next session.
  SandboxConfig config;
  config.workspace = "/w/a";
  config.bwrap_path = "/nonexistent/bwrap";
  auto box = std::make_shared<Sandbox>(config, std::vector<std::string>{});
  box->start_check();
  auto boxed = sandboxes->attach("/w/a", box);
  CHECK(sandboxes->find("/w/a") == box);
  error.clear();
  CHECK(spawn({"/bin/sh", "-c", "true"}, "/w/a", error) == nullptr);
  CHECK(error == "Sandbox unavailable: bubblewrap not found at /nonexistent/bwrap");
  CHECK(plain_cwds.size() == 1);
  boxed.reset();
  CHECK(sandboxes->find("/w/a") == nullptr);
  bare.reset();
  error.clear();
  CHECK(spawn({"/bin/sh", "-c", "true"}, "/w/a", error) == nullptr);
  CHECK(error == "Sandbox unavailable: no session works in /w/a");
}
