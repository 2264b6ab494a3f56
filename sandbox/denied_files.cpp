#include "sandbox/denied_files.h"

#include <dirent.h>
#include <sys/stat.h>

namespace rebound::sandbox {

namespace {

// How many entries below one denied path are taken (a denied directory as large as this is
// hidden whole by the sandbox anyway; its files beyond it keep only that protection).
constexpr std::size_t kMaxDeniedEntries = 100000;

bool at_or_below(const std::string& path, const std::string& dir) {
  if (dir == "/") return true;
  return path == dir || (path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 &&
                         path[dir.size()] == '/');
}

std::string child(const std::string& dir, const std::string& name) {
  return dir == "/" ? "/" + name : dir + "/" + name;
}

long long mtime_ns(const struct stat& st) {
  return static_cast<long long>(st.st_mtim.tv_sec) * 1'000'000'000LL + st.st_mtim.tv_nsec;
}

}  // namespace

DeniedFiles::DeniedFiles(std::vector<std::string> paths) : paths_(std::move(paths)) {
  refresh();
}

void DeniedFiles::refresh() {
  for (const auto& p : paths_) {
    std::size_t budget = kMaxDeniedEntries;
    add_below(p, budget);
  }
}

void DeniedFiles::add_below(const std::string& path, std::size_t& budget) {
  struct stat st {};
  if (budget == 0 || ::lstat(path.c_str(), &st) != 0) return;
  --budget;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    ids_.insert({st.st_dev, st.st_ino});
  }
  if (!S_ISDIR(st.st_mode)) return;
  DIR* d = ::opendir(path.c_str());
  if (!d) return;
  std::vector<std::string> names;
  while (dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  ::closedir(d);
  for (const auto& name : names)
    add_below(child(path, name), budget);
}

bool DeniedFiles::contains(dev_t device, ino_t inode) const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return ids_.count({device, inode}) != 0;
}

bool DeniedFiles::under_denied_path(const std::string& path) const {
  for (const auto& p : paths_)
    if (at_or_below(path, p)) return true;
  return false;
}

const DeniedFiles::Listing* DeniedFiles::listing(const std::string& dir) {
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return nullptr;
  auto it = listings_.find(dir);
  if (it != listings_.end() && it->second.device == st.st_dev && it->second.inode == st.st_ino &&
      it->second.mtime_ns == mtime_ns(st))
    return &it->second;
  DIR* d = ::opendir(dir.c_str());
  if (!d) return nullptr;
  Listing fresh;
  fresh.device = st.st_dev;
  fresh.inode = st.st_ino;
  fresh.mtime_ns = mtime_ns(st);
  while (dirent* e = ::readdir(d)) {
    Entry entry;
    entry.name = e->d_name;
    if (entry.name == "." || entry.name == "..") continue;
    entry.inode = e->d_ino;
    entry.directory = e->d_type == DT_DIR;
    if (e->d_type == DT_UNKNOWN) {
      struct stat est {};
      entry.directory = ::lstat(child(dir, entry.name).c_str(), &est) == 0 && S_ISDIR(est.st_mode);
    }
    fresh.entries.push_back(std::move(entry));
  }
  ::closedir(d);
  if (listings_.size() > kMaxEntries) listings_.clear();  // bounded; read again when needed
  return &(listings_[dir] = std::move(fresh));
}

bool DeniedFiles::walk(const std::string& dir, std::size_t& seen, std::size_t limit,
                       std::vector<std::string>& out) {
  const Listing* l = listing(dir);
  if (!l) return true;
  const dev_t device = l->device;
  // Copied: the recursion below may read other directories into the map.
  const std::vector<Entry> entries = l->entries;
  for (const auto& e : entries) {
    if (++seen > limit) return false;
    const std::string path = child(dir, e.name);
    if (under_denied_path(path)) continue;  // hidden by its own entry
    if (contains(device, e.inode)) {
      out.push_back(path);
      continue;
    }
    if (e.directory && e.name != ".git" && !walk(path, seen, limit, out)) return false;
  }
  return true;
}

std::optional<std::vector<std::string>> DeniedFiles::moved(const std::vector<std::string>& roots,
                                                           std::size_t limit) {
  const std::lock_guard<std::mutex> lock(walk_mutex_);
  {
    const std::lock_guard<std::mutex> ids_lock(mutex_);
    if (ids_.empty()) return std::vector<std::string>{};
  }
  std::vector<std::string> out;
  std::size_t seen = 0;
  for (const auto& root : roots)
    if (!walk(root, seen, limit, out)) return std::nullopt;
  return out;
}

}  // namespace rebound::sandbox
