#include "policy/policy.h"

#include <sys/stat.h>

#include <cerrno>
#include <climits>
#include <cstdlib>

#include "policy/bash_judgement.h"
#include "policy/dir_index.h"
#include "policy/policy_texts.h"
#include "tools/paths.h"

namespace rebound::policy {

namespace {

bool is_read_group(std::string_view t) {
  return t == "read" || t == "grep" || t == "find" || t == "ls";
}
bool is_write_group(std::string_view t) {
  return t == "edit" || t == "write";
}

// The rule tools whose path specifiers cover a call of `tool` (section 2.2's table).
bool covers(RuleTool rule, std::string_view tool) {
  switch (rule) {
    case RuleTool::read:
      return is_read_group(tool);
    case RuleTool::edit:
      return is_write_group(tool);
    case RuleTool::write:
      return tool == "write";
    case RuleTool::grep:
      return tool == "grep";
    case RuleTool::find:
      return tool == "find";
    case RuleTool::ls:
      return tool == "ls";
    default:
      return false;
  }
}

bool is_builtin(std::string_view t) {
  return t == "bash" || is_read_group(t) || is_write_group(t);
}

std::string quote_rule(const Rule& r) {
  return "rule " + r.text + " (" + r.source + ")";
}

}  // namespace

std::string_view mode_name(Mode m) {
  switch (m) {
    case Mode::default_mode:
      return "default";
    case Mode::accept_edits:
      return "acceptEdits";
    case Mode::plan:
      return "plan";
    case Mode::dont_ask:
      return "dontAsk";
    case Mode::bypass:
      return "bypassPermissions";
  }
  return "default";
}

std::optional<Mode> parse_mode(std::string_view s) {
  for (Mode m : {Mode::default_mode, Mode::accept_edits, Mode::plan, Mode::dont_ask, Mode::bypass})
    if (s == mode_name(m)) return m;
  return std::nullopt;
}

std::string invalid_mode_text(std::string_view value, std::string_view where) {
  return "Invalid permission mode '" + std::string(value) + "' (" + std::string(where) +
         "): expected one of default, acceptEdits, plan, dontAsk, bypassPermissions";
}

std::string join_path(const std::string& base, std::string_view path, const std::string& home) {
  std::string joined;
  if (path == "~" || path.substr(0, 2) == "~/") {
    joined = home + std::string(path.substr(1));
  } else if (!path.empty() && path.front() == '/') {
    joined = std::string(path);
  } else {
    joined = base + "/" + std::string(path);
  }
  std::vector<std::string> segs;
  std::size_t from = 0;
  while (from <= joined.size()) {
    std::size_t slash = joined.find('/', from);
    if (slash == std::string::npos) slash = joined.size();
    const std::string seg = joined.substr(from, slash - from);
    if (seg == "..") {
      if (!segs.empty()) segs.pop_back();
    } else if (!seg.empty() && seg != ".") {
      segs.push_back(seg);
    }
    from = slash + 1;
  }
  std::string out;
  for (const auto& s : segs)
    out += "/" + s;
  return out.empty() ? "/" : out;
}

std::string real_path(const std::string& lexical) {
  // The longest existing prefix resolved, the rest appended as written.
  std::string head = lexical, tail;
  for (;;) {
    char buf[PATH_MAX];
    if (::realpath(head.c_str(), buf)) {
      std::string out(buf);
      if (!tail.empty()) out += (out == "/" ? "" : "/") + tail;
      return out;
    }
    const std::size_t slash = head.rfind('/');
    if (slash == std::string::npos || head == "/") return lexical;
    tail = head.substr(slash + 1) + (tail.empty() ? "" : "/" + tail);
    head = slash == 0 ? "/" : head.substr(0, slash);
  }
}

std::string real_path_below(const std::string& lexical, const std::string& base,
                            const std::string& real_base, const DirListing* listing) {
  if (lexical == base) return real_base;
  const bool root = base == "/";
  if (lexical.size() <= base.size() || lexical.compare(0, base.size(), base) != 0 ||
      (!root && lexical[base.size()] != '/'))
    return real_path(lexical);
  // Each component below `base` that exists and is no symlink keeps its name; the first that
  // does not exist ends the walk (the rest is appended as written). A symlink or any other
  // error takes the general path.
  std::string at;
  std::size_t from = root ? 1 : base.size() + 1;
  for (bool first = true; from <= lexical.size(); first = false) {
    std::size_t slash = lexical.find('/', from);
    if (slash == std::string::npos) slash = lexical.size();
    const bool last = slash == lexical.size();
    if (listing && first) {  // the listing says what the first component is
      using Kind = DirListing::Kind;
      const Kind kind = listing->kind(std::string_view(lexical).substr(from, slash - from));
      if (kind == Kind::absent) break;
      if (kind == Kind::directory || (kind == Kind::other && last)) {
        from = slash + 1;
        continue;
      }
      if (kind != Kind::unknown) return real_path(lexical);
    }
    at.assign(lexical, 0, slash);
    struct stat st {};
    if (::lstat(at.c_str(), &st) != 0) {
      if (errno == ENOENT) break;
      return real_path(lexical);
    }
    if (S_ISLNK(st.st_mode)) return real_path(lexical);
    if (!last && !S_ISDIR(st.st_mode)) return real_path(lexical);
    from = slash + 1;
  }
  const std::string rest = lexical.substr(root ? 1 : base.size() + 1);
  return real_base == "/" ? "/" + rest : real_base + "/" + rest;
}

Policy::Policy(PolicySettings settings) : settings_(std::move(settings)) {
  for (auto& r : settings_.rules)
    if (r.specifier && r.kind != RuleTool::bash)
      anchor_pattern(r.path, settings_.home, settings_.workspace);
  for (const auto& dir : working_directories())
    working_real_.push_back(real_path(dir));
  real_workspace_ = working_real_.front();
  for (const auto& r : settings_.rules) {
    if (r.kind == RuleTool::bash && r.specifier && r.behavior != Behavior::allow)
      bash_patterns_ = true;
    if (r.kind == RuleTool::bash && r.specifier) analyse_bash_ = true;
    if (r.behavior != Behavior::allow && r.specifier && r.kind == RuleTool::read)
      read_paths_ = true;
    if (r.behavior != Behavior::allow && r.specifier && r.kind == RuleTool::edit)
      edit_paths_ = true;
  }
  analyse_bash_ = analyse_bash_ || read_paths_ || edit_paths_;
  if (read_paths_ || edit_paths_) dir_index_ = std::make_shared<DirIndex>();
}

std::vector<std::string> Policy::working_directories() const {
  std::vector<std::string> out{settings_.workspace};
  for (const auto& d : settings_.additional_directories)
    out.push_back(d);
  return out;
}

std::function<bool(std::string_view, bool)> Policy::walk_filter() const {
  auto hiding = std::make_shared<std::vector<Rule>>();
  for (const auto& r : settings_.rules)
    if (r.kind == RuleTool::read && r.specifier && r.behavior != Behavior::allow)
      hiding->push_back(r);
  if (hiding->empty()) return {};
  return
      [hiding, home = settings_.home, workspace = settings_.workspace](std::string_view abs, bool) {
        for (const auto& r : *hiding)
          if (path_matches(r.path, abs, home, workspace)) return true;
        return false;
      };
}

void Policy::set_mode(Mode m, std::string source) {
  settings_.mode = m;
  settings_.mode_source = std::move(source);
}

void Policy::grant(std::string_view tool) {
  for (const auto& r : settings_.rules)
    if (r.source == "session" && r.text == tool) return;
  RuleSyntax syntax;
  syntax.extensions_configured = true;
  auto parsed = parse_rule(tool, Behavior::allow, syntax);
  Rule rule;
  if (parsed) {
    rule = std::move(*parsed);
  } else {
    rule.kind = RuleTool::extension;
    rule.text = rule.tool = std::string(tool);
  }
  rule.source = "session";
  settings_.rules.push_back(std::move(rule));
}

bool Policy::rule_names_call(const Rule& r, const Call& call) const {
  switch (r.kind) {
    case RuleTool::mcp_tool:
      return lower(r.tool) == lower(call.tool);
    case RuleTool::mcp_server: {
      if (call.mcp_server.empty()) return false;
      return lower(r.tool.substr(5)) == lower(mcp_name_part(call.mcp_server));
    }
    case RuleTool::extension:
      return lower(r.tool) == lower(call.tool);
    case RuleTool::foreign:
      return false;
    default:
      return r.tool == call.tool;
  }
}

bool Policy::removes(std::string_view tool, std::string_view mcp_server) const {
  const protocol::Json none;
  Call call{tool, none, mcp_server};
  for (const auto& r : settings_.rules) {
    if (r.behavior != Behavior::deny || !r.whole_tool()) continue;
    if (r.kind == RuleTool::extension && (is_builtin(tool) || !mcp_server.empty())) continue;
    if (rule_names_call(r, call)) return true;
  }
  return false;
}

bool Policy::inside_working_directories(const std::string& real) const {
  for (const auto& dir : working_real_) {
    if (real == dir) return true;
    if (real.size() > dir.size() && real.compare(0, dir.size(), dir) == 0 &&
        (dir == "/" || real[dir.size()] == '/'))
      return true;
  }
  return false;
}

Verdict Policy::judge(const Call& call) const {
  Verdict v = call.tool == "bash"     ? judge_bash(call)
              : is_builtin(call.tool) ? judge_path_tool(call)
                                      : judge_named_tool(call);
  // A repeat of a call whose outcome is unknown asks as an ask rule would: no allow rule, grant
  // or hook's allow passes it (amendments A8); a deny stands.
  if (call.repeats_unknown && settings_.mode != Mode::bypass && v.kind == Verdict::Kind::allow)
    v = Verdict{Verdict::Kind::ask, repeat_ask_text(call.tool), "repeat", false};
  return finish(std::move(v), call.tool);
}

// dontAsk: every ask is denied at once with its text (section 3).
Verdict Policy::finish(Verdict v, std::string_view tool) const {
  if (v.kind == Verdict::Kind::ask && settings_.mode == Mode::dont_ask) {
    v.kind = Verdict::Kind::deny;
    v.text = dont_ask_text(tool);
    v.reason.clear();
    v.offer_always = false;
  }
  return v;
}

Verdict Policy::judge_path_tool(const Call& call) const {
  const std::string_view tool = call.tool;
  std::string arg = ".";
  if (auto it = call.input.find("path"); it != call.input.end() && it->is_string())
    arg = it->get<std::string>();
  const std::string lexical = tools::resolve_path(arg, settings_.workspace);
  const std::string real = real_path_below(lexical, settings_.workspace, real_workspace_);
  const auto matches = [&](const Rule& r, bool both) {
    const bool a = path_matches(r.path, lexical, settings_.home, settings_.workspace);
    const bool b = path_matches(r.path, real, settings_.home, settings_.workspace);
    return both ? (a && b) : (a || b);
  };
  const bool writes = is_write_group(tool);
  // 4: deny rules.
  for (const auto& r : settings_.rules)
    if (r.behavior == Behavior::deny && r.specifier && covers(r.kind, tool) && matches(r, false))
      return Verdict{Verdict::Kind::deny, path_denied_text(), {}, false};
  // 5: plan mode refuses every change.
  if (writes && settings_.mode == Mode::plan)
    return Verdict{Verdict::Kind::deny, plan_text(lexical), {}, false};
  const std::string ask_text = writes ? write_ask_text(lexical) : read_ask_text(lexical);
  // 6: ask rules, a hook's ask.
  for (const auto& r : settings_.rules) {
    if (r.behavior != Behavior::ask) continue;
    const bool hit = r.specifier ? covers(r.kind, tool) && matches(r, false) : r.tool == tool;
    if (hit) return Verdict{Verdict::Kind::ask, ask_text, quote_rule(r), false};
  }
  if (call.hook == Behavior::ask)
    return Verdict{Verdict::Kind::ask, call.hook_reason.empty() ? ask_text : call.hook_reason,
                   "hook", false};
  // 7: allow rules (both paths must match), a hook's allow, the session's grants.
  if (call.hook == Behavior::allow) return Verdict{};
  for (const auto& r : settings_.rules) {
    if (r.behavior != Behavior::allow) continue;
    const bool hit = r.specifier ? covers(r.kind, tool) && matches(r, true) : r.tool == tool;
    if (hit) return Verdict{};
  }
  // 8: the mode.
  const bool inside = inside_working_directories(real);
  Verdict asks{Verdict::Kind::ask, ask_text, "mode " + std::string(mode_name(settings_.mode)),
               true};
  switch (settings_.mode) {
    case Mode::bypass:
      return Verdict{};
    case Mode::dont_ask:
      return (!writes && inside) ? Verdict{}
                                 : Verdict{Verdict::Kind::deny, dont_ask_text(tool), {}, false};
    case Mode::accept_edits:
      return inside ? Verdict{} : asks;
    case Mode::default_mode:
    case Mode::plan:
      return (!writes && inside) ? Verdict{} : asks;
  }
  return asks;
}

Verdict Policy::judge_named_tool(const Call& call) const {
  const std::string tool(call.tool);
  const std::string ask_text = use_ask_text(tool);
  for (const auto& r : settings_.rules)
    if (r.behavior == Behavior::deny && rule_names_call(r, call))
      return Verdict{Verdict::Kind::deny, denied_text(tool), {}, false};
  for (const auto& r : settings_.rules)
    if (r.behavior == Behavior::ask && rule_names_call(r, call))
      return Verdict{Verdict::Kind::ask, ask_text, quote_rule(r), false};
  if (call.hook == Behavior::ask)
    return Verdict{Verdict::Kind::ask, call.hook_reason.empty() ? ask_text : call.hook_reason,
                   "hook", false};
  if (call.hook == Behavior::allow) return Verdict{};
  for (const auto& r : settings_.rules)
    if (r.behavior == Behavior::allow && rule_names_call(r, call)) return Verdict{};
  if (call.read_only_hint) return Verdict{};
  switch (settings_.mode) {
    case Mode::bypass:
      return Verdict{};
    case Mode::dont_ask:
      return Verdict{Verdict::Kind::deny, dont_ask_text(tool), {}, false};
    default:
      return Verdict{Verdict::Kind::ask, ask_text, "mode " + std::string(mode_name(settings_.mode)),
                     true};
  }
}

Verdict Policy::judge_bash(const Call& call) const {
  std::string command;
  if (auto it = call.input.find("command"); it != call.input.end() && it->is_string())
    command = it->get<std::string>();
  BashRules rules{settings_.rules, settings_.home, settings_.workspace, read_paths_,
                  edit_paths_,     bash_patterns_, &real_workspace_,    dir_index_.get()};
  // The prefix runs before every command and is judged with it (policy.md 2.4.1).
  const std::string judged = settings_.shell_command_prefix.empty()
                                 ? command
                                 : settings_.shell_command_prefix + "\n" + command;
  const BashJudgement j = analyse_bash_ ? judge_bash_command(judged, rules) : BashJudgement{};
  if (j.denied) return Verdict{Verdict::Kind::deny, bash_denied_text(command), {}, false};
  // Ask rules (a bare `Bash` ask is one), then a hook's ask.
  const Rule* ask_rule = j.ask_rule;
  if (!ask_rule) {
    for (const auto& r : settings_.rules)
      if (r.behavior == Behavior::ask && r.kind == RuleTool::bash && !r.specifier) ask_rule = &r;
  }
  if (ask_rule)
    return Verdict{Verdict::Kind::ask, bash_ask_rule_text(), quote_rule(*ask_rule), false};
  if (call.hook == Behavior::ask)
    return Verdict{Verdict::Kind::ask,
                   call.hook_reason.empty() ? bash_ask_rule_text() : call.hook_reason, "hook",
                   false};
  // Allow: a hook's, a bare `Bash` allow (a session grant included), or every part by a rule.
  bool bare_allow = call.hook == Behavior::allow;
  for (const auto& r : settings_.rules)
    if (r.behavior == Behavior::allow && r.kind == RuleTool::bash && !r.specifier)
      bare_allow = true;
  // The parts that need approval: the uncertain ones, and those the mode would ask about.
  const auto& listed = bare_allow || settings_.mode == Mode::bypass ? j.asking : j.unallowed;
  const std::string uncertain_text =
      j.part_count > 1 && j.understood ? bash_parts_text(listed) : bash_one_part_text();
  if (!j.understood || j.uncertain)
    return Verdict{Verdict::Kind::ask, uncertain_text, "uncertain", false};
  if (bare_allow || (j.part_count > 0 && j.unallowed.empty())) return Verdict{};
  // The mode decides the parts no rule allowed (all of them for an empty command).
  switch (settings_.mode) {
    case Mode::bypass:
      return Verdict{};
    case Mode::dont_ask:
      return Verdict{Verdict::Kind::deny, dont_ask_text("bash"), {}, false};
    default: {
      const std::string text =
          j.part_count > 1 ? bash_parts_text(j.unallowed) : bash_one_part_text();
      return Verdict{Verdict::Kind::ask, text, "mode " + std::string(mode_name(settings_.mode)),
                     true};
    }
  }
}

}  // namespace rebound::policy
