#include "tools/bash_runner.h"

#include <signal.h>
#include <sys/wait.h>

#include <spdlog/spdlog.h>

#include <optional>

#include "tools/output_tail.h"

namespace rebound::tools {

namespace {

// One `bash` command: its output tail, the full-output file once cut, the watch.
struct BashJob {
  session::ShellRunner::Done done;
  OutputTail tail;
  OutputFile file;
  std::shared_ptr<CommandWatch> watch;
  bool cancelled = false;

  void take(std::string_view data) {
    tail.append(data);
    if (file.is_open()) {
      file.write(data);
    } else if (tail.over_limit() && !file.failed()) {
      file.open(tail.buffered());  // still everything so far (OutputTail's promise)
    }
  }

  void complete(int status) {
    file.close();
    session::ShellResult r;
    auto shown = tail.shown();
    r.output = std::move(shown.text);
    r.truncated = shown.truncated;
    if (r.truncated && !file.path().empty()) r.full_output_path = file.path();
    r.cancelled = cancelled;
    if (!cancelled && WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
    if (auto f = std::move(done)) f(std::move(r));
  }
};

class JobHandle : public session::ShellJob {
 public:
  explicit JobHandle(std::shared_ptr<BashJob> job) : job_(std::move(job)) {}
  // Answered: what it left in the background keeps running until its pipe closes. Not
  // answered: no completion; the group is killed and the child reaped.
  ~JobHandle() override {
    if (!job_->watch->finished()) job_->done = nullptr;
    job_->watch->release();
  }
  void cancel() override {
    if (!job_->watch->finished()) job_->cancelled = true;
    job_->watch->kill();  // whenever any process of its group is alive, shell exited or not
  }

 private:
  std::shared_ptr<BashJob> job_;
};

}  // namespace

BashRunner::BashRunner(session::Scheduler& scheduler, ShellSpawner::Spawn spawn)
    : spawner_(scheduler, std::move(spawn)) {}

std::unique_ptr<session::ShellJob> BashRunner::start(const std::string& command, Done done,
                                                     std::string& error) {
  auto job = std::make_shared<BashJob>();
  job->done = std::move(done);
  std::string why;
  job->watch = spawner_.start({"bash", "-c", command}, "", forward_to(job), why);
  if (!job->watch) {
    error = why.rfind("Sandbox ", 0) == 0 ? why : "Cannot run bash: " + why;
    return nullptr;
  }
  return std::make_unique<JobHandle>(job);
}

}  // namespace rebound::tools
