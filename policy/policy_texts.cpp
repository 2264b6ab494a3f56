#include "policy/policy_texts.h"

namespace rebound::policy {

std::string bash_denied_text(std::string_view command) {
  return "Permission to use bash with command " + std::string(command) + " has been denied.";
}

std::string path_denied_text() {
  return "File is in a directory that is denied by your permission settings.";
}

std::string denied_text(std::string_view tool) {
  return "Permission to use " + std::string(tool) + " has been denied.";
}

std::string plan_text(std::string_view abs) {
  return "Cannot write to " + std::string(abs) + " while in plan mode.";
}

std::string dont_ask_text(std::string_view tool) {
  return "Permission to use " + std::string(tool) +
         " has been denied because Rebound is running in don't ask mode. You may reach the goal "
         "with other tools that naturally fit the task, but do not try to get around this "
         "denial. If this permission is essential to the user's request, stop and explain what "
         "you were trying to do and why you need it.";
}

std::string bash_one_part_text() {
  return "This command requires approval";
}

std::string bash_parts_text(const std::vector<std::string>& parts) {
  if (parts.empty()) return bash_one_part_text();
  std::string out = "This bash command contains multiple operations. ";
  out += parts.size() == 1 ? "The following part requires approval: "
                           : "The following parts require approval: ";
  for (std::size_t i = 0; i < parts.size(); ++i)
    out += (i ? ", " : "") + parts[i];
  return out;
}

std::string bash_ask_rule_text() {
  return "Rebound requested permissions to use bash, but you haven't granted it yet.";
}

std::string write_ask_text(std::string_view abs) {
  return "Rebound requested permissions to write to " + std::string(abs) +
         ", but you haven't granted it yet.";
}

std::string read_ask_text(std::string_view abs) {
  return "Rebound requested permissions to read from " + std::string(abs) +
         ", but you haven't granted it yet.";
}

std::string use_ask_text(std::string_view tool) {
  return "Rebound requested permissions to use " + std::string(tool) +
         ", but you haven't granted it yet.";
}

std::string repeat_ask_text(std::string_view tool) {
  return "Rebound requested permissions to repeat a " + std::string(tool) +
         " call whose outcome is unknown, but you haven't granted it yet. Check the current "
         "state instead.";
}

std::string user_denied_text() {
  return "Permission denied by the user";
}

std::string no_answer_text(long long ms) {
  return "Permission denied: no answer within " + std::to_string(ms) + " ms";
}

}  // namespace rebound::policy
