#include "peer/peer_child.h"

#include <signal.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <utility>

#include "tools/truncate.h"

namespace rebound::peer {

namespace {
constexpr std::size_t kStderrLogBytes = 4096;
constexpr std::size_t kStderrErrorBytes = 500;

std::string prefix(std::string_view text, std::size_t max) {
  return std::string(tools::utf8_prefix(text, max));
}
}  // namespace

PeerChild::PeerChild(session::Scheduler& scheduler, Spawner spawner, Options options)
    : scheduler_(scheduler), spawner_(std::move(spawner)), options_(std::move(options)) {}

PeerChild::~PeerChild() {
  alive_.reset();
  process_.reset();  // kills the group and reaps
}

bool PeerChild::start(const SpawnSpec& spec, Line line, Failed failed, std::string& error) {
  ++epoch_;
  if (stop_timer_) stop_timer_->cancel();
  if (grace_timer_) grace_timer_->cancel();
  stop_timer_.reset();
  process_.reset();
  line_ = std::move(line);
  failed_ = std::move(failed);
  lines_ = protocol::LineReader(options_.max_line);
  stderr_partial_.clear();
  last_stderr_.clear();
  stderr_ended_ = stopping_ = overflow_ = flush_posted_ = false;
  outbox_.clear();
  exit_status_.reset();

  const std::uint64_t epoch = epoch_;
  std::weak_ptr<bool> alive = alive_;
  auto guard = [this, alive, epoch] { return !alive.expired() && epoch_ == epoch; };
  PeerProcess::Handlers handlers;
  handlers.out = [this, guard](std::string_view bytes) {
    if (guard()) on_stdout(bytes);
  };
  handlers.out_end = [this, guard] {
    // A child that closed its stdout can no longer answer: it is stopped, and fails with its
    // exit status once that is known.
    if (guard()) begin_stop();
  };
  handlers.err = [this, guard](std::string_view bytes) {
    if (guard()) on_stderr(bytes);
  };
  handlers.err_end = [this, guard] {
    if (!guard()) return;
    if (!stderr_partial_.empty()) on_stderr("\n");
    stderr_ended_ = true;
    if (exit_status_) settle_exit();
  };
  handlers.exit = [this, guard](int status) {
    if (guard()) on_exit(status);
  };
  std::string spawn_error;
  process_ = spawner_(spec, std::move(handlers), spawn_error);
  if (!process_) {
    // The sandbox's refusals are whole texts (policy.md section 8.8).
    error = spawn_error.rfind("Sandbox", 0) == 0 ? spawn_error : "Failed to start: " + spawn_error;
    return false;
  }
  return true;
}

// Appends to the outbox unless it is refused (or would pass the input limit: then the child
// fails, from the loop, not inside the owner that is writing).
bool PeerChild::accept(std::string_view bytes) {
  if (!process_ || stopping_ || overflow_) return false;
  outbox_.append(bytes);
  if (process_->input_queued() + outbox_.size() <= options_.max_queued_input) return true;
  overflow_ = true;
  outbox_.clear();
  std::weak_ptr<bool> alive = alive_;
  const std::uint64_t epoch = epoch_;
  scheduler_.post([this, alive, epoch] {
    if (!alive.expired() && epoch == epoch_) report(options_.overflow_error);
  });
  return false;
}

void PeerChild::write(std::string_view bytes) {
  if (accept(bytes)) flush();
}

void PeerChild::write_later(std::string_view bytes) {
  if (!accept(bytes) || flush_posted_) return;
  flush_posted_ = true;
  std::weak_ptr<bool> alive = alive_;
  const std::uint64_t epoch = epoch_;
  scheduler_.post([this, alive, epoch] {
    if (alive.expired() || epoch != epoch_) return;
    flush_posted_ = false;
    flush();
  });
}

void PeerChild::flush() {
  if (outbox_.empty() || !process_) return;
  std::string out;
  out.swap(outbox_);
  process_->write(std::move(out));
}

void PeerChild::on_stdout(std::string_view bytes) {
  if (stopping_) return;
  lines_.feed(bytes, [this](protocol::LineItem item) {
    if (stopping_) return;
    if (item.kind == protocol::LineItem::Kind::too_long) {
      report("Message too large");
      return;
    }
    if (line_) line_(item.text);
  });
}

void PeerChild::on_stderr(std::string_view bytes) {
  stderr_partial_.append(bytes);
  std::size_t start = 0;
  for (std::size_t lf = stderr_partial_.find('\n'); lf != std::string::npos;
       lf = stderr_partial_.find('\n', start)) {
    std::string_view line(stderr_partial_.data() + start, lf - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!line.empty()) {
      spdlog::info("{} {}", options_.log_name, prefix(line, kStderrLogBytes));
      last_stderr_ = prefix(line, kStderrErrorBytes);
    }
    start = lf + 1;
  }
  stderr_partial_.erase(0, start);
  // An endless line is bounded like a logged one.
  if (stderr_partial_.size() > kStderrLogBytes) {
    spdlog::info("{} {}", options_.log_name, prefix(stderr_partial_, kStderrLogBytes));
    last_stderr_ = prefix(stderr_partial_, kStderrErrorBytes);
    stderr_partial_.clear();
  }
}

void PeerChild::on_exit(int status) {
  exit_status_ = status;
  if (stderr_ended_) {
    settle_exit();
    return;
  }
  grace_timer_ = scheduler_.make_timer();
  grace_timer_->start(std::chrono::milliseconds(kStderrGraceMs), [this] { settle_exit(); });
}

void PeerChild::settle_exit() {
  if (!exit_status_ || !process_) return;
  if (grace_timer_) grace_timer_->cancel();
  if (!stopping_) {
    std::string text = exit_text(*exit_status_);
    if (!last_stderr_.empty()) text += ": " + last_stderr_;
    report(std::move(text));
  }
  if (process_ && !process_->group_alive()) {
    // Nothing of it is left: done (dropped on a later turn, not inside its own callback).
    if (stop_timer_) stop_timer_->cancel();
    post_gone_check();
  }
}

void PeerChild::report(std::string error) {
  if (stopping_) return;
  stopping_ = true;
  // Also after the process exited: what it left in its group gets the same sequence.
  begin_stop();
  if (failed_) failed_(std::move(error));
}

void PeerChild::begin_stop() {
  if (!process_ || stop_timer_) return;  // gone, or its stop sequence runs already
  flush();  // what was written before the stop still goes (a session_shutdown)
  process_->close_stdin();
  kill_step(0);
}

void PeerChild::kill_step(int step) {
  // 0: stdin was closed; 1: SIGTERM went to the group; 2: SIGKILL (the process is dropped).
  if (!stop_timer_) stop_timer_ = scheduler_.make_timer();
  if (step == 2) {
    maybe_gone();
    return;
  }
  if (step == 1 && process_) process_->signal_group(SIGTERM);
  stop_timer_->start(std::chrono::milliseconds(kStopStepMs), [this, step] {
    if (!process_) return;
    if (step == 0 && !process_->group_alive()) {
      maybe_gone();
      return;
    }
    kill_step(step + 1);
  });
}

void PeerChild::post_gone_check() {
  std::weak_ptr<bool> alive = alive_;
  const std::uint64_t epoch = epoch_;
  scheduler_.post([this, alive, epoch] {
    if (!alive.expired() && epoch == epoch_) maybe_gone();
  });
}

void PeerChild::maybe_gone() {
  if (stop_timer_) stop_timer_->cancel();
  if (grace_timer_) grace_timer_->cancel();
  process_.reset();  // SIGKILL to whatever is left of the group, then reaped
  stop_timer_.reset();
  auto gone = std::move(gone_);
  gone_.clear();
  for (auto& g : gone)
    if (g) g();
}

void PeerChild::stop(std::function<void()> gone) {
  if (gone) gone_.push_back(std::move(gone));
  stopping_ = true;
  if (!process_) {
    std::weak_ptr<bool> alive = alive_;
    scheduler_.post([this, alive] {
      if (!alive.expired() && !process_) maybe_gone();
    });
    return;
  }
  if (exit_status_ && !process_->group_alive()) {
    settle_exit();
    return;
  }
  begin_stop();
}

}  // namespace rebound::peer
