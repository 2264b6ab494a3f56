// Prompt templates and skills, pure parts (sessions.md sections 9.2, 9.3, 10.3 to 10.5).

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "session/prompt_library.h"
#include "session/session_tree.h"

using namespace rebound;
using session::parse_frontmatter;
using session::split_template_args;
using session::substitute_template_args;
using V = std::vector<std::string>;

TEST_CASE("frontmatter: key: value lines, quotes, a colon in a value, CRLF, no closing line") {
  auto fm = parse_frontmatter(
      "---\r\ndescription: Use it: always\r\nname: 'it''s'\r\nhint: \"a \\\"b\\\"\\n\"\r\n"
      "# comment\r\n  nested: ignored\r\n\r\nflag: true\r\n---\r\nBody\r\n");
  CHECK(fm.present);
  CHECK(fm.values["description"] == "Use it: always");
  CHECK(fm.values["name"] == "it's");
  CHECK(fm.values["hint"] == "a \"b\"\n");
  CHECK(fm.values["flag"] == "true");
  CHECK(fm.values.count("nested") == 0);
  CHECK(fm.body == "Body\n");
  // Without its closing line the whole text is body; without a leading --- too.
  fm = parse_frontmatter("---\ndescription: x\nbody");
  CHECK_FALSE(fm.present);
  CHECK(fm.body == "---\ndescription: x\nbody");
  CHECK(parse_frontmatter("text\r---\n").body == "text\n---\n");
}

TEST_CASE("template descriptions: frontmatter, else the first line cut at 60 code points") {
  CHECK(session::template_description(parse_frontmatter("\n\n  short line  \nnext")) ==
        "short line");
  const std::string long_line(61, 'x');
  CHECK(session::template_description(parse_frontmatter(long_line)) ==
        std::string(60, 'x') + "...");
  const std::string accented = std::string(59, 'a') + "\xC3\xA9\xC3\xA9";  // 61 code points
  CHECK(session::template_description(parse_frontmatter(accented)) ==
        std::string(59, 'a') + "\xC3\xA9...");
  CHECK(session::template_description(parse_frontmatter("")) == "");
}

TEST_CASE("arguments: split like a simple shell, substituted in one pass") {
  CHECK(split_template_args("Alice \"Bob Smith\" 'Carol Jones'\tdave") ==
        V{"Alice", "Bob Smith", "Carol Jones", "dave"});
  CHECK(split_template_args("a\"b c\"d '' \"open quote") == V{"ab cd", "", "open quote"});
  CHECK(split_template_args("   ") == V{});
  const V args{"a", "b", "c", "d"};
  CHECK(substitute_template_args("$1|$4|$5|$0|$@|$ARGUMENTS", args) == "a|d|||a b c d|a b c d");
  CHECK(substitute_template_args("${@:2}|${@:0}|${@:2:2}|${@:9}|${@:x}|$", args) ==
        "b c d|a b c d|b c||${@:x}|$");
  // What an argument brings in stays as it is.
  CHECK(substitute_template_args("$1 $2", V{"$2", "$@"}) == "$2 $@");
}

TEST_CASE("expansion: templates, skills, what ends a name, unknown names") {
  session::PromptTemplate t{"greet", "", "", "Hi $1.", {}};
  session::Skill s{
      "demo", "Demo <x>", "/k/demo", false, {"/k/demo/SKILL.md", "auto", "user", "/k"}};
  session::Skill hidden{
      "secret", "Hidden", "/k/secret", true, {"/k/secret/SKILL.md", "auto", "user", "/k"}};
  session::PromptLibrary lib({t}, {s, hidden});
  const auto read = [](const std::string& path) -> std::optional<std::string> {
    if (path == "/k/demo/SKILL.md") return "---\nname: demo\n---\n\n  Steps.\n";
    return std::nullopt;
  };
  CHECK(lib.expand("/greet Ann Bo", read) == "Hi Ann.");
  CHECK(lib.expand("/greet\nmore", read) == "Hi .\nmore");
  CHECK(lib.expand("/greeting", read) == std::nullopt);
  CHECK(lib.expand("greet", read) == std::nullopt);
  CHECK(lib.expand("/skill:demo  go now ", read) ==
        "<skill name=\"demo\" location=\"/k/demo/SKILL.md\">\nReferences are relative to "
        "/k/demo.\n\nSteps.\n</skill>\n\ngo now");
  CHECK(lib.expand("/skill:demo", read)->ends_with("Steps.\n</skill>"));
  std::string warning;
  CHECK(lib.expand("/skill:secret", read, &warning) == std::nullopt);
  CHECK(warning == "cannot read the skill file /k/secret/SKILL.md");
  // The block leaves the hidden skill out and escapes what it shows.
  const std::string block = lib.skills_block();
  CHECK(block.starts_with("\n\n# Skills\n\n"));
  CHECK(block.find("<description>Demo &lt;x&gt;</description>") != std::string::npos);
  CHECK(block.find("secret") == std::string::npos);
  CHECK(block.ends_with("</available_skills>"));
  CHECK(session::PromptLibrary({t}, {hidden}).skills_block().empty());
}

TEST_CASE("session names are trimmed of Unicode white space only") {
  CHECK(session::trim_unicode_space("\u3000\t name \u00A0\u2028") == "name");
  CHECK(session::trim_unicode_space(" a\nb ") == "a\nb");
  CHECK(session::trim_unicode_space("\u200B x") ==
        "\u200B x");  // ZERO WIDTH SPACE is not White_Space
  CHECK(session::trim_unicode_space("\xFF ") == "\xFF");
}

TEST_CASE("expansion is bounded: a 100 KB template of $ARGUMENTS is refused with a warning") {
  std::string body;
  while (body.size() < 100 * 1024)
    body += "$ARGUMENTS";
  session::PromptTemplate big{"big", "", "", body, {}};
  session::PromptTemplate twice{"twice", "", "", "$ARGUMENTS and $ARGUMENTS", {}};
  session::PromptLibrary lib({big, twice}, {});
  const auto read = [](const std::string&) -> std::optional<std::string> { return std::nullopt; };
  std::string warning;
  // 10,240 placeholders times 500 bytes would be 5 MB: more than 4 times the inputs.
  CHECK(lib.expand("/big " + std::string(500, 'x'), read, &warning) == std::nullopt);
  CHECK(warning.starts_with("the template /big expands to more than "));
  // Large arguments used a few times still expand in full (2 MB from a 1 MB argument).
  const std::string arg(1024 * 1024, 'y');
  const auto out = lib.expand("/twice " + arg, read);
  REQUIRE(out.has_value());
  CHECK(out->size() == 2 * arg.size() + 5);
}
