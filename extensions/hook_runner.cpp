#include "extensions/hook_runner.h"

#include <utility>

#include <spdlog/spdlog.h>
#include <sys/wait.h>

#include <csignal>

#include "process/child_process.h"
#include "protocol/json_line.h"

namespace rebound::extensions {

using Clock = std::chrono::steady_clock;

struct HookRunner::One {
  std::unique_ptr<process::ChildProcess> child;
  std::unique_ptr<session::Timer> timeout, after_exit;
  std::string command;
  Clock::time_point started;
  bool exited = false, out_done = false, err_done = false, finished = false;
  HookRun run;
};

struct HookRunner::Batch {
  std::uint64_t id = 0;
  HookEvent event = HookEvent::stop;
  std::vector<std::unique_ptr<One>> ones;
  std::size_t left = 0;
  Done done;
  session::WaitBoard::Mark mark;  // while an awaited event's hooks run
};

namespace {

void keep_some(std::string& into, std::string_view data) {
  if (into.size() < kMaxHookStream) into.append(data.substr(0, kMaxHookStream - into.size()));
}

std::vector<std::string> hook_env(const HookEnvironment& e, HookEvent event) {
  const std::pair<const char*, std::string> added[] = {
      {"REBOUND_PROJECT_DIR", e.cwd},
      {"CLAUDE_PROJECT_DIR", e.cwd},
      {"REBOUND_SESSION_ID", e.session_id},
      {"REBOUND_HOOK_EVENT", std::string(event_name(event))},
  };
  std::vector<std::string> out;
  for (const auto& entry : e.env) {
    bool replaced = false;
    for (const auto& [name, value] : added)
      replaced = replaced || entry.rfind(std::string(name) + "=", 0) == 0;
    if (!replaced) out.push_back(entry);
  }
  for (const auto& [name, value] : added)
    out.push_back(std::string(name) + "=" + value);
  return out;
}

}  // namespace

HookRunner::HookRunner(boost::asio::any_io_executor executor, session::Scheduler& scheduler,
                       HookEnvironment environment)
    : executor_(std::move(executor)), scheduler_(scheduler), environment_(std::move(environment)) {}

HookRunner::~HookRunner() {
  cancel_all();
}

std::uint64_t HookRunner::run(HookEvent event, const std::vector<const HookHandler*>& handlers,
                              const std::string& input, Done done) {
  const std::uint64_t id = ++next_id_;
  auto batch = std::make_unique<Batch>();
  batch->id = id;
  batch->event = event;
  batch->done = std::move(done);
  batch->left = handlers.size();
  if (board_ && is_awaited(event) && !handlers.empty())
    batch->mark = board_->begin(session::WaitBoard::Kind::hook, scheduler_.now_epoch_ms(),
                                [name = std::string(event_name(event))] {
                                  return protocol::Json{{"hook", name}};
                                });
  Batch& b = *batch;
  batches_[id] = std::move(batch);
  for (std::size_t i = 0; i < handlers.size(); ++i)
    b.ones.push_back(std::make_unique<One>());
  for (std::size_t i = 0; i < handlers.size(); ++i)
    start(b, i, *handlers[i], event, input);
  if (handlers.empty()) {
    std::weak_ptr<bool> alive = alive_;
    scheduler_.post([this, alive, id] {
      if (alive.expired()) return;
      auto it = batches_.find(id);
      if (it == batches_.end()) return;
      Done finished = std::move(it->second->done);
      batches_.erase(it);
      finished({});
      check_idle();
    });
  }
  return id;
}

void HookRunner::start(Batch& batch, std::size_t index, const HookHandler& handler, HookEvent event,
                       const std::string& input) {
  One& one = *batch.ones[index];
  one.command = handler.command;
  one.started = Clock::now();
  process::ChildSpec spec;
  spec.argv = {"/bin/sh", "-c", handler.command};
  spec.cwd = environment_.cwd;
  spec.env = hook_env(environment_, event);
  spec.input = process::ChildSpec::Input::pipe;
  spec.output = process::ChildSpec::Output::separate;
  std::string error;
  one.child = process::ChildProcess::spawn(executor_, spec, error);
  if (!one.child) {
    one.run.end = HookRun::End::not_started;
    one.run.start_error = error;
    // Ended, but reported with the others, after this call returns.
    std::weak_ptr<bool> alive = alive_;
    const std::uint64_t id = batch.id;
    scheduler_.post([this, alive, id, &one] {
      if (alive.expired() || !batches_.count(id)) return;
      ended(*batches_[id], one);
    });
    return;
  }
  Batch* b = &batch;
  One* o = &one;
  const auto maybe_ended = [this, b, o] {
    if (o->exited && o->out_done && o->err_done) ended(*b, *o);
  };
  one.child->read_stdout([o](std::string_view data) { keep_some(o->run.out, data); },
                         [o, maybe_ended] {
                           o->out_done = true;
                           maybe_ended();
                         });
  one.child->read_stderr([o](std::string_view data) { keep_some(o->run.err, data); },
                         [o, maybe_ended] {
                           o->err_done = true;
                           maybe_ended();
                         });
  one.child->wait_exit([this, b, o, maybe_ended](int status) {
    o->exited = true;
    if (o->finished) return;  // timed out: that is its end
    if (WIFSIGNALED(status)) {
      o->run.end = HookRun::End::signalled;
      o->run.code = WTERMSIG(status);
    } else {
      o->run.code = WEXITSTATUS(status);
    }
    o->after_exit = scheduler_.make_timer();
    o->after_exit->start(kHookAfterExit, [this, b, o] { ended(*b, *o); });
    maybe_ended();
  });
  one.child->write_stdin(input + "\n");
  one.child->close_stdin();
  one.timeout = scheduler_.make_timer();
  one.run.timeout_ms = handler.timeout_ms;
  one.timeout->start(std::chrono::milliseconds(handler.timeout_ms), [this, b, o] {
    o->child->kill_group(SIGKILL);
    o->run.end = HookRun::End::timed_out;
    ended(*b, *o);
  });
}

void HookRunner::ended(Batch& batch, One& one) {
  if (one.finished) return;
  one.finished = true;
  if (one.timeout) one.timeout->cancel();
  if (one.after_exit) one.after_exit->cancel();
  if (one.child) {
    one.child->close_output();
    // What the hook left running in its group lives on (it is ended at shutdown).
    if (one.exited) one.child->keep_group();
  }
  one.run.out = protocol::replace_invalid_utf8(one.run.out);
  one.run.err = protocol::replace_invalid_utf8(one.run.err);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - one.started);
  spdlog::debug("hook[{}] {}: exit {} in {} ms", event_name(batch.event), one.command, one.run.code,
                ms.count());
  if (--batch.left > 0) return;
  // All ended: answered from a fresh stack (this may run inside a child's callback).
  std::weak_ptr<bool> alive = alive_;
  const std::uint64_t id = batch.id;
  scheduler_.post([this, alive, id] {
    if (alive.expired()) return;
    auto it = batches_.find(id);
    if (it == batches_.end()) return;
    std::unique_ptr<Batch> done = std::move(it->second);
    batches_.erase(it);
    std::vector<HookRun> runs;
    for (auto& one : done->ones)
      runs.push_back(std::move(one->run));
    Done callback = std::move(done->done);
    done.reset();  // the children are reaped (their groups kept where they exited)
    callback(std::move(runs));
    check_idle();
  });
}

void HookRunner::cancel(std::uint64_t id) {
  auto it = batches_.find(id);
  if (it == batches_.end()) return;
  std::unique_ptr<Batch> batch = std::move(it->second);
  batches_.erase(it);
  for (auto& one : batch->ones) {
    if (one->child) one->child->kill_group(SIGKILL);
  }
  check_idle();
}

void HookRunner::cancel_all() {
  while (!batches_.empty())
    cancel(batches_.begin()->first);
}

void HookRunner::when_idle(std::function<void()> idle) {
  idle_waiters_.push_back(std::move(idle));
  check_idle();
}

void HookRunner::check_idle() {
  if (!batches_.empty() || idle_waiters_.empty()) return;
  // Posted, so that a waiter may let go of this runner.
  scheduler_.post([waiters = std::exchange(idle_waiters_, {})] {
    for (const auto& w : waiters)
      w();
  });
}

}  // namespace rebound::extensions
