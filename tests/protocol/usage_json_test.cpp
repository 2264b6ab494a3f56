// append_usage_json writes exactly what to_line(to_json(usage)) writes, for whole and fractional
// costs of every magnitude, negative zero, and values JSON cannot hold.

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <random>

#include "protocol/json_line.h"
#include "protocol/messages.h"

using namespace rebound::protocol;

namespace {

std::string serialised(const Usage& u) {
  std::string s = to_line(to_json(u));
  s.pop_back();
  return s;
}

}  // namespace

TEST_CASE("usage JSON without the tree equals the serializer's, byte for byte") {
  const double special[] = {0.0,
                            -0.0,
                            3.0,
                            0.1,
                            1e-7,
                            2.5e-5,
                            123456.789,
                            1e21,
                            9007199254740992.0,
                            -4.25,
                            std::numeric_limits<double>::min(),
                            std::numeric_limits<double>::max(),
                            std::numeric_limits<double>::infinity(),
                            std::numeric_limits<double>::quiet_NaN()};
  std::mt19937_64 rng(20261207);
  int compared = 0;
  for (int i = 0; i < 20000; ++i) {
    Usage u;
    u.input = static_cast<std::int64_t>(rng() % 2000000) - (i % 50 == 0 ? 1000 : 0);
    u.output = static_cast<std::int64_t>(rng() % 70000);
    u.cache_read = static_cast<std::int64_t>(rng());  // the whole range, as signed
    u.cache_write = i;
    u.total_tokens = u.input + u.output;
    // Costs as the pricing makes them (tokens times dollars per million), and special values.
    const auto cost = [&](int k) {
      if ((i + k) % 9 == 0) return special[rng() % std::size(special)];
      return static_cast<double>(rng() % 5000000) *
             (0.05 + static_cast<double>(rng() % 7500) / 100.0) / 1e6;
    };
    u.cost_input = cost(0);
    u.cost_output = cost(1);
    u.cost_cache_read = cost(2);
    u.cost_cache_write = cost(3);
    u.cost_total = u.cost_input + u.cost_output + u.cost_cache_read + u.cost_cache_write;
    std::string fast;
    append_usage_json(fast, u);
    REQUIRE(fast == serialised(u));
    ++compared;
  }
  CHECK(compared == 20000);
}
