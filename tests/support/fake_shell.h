#pragma once
// A ShellRunner for unit tests: records each command and lets the test finish it (or see it
// cancelled) by hand.

#include <memory>
#include <string>
#include <vector>

#include "session/shell_runner.h"

namespace rebound::testing {

class FakeShell : public session::ShellRunner {
 public:
  struct Started {
    std::string command;
    Done done;
    bool cancelled = false;
    bool destroyed = false;
  };

  std::unique_ptr<session::ShellJob> start(const std::string& command, Done done,
                                           std::string& error) override {
    if (refuse) {
      error = "Cannot run bash: refused";
      return nullptr;
    }
    jobs.push_back(std::make_shared<Started>(Started{command, std::move(done)}));
    return std::make_unique<Job>(jobs.back());
  }

  /// Finishes job `i` with `result` (as the runner's completion would).
  void finish(std::size_t i, session::ShellResult result) {
    auto done = std::move(jobs.at(i)->done);
    if (done) done(std::move(result));
  }

  std::vector<std::shared_ptr<Started>> jobs;
  bool refuse = false;

 private:
  struct Job : session::ShellJob {
    explicit Job(std::shared_ptr<Started> s) : started(std::move(s)) {}
    ~Job() override { started->destroyed = true; }
    void cancel() override { started->cancelled = true; }
    std::shared_ptr<Started> started;
  };
};

}  // namespace rebound::testing
