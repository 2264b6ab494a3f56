#pragma once
// The edit tool's text work (tools.md section 4.3): line endings and BOM, exact then fuzzy
// matching mapped back to the original bytes, the checks in their order, and the line diff.
// Pure, so unit tests and the fuzz target can drive it without files.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rebound::tools {

struct TextEdit {
  std::string old_text;
  std::string new_text;
};

struct EditOutcome {
  std::optional<std::string> error;  // the failure text; the file stays untouched
  std::string content;               // the new file bytes (BOM and line endings restored)
  std::string diff;
  std::size_t first_changed_line = 0;
};

/// Applies `edits` to the file bytes `original`; `path` as the model gave it, for the texts.
EditOutcome apply_edits(std::string_view original, const std::vector<TextEdit>& edits,
                        std::string_view path);

/// The diff of section 4.3 between two LF texts; `first_changed` gets the new-file line of the
/// first change (0 when they are equal).
std::string line_diff(std::string_view old_text, std::string_view new_text,
                      std::size_t& first_changed);

}  // namespace rebound::tools
