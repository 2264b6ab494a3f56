#include "config/auth_store.h"

#include <doctest/doctest.h>

#include "tests/support/temp_dir.h"

using rebound::config::AuthStore;
using rebound::config::fnv1a_32;
using rebound::testing::TempDir;

TEST_CASE("FNV-1a 32 matches the published test vectors") {
  CHECK(fnv1a_32("") == 0x811c9dc5u);
  CHECK(fnv1a_32("a") == 0xe40c292cu);
  CHECK(fnv1a_32("foobar") == 0xbf9cf968u);
}

TEST_CASE("single and multiple credentials per provider are read") {
  TempDir dir;
  const auto file = dir.write("auth.json", R"({"openai":[{"type":"api_key","key":"sk-a"},
      {"type":"api_key","key":"sk-b"}],"anthropic":{"type":"api_key","key":"ak"},
      "odd":[{"type":"oauth"}]})");
  std::int64_t now = 0;
  AuthStore store(file, [&] { return now; });
  CHECK(store.keys("openai") == std::vector<std::string>{"sk-a", "sk-b"});
  CHECK(store.keys("anthropic") == std::vector<std::string>{"ak"});
  CHECK(store.keys("odd").empty());
  CHECK_FALSE(store.resolve_key("nobody", "s"));
}

TEST_CASE("the order starts at FNV-1a(session id) mod n and skips blocked credentials") {
  TempDir dir;
  const auto file = dir.write("auth.json", R"({"p":[{"type":"api_key","key":"k0"},
      {"type":"api_key","key":"k1"},{"type":"api_key","key":"k2"}]})");
  std::int64_t now = 1000;
  AuthStore store(file, [&] { return now; });
  const std::string sid = "session-42";
  const std::size_t start = fnv1a_32(sid) % 3;
  CHECK(store.resolve_key("p", sid) == "k" + std::to_string(start));
  CHECK(store.mark_usage_limit_reached("p", sid, 5000));
  CHECK(store.resolve_key("p", sid) == "k" + std::to_string((start + 1) % 3));
  CHECK(store.mark_usage_limit_reached("p", sid, std::nullopt));
  CHECK_FALSE(store.mark_usage_limit_reached("p", sid, 100));         // all three blocked now
  CHECK(store.resolve_key("p", sid) == "k" + std::to_string(start));  // all blocked: first
  now += 5000;                                                        // the first block ran out
  CHECK(store.resolve_key("p", sid) == "k" + std::to_string(start));
  now += 60000;
  CHECK(store.resolve_key("p", sid) == "k" + std::to_string(start));
}

TEST_CASE("one credential cannot be switched, a missing or malformed file has none") {
  TempDir dir;
  std::int64_t now = 0;
  AuthStore one(dir.write("a.json", R"({"p":{"type":"api_key","key":"only"}})"),
                [&] { return now; });
  CHECK_FALSE(one.mark_usage_limit_reached("p", "s", std::nullopt));
  AuthStore missing(dir.path() / "none.json", [&] { return now; });
  CHECK_FALSE(missing.mark_usage_limit_reached("p", "s", std::nullopt));
  AuthStore broken(dir.write("b.json", "{oops"), [&] { return now; });
  CHECK(broken.keys("p").empty());
}
