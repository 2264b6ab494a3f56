#pragma once
// The names of a directory and what each is (directory, symlink, something else), kept while
// the directory's status change time (ctime) says nothing was added, removed or renamed in it.
// The bash judgement (policy.md section 2.4) looks at every path word of a command; with a
// listing, the words of one directory cost one stat of the directory instead of one lstat each.
//
// The ctime, not the mtime: `touch -d` can set a directory's mtime back to the kept value after
// adding a symlink, but every such change sets the ctime to now. A listing is read and kept only
// when the directory's ctime was at least kSettledNs old at the time: a change made later
// carries a later ctime, even with coarse file-system timestamps, so it cannot hide behind an
// equal one. Bounded: kMaxDirs directories of at most kMaxNames names.

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

namespace rebound::policy {

class DirListing {
 public:
  enum class Kind { absent, directory, symlink, other, unknown };
  Kind kind(std::string_view name) const;

 private:
  friend class DirIndex;
  std::unordered_map<std::string, Kind> names_;
};

class DirIndex {
 public:
  static constexpr std::int64_t kSettledNs = 2'000'000'000;
  static constexpr std::size_t kMaxDirs = 16;
  static constexpr std::size_t kMaxNames = 4096;
  /// Wall-clock nanoseconds since the epoch (file times are wall-clock); injected for tests.
  using WallClock = std::function<std::int64_t()>;

  explicit DirIndex(WallClock now = {});

  /// The listing of `dir` (an absolute path), or null when none can be trusted now (the
  /// directory's ctime is within kSettledNs, is too large, or cannot be read). One stat of `dir`
  /// when the kept listing still holds.
  std::shared_ptr<const DirListing> listing(const std::string& dir) const;

 private:
  struct Kept {
    dev_t dev = 0;
    ino_t ino = 0;
    std::int64_t changed_ns = 0;                // the ctime the listing was read at
    std::shared_ptr<const DirListing> listing;  // null: too large, read again when it changes
  };

  static std::shared_ptr<const DirListing> read(const std::string& dir);

  WallClock now_;
  mutable std::mutex mutex_;
  mutable std::unordered_map<std::string, Kept> kept_;
};

}  // namespace rebound::policy
