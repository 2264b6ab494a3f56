// Prompt templates and skills end to end (sessions.md sections 9 to 11): where they are found,
// collisions, get_commands, every substitution form, /skill:name, the skills block of the
// system prompt, expansion in steer and queue_update, and the switches that turn them off.

#include <doctest/doctest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "tests/support/rebound_process.h"
#include "tests/support/scripted_tools.h"

using namespace rebound;
using protocol::Json;
using testing::ReboundProcess;
namespace fs = std::filesystem;

namespace {

std::string skill_md(const std::string& front) {
  return "---\n" + front + "\n---\n\n# Steps\n\nDo the thing.\n";
}

// A repository at <dir>/repo (its .git there), the session's cwd <dir>/repo/sub, HOME <dir>/home.
ReboundProcess::Files layout() {
  return {
      {"script.json", R"([{"text":"ok"}])"},
      {"agent/settings.json", R"({"retry":{"enabled":false}})"},
      {"repo/.git/HEAD", "ref: refs/heads/main\n"},
      {"repo/sub/.rebound/prompts/greet.md",
       "---\ndescription: Greet people by name\nargument-hint: <name> [more names]\n---\n"
       "Hello $1 and $2! All: $@. Arguments: $ARGUMENTS. From two: ${@:2}. One from two: "
       "${@:2:1}. Missing: [$5].\n"},
      {"repo/sub/.pi/prompts/review.md",
       "---\ndescription: Review the project's staged changes\n---\n\nReview the staged changes "
       "(project template).\n\n"},
      {"repo/sub/.pi/prompts/plain.md",
       "\n\nSummarise the file $1 in one paragraph, please, and keep it short and friendly for "
       "readers\r\nSecond line.\n"},
      {"agent/prompts/review.md", "---\ndescription: global review\n---\nGlobal review.\n"},
      {"agent/prompts/greet2.md", "Hi $@\n"},
      {"repo/sub/.pi/skills/proj-skill/SKILL.md",
       skill_md("name: proj-skill\ndescription: Project skill from .pi/skills.")},
      {"repo/sub/.pi/skills/hidden-skill/SKILL.md",
       skill_md(
           "name: hidden-skill\ndescription: Not in the prompt.\ndisable-model-invocation: true")},
      {"repo/sub/.pi/skills/nodesc-skill/SKILL.md", skill_md("name: nodesc-skill")},
      {"repo/sub/.pi/skills/colon-skill/SKILL.md",
       skill_md("name: colon-skill\ndescription: Use it: always, with care")},
      {"repo/sub/.pi/skills/.dot/x/SKILL.md", skill_md("name: x\ndescription: hidden folder")},
      {"repo/sub/.pi/skills/node_modules/y/SKILL.md", skill_md("name: y\ndescription: modules")},
      {"repo/sub/.agents/skills/group/agents-skill/SKILL.md",
       skill_md("name: agents-skill\ndescription: From .agents in the cwd, one level down.")},
      {"repo/.agents/skills/parent-skill/SKILL.md",
       skill_md("name: parent-skill\ndescription: From .agents at the git root.")},
      {".agents/skills/outside-skill/SKILL.md",
       skill_md("name: outside-skill\ndescription: Above the git root: never read.")},
      {"repo/sub/.claude/skills/claude-skill/SKILL.md",
       skill_md("name: claude-skill\ndescription: A Claude Code skill.")},
      {"agent/skills/demo-skill/SKILL.md",
       skill_md("name: demo-skill\ndescription: \"Demo skill, for a demo <of> \\\"things\\\" & "
                "more.\"\nlicense: MIT")},
      {"agent/skills/flat.md", skill_md("description: A flat skill file.")},
      {"home/.agents/skills/home-skill/SKILL.md", skill_md("name: home-skill\ndescription: Home.")},
      {"home/.agents/skills/proj-skill/SKILL.md",
       skill_md("name: proj-skill\ndescription: A second proj-skill.")},
      {"home/.claude/skills/hc-skill/SKILL.md",
       skill_md("name: hc-skill\ndescription: Home Claude.")},
  };
}

testing::SubprocessOptions in_repo() {
  testing::SubprocessOptions o;
  o.cwd = "@DIR@/repo/sub";
  o.env["HOME"] = "@DIR@/home";
  return o;
}

std::vector<std::string> args(std::vector<std::string> more = {}) {
  more.insert(more.begin(), "--no-session");
  return testing::scripted_args(more);
}

Json cmd(const std::string& id, const std::string& type, Json fields = Json::object()) {
  Json c = Json{{"id", id}, {"type", type}};
  for (auto& [k, v] : fields.items())
    c[k] = v;
  return c;
}

// The text of the last user message of the script log's request `n`.
std::string sent(ReboundProcess& r, std::size_t n) {
  const auto log = r.jsonl("script-log.jsonl");
  REQUIRE(log.size() > n);
  const Json& messages = log[n]["messages"];
  for (auto it = messages.rbegin(); it != messages.rend(); ++it) {
    if ((*it)["role"] == "user") return (*it)["content"][0]["text"];
  }
  return {};
}

void run(ReboundProcess& r, const std::string& id, const std::string& text) {
  r.send(cmd(id, "prompt", {{"message", text}}));
  r.read_until_type("agent_end");
}

}  // namespace

TEST_CASE("get_commands: templates then skills, each place in order, collisions, sourceInfo") {
  ReboundProcess r(args(), in_repo(), layout());
  const Json list = r.command(cmd("c", "get_commands"))["data"]["commands"];
  std::vector<std::string> names;
  for (const auto& c : list)
    names.push_back(c["name"]);
  CHECK(names == std::vector<std::string>{"greet", "plain", "review", "greet2", "skill:colon-skill",
                                          "skill:hidden-skill", "skill:proj-skill",
                                          "skill:agents-skill", "skill:parent-skill",
                                          "skill:claude-skill", "skill:flat", "skill:demo-skill",
                                          "skill:home-skill", "skill:hc-skill"});
  const std::string d = fs::canonical(r.dir().path()).string();
  const std::string sub = d + "/repo/sub";
  CHECK(
      list[0] ==
      Json::parse(
          R"({"name":"greet","description":"Greet people by name","source":"prompt","sourceInfo":{"path":")" +
          sub +
          R"(/.rebound/prompts/greet.md","source":"auto","scope":"project","origin":"top-level","baseDir":")" +
          sub + R"(/.rebound"}})"));
  CHECK(list[1]["description"] ==
        "Summarise the file $1 in one paragraph, please, and keep it ...");
  CHECK(list[2]["description"] == "Review the project's staged changes");
  CHECK(list[2]["sourceInfo"]["baseDir"] == sub + "/.pi");
  CHECK(list[3]["sourceInfo"]["scope"] == "user");
  CHECK(list[3]["sourceInfo"]["baseDir"] == d + "/agent");
  CHECK(list[3]["description"] == "Hi $@");
  CHECK(list[4]["description"] == "Use it: always, with care");
  CHECK(list[7]["sourceInfo"]["baseDir"] == sub + "/.agents");
  CHECK(list[8]["sourceInfo"]["baseDir"] == d + "/repo/.agents");
  CHECK(list[9]["sourceInfo"]["baseDir"] == sub + "/.claude");
  CHECK(list[11]["description"] == "Demo skill, for a demo <of> \"things\" & more.");
  CHECK(
      list[11]["sourceInfo"] ==
      Json::parse(
          R"({"path":")" + d +
          R"(/agent/skills/demo-skill/SKILL.md","source":"auto","scope":"user","origin":"top-level","baseDir":")" +
          d + R"(/agent"})"));
  CHECK(list[12]["sourceInfo"]["baseDir"] == d + "/home/.agents");
  r.proc().close_stdin();
  REQUIRE(r.proc().wait() == 0);
  const std::string err = r.proc().stderr_text();
  CHECK(err.find("nodesc-skill/SKILL.md has no description: not loaded") != std::string::npos);
  CHECK(err.find("skill 'proj-skill' at " + d +
                 "/home/.agents/skills/proj-skill/SKILL.md is skipped: " + sub +
                 "/.pi/skills/proj-skill/SKILL.md has that name") != std::string::npos);
}

TEST_CASE("templates: every substitution form, verbatim bodies, a line feed, unknown names") {
  ReboundProcess r(args(), in_repo(), layout());
  run(r, "p1", "/greet Alice \"Bob Smith\" 'Carol Jones' dave");
  CHECK(sent(r, 0) ==
        "Hello Alice and Bob Smith! All: Alice Bob Smith Carol Jones dave. Arguments: Alice Bob "
        "Smith Carol Jones dave. From two: Bob Smith Carol Jones dave. One from two: Bob Smith. "
        "Missing: [].");
  run(r, "p2", "/review");
  CHECK(sent(r, 1) == "Review the staged changes (project template).");
  run(r, "p3", "/plain notes.txt");
  CHECK(sent(r, 2) ==
        "\n\nSummarise the file notes.txt in one paragraph, please, and keep it short and "
        "friendly for readers\nSecond line.\n");
  run(r, "p4", "/nosuch-template some args");
  CHECK(sent(r, 3) == "/nosuch-template some args");
  run(r, "p5", "/review\nDIFF");
  CHECK(sent(r, 4) == "Review the staged changes (project template).\nDIFF");
  run(r, "p6", "/greet Ann\nmore $1");
  CHECK(sent(r, 5) ==
        "Hello Ann and ! All: Ann. Arguments: Ann. From two: . One from two: . Missing: [].\nmore "
        "$1");
  // One pass: an argument is never scanned again.
  run(r, "p7", "/greet2 $@ $1");
  CHECK(sent(r, 6) == "Hi $@ $1\n");
  // The expanded text is what get_fork_messages shows.
  const Json msgs = r.command(cmd("g", "get_fork_messages"))["data"]["messages"];
  CHECK(msgs[1]["text"] == "Review the staged changes (project template).");
}

TEST_CASE("skills: /skill:name with and without arguments, the block of the system prompt") {
  ReboundProcess r(args(), in_repo(), layout());
  const std::string d = fs::canonical(r.dir().path()).string();
  run(r, "p1", "/skill:demo-skill please run the demo");
  const std::string loc = d + "/agent/skills/demo-skill";
  CHECK(sent(r, 0) == "<skill name=\"demo-skill\" location=\"" + loc +
                          "/SKILL.md\">\nReferences are relative to " + loc +
                          ".\n\n# Steps\n\nDo the thing.\n</skill>\n\nplease run the demo");
  run(r, "p2", "/skill:proj-skill");
  CHECK(sent(r, 1).ends_with("Do the thing.\n</skill>"));
  run(r, "p3", "/skill:hidden-skill");  // hidden from the prompt, usable by name
  CHECK(sent(r, 2).starts_with("<skill name=\"hidden-skill\""));
  run(r, "p4", "/skill:nosuch x");
  CHECK(sent(r, 3) == "/skill:nosuch x");
  const std::string system = r.jsonl("script-log.jsonl")[0]["systemPrompt"];
  const std::string sub = d + "/repo/sub";
  const std::string block =
      "\n\n# Skills\n\nSkills hold instructions for particular tasks. When a task matches a "
      "skill's description, use the read tool to read its file first and follow it. Resolve "
      "relative paths in a skill file against the folder that holds it.\n\n<available_skills>\n"
      "  <skill>\n    <name>colon-skill</name>\n    <description>Use it: always, with "
      "care</description>\n"
      "    <location>" +
      sub + "/.pi/skills/colon-skill/SKILL.md</location>\n  </skill>\n";
  const auto at = system.find(block);
  REQUIRE(at != std::string::npos);
  CHECK(system.find("hidden-skill") == std::string::npos);
  CHECK(system.find("<description>Demo skill, for a demo &lt;of&gt; &quot;things&quot; &amp; "
                    "more.</description>") != std::string::npos);
  const auto end = system.find("</available_skills>\nCurrent date: ");
  CHECK(end != std::string::npos);
  CHECK(end > at);
}

TEST_CASE("a steered template is expanded and queue_update shows the expanded text") {
  auto files = layout();
  files["script.json"] = R"([{"text":"slow","chunks":3,"chunkDelayMs":200},{"text":"ok"}])";
  ReboundProcess r(args(), in_repo(), files);
  r.send(cmd("p", "prompt", {{"message", "start"}}));
  r.read_until_type("message_update");
  r.send(cmd("s", "steer", {{"message", "/greet Zed"}}));
  const auto lines = r.read_until_response("s");
  const std::string expanded =
      "Hello Zed and ! All: Zed. Arguments: Zed. From two: . One from two: . Missing: [].";
  CHECK(lines[lines.size() - 2] == Json{{"type", "queue_update"},
                                        {"steering", Json::array({expanded})},
                                        {"followUp", Json::array()}});
  r.read_until([](const Json& j) { return j["type"] == "agent_end"; });
  CHECK(sent(r, 1) == expanded);
}

TEST_CASE("--no-prompt-templates and --no-skills leave only the settings' entries") {
  auto files = layout();
  files["agent/settings.json"] =
      R"({"retry":{"enabled":false},"prompts":["~/extra/x.md"],"skills":["../../home/.claude/skills/hc-skill"]})";
  files["home/extra/x.md"] = "---\ndescription: From settings\n---\nX $1\n";
  ReboundProcess r(args({"--no-prompt-templates", "--no-skills"}), in_repo(), files);
  const Json list = r.command(cmd("c", "get_commands"))["data"]["commands"];
  REQUIRE(list.size() == 2);
  const std::string d = fs::canonical(r.dir().path()).string();
  CHECK(list[0]["name"] == "x");
  CHECK(
      list[0]["sourceInfo"] ==
      Json::parse(
          R"({"path":")" + d +
          R"(/home/extra/x.md","source":"local","scope":"temporary","origin":"top-level","baseDir":")" +
          d + R"(/home/extra"})"));
  CHECK(list[1]["name"] == "skill:hc-skill");
  CHECK(list[1]["sourceInfo"]["scope"] == "temporary");
  run(r, "p", "/x one two");
  CHECK(sent(r, 0) == "X one");
}

TEST_CASE("a skills folder that links to / is searched within a bound, the session starts") {
  auto files = layout();
  ReboundProcess::Files extra = files;
  ReboundProcess r(args(), in_repo(), extra);
  fs::create_directory_symlink("/", r.dir().path() / "repo/sub/.agents/skills/root");
  // A new session scans again: it answers (bounded), and the real skills are still there.
  const Json ns = r.command(cmd("n", "new_session"));
  CHECK(ns["success"] == true);
  const Json list = r.command(cmd("c", "get_commands"))["data"]["commands"];
  bool agents = false;
  for (const auto& c : list)
    agents = agents || c["name"] == "skill:agents-skill";
  CHECK(agents);
  r.proc().close_stdin();
  REQUIRE(r.proc().wait() == 0);
  CHECK(r.proc().stderr_text().find("folders to search") != std::string::npos);
}
