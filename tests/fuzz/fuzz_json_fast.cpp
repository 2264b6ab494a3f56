// The fast JSON parser against nlohmann_json (protocol/json_fast.h): whatever it accepts,
// nlohmann_json accepts too (after the same checks: valid UTF-8, no raw NUL, nesting within the
// limit), with exactly the same value: the same types (signed, unsigned and floating numbers
// apart), the same bits of every double, the same keys in the same order.

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "protocol/json_fast.h"
#include "protocol/json_line.h"

using rebound::protocol::Json;

namespace {

bool same(const Json& a, const Json& b) {
  if (a.type() != b.type()) return false;
  switch (a.type()) {
    case Json::value_t::object: {
      if (a.size() != b.size()) return false;
      auto i = a.begin();
      auto j = b.begin();
      for (; i != a.end(); ++i, ++j) {
        if (i.key() != j.key() || !same(*i, *j)) return false;
      }
      return true;
    }
    case Json::value_t::array:
      if (a.size() != b.size()) return false;
      for (std::size_t k = 0; k < a.size(); ++k) {
        if (!same(a[k], b[k])) return false;
      }
      return true;
    case Json::value_t::number_float: {
      const double x = a.get<double>(), y = b.get<double>();
      return std::memcmp(&x, &y, sizeof x) == 0;
    }
    default:
      return a == b;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  // A small limit as well as the server's, so that the depth check is reached.
  for (const std::size_t depth : {std::size_t{4}, rebound::protocol::kMaxJsonDepth}) {
    const auto fast = rebound::protocol::parse_json_fast(text, depth);
    if (!fast) continue;
    if (rebound::protocol::find_invalid_utf8(text)) std::abort();
    if (rebound::protocol::find_excess_nesting(text, depth)) std::abort();
    if (text.find('\0') != std::string_view::npos) std::abort();
    Json careful;
    try {
      careful = Json::parse(text.begin(), text.end());
    } catch (const Json::exception&) {
      std::abort();  // accepted what nlohmann_json refuses
    }
    if (!same(*fast, careful)) std::abort();
  }
  return 0;
}
