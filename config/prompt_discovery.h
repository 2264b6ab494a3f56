#pragma once
// Finds a session's prompt templates and skills on disk (sessions.md sections 9.1 and 10.1):
// the project's folders, the user's, and the settings' `prompts` and `skills` entries, in that
// order, the first of a name kept. Unreadable files and invalid skills are reported in
// `warnings` (the caller logs them on stderr). Reads only; runs when a session starts.

#include <filesystem>
#include <string>
#include <vector>

#include "protocol/json.h"
#include "session/prompt_library.h"

namespace rebound::config {

struct PromptPlaces {
  std::filesystem::path cwd;        // absolute
  std::filesystem::path agent_dir;  // absolute
  std::filesystem::path home;       // $HOME; empty: no home folders
  protocol::Json settings_prompts;  // settings `prompts` (an array of paths), or null
  protocol::Json settings_skills;   // settings `skills`, or null
  bool no_templates = false;        // --no-prompt-templates: sources 1 to 3 off
  bool no_skills = false;           // --no-skills: project and user skills off
};

struct PromptDiscovery {
  session::PromptLibrary library;
  std::vector<std::string> warnings;
};

PromptDiscovery discover_prompts(const PromptPlaces& places);

/// A skill or template file's text (bounded regular-file read), or nullopt.
std::optional<std::string> read_prompt_file(const std::string& path);

}  // namespace rebound::config
