#include "config/file_session_storage.h"
#include "config/session_lock.h"

#include "protocol/json.h"

#include <algorithm>
#include <atomic>
#include <fstream>
#include <mutex>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>

#include "config/json_file.h"
#include "protocol/json_line.h"

namespace rebound::config {

namespace fs = std::filesystem;

namespace {

std::string errno_text() {
  return std::strerror(errno);
}

// Memory for a file read back: mapped with its pages populated in one call, since a fault per
// page of a fresh buffer cost more than reading the file (docs/benchmarks.md, the fork).
class PopulatedBytes final : public session::FileBytes, public ReadTarget {
 public:
  PopulatedBytes(std::size_t capacity, std::uint64_t fingerprint_bytes)
      : capacity_(capacity), fingerprint_bytes_(fingerprint_bytes) {
    void* p = ::mmap(nullptr, capacity_, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    data_ = p == MAP_FAILED ? nullptr : static_cast<char*>(p);
  }
  ~PopulatedBytes() override {
    if (data_) ::munmap(data_, capacity_);
  }
  PopulatedBytes(const PopulatedBytes&) = delete;
  PopulatedBytes& operator=(const PopulatedBytes&) = delete;

  bool mapped() const { return data_ != nullptr; }
  /// Filled to the last byte: the file may have had more.
  bool full() const { return size_ == capacity_; }
  // Pieces small enough to be in the cache still when the fingerprint reads them.
  std::pair<char*, std::size_t> room(std::size_t) override {
    return {data_ + size_, std::min<std::size_t>(capacity_ - size_, 256u << 10)};
  }
  void filled(std::size_t n) override {
    if (size_ < fingerprint_bytes_) {
      const std::size_t take = std::min<std::uint64_t>(n, fingerprint_bytes_ - size_);
      fingerprint.add(std::string_view(data_ + size_, take));
    }
    size_ += n;
  }
  std::string_view view() const override { return {data_, size_}; }

 private:
  char* data_ = nullptr;
  std::size_t capacity_ = 0;
  std::uint64_t fingerprint_bytes_ = 0;
  std::size_t size_ = 0;
};

class FileSink : public session::SessionFileSink {
 public:
  FileSink(int fd, off_t size) : fd_(fd), size_(size) {}
  ~FileSink() override { ::close(fd_); }
  FileSink(const FileSink&) = delete;
  FileSink& operator=(const FileSink&) = delete;

  bool append(std::string_view lines) override { return append_parts({lines}); }

  bool append_parts(const std::vector<std::string_view>& parts) override {
    if (parts.size() > IOV_MAX) return SessionFileSink::append_parts(parts);  // one buffer
    std::vector<iovec> iov;
    iov.reserve(parts.size());
    std::size_t total = 0;
    for (auto p : parts) {
      iov.push_back({const_cast<char*>(p.data()), p.size()});
      total += p.size();
    }
    ssize_t n;
    do {
      n = ::writev(fd_, iov.data(), static_cast<int>(iov.size()));
    } while (n < 0 && errno == EINTR);
    if (n == static_cast<ssize_t>(total)) {
      size_ += n;
      return true;
    }
    // A short write (disk full): cut the fragment off so the file ends with a whole line.
    if (n > 0 && ::ftruncate(fd_, size_) != 0) size_ += n;
    return false;
  }

 private:
  int fd_;
  off_t size_;
};

// Ends the file with a complete line: a torn last line (one that does not read as JSON) is cut
// off, a complete last line without its LF gets one. Returns the error text or "".
std::string repair_tail(int fd, off_t& size) {
  if (size == 0) return {};
  char last = 0;
  if (::pread(fd, &last, 1, size - 1) != 1) return "cannot read the file: " + errno_text();
  if (last == '\n') return {};
  // Find the start of the last line.
  off_t start = size;
  char buf[4096];
  while (start > 0) {
    const off_t from = start > static_cast<off_t>(sizeof buf) ? start - sizeof buf : 0;
    const ssize_t n = ::pread(fd, buf, static_cast<std::size_t>(start - from), from);
    if (n != start - from) return "cannot read the file: " + errno_text();
    ssize_t i = n - 1;
    while (i >= 0 && buf[i] != '\n')
      --i;
    if (i >= 0) {
      start = from + i + 1;
      break;
    }
    start = from;
  }
  std::string fragment(static_cast<std::size_t>(size - start), '\0');
  if (::pread(fd, fragment.data(), fragment.size(), start) !=
      static_cast<ssize_t>(fragment.size())) {
    return "cannot read the file: " + errno_text();
  }
  const auto parsed = protocol::parse_json_line(fragment);
  if (parsed.value && parsed.value->is_object()) {
    if (::write(fd, "\n", 1) != 1) return "cannot write the file: " + errno_text();
    size += 1;
  } else {
    if (::ftruncate(fd, start) != 0) return "cannot cut the torn last line: " + errno_text();
    size = start;
  }
  return {};
}

}  // namespace

std::string encode_cwd(const fs::path& cwd) {
  std::string s = cwd.string();
  if (!s.empty() && s.front() == '/') s.erase(0, 1);
  for (char& c : s) {
    if (c == '/') c = '-';
  }
  return "--" + s + "--";
}

std::string session_file_name(const std::string& session_id, std::int64_t epoch_ms) {
  std::string stamp = session::iso_timestamp(epoch_ms);
  for (char& c : stamp) {
    if (c == ':' || c == '.') c = '-';
  }
  return stamp + "_" + session_id + ".jsonl";
}

std::optional<std::string> FileSessionStorage::new_session_path(const std::string& session_id,
                                                                std::int64_t epoch_ms) {
  if (options_.no_session) return std::nullopt;
  const fs::path dir = options_.session_dir
                           ? *options_.session_dir
                           : options_.agent_dir / "sessions" / encode_cwd(options_.cwd);
  return (dir / session_file_name(session_id, epoch_ms)).string();
}

std::optional<std::string> FileSessionStorage::find_session_file(
    const std::string& session_id) const {
  if (options_.no_session || session_id.empty()) return std::nullopt;
  const fs::path dir = options_.session_dir
                           ? *options_.session_dir
                           : options_.agent_dir / "sessions" / encode_cwd(options_.cwd);
  const std::string suffix = "_" + session_id + ".jsonl";
  std::optional<std::string> best;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() <= suffix.size() ||
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
      continue;
    std::error_code type_error;
    if (!it->is_regular_file(type_error)) continue;
    // Names start with their creation time, so the greatest is the newest.
    if (!best || it->path().string() > *best) best = it->path().string();
  }
  return best;
}

std::optional<std::string> FileSessionStorage::most_recent_session(std::string& folder) const {
  const fs::path dir = options_.session_dir
                           ? *options_.session_dir
                           : options_.agent_dir / "sessions" / encode_cwd(options_.cwd);
  folder = dir.string();
  if (options_.no_session) return std::nullopt;
  std::optional<std::pair<fs::file_time_type, std::string>> best;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path& p = it->path();
    std::error_code e;
    if (p.extension() != ".jsonl" || !it->is_regular_file(e)) continue;
    if (session_file_locked_elsewhere(p.string())) continue;  // another process runs it (A3)
    // The header is the first line: read a bounded piece of it.
    std::ifstream in(p, std::ios::binary);
    std::string line(64 * 1024, '\0');
    in.getline(line.data(), static_cast<std::streamsize>(line.size()));
    // gcount() counts the line feed when there was one.
    const std::streamsize got = in.gcount() - (in.eof() || in.fail() ? 0 : 1);
    line.resize(static_cast<std::size_t>(std::max<std::streamsize>(0, got)));
    const auto header = protocol::Json::parse(line, nullptr, false);
    if (!header.is_object() || header.value("type", "") != "session" ||
        header.value("cwd", "") != options_.cwd.string())
      continue;
    const auto mtime = it->last_write_time(e);
    if (e) continue;
    const std::pair<fs::file_time_type, std::string> key{mtime, p.string()};
    if (!best || key > *best) best = key;
  }
  if (!best) return std::nullopt;
  return best->second;
}

namespace {

// With `restore`: parsed slim (message entries keep only ids and types; their messages are
// converted as read) and restored, so the conversation is held as messages once, not as JSON too.
session::Result<session::LoadedSession> load_file(const std::string& path,
                                                  const std::atomic<bool>* cancelled,
                                                  bool restore) {
  // A line at a time as the file is read: the whole text is never held.
  std::error_code size_error;
  const auto size = fs::file_size(path, size_error);
  session::SessionFileParser parser(cancelled, !restore, size_error ? 0 : size);
  std::string carry;  // a line begun in an earlier piece
  const FileRead file = read_regular_file_in_pieces(
      path, kMaxSessionFileBytes, [&parser, &carry](std::string_view piece) {
        std::size_t start = 0;
        for (std::size_t lf = piece.find('\n'); lf != std::string_view::npos;
             lf = piece.find('\n', start)) {
          std::string_view line = piece.substr(start, lf - start);
          if (!carry.empty()) {
            carry.append(line);
            line = carry;
          }
          const bool more = parser.line(line, true);
          carry.clear();
          start = lf + 1;
          if (!more) return false;
        }
        carry.append(piece.substr(start));
        return true;
      });
  using session::failure;
  if (file.status == FileReadStatus::missing) return failure("Session file not found: " + path);
  if (file.status == FileReadStatus::failed) {
    if (file.refused) return failure("Not a session file: " + path + " " + file.error);
    return failure("Cannot read session file " + path + ": " + file.error);
  }
  if (!carry.empty()) parser.line(carry, false);  // the last line, without its LF
  auto parsed = parser.finish();
  if (!parsed) return failure("Cannot load session file " + path + ": " + parsed.error().message);
  if (restore) parsed->restored = session::restore_session_releasing(*parsed);
  return parsed;
}

// A load for taking the session up: the file's lock first (amendments A3), then the file.
session::Result<session::LoadedSession> load_locked(const std::string& path,
                                                    const std::atomic<bool>* cancelled) {
  auto lock = lock_session_file(path);
  if (!lock) return session::failure(lock.error().message);
  auto loaded = load_file(path, cancelled, true);
  if (loaded) loaded->lock = std::move(*lock);
  return loaded;
}

}  // namespace

// The threads of load_async: each runs one load with its own cancel flag; finished ones are
// joined at the next load, all of them at destruction.
struct FileSessionStorage::Loads {
  struct Load {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> finished, cancelled;
  };
  std::mutex mutex;
  std::vector<Load> running;

  void join_finished() {
    std::lock_guard lock(mutex);
    for (auto it = running.begin(); it != running.end();) {
      if (it->finished->load()) {
        it->thread.join();
        it = running.erase(it);
      } else {
        ++it;
      }
    }
  }
  void cancel_all() {
    std::lock_guard lock(mutex);
    for (auto& l : running)
      *l.cancelled = true;
  }
};

FileSessionStorage::FileSessionStorage(SessionStorageOptions options)
    : options_(std::move(options)), loads_(std::make_shared<Loads>()) {}

FileSessionStorage::~FileSessionStorage() {
  loads_->cancel_all();
  std::lock_guard lock(loads_->mutex);
  for (auto& l : loads_->running)
    l.thread.join();
}

session::Result<session::LoadedSession> FileSessionStorage::load(const std::string& path) {
  return load_file(path, nullptr, false);
}

session::Result<session::LoadedSession> FileSessionStorage::load_restored(const std::string& path) {
  return load_locked(path, nullptr);
}

std::optional<std::int64_t> FileSessionStorage::spool_birth_ms(const std::string& path) {
  struct statx st {};
  if (::statx(AT_FDCWD, path.c_str(), AT_SYMLINK_NOFOLLOW, STATX_BTIME, &st) != 0 ||
      !(st.stx_mask & STATX_BTIME))
    return std::nullopt;
  return static_cast<std::int64_t>(st.stx_btime.tv_sec) * 1000 + st.stx_btime.tv_nsec / 1000000;
}

void FileSessionStorage::remove_spool(const std::string& path) {
  ::unlink(path.c_str());
}

session::Result<std::shared_ptr<void>> FileSessionStorage::lock(const std::string& path) {
  return lock_session_file(path);
}

std::shared_ptr<const session::FileBytes> FileSessionStorage::read_back(
    const std::string& path, std::uint64_t fingerprint_bytes) {
  std::error_code size_error;
  const auto size = fs::file_size(path, size_error);
  if (size_error || size > kMaxSessionFileBytes) return nullptr;
  auto bytes = std::make_shared<PopulatedBytes>(static_cast<std::size_t>(size) + (64u << 10),
                                                fingerprint_bytes);
  if (!bytes->mapped()) return nullptr;
  const FileRead file = read_regular_file_into(path, kMaxSessionFileBytes, *bytes);
  if (file.status != FileReadStatus::ok || bytes->full()) return nullptr;  // it grew too much
  return bytes;
}

void FileSessionStorage::cancel_loads() {
  loads_->cancel_all();
}

void FileSessionStorage::load_async(const std::string& path, LoadDone done) {
  if (!options_.scheduler) return done(load_restored(path));
  loads_->join_finished();
  session::Scheduler& scheduler = *options_.scheduler;
  auto finished = std::make_shared<std::atomic<bool>>(false);
  auto cancelled = std::make_shared<std::atomic<bool>>(false);
  std::lock_guard lock(loads_->mutex);
  std::thread thread([&scheduler, finished, cancelled, path, done = std::move(done)]() mutable {
    auto result = load_locked(path, cancelled.get());
    // Posted also when cancelled: the caller's answer is an error then, never nothing.
    // `done` moves on with the result: what it holds (the storage itself, maybe) is released
    // on the loop, never on this thread, which the storage's destructor joins.
    auto loaded = std::make_shared<decltype(result)>(std::move(result));
    scheduler.post([done = std::move(done), loaded] { done(std::move(*loaded)); });
    *finished = true;
  });
  loads_->running.push_back({std::move(thread), finished, cancelled});
}

std::unique_ptr<session::SessionFileSink> FileSessionStorage::open_for_append(
    const std::string& path, std::string& error) {
  std::error_code ec;
  const fs::path parent = fs::path(path).parent_path();
  if (!parent.empty()) fs::create_directories(parent, ec);
  if (ec) {
    error = "cannot create " + parent.string() + ": " + ec.message();
    return nullptr;
  }
  // Non-blocking so that a FIFO cannot stall the loop; only a regular file is written to.
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC | O_NONBLOCK, 0600);
  if (fd < 0) {
    error = errno_text();
    return nullptr;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    error = S_ISREG(st.st_mode) ? errno_text() : "not a regular file";
    ::close(fd);
    return nullptr;
  }
  off_t size = st.st_size;
  error = repair_tail(fd, size);
  if (!error.empty()) {
    ::close(fd);
    return nullptr;
  }
  return std::make_unique<FileSink>(fd, size);
}

}  // namespace rebound::config
