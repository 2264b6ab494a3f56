#include "tools/mapped_file.h"

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <mutex>

namespace rebound::tools {

namespace {

// The mapping the current thread reads; the handler runs on the faulting thread, so a
// thread-local slot is all it needs (no lock, async-signal-safe).
struct ActiveMapping {
  char* begin = nullptr;
  std::size_t size = 0;
  bool shrank = false;
};
thread_local ActiveMapping t_active;

struct sigaction g_previous {};

void on_sigbus(int sig, siginfo_t* info, void* context) {
  ActiveMapping& m = t_active;
  char* at = static_cast<char*>(info->si_addr);
  if (m.begin && at >= m.begin && at < m.begin + m.size) {
    // Zero pages from the faulting page to the end: one call however much was cut off.
    const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
    char* from = reinterpret_cast<char*>(reinterpret_cast<std::uintptr_t>(at) & ~(page - 1));
    const std::size_t length = static_cast<std::size_t>(m.begin + m.size - from);
    if (::mmap(from, length, PROT_READ, MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) !=
        MAP_FAILED) {
      m.shrank = true;
      return;  // the access is retried and now reads zeros
    }
  }
  // Not ours: what would have happened without us.
  if (g_previous.sa_flags & SA_SIGINFO) {
    if (g_previous.sa_sigaction) {
      g_previous.sa_sigaction(sig, info, context);
      return;
    }
  } else if (g_previous.sa_handler != SIG_DFL && g_previous.sa_handler != SIG_IGN) {
    g_previous.sa_handler(sig);
    return;
  }
  ::signal(sig, SIG_DFL);  // returning repeats the fault, now fatal as it would have been
}

void install_handler_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction sa {};
    sa.sa_sigaction = on_sigbus;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGBUS, &sa, &g_previous);
  });
}

}  // namespace

bool MappedFile::map(int fd, std::size_t size) {
  install_handler_once();
  void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (p == MAP_FAILED) return false;
  base_ = p;
  size_ = size;
  t_active = {static_cast<char*>(p), size, false};
  return true;
}

MappedFile::~MappedFile() {
  if (!base_) return;
  t_active = {};
  ::munmap(base_, size_);
}

std::string_view MappedFile::data() const {
  return base_ ? std::string_view(static_cast<const char*>(base_), size_) : std::string_view();
}

bool MappedFile::shrank() const {
  return base_ && t_active.begin == base_ && t_active.shrank;
}

}  // namespace rebound::tools
