#pragma once
// What the model is told when a call does not run (policy.md section 5), in one place.

#include <string>
#include <string_view>
#include <vector>

namespace rebound::policy {

std::string bash_denied_text(std::string_view command);
std::string path_denied_text();
std::string denied_text(std::string_view tool);
std::string plan_text(std::string_view abs);
std::string dont_ask_text(std::string_view tool);
/// Nobody answers: one part or a command not understood.
std::string bash_one_part_text();
/// Nobody answers: several parts, `parts` the texts of those that need approval.
std::string bash_parts_text(const std::vector<std::string>& parts);
std::string bash_ask_rule_text();
std::string write_ask_text(std::string_view abs);
std::string read_ask_text(std::string_view abs);
std::string use_ask_text(std::string_view tool);
/// Nobody answers a repeat of a call whose outcome is unknown (amendments A8).
std::string repeat_ask_text(std::string_view tool);
std::string user_denied_text();
std::string no_answer_text(long long ms);

}  // namespace rebound::policy
