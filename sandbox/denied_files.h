#pragma once
// `sandbox.denyRead` held on the files, not their names (policy.md 2.4.1, amendment A18): the
// (device, inode) of everything the denied paths hold, taken when the sandbox is made and again
// at each call's start, and the places in the writable roots where a sandboxed command may have
// moved or linked one of them (a rename of the parent, a hard link), found before each call.
// Thread-safe: the file tools ask from worker threads.

#include <sys/types.h>

#include <cstddef>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace rebound::sandbox {

class DeniedFiles {
 public:
  /// At most this many entries are looked at below the writable roots per call.
  static constexpr std::size_t kMaxEntries = 100000;

  /// `paths`: the denied paths as real paths (missing ones are looked at again later).
  explicit DeniedFiles(std::vector<std::string> paths);

  /// Adds what the denied paths hold now.
  void refresh();
  /// Whether (device, inode) is a denied file or directory.
  bool contains(dev_t device, ino_t inode) const;
  /// The paths below `roots` (real paths; `.git` and symlinks not entered) that hold a denied
  /// file or directory under another name than the denied paths; nullopt when there are more
  /// than `limit` entries to look at. Directories unchanged since the last walk are not read.
  std::optional<std::vector<std::string>> moved(const std::vector<std::string>& roots,
                                                std::size_t limit = kMaxEntries);

 private:
  struct Entry {
    std::string name;
    ino_t inode = 0;
    bool directory = false;
  };
  struct Listing {
    dev_t device = 0;
    ino_t inode = 0;
    long long mtime_ns = 0;
    std::vector<Entry> entries;
  };

  void add_below(const std::string& path, std::size_t& budget);
  bool under_denied_path(const std::string& path) const;
  const Listing* listing(const std::string& dir);
  bool walk(const std::string& dir, std::size_t& seen, std::size_t limit,
            std::vector<std::string>& out);

  std::vector<std::string> paths_;
  mutable std::mutex mutex_;
  std::set<std::pair<dev_t, ino_t>> ids_;
  std::map<std::string, Listing> listings_;  // the walk's, used by one thread at a time
  std::mutex walk_mutex_;
};

}  // namespace rebound::sandbox
