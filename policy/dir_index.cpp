#include "policy/dir_index.h"

#include <dirent.h>
#include <sys/stat.h>

#include <ctime>

namespace rebound::policy {

namespace {

std::int64_t wall_now_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// The status change time: set by the kernel on every change of the directory's entries and
// on every change of its times, so, unlike the mtime, no one can set it back.
std::int64_t ctime_ns(const struct stat& st) {
  return static_cast<std::int64_t>(st.st_ctim.tv_sec) * 1'000'000'000 + st.st_ctim.tv_nsec;
}

}  // namespace

// The names of `dir`, or null when it holds more than kMaxNames or cannot be read.
std::shared_ptr<const DirListing> DirIndex::read(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (!d) return nullptr;
  auto listing = std::make_shared<DirListing>();
  auto& out = listing->names_;
  bool fits = true;
  while (const dirent* e = ::readdir(d)) {
    const std::string_view name = e->d_name;
    if (name == "." || name == "..") continue;
    if (out.size() >= kMaxNames) {
      fits = false;
      break;
    }
    DirListing::Kind kind = DirListing::Kind::unknown;
    if (e->d_type == DT_DIR)
      kind = DirListing::Kind::directory;
    else if (e->d_type == DT_LNK)
      kind = DirListing::Kind::symlink;
    else if (e->d_type != DT_UNKNOWN)
      kind = DirListing::Kind::other;
    out.emplace(name, kind);
  }
  ::closedir(d);
  if (!fits) return nullptr;
  return listing;
}

DirListing::Kind DirListing::kind(std::string_view name) const {
  const auto it = names_.find(std::string(name));
  return it == names_.end() ? Kind::absent : it->second;
}

DirIndex::DirIndex(WallClock now) : now_(now ? std::move(now) : WallClock(wall_now_ns)) {}

std::shared_ptr<const DirListing> DirIndex::listing(const std::string& dir) const {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return nullptr;
  const std::int64_t changed = ctime_ns(st);
  {
    std::lock_guard lock(mutex_);
    const auto it = kept_.find(dir);
    if (it != kept_.end() && it->second.dev == st.st_dev && it->second.ino == st.st_ino &&
        it->second.changed_ns == changed)
      return it->second.listing;
  }
  // Read only a directory that has not changed for a while; its listing is then kept.
  if (now_() - changed < kSettledNs) return nullptr;
  std::shared_ptr<const DirListing> fresh = read(dir);
  // A change while the names were read: keep nothing.
  struct stat after {};
  if (::stat(dir.c_str(), &after) != 0 || after.st_ino != st.st_ino || ctime_ns(after) != changed)
    return nullptr;
  std::lock_guard lock(mutex_);
  if (kept_.size() >= kMaxDirs && kept_.find(dir) == kept_.end()) kept_.clear();
  kept_[dir] = Kept{st.st_dev, st.st_ino, changed, fresh};
  return fresh;
}

}  // namespace rebound::policy
