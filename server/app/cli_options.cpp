#include "server/app/cli_options.h"

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdlib>
#include <variant>

#include "config/json_file.h"
#include "policy/policy.h"
#include "server/app/modes.h"
#include "server/oneshot/json_schema.h"
#include "session/session_tree.h"
#include "tools/definitions.h"

namespace rebound::server {

namespace {

// The permission policy's flags (policy.md section 1.3).
struct PolicyFlags {
  std::string acp_permissions = "allow";
  CLI::Option* acp_option = nullptr;
  std::optional<std::string> mode;
  std::vector<std::string> allowed, disallowed;
  std::string prompts = "client";
  bool sandbox_on = false, sandbox_off = false;
};

void add_policy_flags(CLI::App& app, PolicyFlags& f) {
  f.acp_option = app.add_option("--acp-permissions", f.acp_permissions,
                                "Alias: allow is --permission-mode bypassPermissions, ask is "
                                "--permission-mode default")
                     ->check(CLI::IsMember({"allow", "ask"}));
  app.add_option("--permission-mode", f.mode,
                 "Permission mode: default, acceptEdits, plan, dontAsk or bypassPermissions "
                 "(default: settings permissions.defaultMode, else bypassPermissions)");
  app.add_option("--allowed-tools,--allowedTools", f.allowed,
                 "Allow rules, separated by commas or blanks outside parentheses (\"Bash(git "
                 "diff:*),Read\"); may be repeated")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_option("--disallowed-tools,--disallowedTools", f.disallowed,
                 "Deny rules, as --allowed-tools; a bare tool name removes the tool")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_option("--permission-prompts", f.prompts,
                 "Who answers a permission question: client (default) or none (refused at once)")
      ->check(CLI::IsMember({"client", "none", "host"}));
  app.add_flag("--sandbox", f.sandbox_on,
               "Run bash calls in a bubblewrap sandbox (over settings sandbox.enabled)");
  app.add_flag("--no-sandbox", f.sandbox_off, "Run bash calls without the sandbox");
}

// The flags into `o`; the message of a bad command line (exit 2) otherwise.
std::optional<std::string> apply_policy_flags(const PolicyFlags& f,
                                              const std::vector<std::string>& args, CliOptions& o) {
  const bool acp_given = f.acp_option->count() > 0;
  if (acp_given && f.mode)
    return "rebound: --acp-permissions cannot be used with --permission-mode (it is an alias of "
           "one)\nRun 'rebound --help' for usage.\n";
  if (f.mode) {
    if (!policy::parse_mode(*f.mode))
      return policy::invalid_mode_text(*f.mode, "--permission-mode") + "\n";
    o.permission_mode = f.mode;
  } else if (acp_given) {
    o.permission_mode = f.acp_permissions == "ask" ? "default" : "bypassPermissions";
  }
  for (const auto& list : f.allowed)
    for (auto& rule : policy::split_rule_list(list))
      o.allowed_tools.push_back(std::move(rule));
  for (const auto& list : f.disallowed)
    for (auto& rule : policy::split_rule_list(list))
      o.disallowed_tools.push_back(std::move(rule));
  o.permission_prompts_client = f.prompts != "none";
  // Together, the last one wins.
  if (f.sandbox_on || f.sandbox_off)
    for (const auto& a : args) {
      if (a == "--sandbox") o.sandbox = true;
      if (a == "--no-sandbox") o.sandbox = false;
    }
  return std::nullopt;
}

// One-shot mode's flags (oneshot.md section 2), as given.
struct OneShotFlags {
  bool print = false;
  std::vector<std::string> positional;
  std::optional<std::string> format, timeout, max_turns, heartbeat, budget, schema, schema_retries;
  CLI::Option *format_option = nullptr, *timeout_option = nullptr, *turns_option = nullptr,
              *heartbeat_option = nullptr, *budget_option = nullptr, *schema_option = nullptr,
              *schema_retries_option = nullptr;
  bool envelope_given = false, acp_given = false;  // rpc's and acp's own flags
};

void add_oneshot_flags(CLI::App& app, OneShotFlags& f) {
  app.add_flag("-p,--print", f.print, "One-shot mode: run PROMPT (and/or stdin) once and exit");
  app.add_option("prompt", f.positional, "The prompt of a one-shot run (-p)");
  f.format_option = app.add_option("--output-format", f.format,
                                   "One-shot output: text (default), json, stream-json");
  f.timeout_option = app.add_option("--timeout", f.timeout,
                                    "One-shot deadline in seconds from start (0 < S <= 86400)");
  f.turns_option =
      app.add_option("--max-turns", f.max_turns, "One-shot limit of model responses (1..100000)");
  f.heartbeat_option = app.add_option("--heartbeat-ms", f.heartbeat,
                                      "stream-json heartbeat interval: 0 (off) or 100..3600000");
  f.budget_option = app.add_option("--max-budget-usd", f.budget,
                                   "One-shot limit of the run's cost in USD (a number > 0)");
  f.schema_option = app.add_option(
      "--json-schema", f.schema,
      "One-shot structured output: an object schema as JSON text, or a file holding one");
  f.schema_retries_option = app.add_option("--json-schema-retries", f.schema_retries,
                                           "Re-asks for a valid structured output (0..10, 2)");
}

// A decimal number's digits before and after its point (at most `max_whole` and `max_frac` of
// them; a point needs digits after it), or none.
std::optional<std::pair<std::string, std::string>> decimal_parts(const std::string& s,
                                                                 std::size_t max_whole,
                                                                 std::size_t max_frac) {
  const std::size_t dot = s.find('.');
  std::string whole = s.substr(0, dot);
  std::string frac = dot == std::string::npos ? "" : s.substr(dot + 1);
  if (whole.empty() || whole.size() > max_whole || frac.size() > max_frac ||
      (dot != std::string::npos && frac.empty()) ||
      whole.find_first_not_of("0123456789") != std::string::npos ||
      frac.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  return std::pair{std::move(whole), std::move(frac)};
}

// --max-budget-usd: digits with an optional decimal part, above 0.
std::optional<double> budget_usd(const std::string& s) {
  if (!decimal_parts(s, 9, 9)) return std::nullopt;
  const double v = std::strtod(s.c_str(), nullptr);
  if (!(v > 0)) return std::nullopt;
  return v;
}

// --json-schema's value (oneshot.md section 11.1): JSON text when it starts with `{`, else a
// file; checked as section 11.3 says. The schema, or the stderr line.
session::Result<oneshot::JsonSchema> read_json_schema(const std::string& value) {
  std::string text = value;
  const std::size_t first = value.find_first_not_of(" \t\r\n");
  if (first == std::string::npos || value[first] != '{') {
    const auto read = config::read_regular_file(value, 4 * 1024 * 1024);
    if (read.status != config::FileReadStatus::ok)
      return session::failure("rebound: --json-schema: cannot read " + value + ": " + read.error);
    text = read.text;
  }
  protocol::Json schema = protocol::Json::parse(text, nullptr, false);
  if (schema.is_discarded()) return session::failure("rebound: --json-schema: not valid JSON");
  auto compiled = oneshot::JsonSchema::compile(std::move(schema));
  if (!compiled) return session::failure("rebound: " + compiled.error().message);
  return compiled;
}

std::optional<std::int64_t> integer_in(const std::string& s, std::int64_t lo, std::int64_t hi) {
  if (s.empty() || s.size() > 12 || s.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  const std::int64_t v = std::stoll(s);
  if (v < lo || v > hi) return std::nullopt;
  return v;
}

// S seconds, 0 < S <= 86400, at most 3 decimals: in milliseconds.
std::optional<std::int64_t> seconds_ms(const std::string& s) {
  const auto parts = decimal_parts(s, 5, 3);
  if (!parts) return std::nullopt;
  const auto& [whole, frac] = *parts;
  std::string millis = frac;
  millis.resize(3, '0');
  const std::int64_t ms = std::stoll(whole) * 1000 + std::stoll(millis);
  if (ms <= 0 || ms > 86400 * 1000) return std::nullopt;
  return ms;
}

// The flags into `o`; the message of a bad command line (exit 2) otherwise.
std::optional<std::string> apply_oneshot_flags(const OneShotFlags& f, bool mode_json,
                                               bool mode_given, CliOptions& o) {
  const bool oneshot = f.print || mode_json;
  if (f.positional.size() > 1)
    return "rebound: unexpected argument '" + f.positional[1] +
           "': the prompt is one argument (quote it)";
  if (!oneshot) {
    if (!f.positional.empty())
      return "rebound: unexpected argument '" + f.positional[0] + "': a prompt needs -p";
    for (const CLI::Option* opt :
         {f.format_option, f.timeout_option, f.turns_option, f.heartbeat_option, f.budget_option,
          f.schema_option, f.schema_retries_option})
      if (opt->count() > 0) return "rebound: " + opt->get_name() + " needs -p";
    return std::nullopt;
  }
  if (f.print && mode_given) return "rebound: -p cannot be used with --mode " + o.mode;
  if (f.envelope_given) return "rebound: -p cannot be used with --envelope";
  if (f.acp_given) return "rebound: -p cannot be used with --acp-permissions";
  if (!f.positional.empty()) o.prompt = f.positional[0];
  if (f.format) {
    if (*f.format != "text" && *f.format != "json" && *f.format != "stream-json")
      return "rebound: --output-format: expected text, json or stream-json, got '" + *f.format +
             "'";
    if (mode_json && *f.format != "stream-json")
      return "rebound: --mode json writes stream-json; --output-format " + *f.format +
             " cannot be used with it";
    o.output_format = *f.format;
  }
  if (mode_json) o.output_format = "stream-json";
  if (f.timeout) {
    o.timeout_ms = seconds_ms(*f.timeout);
    if (!o.timeout_ms)
      return "rebound: --timeout: expected seconds, 0 < S <= 86400 with at most 3 decimals, got '" +
             *f.timeout + "'";
    o.timeout_text = *f.timeout;
  }
  if (f.max_turns) {
    o.max_turns = integer_in(*f.max_turns, 1, 100000);
    if (!o.max_turns)
      return "rebound: --max-turns: expected an integer 1..100000, got '" + *f.max_turns + "'";
  }
  if (f.heartbeat) {
    const auto v = integer_in(*f.heartbeat, 0, 3600000);
    if (!v || (*v != 0 && *v < 100))
      return "rebound: --heartbeat-ms: expected 0 or an integer 100..3600000, got '" +
             *f.heartbeat + "'";
    o.heartbeat_ms = *v;
  }
  if (f.budget) {
    o.max_budget_usd = budget_usd(*f.budget);
    if (!o.max_budget_usd)
      return "rebound: --max-budget-usd: expected a number > 0, got '" + *f.budget + "'";
    o.max_budget_text = *f.budget;
  }
  if (f.schema_retries) {
    const auto v = integer_in(*f.schema_retries, 0, 10);
    if (!v)
      return "rebound: --json-schema-retries: expected an integer 0..10, got '" +
             *f.schema_retries + "'";
    o.json_schema_retries = *v;
  }
  if (f.schema) {
    auto schema = read_json_schema(*f.schema);
    if (!schema) return schema.error().message;
    o.json_schema = std::move(*schema);
  }
  o.mode = "print";
  return std::nullopt;
}

}  // namespace

// The first name of --tools that is no tool of Rebound's.
std::optional<std::string> first_unknown_tool(const std::vector<std::string>& names) {
  for (const auto& name : names)
    if (!tools::is_known_tool(name)) return name;
  return std::nullopt;
}

// Which session: at most one way chosen; --name trimmed, not empty, not in acp mode. Why
// not otherwise.
std::optional<std::string> check_session_name(CliOptions& o) {
  if (static_cast<int>(o.continue_session) + static_cast<int>(o.resume.has_value()) +
          static_cast<int>(o.session_file.has_value()) + static_cast<int>(o.no_session) >
      1)
    return "use one of --continue, --resume, --session and --no-session";
  if (!o.session_name) return std::nullopt;
  if (o.mode == "acp") return "--name cannot be used with --mode acp (no ACP request sets a title)";
  o.session_name = session::trim_unicode_space(*o.session_name);
  if (o.session_name->empty()) return "--name: the session name cannot be empty";
  return std::nullopt;
}

// --retry-seed: decimal digits only, within 64 bits.
std::optional<std::uint64_t> parse_retry_seed(const std::string& s) {
  if (s.empty() || s.size() > 20 || s.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  errno = 0;
  const unsigned long long value = std::strtoull(s.c_str(), nullptr, 10);
  if (errno != 0) return std::nullopt;
  return value;
}

// One-shot mode's examples and exit codes under --help (oneshot.md sections 5, 7).
void add_help_footer(CLI::App& app) {
  app.footer(
      "One-shot runs (oneshot.md):\n"
      "  rebound -p \"Say hello\"                                   text: the answer\n"
      "  rebound -p \"Say hello\" --output-format json              one result line\n"
      "  git diff | rebound -p review --output-format stream-json   events, then the result\n"
      "Exit codes: 0 finished, 1 Rebound failed, 2 bad command line or no prompt, 3 provider\n"
      "refused, 4 retries gave up, 5 usage limit, 6 context overflow, 7 --max-turns,\n"
      "--max-budget-usd or --timeout reached, 8 no valid --json-schema output, 9 finished with\n"
      "refused tool calls, 129/130/143 SIGHUP/SIGINT/SIGTERM.");
}

CliParse parse_command_line(const std::vector<std::string>& args) {
  CliOptions o;
  CLI::App app{"rebound: a headless agent-session server speaking line-delimited JSON on stdio",
               "rebound"};
  app.set_version_flag("--version", std::string("rebound ") + REBOUND_VERSION);
  add_help_footer(app);
  auto* mode_option =
      app.add_option("--mode", o.mode,
                     "Protocol: rpc (line-delimited JSON commands, default), acp (the Agent "
                     "Client Protocol for editors) or json (-p --output-format stream-json)")
          ->check(CLI::IsMember(mode_names()));
  OneShotFlags oneshot_flags;
  add_oneshot_flags(app, oneshot_flags);
  PolicyFlags policy_flags;
  add_policy_flags(app, policy_flags);
  app.add_option("--provider", o.provider, "Provider to use (scripted, openai, anthropic, ...)");
  app.add_option("--model", o.model, "Model id of the provider");
  app.add_option("--base-url", o.base_url, "Base URL of the selected provider");
  app.add_option("--api-key", o.api_key, "API key for the selected provider");
  app.add_option("--agent-dir", o.agent_dir,
                 "Agent directory (default $REBOUND_AGENT_DIR, else ~/.rebound/agent)");
  auto* session = app.add_option("--session", o.session_file, "Open or create this session file");
  auto* session_dir = app.add_option("--session-dir", o.session_dir, "Directory for session files");
  auto* no_session = app.add_flag("--no-session", o.no_session, "Keep nothing on disk");
  app.add_flag("--continue", o.continue_session,
               "Continue the most recent session of this directory");
  app.add_option("--resume", o.resume, "Continue the session file PATH (it must exist)");
  session->excludes(session_dir)->excludes(no_session);
  session_dir->excludes(no_session);
  app.add_option("--name", o.session_name,
                 "Name the session Rebound starts with (as set_session_name does; rpc mode)");
  app.add_option("--script", o.script, "Script file for the scripted provider");
  app.add_option("--script-log", o.script_log, "Append one JSON line per scripted request here");
  app.add_option("--log-level", o.log_level, "Log level on stderr")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}));
  app.add_option("--log-file", o.log_file, "Write the log to this file instead of stderr");
  app.add_option("--max-line-bytes", o.max_line_bytes,
                 "Longest accepted input line in bytes (default 67108864)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 40));

  std::optional<std::string> tool_list;
  std::string defaults;
  for (const auto& name : tools::default_tool_names())
    defaults += (defaults.empty() ? "" : ",") + name;
  app.add_option("--tools", tool_list,
                 "Comma-separated tools to offer the model (" + tools::known_tool_list() +
                     "; default " + defaults + "; \"\" for none)");
  app.add_flag("--no-tools", o.no_tools, "Offer the model no tools");
  app.add_flag("--no-context-files", o.no_context_files,
               "Leave AGENTS.md/CLAUDE.md out of the system prompt");
  app.add_flag("--no-prompt-templates", o.no_prompt_templates,
               "Read no prompt templates from .rebound/prompts, .pi/prompts or the agent "
               "directory (settings `prompts` still count)");
  app.add_flag("--no-skills", o.no_skills,
               "Read no skills from the project's or the user's skill folders (settings "
               "`skills` still count)");
  app.add_option("--mcp-config", o.mcp_configs,
                 "A file with an mcpServers object (Claude Code .mcp.json shape) whose MCP "
                 "servers are started; may be repeated")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_flag("--no-mcp", o.no_mcp,
               "Start no MCP servers from settings.json or .mcp.json (--mcp-config still counts)");
  app.add_flag("--no-extensions", o.no_extensions,
               "Run no hooks or extensions from settings.json or .rebound/settings.json "
               "(--extension still counts)");
  app.add_option("--extension", o.extensions,
                 "An extension process run as /bin/sh -c CMD (JSON-RPC over its stdio; named "
                 "cli-1, cli-2, ...); may be repeated")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);

  std::string envelope = "auto";
  auto* envelope_option =
      app.add_option(
             "--envelope", envelope,
             "Envelope of events and parse errors: pi, jsonrpc, or auto (pi until the first "
             "JSON-RPC request; default)")
          ->check(CLI::IsMember({"pi", "jsonrpc", "auto"}));

  std::optional<std::string> retry_seed;
  app.add_option("--retry-seed", retry_seed,
                 "Seed of the retry jitter generator, 0..18446744073709551615 (for tests)");

  std::vector<std::string> reversed(args.rbegin(), args.rend());
  CliParse result;
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp&) {
    result.out = app.help();
    return result;
  } catch (const CLI::CallForVersion&) {
    result.out = std::string("rebound ") + REBOUND_VERSION + "\n";
    return result;
  } catch (const CLI::ParseError& e) {
    result.exit_code = 2;
    result.err = std::string("rebound: ") + e.what() + "\nRun 'rebound --help' for usage.\n";
    return result;
  }
  const bool mode_json = o.mode == "json";
  oneshot_flags.envelope_given = envelope_option->count() > 0;
  oneshot_flags.acp_given = policy_flags.acp_option->count() > 0;
  if (auto problem = apply_oneshot_flags(oneshot_flags, mode_json,
                                         mode_option->count() > 0 && !mode_json, o)) {
    result.exit_code = 2;
    result.err = *problem + "\nRun 'rebound --help' for usage.\n";
    return result;
  }
  if (const Mode* mode = find_mode(o.mode);
      o.session_file && mode && !mode->no_session_file.empty()) {
    result.exit_code = 2;
    result.err = "rebound: --session cannot be used with --mode " + o.mode + " (" +
                 std::string(mode->no_session_file) + ")\nRun 'rebound --help' for usage.\n";
    return result;
  }
  if (auto why = check_session_name(o)) {
    result.exit_code = 2;
    result.err = "rebound: " + *why + "\nRun 'rebound --help' for usage.\n";
    return result;
  }
  if (auto problem = apply_policy_flags(policy_flags, args, o)) {
    result.exit_code = 2;
    result.err = *problem;
    return result;
  }
  // Nobody answers a question in a one-shot run (policy.md section 1.3).
  if (o.mode == "print") o.permission_prompts_client = false;
  o.envelope = envelope == "pi"        ? EnvelopeMode::pi
               : envelope == "jsonrpc" ? EnvelopeMode::jsonrpc
                                       : EnvelopeMode::automatic;
  if (retry_seed) {
    o.retry_seed = parse_retry_seed(*retry_seed);
    if (!o.retry_seed) {
      result.exit_code = 2;
      result.err = "rebound: --retry-seed: expected an integer 0..18446744073709551615, got '" +
                   *retry_seed + "'\nRun 'rebound --help' for usage.\n";
      return result;
    }
  }
  if (tool_list) {
    o.tools = tools::split_tool_list(*tool_list);
    if (auto unknown = first_unknown_tool(*o.tools)) {
      result.exit_code = 2;
      result.err = "Unknown tool: " + *unknown + " (known: " + tools::known_tool_list() + ")\n";
      return result;
    }
  }
  result.options = std::move(o);
  return result;
}

}  // namespace rebound::server
