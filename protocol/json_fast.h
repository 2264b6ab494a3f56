#pragma once
// A fast path for parsing JSON that is well formed (every wire line, session file line and
// provider chunk is, nearly always). It accepts a subset of what parse_json_line accepts and
// builds exactly the value nlohmann_json would; anything else (any error, a lone surrogate
// escape, a number that does not fit a double, a byte-order mark) it declines, and the caller
// parses the text the careful way, which also says why it is not JSON. Strings are scanned in
// runs, not a byte at a time (docs/benchmarks.md, "The session tree's commands").
// Pure, thread-safe. tests/fuzz/fuzz_json_fast.cpp checks it against nlohmann_json.

#include <cstddef>
#include <optional>
#include <string_view>

#include "protocol/json.h"

namespace rebound::protocol {

/// The value of `text` (one JSON value, white space around it allowed), or nullopt when the
/// text is not valid UTF-8 JSON nested at most `max_depth` deep, or is JSON this parser leaves
/// to nlohmann_json.
std::optional<Json> parse_json_fast(std::string_view text, std::size_t max_depth);

}  // namespace rebound::protocol
