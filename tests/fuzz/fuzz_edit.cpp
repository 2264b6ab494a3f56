// The edit tool's text work on arbitrary files and edits: exact and fuzzy matching, the checks,
// line endings, BOM and the diff never crash; a success changes the file and keeps its BOM. Input:
// file text, NUL, then oldText/newText pairs separated by NULs.

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "split_input.h"
#include "tools/edit_core.h"

using namespace rebound::tools;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::vector<std::string> parts = rebound::fuzz::split_at_nul(data, size, 9);
  std::vector<TextEdit> edits;
  for (std::size_t i = 1; i + 1 < parts.size(); i += 2)
    edits.push_back({parts[i], parts[i + 1]});
  if (edits.empty()) return 0;
  const EditOutcome r = apply_edits(parts[0], edits, "f.txt");
  if (!r.error) {
    if (r.content == parts[0] && r.diff.empty()) std::abort();
    const bool bom = parts[0].rfind("\xEF\xBB\xBF", 0) == 0;
    if (bom && r.content.rfind("\xEF\xBB\xBF", 0) != 0) std::abort();  // the BOM is kept
  }
  std::size_t first = 0;
  line_diff(parts[0], parts.size() > 1 ? parts[1] : "", first);
  return 0;
}
