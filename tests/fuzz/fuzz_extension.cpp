// What an extension process writes (extensions.md section 4): any bytes on its stdout, split
// into the parts of the input (NUL-separated), reach one ExtensionConnection during its
// handshake, with events forwarded to it, two tool_call interceptions and a slash command in
// flight (its dialogs answered, or left open, by a fake client), then the process exits. The
// connection never crashes, every interception and the command end exactly once, and the exit
// leaves it failed.

#include <spdlog/spdlog.h>

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "extensions/extension_connection.h"
#include "fuzz_loop.h"
#include "split_input.h"

using namespace rebound;

namespace {

// Answers every other dialog at once (posted); leaves the rest open.
struct Dialogs : session::DialogHost {
  explicit Dialogs(session::Scheduler& s) : scheduler(s) {}
  std::unique_ptr<session::Waiting> ask(const session::DialogRequest& request,
                                        std::function<void(session::DialogAnswer)> done) override {
    if (!request.fields.contains("title") || !request.fields.contains("timeout")) std::abort();
    if (++asked % 2) scheduler.post([done] { done(session::DialogAnswer{"x", true, false}); });
    return std::make_unique<session::Waiting>();
  }
  session::Scheduler& scheduler;
  int asked = 0;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  spdlog::set_level(spdlog::level::off);  // what the connection logs is not under test here
  fuzz::Loop loop;
  peer::PeerProcess::Handlers handlers;
  fuzz::Process* process = nullptr;
  peer::Spawner spawner = [&](const peer::SpawnSpec&, peer::PeerProcess::Handlers h,
                              std::string&) -> std::unique_ptr<peer::PeerProcess> {
    handlers = std::move(h);
    auto p = std::make_unique<fuzz::Process>();
    process = p.get();
    return p;
  };
  extensions::ExtensionConfig config;
  config.name = "fuzz";
  config.command = "extension";
  extensions::ExtensionConnection::Options options;
  options.session_cwd = "/";
  options.getenv = [](const std::string&) { return std::nullopt; };
  options.version = "0";
  Dialogs dialogs(loop);
  int errors = 0;
  extensions::ExtensionHost host;
  host.dialogs = &dialogs;
  host.error = [&](const std::string&, std::string_view, const std::string& e) {
    if (e.empty()) std::abort();
    ++errors;
  };
  host.state = [] { return protocol::Json::object(); };
  host.abort = [&](std::function<void()> done) { loop.post(std::move(done)); };
  host.send_user_message = [&](session::UserInput, session::SubmitKind,
                               std::function<void(session::Status)> d) {
    loop.post([d] { d(session::ok()); });
  };
  host.session = [] { return protocol::Json{{"sessionId", "s"}}; };
  extensions::ExtensionConnection connection(loop, spawner, config, options, host);
  connection.start();
  int ended = 0;
  int commands_ended = 0;
  bool command_sent = false;
  std::vector<std::unique_ptr<session::Waiting>> waits;
  const auto parts = fuzz::split_at_nul(data, size, 64);
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (!process) break;
    handlers.out(parts[i]);
    loop.run();
    if (connection.wants("agent_start")) connection.forward(R"({"type":"agent_start"})");
    if (i == parts.size() / 2) {
      for (int k = 0; k < 2; ++k)
        waits.push_back(connection.intercept("call_" + std::to_string(k), "bash",
                                             protocol::Json{{"command", "ls"}},
                                             [&ended](extensions::Interception) { ++ended; }));
      connection.run_command("todos", "a b", [&](session::Status) { ++commands_ended; });
      command_sent = true;
      loop.run();
    }
  }
  if (process) {
    handlers.out_end();
    handlers.err_end();
    process->alive = false;
    handlers.exit(0);
  }
  loop.run();
  loop.expire_all();
  // Both interceptions ended exactly once (an answer, a failure, the timeout or the exit), and
  // the exit left the extension failed.
  if (!waits.empty() && ended != 2) std::abort();
  if (command_sent && commands_ended != 1) std::abort();
  if (connection.status() != extensions::ExtensionStatus::failed) std::abort();
  return 0;
}
