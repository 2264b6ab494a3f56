// SessionRecorder: entries buffered until the first assistant message, then the header and
// everything so far in one write, then one write per entry; ids and parents form a chain.

#include "session/session_recorder.h"

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "tests/support/jsonl.h"
#include "tests/support/memory_session_storage.h"

using namespace rebound;
using protocol::AgentMessage;
using protocol::Json;

namespace {

AgentMessage message(protocol::Role role, const std::string& text) {
  AgentMessage m;
  m.role = role;
  m.content.push_back(protocol::ContentBlock::make_text(text));
  return m;
}

}  // namespace

TEST_CASE("nothing is written before an assistant message, then everything, then one write each") {
  testing::MemorySessionStorage storage;
  std::int64_t now = 1796027882123;
  session::SessionRecorder r(
      storage, [&] { return now; },
      session::SessionHeader{"sid", "2026-11-30T08:38:02.123Z", "/w", {}}, "/s/a.jsonl");
  r.append(session::model_change_entry("scripted", "echo"));
  r.append(session::thinking_level_change_entry(protocol::ThinkingLevel::off));
  r.append_message(message(protocol::Role::user, "hi"));
  CHECK(storage.files.empty());
  CHECK_FALSE(r.on_disk());
  r.append_message(message(protocol::Role::assistant, "hello"));
  CHECK(r.on_disk());
  CHECK(storage.writes["/s/a.jsonl"] == 1);
  auto file = testing::parse_jsonl(storage.files["/s/a.jsonl"]);
  REQUIRE(file.size() == 5);
  CHECK(file[0] == Json::parse(R"({"type":"session","version":3,"id":"sid",
                                   "timestamp":"2026-11-30T08:38:02.123Z","cwd":"/w"})"));
  CHECK(file[1]["type"] == "model_change");
  CHECK(file[1]["parentId"].is_null());
  for (std::size_t i = 2; i < file.size(); ++i) {
    CHECK(file[i]["parentId"] == file[i - 1]["id"]);
    CHECK(file[i]["id"].get<std::string>().size() == 8);
    CHECK(file[i]["timestamp"] == "2026-11-30T08:38:02.123Z");
  }
  // The key order of pi's entries: type, id, parentId, timestamp, then the body.
  CHECK(file[3].begin().key() == "type");
  CHECK(std::next(file[3].begin(), 3).key() == "timestamp");
  r.append_message(message(protocol::Role::user, "again"));
  CHECK(storage.writes["/s/a.jsonl"] == 2);
  CHECK(testing::parse_jsonl(storage.files["/s/a.jsonl"]).size() == 6);
  CHECK(r.leaf_id() == testing::parse_jsonl(storage.files["/s/a.jsonl"]).back()["id"]);
}

TEST_CASE("a failed write keeps the entries and writes them with the next one") {
  testing::MemorySessionStorage storage;
  session::SessionRecorder r(
      storage, [] { return 0; }, session::SessionHeader{"sid", "t", "/w", {}}, "/s/b.jsonl");
  storage.fail_writes = true;
  r.append_message(message(protocol::Role::assistant, "one"));
  r.append_message(message(protocol::Role::user, "two"));
  CHECK(storage.files.empty());
  storage.fail_writes = false;
  r.append_message(message(protocol::Role::assistant, "three"));
  CHECK(storage.writes["/s/b.jsonl"] == 1);
  CHECK(testing::parse_jsonl(storage.files["/s/b.jsonl"]).size() == 4);  // header + 3
}

TEST_CASE("--no-session keeps entries in memory only") {
  testing::MemorySessionStorage storage;
  session::SessionRecorder r(
      storage, [] { return 0; }, session::SessionHeader{"sid", "t", "/w", {}}, std::nullopt);
  r.append_message(message(protocol::Role::assistant, "x"));
  CHECK(storage.opens == 0);
  CHECK(r.entries().size() == 1);
}
