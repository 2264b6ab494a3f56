#include "tools/child_spawn.h"

#include <spdlog/spdlog.h>

#include <utility>

#include "process/child_process.h"

namespace rebound::tools {

namespace {

class WatchedChild : public WatchedProcess {
 public:
  explicit WatchedChild(std::unique_ptr<process::ChildProcess> child) : child_(std::move(child)) {}
  void read_output(std::function<void(std::string_view)> data, std::function<void()> eof) override {
    child_->read_stdout(std::move(data), std::move(eof));
  }
  void wait_exit(std::function<void(int)> exited) override { child_->wait_exit(std::move(exited)); }
  void kill_group(int signal) override { child_->kill_group(signal); }
  void close_output() override { child_->close_output(); }

 private:
  std::unique_ptr<process::ChildProcess> child_;
};

}  // namespace

ShellSpawner::Spawn child_process_spawn(boost::asio::any_io_executor executor) {
  return [executor](const std::vector<std::string>& argv, const std::string& cwd,
                    std::string& error) -> std::unique_ptr<WatchedProcess> {
    process::ChildSpec spec;
    spec.argv = argv;
    if (!cwd.empty()) spec.cwd = cwd;
    auto child = process::ChildProcess::spawn(executor, spec, error);
    if (!child) return nullptr;
    spdlog::debug("bash: started pid {}", child->pid());
    return std::make_unique<WatchedChild>(std::move(child));
  };
}

}  // namespace rebound::tools
