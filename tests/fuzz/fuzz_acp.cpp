// ACP mode's reading of client lines (acp.md sections 1, 3, 5, 6.1, 10): any bytes, split into
// lines, never crash the connection, every answer is a JSON-RPC 2.0 result or error, and no
// line gets more than one answer (the connection here opens no session: the factory refuses).
// Also the pure pieces on whatever the lines hold: prompt content blocks and tool call titles.

#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "protocol/json_line.h"
#include "server/acp/acp_connection.h"
#include "server/acp/acp_updates.h"
#include "session/scheduler.h"

using namespace rebound;
using protocol::Json;

namespace {

// Nothing is ever posted here (no session runs a tool call); a post would be a defect.
struct NoScheduler : session::Scheduler {
  void post(std::function<void()>) override { std::abort(); }
  std::unique_ptr<session::Timer> make_timer() override { std::abort(); }
  std::int64_t now_epoch_ms() override { return 0; }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  NoScheduler scheduler;
  session::ToolRegistry tools;
  std::size_t answers = 0;
  server::AcpConnection connection(
      server::AcpOptions{false, "0"},
      [](const std::string&, session::SessionSlot, session::EventSink&, session::ToolRegistry&,
         std::optional<server::AcpLoadedFile>, const Json&, session::DynamicTools*,
         session::DialogHost*) -> session::Result<server::AcpSessionParts> {
        return session::Error{session::ErrorKind::failed, "no sessions in the fuzzer"};
      },
      [](const std::string&, const std::string& id,
         std::function<void(session::Result<server::AcpLoadedFile>)> done) {
        done(session::Error{session::ErrorKind::not_found, "session " + id});
        return std::function<void()>([] {});
      },
      [&answers](const Json& line) {
        ++answers;
        if (!line.is_object() || line.value("jsonrpc", "") != "2.0") std::abort();
        if (line.contains("result") == line.contains("error")) std::abort();
        if (!line.contains("id")) std::abort();
        // What goes out is writable as a protocol line.
        if (protocol::to_line(line).back() != '\n') std::abort();
      },
      tools, scheduler);
  std::size_t lines = 0;
  std::size_t start = 0;
  while (start <= input.size()) {
    std::size_t end = input.find('\n', start);
    if (end == std::string_view::npos) end = input.size();
    const std::string_view line = input.substr(start, end - start);
    start = end + 1;
    if (line.empty()) continue;
    ++lines;
    connection.handle_line(line);
    if (answers > lines) std::abort();  // at most one answer per line
    const protocol::JsonLine parsed = protocol::parse_json_line(line);
    if (parsed.value && parsed.value->is_object()) {
      const auto found = parsed.value->find("params");
      const Json params = found != parsed.value->end() ? *found : Json::object();
      if (params.is_object()) {
        if (params.contains("prompt")) (void)server::acp::prompt_input(params["prompt"]);
        for (const char* tool : {"read", "write", "edit", "bash", "grep", "find", "ls", "other"})
          (void)server::acp::tool_call_info(tool, params, "/w");
      }
    }
  }
  connection.shutdown();
  return 0;
}
