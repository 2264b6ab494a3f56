#pragma once
// The command line of runtime.md section 6. Parsing never exits the process: it returns the
// options, or what to print and the exit status (0 for --help/--version, 2 for a bad command
// line). Called once by main().

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "server/events/event_output.h"
#include "server/oneshot/json_schema.h"
#include "workspace/service_flags.h"

namespace rebound::server {

struct CliOptions : workspace::ServiceFlags {
  std::string mode = "rpc";
  std::optional<std::string> provider;
  std::optional<std::string> model;
  std::optional<std::string> base_url;
  std::optional<std::string> api_key;
  std::optional<std::string> agent_dir;
  std::optional<std::string> script;
  std::optional<std::string> script_log;
  std::string log_level = "info";
  std::optional<std::string> log_file;
  std::size_t max_line_bytes = 64u * 1024 * 1024;
  std::optional<std::vector<std::string>> tools;  // --tools LIST, split and checked
  bool no_tools = false;
  std::optional<std::uint64_t> retry_seed;          // --retry-seed N (retry.md section 15)
  EnvelopeMode envelope = EnvelopeMode::automatic;  // --envelope (protocol.md section 9)
  // The session, MCP, extension, policy and sandbox flags are the base (workspace::ServiceFlags).
  // One-shot mode (oneshot.md section 2): `mode` is then "print".
  std::optional<std::string> prompt;               // PROMPT
  std::string output_format = "text";              // --output-format text|json|stream-json
  std::optional<std::int64_t> timeout_ms;          // --timeout S, in ms
  std::string timeout_text;                        // S as given (the error text quotes it)
  std::optional<std::int64_t> max_turns;           // --max-turns N
  std::int64_t heartbeat_ms = 10000;               // --heartbeat-ms (0: off)
  std::optional<double> max_budget_usd;            // --max-budget-usd X
  std::string max_budget_text;                     // X as given
  std::optional<oneshot::JsonSchema> json_schema;  // --json-schema, checked (oneshot.md 11.1)
  std::int64_t json_schema_retries = 2;            // --json-schema-retries
};

struct CliParse {
  std::optional<CliOptions> options;  // set when the server should run
  int exit_code = 0;                  // otherwise: exit with this status...
  std::string out;                    // ...after printing this on stdout (help, version)
  std::string err;                    // ...and this on stderr (errors)
};

CliParse parse_command_line(const std::vector<std::string>& args);

}  // namespace rebound::server
