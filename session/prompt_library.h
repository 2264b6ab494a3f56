#pragma once
// Prompt templates and skills (sessions.md sections 9 to 11): their frontmatter, argument
// substitution, the expansion of `/name args` and `/skill:name args`, the skills block of the
// system prompt and get_commands' entries. Pure: finding and reading the files is the caller's
// (config/prompt_discovery.h finds them; a skill file is read through `ReadText` when used).

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/json.h"

namespace rebound::session {

/// Frontmatter of section 10.5: `key: value` lines between a leading `---` line and the next
/// `---` line (CRLF and lone CR read as LF). Without it, `body` is the whole text.
struct Frontmatter {
  bool present = false;
  std::map<std::string, std::string> values;
  std::string body;  // the text after the closing line, or the whole (normalised) text
};
Frontmatter parse_frontmatter(std::string_view text);

/// Where a template or skill was found (get_commands' `sourceInfo`, section 11).
struct PromptSource {
  std::string path;      // absolute path of the .md or SKILL.md
  std::string source;    // "auto" or "local"
  std::string scope;     // "project", "user" or "temporary"
  std::string base_dir;  // the configuration folder it was found in
};

struct PromptTemplate {
  std::string name;
  std::string description;
  std::string argument_hint;
  std::string body;
  PromptSource where;
};

struct Skill {
  std::string name;
  std::string description;
  std::string dir;      // the folder holding SKILL.md
  bool hidden = false;  // disable-model-invocation
  PromptSource where;
};

/// A template's description: frontmatter `description`, else the body's first non-blank line
/// cut to 60 code points with `...` appended when it was longer.
std::string template_description(const Frontmatter& fm);

/// The message's first line after `/<name>`, split as section 9.3 says.
std::vector<std::string> split_template_args(std::string_view line);
/// One left-to-right pass of section 9.3's placeholders over `body`.
/// Stops once the result is longer than `max_bytes` (the caller refuses such a result).
std::string substitute_template_args(std::string_view body, const std::vector<std::string>& args,
                                     std::size_t max_bytes = SIZE_MAX);

/// `&`, `<`, `>`, `"`, `'` as XML entities.
std::string xml_escape(std::string_view text);

using ReadText = std::function<std::optional<std::string>(const std::string& path)>;

/// A session's templates and skills, in discovery order (the first of a name wins).
class PromptLibrary {
 public:
  PromptLibrary() = default;
  PromptLibrary(std::vector<PromptTemplate> templates, std::vector<Skill> skills)
      : templates_(std::move(templates)), skills_(std::move(skills)) {}

  const std::vector<PromptTemplate>& templates() const { return templates_; }
  const std::vector<Skill>& skills() const { return skills_; }
  bool empty() const { return templates_.empty() && skills_.empty(); }

  /// The expanded message (sections 9.3 and 10.4), or nullopt when `text` names no template
  /// or skill (or the skill file cannot be read: the reason in `warning`).
  std::optional<std::string> expand(std::string_view text, const ReadText& read,
                                    std::string* warning = nullptr) const;
  /// The `# Skills` block of section 10.3 (it starts with two line feeds), or "" when no loaded
  /// skill is visible.
  std::string skills_block() const;
  /// get_commands' entries: the templates, then the skills.
  std::vector<protocol::Json> command_entries() const;
  /// ACP's availableCommands entries (sessions.md section 15), in the same order.
  std::vector<protocol::Json> acp_commands() const;

 private:
  std::vector<PromptTemplate> templates_;
  std::vector<Skill> skills_;
};

}  // namespace rebound::session
