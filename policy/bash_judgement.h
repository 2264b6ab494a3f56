#pragma once
// A bash command judged part by part against the rules (policy.md section 2.4): the forms of
// each part, the paths it names, the parts that are uncertain. The mode is the caller's.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "policy/rule.h"

namespace rebound::policy {

class DirIndex;

struct BashRules {
  const std::vector<Rule>& rules;
  const std::string& home;
  const std::string& workspace;
  bool read_paths = false;  // a read path rule in deny or ask: look at the paths parts name
  bool edit_paths = false;  // an edit path rule in deny or ask: look at output redirections
  bool patterns = false;    // a deny or ask rule with a bash specifier: look for uncertain parts
  const std::string* real_workspace = nullptr;  // the workspace's real path, when known
  const DirIndex* dir_index = nullptr;          // directory listings kept between judgements
};

struct BashJudgement {
  bool understood = true;
  bool denied = false;                 // a deny rule matched a part (or the whole text)
  const Rule* ask_rule = nullptr;      // the first ask rule that matched a part
  bool uncertain = false;              // some part is uncertain (section 2.4)
  std::size_t part_count = 0;          // parts that run a command
  std::vector<std::string> asking;     // the uncertain parts' texts, in command order
  std::vector<std::string> unallowed;  // the parts no allow rule matched, in command order
};

BashJudgement judge_bash_command(std::string_view command, const BashRules& rules);

}  // namespace rebound::policy
