#include "server/bash_runner.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <boost/asio/steady_timer.hpp>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>
#include <set>

#include "server/child_process.h"
#include "session/output_tail.h"

namespace rebound::server {

namespace asio = boost::asio;

namespace {
// How long output is still read after the shell exited (tools.md section 4.4).
constexpr auto kAfterExitGrace = std::chrono::milliseconds(100);
}  // namespace

struct BashJob;

struct BashRunner::Lingering {
  std::set<std::shared_ptr<BashJob>> jobs;
};

namespace {

void write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    data.remove_prefix(static_cast<std::size_t>(n));
  }
}

}  // namespace

struct BashJob : std::enable_shared_from_this<BashJob> {
  BashJob(asio::any_io_executor ex, std::unique_ptr<ChildProcess> c, session::ShellRunner::Done d,
          std::weak_ptr<BashRunner::Lingering> l)
      : child(std::move(c)), grace(ex), done(std::move(d)), lingering(std::move(l)) {}

  void begin() {
    auto self = shared_from_this();
    child->read_stdout([self](std::string_view data) { self->take(data); },
                       [self] {
                         self->eof = true;
                         self->maybe_finish();
                         self->leave_lingering();
                       });
    child->wait_exit([self](int status) {
      self->exited = true;
      if (WIFEXITED(status)) self->exit_code = WEXITSTATUS(status);
      if (!self->eof) {
        self->grace.expires_after(kAfterExitGrace);
        self->grace.async_wait([self](const boost::system::error_code& ec) {
          if (ec) return;
          self->grace_over = true;
          self->maybe_finish();
        });
      }
      self->maybe_finish();
    });
  }

  void take(std::string_view data) {
    if (finished) return;  // a background process's later output: read and discarded
    tail.append(data);
    if (spill_fd >= 0) {
      write_all(spill_fd, data);
    } else if (tail.over_limit() && !spill_failed) {
      open_spill();
    }
  }

  void open_spill() {
    std::error_code ec;
    std::string name =
        (std::filesystem::temp_directory_path(ec) / "rebound-bash-XXXXXX.log").string();
    spill_fd = ::mkostemps(name.data(), 4, O_CLOEXEC);
    if (spill_fd < 0) {
      spill_failed = true;
      spdlog::warn("bash: cannot create a file for the full output: {}", std::strerror(errno));
      return;
    }
    spill_path = name;
    write_all(spill_fd, tail.buffered());  // still everything so far (OutputTail's promise)
  }

  void maybe_finish() {
    if (finished || !exited || !(eof || grace_over)) return;
    finished = true;
    grace.cancel();
    close_spill();
    session::ShellResult r;
    auto shown = tail.result();
    r.output = std::move(shown.text);
    r.truncated = shown.truncated;
    if (r.truncated && !spill_path.empty()) r.full_output_path = spill_path;
    r.cancelled = cancelled;
    if (!cancelled) r.exit_code = exit_code;
    if (auto f = std::move(done)) f(std::move(r));
  }

  void close_spill() {
    if (spill_fd >= 0) ::close(spill_fd);
    spill_fd = -1;
  }

  // The pipe closed after the command was answered: nothing of it is left to watch.
  void leave_lingering() {
    if (!finished) return;
    if (auto l = lingering.lock()) l->jobs.erase(shared_from_this());
  }

  std::unique_ptr<ChildProcess> child;
  asio::steady_timer grace;
  session::ShellRunner::Done done;
  std::weak_ptr<BashRunner::Lingering> lingering;
  session::OutputTail tail;
  int spill_fd = -1;
  bool spill_failed = false;
  std::string spill_path;
  bool eof = false, exited = false, grace_over = false, finished = false, cancelled = false;
  std::optional<std::int64_t> exit_code;
};

namespace {

class JobHandle : public session::ShellJob {
 public:
  explicit JobHandle(std::shared_ptr<BashJob> job) : job_(std::move(job)) {}
  ~JobHandle() override {
    if (job_->finished) {
      // Answered; what it left in the background keeps running until its pipe closes.
      if (!job_->eof) {
        if (auto l = job_->lingering.lock()) l->jobs.insert(job_);
      }
      return;
    }
    // Destroyed without finishing: no completion; the group is killed and the child reaped.
    job_->done = nullptr;
    job_->finished = true;
    job_->grace.cancel();
    job_->close_spill();
    job_->child.reset();
  }
  void cancel() override {
    if (!job_->finished) job_->cancelled = true;
    // Whenever any process of its group is alive, shell exited or not.
    if (job_->child) job_->child->kill_group(SIGKILL);
  }

 private:
  std::shared_ptr<BashJob> job_;
};

}  // namespace

BashRunner::BashRunner(asio::any_io_executor executor)
    : executor_(std::move(executor)), lingering_(std::make_shared<Lingering>()) {}

BashRunner::~BashRunner() {
  kill_background();
}

void BashRunner::kill_background() {
  auto jobs = std::move(lingering_->jobs);
  lingering_->jobs.clear();
  for (const auto& job : jobs) {
    if (!job->child) continue;
    job->child->kill_group(SIGKILL);
    job->child->close_output();
    job->child.reset();  // reaped long ago; nothing of it is watched any more
  }
}

std::unique_ptr<session::ShellJob> BashRunner::start(const std::string& command, Done done,
                                                     std::string& error) {
  ChildSpec spec;
  spec.argv = {"bash", "-c", command};
  std::string why;
  auto child = ChildProcess::spawn(executor_, spec, why);
  if (!child) {
    error = "Cannot run bash: " + why;
    return nullptr;
  }
  spdlog::debug("bash: started pid {}", child->pid());
  auto job = std::make_shared<BashJob>(executor_, std::move(child), std::move(done), lingering_);
  job->begin();
  return std::make_unique<JobHandle>(job);
}

}  // namespace rebound::server
