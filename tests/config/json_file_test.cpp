#include "config/json_file.h"

#include <sys/stat.h>

#include <doctest/doctest.h>

#include "tests/support/temp_dir.h"

using namespace rebound;
using config::FileReadStatus;
using config::JsonFileStatus;
using protocol::Json;
using testing::TempDir;
namespace fs = std::filesystem;

TEST_CASE("read_regular_file: bounded, non-blocking, regular files only") {
  TempDir dir;
  const auto fifo = dir.path() / "fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK(config::read_regular_file(fifo).error == "is not a regular file");  // no hang
  CHECK(config::read_regular_file("/dev/zero").error == "is not a regular file");
  CHECK(config::read_regular_file(dir.path()).error == "is a directory");
  CHECK(config::read_regular_file(dir.path() / "none").status == FileReadStatus::missing);
  const auto file = dir.write("f.txt", std::string(5000, 'a'));
  const auto whole = config::read_regular_file(file, 5000);
  CHECK(whole.status == FileReadStatus::ok);
  CHECK(whole.text.size() == 5000u);
  const auto big = config::read_regular_file(file, 4999);
  CHECK(big.status == FileReadStatus::failed);
  CHECK(big.error == "is larger than 4999 bytes");
  CHECK(config::read_regular_file(dir.write("empty", "")).status == FileReadStatus::ok);
  CHECK(config::size_text(64u << 20) == "64 MiB");
}

TEST_CASE("a malformed JSON file is reported by line and column, never by its content") {
  TempDir dir;
  const auto file =
      dir.write("auth.json", "{\n  \"openai\": {\"type\": \"api_key\", \"key\": \"sk-leak");
  const auto r = config::read_json_file(file);
  CHECK(r.status == JsonFileStatus::malformed);
  CHECK(r.error.rfind("invalid JSON at line 2, column ", 0) == 0);
  CHECK(r.error.find("sk-") == std::string::npos);
  CHECK(config::read_json_file(dir.write("deep.json", std::string(600, '['))).error ==
        "nesting deeper than 512 levels at line 1, column 513");
  const auto fifo = dir.path() / "fifo.json";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK(config::read_json_file(fifo).error == "cannot be read: it is not a regular file");
}

TEST_CASE("an atomic write through a symlink replaces the target and keeps the link") {
  TempDir dir;
  dir.write("real/settings.json", R"({"a":1})");
  fs::create_directories(dir.path() / "agent");
  fs::create_symlink("../real/settings.json", dir.path() / "agent" / "settings.json");
  // A chain of links resolves to the last target; a dangling link creates its target.
  fs::create_symlink("settings.json", dir.path() / "agent" / "second.json");
  fs::create_symlink(dir.path() / "real" / "new.json", dir.path() / "agent" / "dangling.json");
  CHECK_FALSE(config::write_json_file_atomically(dir.path() / "agent" / "second.json",
                                                 Json{{"a", 2}}, fs::perms(0600)));
  CHECK_FALSE(config::write_json_file_atomically(dir.path() / "agent" / "dangling.json",
                                                 Json{{"b", 3}}, fs::perms(0600)));
  CHECK(fs::is_symlink(dir.path() / "agent" / "settings.json"));
  CHECK(fs::is_symlink(dir.path() / "agent" / "second.json"));
  CHECK(fs::is_symlink(dir.path() / "agent" / "dangling.json"));
  CHECK(Json::parse(dir.read("real/settings.json")) == Json{{"a", 2}});
  CHECK(Json::parse(dir.read("real/new.json")) == Json{{"b", 3}});
}
