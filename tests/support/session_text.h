#pragma once
// Session files made by tests: a linear conversation of `messages` alternating user and
// assistant messages of `text_bytes` characters each, under header id `id` (runtime.md
// section 4's version 3 format).

#include <string>

namespace rebound::testing {

inline std::string linear_session_file(const std::string& id, int messages,
                                       std::size_t text_bytes = 200) {
  std::string file = R"({"type":"session","version":3,"id":")" + id +
                     R"(","timestamp":"2026-12-01T00:00:00.000Z","cwd":"/w"})" + "\n";
  std::string parent = "null";
  const std::string text(text_bytes, 'x');
  for (int i = 0; i < messages; ++i) {
    const std::string entry = "e" + std::to_string(i);
    file += R"({"type":"message","id":")" + entry + R"(","parentId":)" + parent +
            R"(,"timestamp":"2026-12-01T00:00:00.000Z","message":{"role":")" +
            (i % 2 ? "assistant" : "user") + R"(","content":[{"type":"text","text":")" + text +
            R"("}],"timestamp":1}})" + "\n";
    parent.assign(1, '"').append(entry).append(1, '"');
  }
  return file;
}

}  // namespace rebound::testing
