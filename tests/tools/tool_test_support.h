#pragma once
// Shared by the tools unit tests: a call context in a temporary directory, the text of a result.

#include <doctest/doctest.h>

#include <atomic>
#include <string>

#include "session/tool.h"
#include "tests/support/temp_dir.h"

namespace rebound::testing {

inline const std::atomic<bool> kNotCancelled{false};

inline session::ToolContext context_in(const TempDir& dir) {
  session::ToolContext c;
  c.cwd = dir.path().string();
  return c;
}

inline std::string text_of(const session::ToolResult& r) {
  REQUIRE(!r.content.empty());
  return r.content.front().text;
}

}  // namespace rebound::testing
