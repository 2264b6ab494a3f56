// Line reader + command parser + response/line writer: whatever arrives on stdin, nothing
// crashes, every response is valid UTF-8 JSON, and every parsed value survives a round trip.
// The JSON-RPC reader answers every object with a command or one error line, and the stream's
// JSON scanner (json_scan) accepts exactly what the general parser accepts.

#include <cstdint>
#include <cstdlib>
#include <string>

#include "protocol/commands.h"
#include "protocol/json_line.h"
#include "protocol/json_scan.h"
#include "protocol/jsonrpc.h"
#include "protocol/line_reader.h"
#include "protocol/responses.h"

using namespace rebound::protocol;

namespace {

void check_line(const std::string& out) {
  if (out.empty() || out.back() != '\n') std::abort();
  if (find_invalid_utf8(out)) std::abort();
  if (out.find('\n') != out.size() - 1) std::abort();  // one line, never split
  const auto again = parse_json_line(std::string_view(out).substr(0, out.size() - 1));
  if (!again.value) std::abort();
}

}  // namespace

template <typename Args>
void check_reader(Args (*read)(const FieldReader&), const CommandEnvelope& command) {
  const auto args = read_command_args(read, command);
  if (const auto* error = std::get_if<ProtocolError>(&args))
    check_line(to_line(error_response(*error)));
}

void check_args(const CommandEnvelope& c) {
  check_reader(read_prompt_args, c);
  check_reader(read_message_args, c);
  check_reader(read_new_session_args, c);
  check_reader(read_set_model_args, c);
  check_reader(read_thinking_level_args, c);
  check_reader(read_queue_mode_args, c);
  check_reader(read_interrupt_mode_args, c);
  check_reader(read_compact_args, c);
  check_reader(read_enabled_args, c);
  check_reader(read_bash_args, c);
  check_reader(read_switch_session_args, c);
  check_reader(read_event_filter_args, c);
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::size_t limit = 16 + data[0] * 4;  // a small limit so over-long lines are reached
  const std::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);
  LineReader reader(limit);
  auto sink = [&](LineItem item) {
    if (item.kind == LineItem::Kind::too_long) {
      check_line(to_line(error_response(line_too_long_error(limit))));
      return;
    }
    if (item.text.size() > limit) std::abort();
    const auto parsed = parse_json_line(item.text);
    if (parsed.value) check_line(to_line(*parsed.value));
    if (json_scan::is_valid(item.text) != parsed.value.has_value()) std::abort();
    if (parsed.value && parsed.value->is_object() && parsed.value->contains("jsonrpc")) {
      const JsonRpcRequest request = read_jsonrpc_request(*parsed.value);
      if (request.command.has_value() == request.error.has_value()) std::abort();
      if (request.error) check_line(to_line(jsonrpc_error(*request.error)));
      if (request.command) {
        if (!request.valid || request.command->object["type"] != request.command->type)
          std::abort();
        check_args(*request.command);
      }
    }
    if (parsed.value) (void)is_refused_batch(*parsed.value, item.text.size() % 2 == 0);
    const auto command = parse_envelope_line(item.text);
    if (command.error) {
      check_line(to_line(error_response(*command.error)));
    } else if (command.command) {
      check_line(to_line(success_response(command.command->id, command.command->type)));
      // Every argument reader over whatever object came in: a value or a field error.
      check_args(*command.command);
    } else {
      std::abort();
    }
  };
  // Feed in chunks whose sizes come from the data itself.
  std::size_t at = 0;
  while (at < input.size()) {
    const std::size_t n = 1 + static_cast<unsigned char>(input[at]) % 7;
    reader.feed(input.substr(at, n), sink);
    at += n;
  }
  reader.finish(sink);
  return 0;
}
