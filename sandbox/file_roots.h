#pragma once
// The file tools kept to the sandbox's roots (policy.md section 8.9): what `read`, `grep`,
// `find` and `ls` may read and what `edit` and `write` may write while the sandbox is enabled,
// checked on the path resolved component by component (a write never follows a symlink at its
// last component), with the section's refusal texts. Pure apart from reading the file system
// (lstat, readlink); safe on any thread.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sandbox/denied_files.h"
#include "sandbox/sandbox_config.h"

namespace rebound::sandbox {

class FileRoots {
 public:
  /// `denied_files`, the sandbox's: a file denied by `denyRead` is refused under any name.
  /// Beside the roots, the bash tool's full-output files this process wrote (its $TMPDIR logs,
  /// its spool files) may be read, known by (device, inode).
  explicit FileRoots(const SandboxConfig& config,
                     std::shared_ptr<const DeniedFiles> denied_files = nullptr);

  /// The refusal text for reading (`write` false) or writing `abs` (absolute, normalised), or
  /// nothing when it lies within the roots.
  std::optional<std::string> check(const std::string& abs, bool write) const;
  /// During a walk: whether an entry is left out (outside the readable roots, or a symlink
  /// leading outside them).
  bool hidden(const std::string& abs) const;
  /// Opens `abs` as check() allowed it, checked again at this moment: resolved anew, then opened
  /// relative to a descriptor of the root that holds it with openat2(RESOLVE_BENEATH |
  /// RESOLVE_NO_MAGICLINKS) (on a kernel without openat2, component by component with
  /// O_NOFOLLOW), so a symlink swapped in meanwhile cannot lead the open out of that root.
  /// Writes never follow their last component, but for a directory opened for writing
  /// (O_DIRECTORY: the place to create in, as `write` makes parents). -1 with errno set (EACCES:
  /// no longer allowed).
  /// Thread-safe (worker threads).
  int open_beneath(const std::string& abs, int flags, unsigned mode, bool write) const;

 private:
  bool readable(const std::string& real) const;
  bool denied(const std::string& real) const;
  bool own_output(const std::string& real) const;

  std::vector<std::string> readable_, writable_, deny_;
  std::shared_ptr<const DeniedFiles> denied_files_;
};

/// `abs` with every symlink of its existing part resolved (component by component; the last
/// component too when `follow_last`), the rest appended as written.
std::string resolve_components(const std::string& abs, bool follow_last);

}  // namespace rebound::sandbox
