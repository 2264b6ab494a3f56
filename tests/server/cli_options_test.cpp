#include "server/app/cli_options.h"

#include <doctest/doctest.h>

using rebound::server::parse_command_line;

TEST_CASE("defaults") {
  const auto r = parse_command_line({});
  REQUIRE(r.options);
  CHECK(r.options->mode == "rpc");
  CHECK(r.options->max_line_bytes == 64u * 1024 * 1024);
  CHECK(r.options->log_level == "info");
  CHECK_FALSE(r.options->no_session);
}

TEST_CASE("every documented flag is accepted") {
  const auto r = parse_command_line({"--mode",       "rpc",
                                     "--provider",   "scripted",
                                     "--model",      "echo",
                                     "--base-url",   "http://x",
                                     "--api-key",    "k",
                                     "--agent-dir",  "/a",
                                     "--no-session", "--script",
                                     "s.json",       "--script-log",
                                     "l.jsonl",      "--log-level",
                                     "debug",        "--log-file",
                                     "/tmp/l",       "--max-line-bytes",
                                     "100"});
  REQUIRE(r.options);
  CHECK(r.options->provider == "scripted");
  CHECK(r.options->agent_dir == "/a");
  CHECK(r.options->no_session);
  CHECK(r.options->max_line_bytes == 100);
  CHECK(r.options->log_level == "debug");
}

TEST_CASE("help and version go to stdout with status 0") {
  const auto help = parse_command_line({"--help"});
  CHECK_FALSE(help.options);
  CHECK(help.exit_code == 0);
  CHECK(help.out.find("--max-line-bytes") != std::string::npos);
  const auto version = parse_command_line({"--version"});
  CHECK(version.exit_code == 0);
  CHECK(version.out.rfind("rebound ", 0) == 0);
}

TEST_CASE("a bad command line is status 2 with a message on stderr") {
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"--bogus"},
                                             {"--mode", "tui"},
                                             {"--log-level", "loud"},
                                             {"--max-line-bytes", "0"},
                                             {"--max-line-bytes", "x"},
                                             {"--session", "a", "--no-session"},
                                             {"stray"}}) {
    CAPTURE(args.front());
    const auto r = parse_command_line(args);
    CHECK_FALSE(r.options);
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK(r.err.find("rebound: ") == 0);
  }
}
