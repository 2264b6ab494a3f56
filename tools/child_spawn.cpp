#include "tools/child_spawn.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <string_view>
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
  void keep_group() override { child_->keep_group(); }

 private:
  std::unique_ptr<process::ChildProcess> child_;
};

}  // namespace

ShellSpawner::Spawn child_process_spawn(boost::asio::any_io_executor executor,
                                        std::optional<std::vector<std::string>> env) {
  return
      [executor, env = std::move(env)](const std::vector<std::string>& argv, const std::string& cwd,
                                       std::string& error) -> std::unique_ptr<WatchedProcess> {
        process::ChildSpec spec;
        spec.argv = argv;
        spec.env = env;
        if (!cwd.empty()) spec.cwd = cwd;
        auto child = process::ChildProcess::spawn(executor, spec, error);
        if (!child) return nullptr;
        spdlog::debug("bash: started pid {}", child->pid());
        return std::make_unique<WatchedChild>(std::move(child));
      };
}

std::vector<std::string> shell_environment(const char* const* environ,
                                           const std::vector<std::string>& key_variables,
                                           const std::vector<std::string>& keys) {
  std::vector<std::string> out;
  for (const char* const* e = environ; e && *e; ++e) {
    const std::string_view entry = *e;
    const std::size_t eq = entry.find('=');
    if (eq == std::string_view::npos) continue;
    const std::string_view name = entry.substr(0, eq), value = entry.substr(eq + 1);
    if (std::find(key_variables.begin(), key_variables.end(), name) != key_variables.end())
      continue;
    if (!value.empty() && std::find(keys.begin(), keys.end(), value) != keys.end()) continue;
    out.emplace_back(entry);
  }
  return out;
}

}  // namespace rebound::tools
