#pragma once
// What the server's children leave behind (tools.md section 4.4): the process is the child
// subreaper of everything it starts, so a command's background process, even one that left its
// group (`setsid cmd &`), stays a descendant; orphans reparented to us are reaped; and at exit
// every descendant still there is killed. POSIX and /proc only.

#include <sys/types.h>

#include <vector>

namespace rebound::process {

/// Makes this process the subreaper of its descendants (PR_SET_CHILD_SUBREAPER); false when the
/// system refuses.
bool become_child_subreaper();

/// Whether group `pgid` has a member that is not a zombie. An orphaned member that was killed
/// stays a zombie until whoever adopted it reaps it (init or a subreaper above us; some
/// containers' init does that late or never), and kill(-pgid, 0) still finds it.
bool group_has_live_member(pid_t pgid);

/// The live descendants of `root` (children, their children, …) read from /proc now.
std::vector<pid_t> descendants_of(pid_t root);

/// SIGKILL to every descendant of this process; how many there were.
std::size_t kill_descendants();

/// Reaps the children of this process that are zombies and that no ChildProcess waits for
/// (orphans reparented to us): how many.
std::size_t reap_orphans();

}  // namespace rebound::process
