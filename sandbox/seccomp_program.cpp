#include "sandbox/seccomp_program.h"

#include <fcntl.h>
#include <linux/sched.h>
#include <seccomp.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

namespace rebound::sandbox {

namespace {

struct Context {
  scmp_filter_ctx ctx = nullptr;
  ~Context() {
    if (ctx) seccomp_release(ctx);
  }
};

std::string reason(const char* what, int rc) {
  return std::string(what) + ": " + std::strerror(rc < 0 ? -rc : rc);
}

}  // namespace

session::Result<SeccompProgram> build_seccomp_program() {
#if !defined(__x86_64__) && !defined(__aarch64__)
  return session::failure("unsupported architecture");
#endif
  Context c;
  c.ctx = seccomp_init(SCMP_ACT_ALLOW);
  if (!c.ctx) return session::failure(std::string("seccomp_init failed"));
  // Other ABIs (i386, x32) of the native architecture kill the process.
  if (int rc = seccomp_attr_set(c.ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS); rc != 0)
    return session::failure(reason("seccomp_attr_set", rc));
  // No NO_NEW_PRIVS from the filter's loader: bubblewrap sets it itself.
  const auto deny = [&](const char* name, int err) -> std::string {
    const int nr = seccomp_syscall_resolve_name(name);
    if (nr == __NR_SCMP_ERROR) return {};  // not a system call of this architecture
    const int rc = seccomp_rule_add(c.ctx, SCMP_ACT_ERRNO(err), nr, 0);
    return rc == 0 ? std::string() : reason(name, rc);
  };
  static const char* const kEperm[] = {"io_uring_setup",
                                       "io_uring_enter",
                                       "io_uring_register",
                                       "ptrace",
                                       "process_vm_readv",
                                       "process_vm_writev",
                                       "bpf",
                                       "perf_event_open",
                                       "userfaultfd",
                                       "keyctl",
                                       "add_key",
                                       "request_key",
                                       "memfd_create",
                                       "memfd_secret",
                                       "mount",
                                       "umount2",
                                       "pivot_root",
                                       "chroot",
                                       "move_mount",
                                       "open_tree",
                                       "fsopen",
                                       "fsmount",
                                       "fsconfig",
                                       "fspick",
                                       "mount_setattr",
                                       "setns",
                                       "open_by_handle_at",
                                       "name_to_handle_at",
                                       "unshare",
                                       "kexec_load",
                                       "kexec_file_load",
                                       "init_module",
                                       "finit_module",
                                       "delete_module",
                                       "reboot",
                                       "swapon",
                                       "swapoff",
                                       "acct",
                                       "syslog",
                                       "iopl",
                                       "ioperm"};
  for (const char* name : kEperm)
    if (auto problem = deny(name, EPERM); !problem.empty()) return session::failure(problem);
  // clone3's flags live in memory the filter cannot read: libc falls back to clone.
  if (auto problem = deny("clone3", ENOSYS); !problem.empty()) return session::failure(problem);
  // clone with any CLONE_NEW* flag: one rule per flag (masked equality).
  static const unsigned long kNamespaces[] = {CLONE_NEWNS,  CLONE_NEWCGROUP, CLONE_NEWUTS,
                                              CLONE_NEWIPC, CLONE_NEWUSER,   CLONE_NEWPID,
                                              CLONE_NEWNET, CLONE_NEWTIME};
  for (unsigned long flag : kNamespaces) {
    const int rc = seccomp_rule_add(c.ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
                                    SCMP_A0(SCMP_CMP_MASKED_EQ, flag, flag));
    if (rc != 0) return session::failure(reason("clone", rc));
  }
  for (unsigned long request :
       {static_cast<unsigned long>(TIOCSTI), static_cast<unsigned long>(TIOCLINUX)}) {
    const int rc = seccomp_rule_add(c.ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ioctl), 1,
                                    SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffUL, request));
    if (rc != 0) return session::failure(reason("ioctl", rc));
  }
  // The program, through a pipe (the server may make memfds; the sandbox may not).
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return session::failure(reason("pipe", errno));
  // A filter this size fits a pipe's buffer many times over.
  const int rc = seccomp_export_bpf(c.ctx, fds[1]);
  ::close(fds[1]);
  if (rc != 0) {
    ::close(fds[0]);
    return session::failure(reason("seccomp_export_bpf", rc));
  }
  SeccompProgram out;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n > 0) {
      out.bpf.append(buf, static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    break;
  }
  ::close(fds[0]);
  if (out.bpf.empty() || out.bpf.size() % 8 != 0)
    return session::failure(std::string("empty BPF program"));
  return out;
}

}  // namespace rebound::sandbox
