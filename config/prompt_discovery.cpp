#include "config/prompt_discovery.h"

#include <algorithm>
#include <map>
#include <set>

#include "config/json_file.h"
#include "session/session_tree.h"

namespace rebound::config {

namespace fs = std::filesystem;
using protocol::Json;
using session::PromptSource;

namespace {

constexpr std::size_t kMaxPromptFileBytes = 4u << 20;
constexpr int kMaxSkillDepth = 8;  // folders below a skills folder that are searched
// Folders searched for skills in all, so that a symlink to `/` in a cloned repository's skills
// folder cannot make a session's start walk the whole file system.
constexpr std::size_t kMaxSkillFolders = 2000;

bool is_dir(const fs::path& p) {
  std::error_code ec;
  return fs::is_directory(p, ec);
}

bool is_file(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

// The entries of `dir` (symlinks followed), sorted by the bytes of their names.
std::vector<fs::path> sorted_entries(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    out.push_back(it->path());
  std::sort(out.begin(), out.end(), [](const fs::path& a, const fs::path& b) {
    return a.filename().string() < b.filename().string();
  });
  return out;
}

bool valid_skill_name(const std::string& n) {
  if (n.empty() || n.size() > 64 || n.front() == '-' || n.back() == '-') return false;
  if (n.find("--") != std::string::npos) return false;
  return std::all_of(n.begin(), n.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
  });
}

class Finder {
 public:
  explicit Finder(const PromptPlaces& places) : places_(places) {}

  PromptDiscovery done() {
    return PromptDiscovery{session::PromptLibrary(std::move(templates_), std::move(skills_)),
                           std::move(warnings_)};
  }

  // Section 9.1: not recursive, `.md` files in byte order of their names.
  void template_folder(const fs::path& dir, const std::string& source, const std::string& scope,
                       const fs::path& base_dir) {
    if (!is_dir(dir)) return;
    for (const auto& p : sorted_entries(dir)) {
      if (p.extension() == ".md" && is_file(p))
        add_template(p, {p.string(), source, scope, base_dir.string()});
    }
  }

  void settings_templates(const Json& entries) {
    for (const fs::path& p : settings_paths(entries, "prompts")) {
      if (is_dir(p)) {
        template_folder(p, "local", "temporary", p);
      } else if (is_file(p)) {
        add_template(p, {p.string(), "local", "temporary", p.parent_path().string()});
      } else {
        warnings_.push_back("settings prompts: " + p.string() + " does not exist");
      }
    }
  }

  // Section 10.1: a folder of skills. `md_files`: a `.md` file directly in it is a skill too.
  void skill_folder(const fs::path& root, bool md_files, const std::string& scope,
                    const fs::path& base_dir) {
    if (!is_dir(root)) return;
    const PromptSource where{"", "auto", scope, base_dir.string()};
    if (md_files) {
      for (const auto& p : sorted_entries(root)) {
        if (p.extension() == ".md" && p.filename() != "SKILL.md" && is_file(p))
          add_skill(p, p.stem().string(), where);
      }
    }
    walk(root, 0, where);
  }

  void settings_skills(const Json& entries) {
    for (const fs::path& p : settings_paths(entries, "skills")) {
      const PromptSource where{"", "local", "temporary",
                               (is_dir(p) ? p : p.parent_path()).string()};
      if (is_dir(p)) {
        if (is_file(p / "SKILL.md")) {
          add_skill(p / "SKILL.md", p.filename().string(), where);
        } else {
          walk(p, 0, where);
        }
      } else if (is_file(p)) {
        const std::string fallback =
            p.filename() == "SKILL.md" ? p.parent_path().filename().string() : p.stem().string();
        add_skill(p, fallback, where);
      } else {
        warnings_.push_back("settings skills: " + p.string() + " does not exist");
      }
    }
  }

 private:
  std::vector<fs::path> settings_paths(const Json& entries, const char* key) {
    std::vector<fs::path> out;
    if (entries.is_null()) return out;
    if (!entries.is_array()) {
      warnings_.push_back(std::string("settings ") + key + " is not an array of paths: ignored");
      return out;
    }
    for (const Json& e : entries) {
      if (!e.is_string() || e.get_ref<const std::string&>().empty()) {
        warnings_.push_back(std::string("settings ") + key +
                            ": an entry that is not a path is ignored");
        continue;
      }
      std::string s = e.get<std::string>();
      if (s == "~" || s.starts_with("~/")) s = places_.home.string() + s.substr(1);
      fs::path p(s);
      out.push_back(p.is_absolute() ? p.lexically_normal() : (places_.cwd / p).lexically_normal());
    }
    return out;
  }

  void walk(const fs::path& dir, int depth, const PromptSource& where) {
    std::error_code ec;
    const fs::path real = fs::canonical(dir, ec);
    if (ec || !walked_.insert(real.string()).second) return;  // a folder reached twice
    if (walked_.size() > kMaxSkillFolders) {
      if (walked_.size() == kMaxSkillFolders + 1)
        warnings_.push_back("skills: more than " + std::to_string(kMaxSkillFolders) +
                            " folders to search (at " + dir.string() + "); the rest is skipped");
      return;
    }
    for (const auto& p : sorted_entries(dir)) {
      const std::string name = p.filename().string();
      if (name.starts_with(".") || name == "node_modules" || !is_dir(p)) continue;
      if (is_file(p / "SKILL.md")) {
        add_skill(p / "SKILL.md", name, where);
      } else if (depth < kMaxSkillDepth) {
        walk(p, depth + 1, where);
      }
    }
  }

  std::optional<std::string> read(const fs::path& p) {
    const FileRead r = read_regular_file(p, kMaxPromptFileBytes);
    if (r.status != FileReadStatus::ok) {
      warnings_.push_back("cannot read " + p.string() + ": " +
                          (r.error.empty() ? std::string("missing") : r.error) + "; skipped");
      return std::nullopt;
    }
    return r.text;
  }

  void add_template(const fs::path& file, PromptSource where) {
    const std::string name = file.stem().string();
    if (template_names_.count(name)) return;  // the first of a name is kept (section 9.1)
    const auto text = read(file);
    if (!text) return;
    session::Frontmatter fm = session::parse_frontmatter(*text);
    session::PromptTemplate t;
    t.name = name;
    t.description = session::template_description(fm);
    if (auto it = fm.values.find("argument-hint"); it != fm.values.end())
      t.argument_hint = it->second;
    t.body = fm.present ? session::trim_unicode_space(fm.body) : std::move(fm.body);
    t.where = std::move(where);
    template_names_.insert(name);
    templates_.push_back(std::move(t));
  }

  void add_skill(const fs::path& file, const std::string& fallback_name, PromptSource where) {
    std::error_code ec;
    const fs::path real = fs::canonical(file, ec);
    if (ec || !skill_files_.insert(real.string()).second) return;  // reached twice
    const auto text = read(file);
    if (!text) return;
    const session::Frontmatter fm = session::parse_frontmatter(*text);
    const auto value = [&fm](const char* key) {
      const auto it = fm.values.find(key);
      return it == fm.values.end() ? std::string() : session::trim_unicode_space(it->second);
    };
    const std::string path = fs::absolute(file, ec).lexically_normal().string();
    session::Skill s;
    s.description = value("description");
    if (s.description.empty()) {
      warnings_.push_back("skill " + path + " has no description: not loaded");
      return;
    }
    s.name = value("name");
    if (s.name.empty()) s.name = fallback_name;
    if (s.name != fallback_name || !valid_skill_name(s.name))
      warnings_.push_back(
          "skill " + path + ": name '" + s.name +
          "' should be lowercase a-z, 0-9 and '-' (at most 64) and match its folder");
    if (s.description.size() > 1024)
      warnings_.push_back("skill " + path + ": its description is longer than 1024 characters");
    s.hidden = value("disable-model-invocation") == "true";
    s.dir = fs::path(path).parent_path().string();
    where.path = path;
    s.where = std::move(where);
    if (auto it = skill_paths_.find(s.name); it != skill_paths_.end()) {
      warnings_.push_back("skill '" + s.name + "' at " + path + " is skipped: " + it->second +
                          " has that name");
      return;
    }
    skill_paths_[s.name] = path;
    skills_.push_back(std::move(s));
  }

  const PromptPlaces& places_;
  std::vector<session::PromptTemplate> templates_;
  std::vector<session::Skill> skills_;
  std::vector<std::string> warnings_;
  std::set<std::string> template_names_;
  std::map<std::string, std::string> skill_paths_;
  std::set<std::string> skill_files_, walked_;
};

}  // namespace

PromptDiscovery discover_prompts(const PromptPlaces& places) {
  Finder f(places);
  const fs::path& cwd = places.cwd;
  if (!places.no_templates) {
    f.template_folder(cwd / ".rebound" / "prompts", "auto", "project", cwd / ".rebound");
    f.template_folder(cwd / ".pi" / "prompts", "auto", "project", cwd / ".pi");
    f.template_folder(places.agent_dir / "prompts", "auto", "user", places.agent_dir);
  }
  f.settings_templates(places.settings_prompts);
  if (!places.no_skills) {
    f.skill_folder(cwd / ".rebound" / "skills", true, "project", cwd / ".rebound");
    f.skill_folder(cwd / ".pi" / "skills", true, "project", cwd / ".pi");
    // .agents/skills in the cwd and each parent up to the git root (or the file system's root).
    for (fs::path dir = cwd;; dir = dir.parent_path()) {
      f.skill_folder(dir / ".agents" / "skills", false, "project", dir / ".agents");
      std::error_code ec;
      if (fs::exists(dir / ".git", ec) || dir == dir.parent_path()) break;
    }
    f.skill_folder(cwd / ".claude" / "skills", false, "project", cwd / ".claude");
    f.skill_folder(places.agent_dir / "skills", true, "user", places.agent_dir);
    if (!places.home.empty()) {
      f.skill_folder(places.home / ".agents" / "skills", false, "user", places.home / ".agents");
      f.skill_folder(places.home / ".claude" / "skills", false, "user", places.home / ".claude");
    }
  }
  f.settings_skills(places.settings_skills);
  return f.done();
}

std::optional<std::string> read_prompt_file(const std::string& path) {
  FileRead r = read_regular_file(path, kMaxPromptFileBytes);
  if (r.status != FileReadStatus::ok) return std::nullopt;
  return std::move(r.text);
}

}  // namespace rebound::config
