#include "session/llm/secret_text.h"

#include <doctest/doctest.h>

#include <algorithm>

using rebound::session::llm::cut_without_secret;
using rebound::session::llm::scrub_secret;

TEST_CASE("scrub_secret replaces every occurrence, nothing without a secret") {
  CHECK(scrub_secret("a KEY b KEYKEY", std::string("KEY")) == "a *** b ******");
  CHECK(scrub_secret("a KEY", std::nullopt) == "a KEY");
  CHECK(scrub_secret("a KEY", std::string()) == "a KEY");
}

TEST_CASE("cut_without_secret scrubs before cutting and drops a beginning left at the cut") {
  const std::string key = "sk-hostileCANARY";
  // Scrubbed first: the whole key inside the limit never shows.
  CHECK(cut_without_secret("x" + key + "y", 100, key) == "x***y");
  for (std::size_t keep = 1; keep < key.size(); ++keep) {
    CAPTURE(keep);
    // The whole key where the cut falls: scrubbed before the cut, only asterisks are cut.
    const std::string whole =
        cut_without_secret(std::string(10, '.') + key + "tail", 10 + keep, key);
    CHECK(whole == std::string(10, '.') + std::string(std::min<std::size_t>(keep, 3), '*') +
                       std::string(keep > 3 ? "tail" : "").substr(0, keep > 3 ? keep - 3 : 0));
    // A beginning of the key that the cut leaves at the end (the text went on differently).
    const std::string part =
        cut_without_secret(std::string(10, '.') + key.substr(0, keep) + "#more", 10 + keep, key);
    CHECK(part == std::string(10, '.') + "***");
  }
  // Text that merely ends like nothing of the key is cut as is.
  CHECK(cut_without_secret("abcdef", 3, key) == "abc");
  // Never inside a UTF-8 character.
  CHECK(cut_without_secret("ab\xC3\xA9", 3, std::nullopt) == "ab");
}
