#include "server/app/cli_options.h"

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdlib>

#include "policy/policy.h"
#include "server/app/modes.h"
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

}  // namespace

CliParse parse_command_line(const std::vector<std::string>& args) {
  CliOptions o;
  CLI::App app{"rebound: a headless agent-session server speaking line-delimited JSON on stdio",
               "rebound"};
  app.set_version_flag("--version", std::string("rebound ") + REBOUND_VERSION);
  app.add_option("--mode", o.mode,
                 "Protocol: rpc (line-delimited JSON commands, default) or acp (the Agent Client "
                 "Protocol for editors)")
      ->check(CLI::IsMember(mode_names()));
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
  app.add_option("--envelope", envelope,
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
  if (const Mode* mode = find_mode(o.mode);
      o.session_file && mode && !mode->no_session_file.empty()) {
    result.exit_code = 2;
    result.err = "rebound: --session cannot be used with --mode " + o.mode + " (" +
                 std::string(mode->no_session_file) + ")\nRun 'rebound --help' for usage.\n";
    return result;
  }
  if (o.session_name) {
    std::string why;
    if (o.mode == "acp")
      why = "--name cannot be used with --mode acp (no ACP request sets a title)";
    o.session_name = session::trim_unicode_space(*o.session_name);
    if (why.empty() && o.session_name->empty()) why = "--name: the session name cannot be empty";
    if (!why.empty()) {
      result.exit_code = 2;
      result.err = "rebound: " + why + "\nRun 'rebound --help' for usage.\n";
      return result;
    }
  }
  if (auto problem = apply_policy_flags(policy_flags, args, o)) {
    result.exit_code = 2;
    result.err = *problem;
    return result;
  }
  o.envelope = envelope == "pi"        ? EnvelopeMode::pi
               : envelope == "jsonrpc" ? EnvelopeMode::jsonrpc
                                       : EnvelopeMode::automatic;
  if (retry_seed) {
    // Decimal digits only, within 64 bits.
    const std::string& s = *retry_seed;
    bool valid =
        !s.empty() && s.size() <= 20 && s.find_first_not_of("0123456789") == std::string::npos;
    unsigned long long value = 0;
    if (valid) {
      errno = 0;
      value = std::strtoull(s.c_str(), nullptr, 10);
      valid = errno == 0;
    }
    if (!valid) {
      result.exit_code = 2;
      result.err = "rebound: --retry-seed: expected an integer 0..18446744073709551615, got '" + s +
                   "'\nRun 'rebound --help' for usage.\n";
      return result;
    }
    o.retry_seed = value;
  }
  if (tool_list) {
    o.tools = tools::split_tool_list(*tool_list);
    for (const auto& name : *o.tools) {
      if (!tools::is_known_tool(name)) {
        result.exit_code = 2;
        result.err = "Unknown tool: " + name + " (known: " + tools::known_tool_list() + ")\n";
        return result;
      }
    }
  }
  result.options = std::move(o);
  return result;
}

}  // namespace rebound::server
