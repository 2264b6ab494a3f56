#include "config/file_settings_store.h"

#include <sys/stat.h>

#include <doctest/doctest.h>

#include "tests/support/temp_dir.h"

using rebound::config::FileSettingsStore;
using rebound::protocol::Json;
using rebound::testing::TempDir;

TEST_CASE("the project file is merged over the global one") {
  TempDir dir;
  dir.write("agent/settings.json", R"({"retry":{"enabled":true,"maxRetries":5},"a":1})");
  dir.write("project/.rebound/settings.json", R"({"retry":{"maxRetries":1}})");
  FileSettingsStore store(dir.path() / "agent/settings.json",
                          dir.path() / "project/.rebound/settings.json");
  CHECK(store.load() == Json::parse(R"({"retry":{"enabled":true,"maxRetries":1},"a":1})"));
}

TEST_CASE("missing files read as empty settings") {
  TempDir dir;
  FileSettingsStore store(dir.path() / "nope.json", dir.path() / "nope2.json");
  CHECK(store.load() == Json::object());
}

TEST_CASE("persist merges only the changed keys into the global file, pretty-printed") {
  TempDir dir;
  dir.write("agent/settings.json", R"({"defaultModel":"m","retry":{"maxRetries":5}})");
  dir.write("project/.rebound/settings.json", R"({"retry":{"baseDelayMs":9}})");
  FileSettingsStore store(dir.path() / "agent/settings.json",
                          dir.path() / "project/.rebound/settings.json");
  store.persist(Json::parse(R"({"retry":{"enabled":false}})"));
  const std::string text = dir.read("agent/settings.json");
  CHECK(Json::parse(text) ==
        Json::parse(R"({"defaultModel":"m","retry":{"maxRetries":5,"enabled":false}})"));
  CHECK(text.find("\n  ") != std::string::npos);  // indented
  // The project file is untouched.
  CHECK(dir.read("project/.rebound/settings.json") == R"({"retry":{"baseDelayMs":9}})");
  // No temporary file is left behind.
  int files = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir.path() / "agent")) {
    ++files;
  }
  CHECK(files == 1);
}

TEST_CASE("persist creates the agent directory and file when missing") {
  TempDir dir;
  FileSettingsStore store(dir.path() / "new/agent/settings.json", dir.path() / "p.json");
  store.persist(Json::parse(R"({"compaction":{"enabled":false}})"));
  CHECK(Json::parse(dir.read("new/agent/settings.json")) ==
        Json::parse(R"({"compaction":{"enabled":false}})"));
}

TEST_CASE("a malformed global file is read as empty and never overwritten") {
  TempDir dir;
  dir.write("settings.json", "{ not json");
  FileSettingsStore store(dir.path() / "settings.json", dir.path() / "p.json");
  CHECK(store.load() == Json::object());
  store.persist(Json::parse(R"({"retry":{"enabled":false}})"));
  CHECK(dir.read("settings.json") == "{ not json");
}
