#include "process/descendants.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <map>
#include <string>

#include "process/child_process.h"

namespace rebound::process {

namespace {

struct ProcEntry {
  pid_t ppid = 0;
  pid_t pgrp = 0;
  char state = '?';
};

// Every process of /proc with its parent, group and state ("Z" for a zombie).
std::map<pid_t, ProcEntry> read_processes() {
  std::map<pid_t, ProcEntry> out;
  DIR* d = ::opendir("/proc");
  if (!d) return out;
  while (dirent* e = ::readdir(d)) {
    char* end = nullptr;
    const long pid = std::strtol(e->d_name, &end, 10);
    if (pid <= 0 || !end || *end != '\0') continue;
    const std::string path = std::string("/proc/") + e->d_name + "/stat";
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    char buf[512];
    const ssize_t n = ::read(fd, buf, sizeof buf - 1);
    ::close(fd);
    if (n <= 0) continue;
    buf[n] = '\0';
    // "pid (comm) S ppid …": comm may hold spaces and parentheses; the last ')' ends it.
    const std::string text(buf, static_cast<std::size_t>(n));
    const std::size_t close = text.rfind(')');
    if (close == std::string::npos || close + 4 >= text.size()) continue;
    ProcEntry entry;
    entry.state = text[close + 2];
    char* after_ppid = nullptr;
    entry.ppid = static_cast<pid_t>(std::strtol(text.c_str() + close + 4, &after_ppid, 10));
    entry.pgrp = static_cast<pid_t>(std::strtol(after_ppid, nullptr, 10));
    out[static_cast<pid_t>(pid)] = entry;
  }
  ::closedir(d);
  return out;
}

}  // namespace

bool become_child_subreaper() {
  return ::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0;
}

bool group_has_live_member(pid_t pgid) {
  if (::kill(-pgid, 0) != 0) return false;  // no member at all: no need to read /proc
  for (const auto& [pid, e] : read_processes()) {
    if (e.pgrp == pgid && e.state != 'Z') return true;
  }
  return false;
}

std::vector<pid_t> descendants_of(pid_t root) {
  const auto procs = read_processes();
  std::multimap<pid_t, pid_t> children;
  for (const auto& [pid, e] : procs)
    children.emplace(e.ppid, pid);
  std::vector<pid_t> out;
  std::vector<pid_t> todo{root};
  while (!todo.empty()) {
    const pid_t p = todo.back();
    todo.pop_back();
    const auto [from, to] = children.equal_range(p);
    for (auto it = from; it != to; ++it) {
      if (procs.at(it->second).state != 'Z') out.push_back(it->second);
      todo.push_back(it->second);
    }
  }
  return out;
}

std::size_t kill_descendants() {
  // Twice: a process that forked between the scan and the kill leaves a child the second
  // scan finds.
  std::size_t killed = 0;
  for (int round = 0; round < 2; ++round) {
    for (pid_t pid : descendants_of(::getpid())) {
      if (::kill(pid, SIGKILL) == 0) ++killed;
    }
  }
  return killed;
}

std::size_t reap_orphans() {
  std::size_t reaped = 0;
  const pid_t self = ::getpid();
  for (const auto& [pid, e] : read_processes()) {
    if (e.ppid != self || e.state != 'Z' || ChildProcess::is_watched(pid)) continue;
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid) ++reaped;
  }
  return reaped;
}

}  // namespace rebound::process
