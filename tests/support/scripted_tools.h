#pragma once
// Tool calls end to end: a scripted server whose script makes the real tools run in a fixture
// directory, and readers of the events they produce.

#include <string>
#include <vector>

#include "tests/support/rebound_process.h"

namespace rebound::testing {

/// A step that calls `calls` (each {"name","arguments"}) and then a step answering "done".
inline std::string script_of(const protocol::Json& calls) {
  return protocol::Json::array(
             {protocol::Json{{"toolCalls", calls}}, protocol::Json{{"text", "done"}}})
      .dump();
}

inline protocol::Json call(const std::string& name, protocol::Json arguments) {
  return protocol::Json{{"name", name}, {"arguments", std::move(arguments)}};
}

/// The command line of a server on the scripted provider (script.json, its log script-log.jsonl
/// in the temporary directory), then `extra`.
inline std::vector<std::string> scripted_args(const std::vector<std::string>& extra) {
  std::vector<std::string> args{"--provider",        "scripted",     "--script",
                                "@DIR@/script.json", "--script-log", "@DIR@/script-log.jsonl"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

/// A scripted server in its temporary directory (the session cwd), with `files` under work/.
inline ReboundProcess tool_server(const std::string& script, ReboundProcess::Files files = {},
                                  std::vector<std::string> extra = {},
                                  const std::string& settings = "{}",
                                  SubprocessOptions options = {}) {
  ReboundProcess::Files all{
      {"agent/settings.json", settings}, {"script.json", script}, {"work/.keep", ""}};
  for (auto& [name, text] : files)
    all["work/" + name] = text;
  extra.insert(extra.begin(), "--no-session");
  return ReboundProcess(scripted_args(extra), std::move(options), all);
}

inline protocol::Json prompt(const std::string& id = "p1") {
  return protocol::Json{{"id", id}, {"type", "prompt"}, {"message", "use the tools"}};
}

/// The tool_execution_end of call `id` among `events`.
inline protocol::Json end_of(const std::vector<protocol::Json>& events, const std::string& id) {
  for (const auto& e : events)
    if (e["type"] == "tool_execution_end" && e["toolCallId"] == id) return e;
  FAIL("no tool_execution_end for " << id);
  return {};
}

/// The single text block of a result.
inline std::string text_of(const protocol::Json& result) {
  return result["content"][0]["text"].get<std::string>();
}

}  // namespace rebound::testing
